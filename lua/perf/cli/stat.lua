-- luaperf stat: count events for a command, a pid or the machine, and print
-- perf stat's report (the same layout, so the two can be compared line by line).
local perf = require "perf"

local USAGE = [[
usage: luaperf stat [-e ev,...] [-p pid [--per-thread] | -a | -C list] [-A]
                    [-r N] [-I ms] [-x sep] [-o file] [-- cmd ...]

  -e, --event ev,...   events to count (default: perf stat's set); {a,b}:mods
                       counts a group
  -p, --pid pid        count an existing process (until it exits or ^C)
  -a, --all-cpus       count every CPU (system wide)
  -C, --cpu list       count only these CPUs, system wide (0, 0-1, 0,2)
  -A, --no-aggr        one row per CPU (with -a or -C)
      --per-thread     one row per thread of the -p process
  -r, --repeat N       run the command N times; print means and +- stddev
  -I, --interval-print ms   print counts every ms milliseconds
  -x, --field-separator sep   CSV output with this separator
  -o, --output file    write the report to file (default: stderr, as perf)
]]

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
    local short, rest = a:match("^(%-[epIrxoC])(.+)$")
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
    elseif a == "-C" or a == "--cpu" then
      local v = value(a)
      local ok, err = perf.parse_cpu_list(v)
      if not ok then error(err, 0) end
      o.cpu_list = v
    elseif a == "-A" or a == "--no-aggr" then
      o.no_aggr = true
    elseif a == "--per-thread" then
      o.per_thread = true
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
  if o.cpu_list and o.pid then
    -- As perf stat: the process wins.
    io.stderr:write("PID/TID switch overriding CPU\n")
    o.cpu_list = nil
  end
  local system_wide = o.all or o.cpu_list
  if o.no_aggr and not system_wide then
    io.stderr:write("luaperf stat: -A (--no-aggr) needs -a or -C: per-CPU counts are system wide\n")
    return 129
  end
  if o.per_thread and not o.pid then
    io.stderr:write("luaperf stat: --per-thread needs -p pid\n")
    return 129
  end
  if not o.cmd and not o.pid and not system_wide then
    io.stderr:write("luaperf stat: give a command (-- cmd ...), -p pid, -a or -C\n", USAGE)
    return 129
  end
  local out = io.stderr
  if o.output then
    local f, err = io.open(o.output, "w")
    if not f then io.stderr:write("luaperf stat: ", err, "\n"); return 1 end
    out = f
  end
  local fmt_interval = perf.stat_interval_formatter{ sep = o.sep }
  local res, msg, _, kind = perf.stat{
    events = o.events, run = o.cmd, pid = o.pid, cpu = o.cpu_list or (o.all and "all") or nil,
    per_cpu = o.no_aggr, per_thread = o.per_thread,
    ["repeat"] = o.rep or 1, interval = o.interval,
    on_interval = o.interval and function(row)
      out:write(fmt_interval(row))
      out:flush()
    end or nil,
    user_fallback = true,
  }
  if not res then
    io.stderr:write("luaperf stat: ", msg, "\n")
    if out ~= io.stderr then out:close() end
    -- a bad event is a usage error (129), a command that cannot run 255: perf stat's codes
    return kind == "syntax" and 129 or 255
  end
  -- perf stat -a -C names the machine, not the list, in its header.
  if o.all then res.cpu_list = nil end
  if not o.interval then out:write(perf.stat_report(res, { sep = o.sep })) end
  if out ~= io.stderr then out:close() end
  if o.cmd and not o.pid and not system_wide then return res.status or 0 end
  return 0
end
