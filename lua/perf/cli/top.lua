-- luaperf top: perf top's view of a live session, refreshed in place.
--
--   luaperf top [-e EVENT] [-p PID | -a] [-d SECONDS] [-g] [--sort KEYS] [--stdio]
--
-- Each interval the session's rings are drained into a fresh profile in C
-- (s:profile), symbolized once into a view (p:view, the session's
-- symbolizer) and laid out by the report engine (v:report_text): nothing
-- per sample runs in Lua.  On a terminal the table is redrawn in place
-- (alternate screen) until `q`; with --stdio, or when stdout is not a
-- terminal, a plain table is printed per interval.
local perf = require "perf"
local options = require "perf.cli.options"

local USAGE = [==[
usage: luaperf top [-e EVENT] [-p PID | -a] [-d SECONDS] [-g] [--sort KEYS] [options]
  -e, --event EV        event to sample (default cycles, cpu-clock where there
                        is no hardware PMU)
  -F, --freq HZ         sampling frequency (default 4000)
  -c, --count N         sample every N events
  -p, --pid PID         a process (its threads); default: every CPU (-a)
  -a, --all-cpus        every CPU, every process (default)
  -d, --delay SECS      refresh interval (default 2)
  -g                    call chains (frame pointers): the call graph under rows
  -s, --sort KEYS       comma list of dso, sym, comm, pid, tid, cpu (default dso,sym)
  -n N                  at most N rows (default: what fits; 20 with --stdio)
  --percent-limit P     hide rows under P percent
  --stdio               a plain table per interval (also when stdout is no terminal)
  --duration SECS       stop after SECS seconds (else q, ^C, or the process ends)
  keys: q quit
]==]

local function parse(args)
  local o = { delay = "2", sort = "dso,sym" }
  local takes = { ["-e"] = "event", ["--event"] = "event", ["-F"] = "freq", ["--freq"] = "freq",
    ["-c"] = "count", ["--count"] = "count", ["-p"] = "pid", ["--pid"] = "pid",
    ["-d"] = "delay", ["--delay"] = "delay", ["-s"] = "sort", ["--sort"] = "sort",
    ["-n"] = "n", ["--percent-limit"] = "percent_limit", ["--duration"] = "duration" }
  local flags = { ["-a"] = "all", ["--all-cpus"] = "all", ["-g"] = "graph", ["--stdio"] = "stdio",
    ["-h"] = "help", ["--help"] = "help" }
  local ok, err = options.parse(args, o, takes, flags)
  if not ok then return nil, err end
  for _, k in ipairs({ "freq", "count", "pid", "delay", "n", "percent_limit", "duration" }) do
    if o[k] then
      local v = tonumber(o[k])
      if not v or v < 0 then return nil, "--" .. k:gsub("_", "-") .. " expects a number, got '" .. o[k] .. "'" end
      o[k] = v
    end
  end
  if o.delay <= 0 then return nil, "-d expects a positive number of seconds" end
  if o.freq and o.count then return nil, "give -F or -c, not both" end
  if o.pid and o.all then return nil, "give -p or -a, not both" end
  for k in o.sort:gmatch("[^,%s]+") do
    local known = { dso = 1, sym = 1, symbol = 1, comm = 1, pid = 1, tid = 1, cpu = 1 }
    if not known[k] then return nil, "--sort: unknown key '" .. k .. "' (dso, sym, comm, pid, tid, cpu)" end
  end
  return o
end

local function open_session(o, event)
  local opts = { events = { event }, freq = o.freq, period = o.count,
    callchain = o.graph and "fp" or nil }
  if not opts.freq and not opts.period then opts.freq = 4000 end
  if o.pid then opts.pid = o.pid else opts.pid = -1 end
  local ok, s, err = pcall(perf.session, opts)
  if not ok then return nil, s end
  return s, err
end

-- perf's sample count: 2814 -> "2K"
local short_count = require("perf.report").short_count

