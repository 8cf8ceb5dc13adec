-- Command-line options for the luaperf subcommands: "-x value", "--long
-- value", "--long=value", and flags.  One loop for every command.
--
--   options.parse(args, o, takes, flags [, cmd]) -> o | nil, message
--     takes: { ["--output"] = "output", ["-o"] = "output", ... }, or a
--            function(o, value) that stores it and returns nil or a message
--     flags: { ["--inverted"] = "inverted" }            (sets true), or
--            { ["--no-children"] = { "children", false } } (sets a value)
--     cmd:   the key of a command to run: "--", or the first argument that
--            is not an option (perf takes it without "--"), starts it and
--            everything after is its argv
local M = {}

function M.parse(args, o, takes, flags, cmd)
  local i = 1
  while i <= #args do
    local a = args[i]
    local k, v = a:match("^(%-%-[%w%-]+)=(.*)$")
    if k then a = k end
    if cmd and (a == "--" or a:sub(1, 1) ~= "-") then
      local argv = {}
      for j = a == "--" and i + 1 or i, #args do argv[#argv + 1] = args[j] end
      o[cmd] = argv
      break
    elseif takes[a] then
      if v == nil then
        i = i + 1
        v = args[i]
        if v == nil then return nil, a .. " needs a value" end
      end
      if type(takes[a]) == "function" then
        local err = takes[a](o, v)
        if err then return nil, err end
      else
        o[takes[a]] = v
      end
    elseif flags[a] ~= nil and v == nil then
      local f = flags[a]
      if type(f) == "table" then o[f[1]] = f[2] else o[f] = true end
    else
      return nil, "unknown option '" .. args[i] .. "'"
    end
    i = i + 1
  end
  return o
end

-- A takes entry for a number: stores tonumber(value) at key, or says why
-- not ("-F needs a number"); min: the least value accepted.
function M.number(key, message, min)
  return function(o, v)
    local n = tonumber(v)
    if not n or (min and n < min) then return message end
    o[key] = n
  end
end

-- A takes entry for -e: every event of a list (commas inside pmu/.../
-- terms belong to the event) appended to o.events; one that does not
-- parse is refused here, as by luaperf stat.
function M.events(o, v)
  local perf = require "perf"
  for _, ev in ipairs(perf.split_events(v)) do
    local ok, err = perf.parse(ev)
    if not ok then return err end
    o.events[#o.events + 1] = ev
  end
end

-- perf's -C LIST ("0,2-3") as a set of CPUs, or nil and a message.
function M.cpu_list(text)
  local t = {}
  for w in text:gmatch("[^,]+") do
    local a, b = w:match("^(%d+)%-(%d+)$")
    a = tonumber(a or w:match("^(%d+)$"))
    b = tonumber(b) or a
    if not a or b < a then return nil, "-C: bad CPU list '" .. text .. "' (like 0,2-3)" end
    if b - a > 65535 then return nil, "-C: CPU range too large in '" .. text .. "'" end
    for c = a, b do t[c] = true end
  end
  return t
end

-- seconds[.fraction] as nanoseconds; the fraction has 9 digits at most
local function parse_ns(s)
  local sec, frac = s:match("^(%d+)%.(%d*)$")
  if not sec then sec, frac = s:match("^(%d+)$"), "" end
  if not sec or #frac > 9 or #sec > 10 then return nil end
  frac = frac .. string.rep("0", 9 - #frac)
  return tonumber(sec) * 1000000000 + tonumber(frac)
end

-- perf's --time START,STOP (seconds, either side may be empty) as
-- { start=, stop= } in ns, or nil and a message.
function M.time_span(text)
  local a, b = text:match("^([^,]*),([^,]*)$")
  local bad = "--time: '" .. text .. "' is not START,STOP in seconds (like 12.5,13 or ,13.25)"
  if not a then return nil, bad end
  local span = {}
  if a ~= "" then span.start = parse_ns(a); if not span.start then return nil, bad end end
  if b ~= "" then span.stop = parse_ns(b); if not span.stop then return nil, bad end end
  if span.start and span.stop and span.start > span.stop then
    return nil, "--time: the start is after the stop"
  end
  return span
end

-- perf's -C/--cpu LIST and --time START,STOP added to a takes table:
-- o.cpus (a set), o.time ({ start=, stop= } in ns) and o.time_str (the
-- text, which perf report's header repeats), what stacks.window keeps.
function M.window(takes)
  takes["-C"] = function(o, v)
    local err
    o.cpus, err = M.cpu_list(v)
    return err
  end
  takes["--cpu"] = takes["-C"]
  takes["--time"] = function(o, v)
    local err
    o.time_str, o.time, err = v, M.time_span(v)
    return err
  end
  return takes
end

-- A progress line for a long read ("luaperf report: reading FILE: 45%"),
-- on stderr when it is a terminal, once the work has run a second, as
-- perf report shows one: returns opts.progress for stacks.load and the
-- function that clears the line; nil, noop elsewhere.
function M.progress(cmd, path)
  local ok = os.execute("test -t 2")
  if ok ~= true and ok ~= 0 then return nil, function() end end
  local clock = require("perf").core.clock
  local t0, shown = clock(), false
  local function update(done, total)
    if clock() - t0 < 1e9 or total == 0 then return end
    shown = true
    io.stderr:write(string.format("\r%s: reading %s: %3d%% (%.1f of %.1f MB)", cmd, path,
      math.floor(done * 100 / total), done / 2^20, total / 2^20))
    io.stderr:flush()
  end
  return update, function() if shown then io.stderr:write("\r\27[K") end end
end

return M
