-- luaperf stat: count events for a command, a pid or the machine, and print
-- perf stat's report (the same layout, so the two can be compared line by line).
local perf = require "perf"

local USAGE = [[
usage: luaperf stat [-e ev,...] [-p pid | -a] [-r N] [-I ms] [-x sep] [-o file] [-- cmd ...]

  -e, --event ev,...   events to count (default: perf stat's set)
  -p, --pid pid        count an existing process (until it exits or ^C)
  -a, --all-cpus       count every CPU (system wide)
  -r, --repeat N       run the command N times; print means and +- stddev
  -I, --interval-print ms   print counts every ms milliseconds
  -x, --field-separator sep   CSV output with this separator
  -o, --output file    write the report to file (default: stderr, as perf)
]]

local METRIC_LEN = 35

-- string.format("%-*s") without the *: Lua's format has no width 0.
local function ljust(s, w) return s .. string.rep(" ", w - #s) end
local function rjust(s, w) return string.rep(" ", w - #s) .. s end

local function parse_args(args)
  local o = { events = nil }
  local i = 1
  local function value(name)
    i = i + 1
    if args[i] == nil then error("option " .. name .. " needs a value", 0) end
    return args[i]
  end
  while i <= #args do
    local a = args[i]
    local long, eq = a:match("^(%-%-[%w-]+)=(.*)$")
    if long then a = long; table.insert(args, i + 1, eq) end
    -- Short options take their value attached too: -x, -r5 -ecs
    local short, rest = a:match("^(%-[epIrxo])(.+)$")
    if short then a = short; table.insert(args, i + 1, rest) end
    if a == "--" then
      i = i + 1
      break
    elseif a == "-h" or a == "--help" then
      o.help = true
    elseif a == "-e" or a == "--event" then
      local v = value(a)
      o.events = o.events and (o.events .. "," .. v) or v
    elseif a == "-p" or a == "--pid" then
      local v = value(a)
      o.pid = tonumber(v)
      if not o.pid or o.pid < 1 or o.pid ~= math.floor(o.pid) then
        error("-p needs a process id, got '" .. v .. "'", 0)
      end
    elseif a == "-a" or a == "--all-cpus" then
      o.all = true
    elseif a == "-r" or a == "--repeat" then
      local v = value(a)
      o.rep = tonumber(v)
      if not o.rep or o.rep < 1 or o.rep ~= math.floor(o.rep) then
        error("-r needs a positive count, got '" .. v .. "'", 0)
      end
    elseif a == "-I" or a == "--interval-print" then
      local v = value(a)
      o.interval = tonumber(v)
      if not o.interval or o.interval < 1 then error("-I needs milliseconds >= 1, got '" .. v .. "'", 0) end
    elseif a == "-x" or a == "--field-separator" then
      o.sep = value(a)
    elseif a == "-o" or a == "--output" then
      o.output = value(a)
    elseif a:sub(1, 1) == "-" and #a > 1 then
      error("unknown option '" .. a .. "'", 0)
    else
      break -- the command starts here, as in perf stat
    end
    i = i + 1
  end
  local cmd = {}
  for j = i, #args do cmd[#cmd + 1] = args[j] end
  o.cmd = #cmd > 0 and cmd or nil
  return o
end

local function fmt_metric_std(ev)
  if ev.metric_unit == nil or ev.metric == nil then
    return string.rep(" ", METRIC_LEN)
  end
  local s = " # " .. string.format(ev.metric_fmt, ev.metric)
  return s .. " " .. ljust(ev.metric_unit, METRIC_LEN - #s - 1)
end

local function fmt_metric_csv(ev, sep)
  if ev.metric == nil then return sep .. sep end
  local v = string.format(ev.metric_fmt, ev.metric):match("^%s*([%d%.]*)")
  return sep .. v .. sep .. ev.metric_unit
end

local function pct_running(ev)
  if ev.running == ev.enabled then return 100 end
  return 100 * ev.running / ev.enabled
end

local function noise_pct(ev)
  if not ev.value or ev.value == 0 then return 0 end
  return 100 * (ev.stddev or 0) / ev.value
end

-- One event row in perf stat's std layout (stat-display.c).
local function row_std(ev, unit_width, reps)
  local unit = ljust(ev.unit, unit_width)
  if not ev.supported or not ev.counted then
    local tag = ev.supported and "<not counted>" or "<not supported>"
    return rjust(tag, 18) .. " " .. unit .. " " .. ljust(ev.name, 25) .. string.rep(" ", METRIC_LEN)
  end
  local v = ev.value * ev.scale
  local num = ev.scale ~= 1 and string.format("%18.2f", v) or string.format("%18.0f", v)
  local line = num .. " " .. unit .. " " .. ljust(ev.name, 32) .. fmt_metric_std(ev)
  if reps > 1 then
    local p = noise_pct(ev)
    if p ~= 0 then line = line .. string.format("  ( +-%6.2f%% )", p) end
  end
  if ev.running ~= ev.enabled then
    line = line .. string.format("  (%.2f%%)", pct_running(ev))
  end
  return line
end

local function row_csv(ev, sep, reps)
  local out = {}
  if not ev.supported or not ev.counted then
    out[1] = (ev.supported and "<not counted>" or "<not supported>") .. sep .. ev.unit .. sep .. ev.name
  else
    local v = ev.value * ev.scale
    out[1] = (ev.scale ~= 1 and string.format("%.2f", v) or string.format("%.0f", v)) ..
      sep .. ev.unit .. sep .. ev.name
  end
  if reps > 1 then out[#out + 1] = sep .. string.format("%.2f%%", noise_pct(ev)) end
  out[#out + 1] = sep .. string.format("%.0f", ev.running or 0) .. sep ..
    string.format("%.2f", pct_running(ev))
  if ev.supported and ev.counted then
    out[#out + 1] = fmt_metric_csv(ev, sep)
  else
    out[#out + 1] = sep .. sep
  end
  return table.concat(out)
end

local function unit_width(events)
  local w = 4 -- perf starts from strlen("unit")
  for _, ev in ipairs(events) do if #ev.unit > w then w = #ev.unit end end
  return w
end

local function target_desc(o)
  if o.all then return "'system wide'" end
  if o.pid then return "process id '" .. o.pid .. "'" end
  return "'" .. table.concat(o.cmd, " ") .. "'"
end

-- perf's get_precision: two digits more than the stddev's magnitude.
local function precision(sd)
  if sd > 1 then return 2 end
  if sd <= 0 then return 11 end
  return math.floor(math.ceil(-math.log(sd, 10)) + 0.5) + 2
end

local function print_report(out, o, res)
  local reps = res["repeat"]
  local events = res.events
  local uw = unit_width(events)
  if o.sep then
    for _, ev in ipairs(events) do out:write(row_csv(ev, o.sep, reps), "\n") end
    return
  end
  out:write("\n Performance counter stats for ", target_desc(o))
  if reps > 1 then out:write(" (", reps, " runs)") end
  out:write(":\n\n")
  for _, ev in ipairs(events) do out:write(row_std(ev, uw, reps), "\n") end
  out:write("\n")
  if reps == 1 then
    out:write(string.format(" %17.9f seconds time elapsed", res.elapsed))
    if res.user and not o.all and not o.pid then
      out:write("\n\n")
      out:write(string.format(" %17.9f seconds user\n", res.user))
      out:write(string.format(" %17.9f seconds sys\n", res.sys))
    end
  else
    local sd = res.elapsed_stddev
    local p = precision(sd)
    out:write(string.format(" %17." .. p .. "f +- %." .. p .. "f seconds time elapsed", res.elapsed, sd))
    if res.elapsed ~= 0 and sd ~= 0 then
      out:write(string.format("  ( +-%6.2f%% )", 100 * sd / res.elapsed))
    end
  end
  out:write("\n\n")
end

local function interval_printer(out, o)
  local printed = 0
  return function(row)
    local uw = unit_width(row.events)
    local t = row.time
    local sec = math.floor(t)
    local prefix = string.format("%6d.%09d", sec, math.floor((t - sec) * 1e9))
    if not o.sep and printed % 25 == 0 then
      out:write("#           time             counts ", rjust("unit", uw),
        " events\n")
    end
    printed = printed + 1
    for _, ev in ipairs(row.events) do
      if o.sep then
        out:write(prefix, o.sep, row_csv(ev, o.sep, 1), "\n")
      else
        out:write(prefix, " ", row_std(ev, uw, 1), "\n")
      end
    end
    out:flush()
  end
end

return function(args)
  local ok, o = pcall(parse_args, args)
  if not ok then
    io.stderr:write("luaperf stat: ", tostring(o), "\n", USAGE)
    return 129
  end
  if o.help then io.stdout:write(USAGE); return 0 end
  if o.all and o.pid then
    io.stderr:write("luaperf stat: -p and -a cannot be used together\n")
    return 129
  end
  if not o.cmd and not o.pid and not o.all then
    io.stderr:write("luaperf stat: give a command (-- cmd ...), -p pid or -a\n", USAGE)
    return 129
  end
  local out = io.stderr
  if o.output then
    local f, err = io.open(o.output, "w")
    if not f then io.stderr:write("luaperf stat: ", err, "\n"); return 1 end
    out = f
  end
  local res, msg = perf.stat{
    events = o.events, run = o.cmd, pid = o.pid, cpu = o.all and "all" or nil,
    ["repeat"] = o.rep or 1, interval = o.interval,
    on_interval = o.interval and interval_printer(out, o) or nil,
    user_fallback = true,
  }
  if not res then
    io.stderr:write(msg, "\n")
    if out ~= io.stderr then out:close() end
    return 255
  end
  if not o.interval then print_report(out, o, res) end
  if out ~= io.stderr then out:close() end
  if o.cmd and not o.pid and not o.all then return res.status or 0 end
  return 0
end