-- One interval's text: perf top's header, warnings, the report table.
local function render(o, st, p, sym, nrows)
  local samples, period = p:total()
  local lines = {}
  local rate = samples / st.secs
  local target = o.pid and ("pid " .. o.pid) or string.format("all, %d CPUs", st.ncpus)
  lines[1] = string.format("   PerfTop: %8.0f irqs/sec  kernel:%4.1f%%  lost: %d/%d  throttled: %d" ..
    "  [%s%s],  (%s)", rate, st.kernel_pct or 0, st.lost, st.lost_total, st.throttled,
    st.freq_text, st.event, target)
  lines[2] = string.format("Samples: %s of event '%s', Event count (approx.): %.0f, every %gs",
    short_count(samples), st.event, period, o.delay)
  if st.lost > 0 then
    lines[#lines + 1] = string.format("WARNING: %d samples lost in this interval: the ring was full " ..
      "(a lower -F or a larger ring)", st.lost)
  end
  if st.throttled > 0 then
    lines[#lines + 1] = string.format("WARNING: throttled %d times: the rate exceeds " ..
      "kernel.perf_event_max_sample_rate; lower -F", st.throttled)
  end
  lines[#lines + 1] = string.rep("-", 79)
  if samples == 0 then
    lines[#lines + 1] = "  (no samples in this interval)"
    return lines
  end
  local v = assert(p:view{ symbolizer = sym })
  local keys = {}
  for k in o.sort:gmatch("[^,%s]+") do
    if k == "symbol" then k = "sym" end
    keys[#keys + 1] = k
  end
  local by = {}
  for i, k in ipairs(keys) do by[i] = (k == "pid" or k == "tid") and "thread" or k end
  -- kernel share: the rows of the leaf symbols in the kernel
  local ksum = 0
  for _, r in ipairs(v:report{ by = "sym", weight = "period" }) do
    if r.kind == "kernel" then ksum = ksum + (r.self or 0) end
  end
  st.kernel_pct = 100 * ksum / (period > 0 and period or 1)
  lines[1] = lines[1]:gsub("kernel:%s*[%d.]+%%", (string.format("kernel:%4.1f%%%%", st.kernel_pct)))
  local cols = o.graph and { "children", "self" } or { "overhead" }
  for _, k in ipairs(keys) do cols[#cols + 1] = k end
  local text = v:report_text{ by = by, children = o.graph and true or false, columns = cols,
    n = nrows, percent_limit = o.percent_limit, graph = o.graph, graph_pct = o.percent_limit or 0.5,
    weight = "period" }
  v:close()
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    -- perf top shows the table without report's comment rules
    if line ~= "#" then lines[#lines + 1] = line end
  end
  while lines[#lines] == "" do lines[#lines] = nil end
  return lines
end

local function ncpus()
  local f = io.open("/sys/devices/system/cpu/online")
  local s = f and f:read("l") or "0"
  if f then f:close() end
  local n = 0
  for part in s:gmatch("[^,]+") do
    local a, b = part:match("^(%d+)%-(%d+)$")
    n = n + (a and (tonumber(b) - tonumber(a) + 1) or 1)
  end
  return n
end

local function run(args)
  local o, err = parse(args)
  if not o then
    io.stderr:write("luaperf top: ", err, "\n", USAGE)
    return 129
  end
  if o.help then io.stdout:write(USAGE); return 0 end

  local event = o.event
  local s, serr
  if event then
    s, serr = open_session(o, event)
  else
    event = "cycles"
    s, serr = open_session(o, event)
    if not s then
      event = "cpu-clock"
      s, serr = open_session(o, event)
    end
  end
  if not s then
    io.stderr:write("luaperf top: ", tostring(serr), "\n")
    return 1
  end
  local sym = s:symbolizer()
  local core = perf.core
  local tty = not o.stdio and core.isatty(1) and core.terminal(0) or nil
  local clock = core.clock
  local st = { event = event, ncpus = ncpus(), lost = 0, lost_total = 0, throttled = 0,
    freq_text = o.count and ("c=" .. o.count .. " ") or string.format("%dHz ", o.freq or 4000) }

  local out = io.stdout
  if tty then out:write("\27[?1049h\27[?25l\27[H\27[2J"); out:flush() end
  local function restore()
    if tty then
      tty:restore()
      out:write("\27[?25h\27[?1049l")
      out:flush()
      tty = nil
    end
  end

  local status = 0
  local ok, e = pcall(function()
    assert(s:start())
    local t_start = clock()
    local t_drained = t_start
    local last = s:stats()
    local reset = false
    while true do
      local t0 = clock()
      local quit, done = false, false
      repeat
        local _, d = s:poll(100)
        done = d
        s:profile(reset and { reset = true } or nil)
        reset = false
        if tty then
          local k = tty:key(0)
          if k == "q" or k == "Q" then quit = true end
        end
        if o.duration and clock() - t_start >= o.duration then quit = true end
      until quit or done or clock() - t0 >= o.delay
      local p = s:profile()
      reset = true
      local now = s:stats()
      -- the rate over what this profile holds: since the last final drain
      -- (the samples taken while the last table was drawn are in it)
      local t1 = clock()
      st.secs = math.max(t1 - t_drained, 1e-3)
      t_drained = t1
      st.lost = now.lost - last.lost
      st.lost_total = now.lost
      st.throttled = now.throttled - last.throttled
      last = now
      local rows, cols = 24, 80
      if tty then rows, cols = tty:size() end
      local nrows = o.n or (tty and math.max(rows - 10, 3)) or 20
      local lines = render(o, st, p, sym, nrows)
      p:close()
      if tty then
        local buf = { "\27[H" }
        for i = 1, math.min(#lines, rows - 1) do
          local l = lines[i]
          if #l > cols then l = l:sub(1, cols) end
          buf[#buf + 1] = l .. "\27[K\r\n"
        end
        buf[#buf + 1] = "\27[J"
        buf[#buf + 1] = string.format("\27[%d;1H\27[7m luaperf top: q quit, every %gs \27[0m\27[K",
          rows, o.delay)
        out:write(table.concat(buf))
      else
        out:write(table.concat(lines, "\n"), "\n\n")
      end
      out:flush()
      if done then
        restore()
        io.stderr:write(o.pid and string.format("luaperf top: process %d exited\n", o.pid)
          or "luaperf top: the target is gone\n")
        break
      end
      if quit then break end
    end
  end)
  restore()
  s:close()
  if not ok then
    if tostring(e):match("interrupted") then return 130 end
    if tostring(e):match("Broken pipe") then return 0 end
    io.stderr:write("luaperf top: ", tostring(e):gsub("^[^:\n]*%.lua:%d+: ", ""), "\n")
    return 1
  end
  return status
end

return run
