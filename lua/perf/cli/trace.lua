-- luaperf trace: system calls and probes, summed or as they happen.
--
--   luaperf trace -s [-p pid | -a] [--duration SEC] [-- cmd ...]
--   luaperf trace -e EV,... [--latency [--unit U]] [-p pid | -a] [-- cmd ...]
--
-- -s pairs raw_syscalls:sys_enter/sys_exit per thread in C (s:syscalls())
-- and prints perf trace -s's table.  -e prints each event (probes with
-- their first arguments, tracepoints with their fields); --latency pairs
-- each uprobe with its return per thread and prints bcc funclatency's
-- log2 histogram (perf.hist) per function at the end.
local perf = require "perf"
local options = require "perf.cli.options"
local core = perf.core

local USAGE = [==[
usage: luaperf trace -s [options] [-- cmd ...]
       luaperf trace -e EV,... [--latency] [options] [-- cmd ...]
  -s, --summary         per thread and system call: calls, errors, total, min, avg,
                        max and stddev of the time (perf trace -s's table)
  -e, --event EV        events to print as they happen (repeatable or a comma list):
                        uprobe:PATH:FUNC, uretprobe:PATH:FUNC, tracepoints, ...
  --latency             with -e uprobe:PATH:FUNC: time each call to its return per
                        thread; a log2 histogram per function at the end
  --unit U              nsecs (default), usecs or msecs for --latency
  -p, --pid PID         an existing process (its threads)
  -a, --all-cpus        every process (system-wide)
  --duration SEC        stop after SEC seconds (else when the command or pid ends, or ^C)
Probes follow the task they are opened on, not its children (give -a to see
every process that runs the function).
]==]

local UNITS = { nsecs = 1, usecs = 1000, msecs = 1000000 }

local function parse(args)
  local o = { events = {} }
  local function unit(t, u)
    if not UNITS[u] then return "--unit: nsecs, usecs or msecs, not '" .. u .. "'" end
    t.unit = u
  end
  local pid = options.number("pid", "-p needs a pid")
  local duration = options.number("duration", "--duration needs seconds", 0)
  local takes = { ["-e"] = options.events, ["--event"] = options.events, ["--unit"] = unit,
    ["-p"] = pid, ["--pid"] = pid, ["--duration"] = duration }
  local flags = { ["-s"] = "summary", ["--summary"] = "summary", ["--latency"] = "latency",
    ["-a"] = "all", ["--all-cpus"] = "all", ["-h"] = "help", ["--help"] = "help" }
  local ok, err = options.parse(args, o, takes, flags, "cmd")
  if not ok then error({ msg = err }) end
  if o.help then return o end
  if not o.summary and #o.events == 0 then error({ msg = "give -s, or events with -e" }) end
  if o.summary and #o.events > 0 then error({ msg = "give -s or -e, not both" }) end
  if o.latency and #o.events == 0 then error({ msg = "--latency needs -e uprobe:PATH:FUNC" }) end
  if not o.cmd and not o.pid and not o.all then
    error({ msg = "nothing to trace: give a command, -p PID or -a" })
  end
  return o
end

-- Opens the session; a command with -a is started apart (system-wide events).
local function open_session(o, events, extra)
  -- one clock for every CPU: a thread that moves between enter and exit
  -- (or a probe and its return) is timed right
  local opts = { events = events, period = 1, inherit = true, pages = 512, clockid = "monotonic" }
  for k, v in pairs(extra or {}) do opts[k] = v end
  if o.all then opts.pid = -1
  elseif o.pid then opts.pid = o.pid
  else opts.cmd = o.cmd end
  local ok, s, err, errno = pcall(perf.session, opts)
  if not ok then return nil, s end
  if not s and (errno == 1 or errno == 12) then
    -- 2 MB rings may pass the locked-memory limit (perf_event_mlock_kb)
    opts.pages = 64
    s, err, errno = perf.session(opts)
  end
  return s, err, errno
end

-- The session opened and started, or nil and the exit status, the
-- reason written on stderr.
local function open(o, events, extra)
  local s, err = open_session(o, events, extra)
  if not s then
    io.stderr:write("luaperf trace: ", tostring(err), "\n")
    return nil, 1
  end
  local ok, serr = s:start()
  if not ok then
    s:close()
    io.stderr:write("luaperf trace: ", o.cmd and ("cannot run '" .. o.cmd[1] .. "': ") or "", tostring(serr), "\n")
    return nil, o.cmd and 255 or 1
  end
  return s
end

-- Runs until the command or pid ends, the duration passes or ^C; calls
-- drain() every 100 ms and once at the end.  Returns the command's status.
local function run_loop(o, s, drain)
  local wl, watch
  if o.cmd and o.all then
    local werr
    wl, werr = core.workload(o.cmd)
    local started, serr
    if wl then started, serr = wl:start() end
    if not started then
      if wl then wl:close() end
      return nil, "cannot run '" .. o.cmd[1] .. "': " .. tostring(serr or werr)
    end
    watch = wl:pid()
  elseif o.cmd then
    watch = s:pid()
  else
    watch = o.pid or 0
  end
  local deadline = o.duration and core.clock() + o.duration
  -- Woken by the rings as they fill (a busy command writes tens of MB a
  -- second), drained each time; ^C ends the loop, not the summary.
  local ok, err = pcall(function()
    while true do
      local limit = 50
      if deadline then
        local left = math.floor((deadline - core.clock()) * 1000 + 0.5)
        if left <= 0 then return end
        if left < limit then limit = left end
      end
      local _, done = s:poll(limit)
      drain()
      if done then return end
      if watch > 0 and not (o.cmd and not o.all) then
        local why = core.sleep(0, watch, true)
        if why == "exited" or why == "interrupted" then return end
      end
    end
  end)
  if not ok and not tostring(err):find("interrupted", 1, true) then error(err, 0) end
  s:stop()
  drain()
  local status = 0
  if wl then
    status = wl:wait() or 0
    wl:close()
  elseif o.cmd then
    local code, why = s:wait()
    status = code or 128 + (tonumber(tostring(why):match("(%d+)")) or 0)
  end
  return status
end

-- perf trace -s's table (builtin-trace.c: trace__fprintf_thread_summary).
local function summary_text(res, self)
  local out = { "\n Summary of events:\n\n" }
  local total = 0
  for _, t in ipairs(res.threads) do total = total + t.events end
  local by_tid = {}
  for _, r in ipairs(res) do
    local l = by_tid[r.tid]
    if not l then l = {}; by_tid[r.tid] = l end
    l[#l + 1] = r
  end
  local threads = {}
  for _, t in ipairs(res.threads) do
    -- as perf trace: not the tracer's own calls (-a)
    if t.events > 0 and by_tid[t.tid] and t.pid ~= self then threads[#threads + 1] = t end
  end
  table.sort(threads, function(a, b)
    if a.events ~= b.events then return a.events < b.events end
    return a.tid < b.tid
  end)
  for _, t in ipairs(threads) do
    out[#out + 1] = string.format(" %s (%d), %d events, %.1f%%\n", t.comm ~= "" and t.comm or ":" .. t.tid,
      t.tid, t.events, total > 0 and 100 * t.events / total or 0)
    out[#out + 1] = "\n   syscall            calls  errors  total       min       avg       max       stddev\n"
    out[#out + 1] = "                                     (msec)    (msec)    (msec)    (msec)        (%)\n"
    out[#out + 1] = "   --------------- --------  ------ -------- --------- --------- ---------     ------\n"
    local rows = by_tid[t.tid]
    table.sort(rows, function(a, b)
      if a.total ~= b.total then return a.total > b.total end
      return (a.name or "") < (b.name or "")
    end)
    for _, r in ipairs(rows) do
      -- perf's stddev column: the standard error of the mean, in % of it
      local pct = r.mean > 0 and 100 * (r.stddev / math.sqrt(r.calls)) / r.mean or 0
      out[#out + 1] = string.format("   %-15s %8d %6d %9.3f %9.3f %9.3f %9.3f %9.2f%%\n",
        r.name or tostring(r.nr), r.calls, r.errors, r.total / 1e6, r.min / 1e6, r.mean / 1e6,
        r.max / 1e6, pct)
    end
    out[#out + 1] = "\n"
  end
  return table.concat(out)
end

local function summary(o)
  local s, code = open(o, { "raw_syscalls:sys_enter", "raw_syscalls:sys_exit" })
  if not s then return code end
  local res, derr
  local comms = {}   -- threads that ran before the session: no COMM record
  local status, lerr = run_loop(o, s, function()
    local r, e = s:syscalls()
    if r then res = r else derr = derr or e end
    for _, t in ipairs(r and r.threads or {}) do
      if t.comm == "" and not comms[t.tid] then
        local f = io.open("/proc/" .. t.pid .. "/task/" .. t.tid .. "/comm")
        comms[t.tid] = f and f:read("l") or false
        if f then f:close() end
      end
    end
  end)
  for _, t in ipairs(res and res.threads or {}) do
    if t.comm == "" and comms[t.tid] then t.comm = comms[t.tid] end
  end
  local st = s:stats()
  s:close()
  if not status then
    io.stderr:write("luaperf trace: ", lerr, "\n")
    return 255
  end
  if derr then io.stderr:write("luaperf trace: ", tostring(derr), "\n") end
  if st.lost and st.lost > 0 then
    io.stderr:write(string.format("Warning: lost %d events: the ring buffer was full\n", st.lost))
  end
  local f = io.open("/proc/self/stat")
  local self = f and tonumber(f:read("l"):match("^(%d+)"))
  if f then f:close() end
  io.stdout:write(summary_text(res or { threads = {} }, self))
  return status
end

-- ---- events as they happen ----

-- Tracepoint formats from tracefs, for fields of live samples.
local formats = {}
local function format_of(name)
  if formats[name] ~= nil then return formats[name] end
  local sys, ev = name:match("^([^:]+):([^:]+)$")
  local caps = perf.caps()
  local f = sys and caps.tracefs and io.open(caps.tracefs .. "/events/" .. sys .. "/" .. ev .. "/format")
  local fields = false
  if f then
    fields = {}
    for decl, off, size, signed in f:read("a"):gmatch("field:([^;]+);%s*offset:(%d+);%s*size:(%d+);%s*signed:(%d)") do
      local fname = decl:match("([%w_]+)%s*$") or decl:match("([%w_]+)%[")
      if fname and not fname:match("^common_") then
        fields[#fields + 1] = { name = fname, off = tonumber(off), size = tonumber(size),
          signed = signed == "1", loc = decl:find("__data_loc", 1, true) ~= nil,
          str = decl:find("char", 1, true) ~= nil, array = decl:find("%[") ~= nil }
      end
    end
    f:close()
  end
  formats[name] = fields
  return fields
end

-- A little-endian integer of raw (LuaJIT has no string.unpack).
local function int_at(raw, off, size, signed)
  if off + size > #raw then return nil end
  local v = 0
  for k = size, 1, -1 do v = v * 256 + raw:byte(off + k) end
  if signed and size < 8 and v >= 2 ^ (8 * size - 1) then v = v - 2 ^ (8 * size) end
  if signed and size == 8 and v >= 2 ^ 63 then v = v - 2 ^ 64 end
  return v
end

local function fields_text(rec)
  local fmt = rec.raw and format_of(rec.event)
  if not fmt then return "" end
  local parts = {}
  for _, f in ipairs(fmt) do
    local val
    if f.loc then
      local loc = int_at(rec.raw, f.off, 4, false)
      if loc then
        local o, n = loc % 65536, math.floor(loc / 65536)
        val = rec.raw:sub(o + 1, o + n):gsub("%z.*$", "")
      end
    elseif f.array and f.str then
      val = rec.raw:sub(f.off + 1, f.off + f.size):gsub("%z.*$", "")
    elseif not f.array and f.size <= 8 then
      val = int_at(rec.raw, f.off, f.size, f.signed)
      if val then val = string.format("%.0f", val) end
    end
    if val then parts[#parts + 1] = f.name .. "=" .. val end
  end
  return table.concat(parts, " ")
end

local function hex(v) return string.format("0x%x", v) end

local function probe_text(rec, ev)
  local r = rec.regs
  if not r then return "" end
  if ev:match("^uretprobe:") or ev:match("^kretprobe:") then
    return "= " .. hex(r.ax)
  end
  return string.format("(%s, %s, %s)", hex(r.di), hex(r.si), hex(r.dx))
end

local function is_probe(ev) return ev:match("^[uk]probe:") or ev:match("^[uk]retprobe:") end

local function show(o)
  local probes = false
  for _, ev in ipairs(o.events) do if is_probe(ev) then probes = true end end
  local s, code = open(o, o.events, probes and { sample = { "regs" } } or nil)
  if not s then return code end
  local comms, t0 = {}, nil
  local out = io.stdout
  local status, lerr = run_loop(o, s, function()
    local batch = {}
    for rec in s:records() do
      if rec.type == "COMM" then comms[rec.tid] = rec.comm
      elseif rec.type == "SAMPLE" then batch[#batch + 1] = rec end
    end
    table.sort(batch, function(a, b) return a.time < b.time end)
    for _, rec in ipairs(batch) do
      t0 = t0 or rec.time
      local ev = rec.event or "?"
      local detail = is_probe(ev) and probe_text(rec, ev) or fields_text(rec)
      out:write(string.format("%10.3f %s/%d %s: %s\n", (rec.time - t0) / 1e6,
        comms[rec.tid] or comms[rec.pid] or "?", rec.tid, ev, detail))
    end
    out:flush()
  end)
  s:close()
  if not status then
    io.stderr:write("luaperf trace: ", lerr, "\n")
    return 255
  end
  return status
end

-- ---- --latency ----

local function latency(o)
  -- each function's entry and return probes
  local funcs, events, role = {}, {}, {}
  for _, ev in ipairs(o.events) do
    local kind, rest = ev:match("^(u?r?e?t?probe):(.*)$")
    if kind ~= "uprobe" and kind ~= "uretprobe" then
      error({ msg = "--latency times functions: give uprobe:PATH:FUNC (not '" .. ev .. "')" })
    end
    if rest:match("%+[%dx]+$") then
      error({ msg = "--latency times whole functions: no +OFFSET in '" .. ev .. "'" })
    end
    if not funcs[rest] then
      funcs[rest] = { name = rest:match("([^:]+)$"), spec = rest, hist = perf.hist() }
      funcs[#funcs + 1] = funcs[rest]
      events[#events + 1] = "uprobe:" .. rest
      role["uprobe:" .. rest] = { f = funcs[rest], entry = true }
      events[#events + 1] = "uretprobe:" .. rest
      role["uretprobe:" .. rest] = { f = funcs[rest], entry = false }
    end
  end
  local s, code = open(o, events)
  if not s then return code end
  local unit = o.unit or "nsecs"
  local div = UNITS[unit]
  local names = {}
  for _, f in ipairs(funcs) do names[#names + 1] = f.name end
  io.stderr:write(string.format("Tracing %d function%s for \"%s\"... Hit Ctrl-C to end.\n",
    #funcs, #funcs == 1 and "" or "s", table.concat(names, ",")))
  local stacks = {}    -- [func][tid] = { entry times }
  local status, lerr = run_loop(o, s, function()
    local batch = {}
    for rec in s:records{ type = "SAMPLE" } do batch[#batch + 1] = rec end
    table.sort(batch, function(a, b) return a.time < b.time end)
    for _, rec in ipairs(batch) do
      local r = role[rec.event]
      if r then
        local per = stacks[r.f]
        if not per then per = {}; stacks[r.f] = per end
        local st = per[rec.tid]
        if r.entry then
          if not st then st = {}; per[rec.tid] = st end
          st[#st + 1] = rec.time
        elseif st and #st > 0 then
          local t = table.remove(st)
          -- as bcc: whole units, truncated
          r.f.hist:add(math.floor((rec.time - t) / div))
        end
      end
    end
  end)
  s:close()
  if not status then
    io.stderr:write("luaperf trace: ", lerr, "\n")
    return 255
  end
  for _, f in ipairs(funcs) do
    if #funcs > 1 then io.stdout:write("\nFunction = ", f.name, "\n") end
    io.stdout:write(f.hist:text{ unit = unit, summary = true })
  end
  return status
end

local function run(args)
  local ok, o = pcall(parse, args)
  if not ok then
    io.stderr:write("luaperf trace: ", type(o) == "table" and o.msg or tostring(o), "\n", USAGE)
    return 129
  end
  if o.help then io.stdout:write(USAGE); return 0 end
  if o.summary then return summary(o) end
  if o.latency then
    local lok, st = pcall(latency, o)
    if not lok then
      io.stderr:write("luaperf trace: ", type(st) == "table" and st.msg or tostring(st), "\n")
      return 129
    end
    return st
  end
  return show(o)
end

return run
