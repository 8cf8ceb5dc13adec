-- luaperf record: sample into a perf.data file that perf report/script read.
--
--   luaperf record [-e ev]... [-F hz | -c period] [-g | --call-graph fp|dwarf[,size]]
--                  [-p pid | -a | -C cpus] [-m pages] [--switch-events] [--overwrite]
--                  [--duration sec] [--off-cpu [--off-cpu-thresh US]] [-o FILE] [-- cmd ...]
--
-- The session drains its rings into the file from C (perf.Writer); Lua only
-- sets things up and prints perf's summary line at the end.
local perf = require "perf"
local options = require "perf.cli.options"

local USAGE = [==[
usage: luaperf record [options] [-- cmd ...]
  -e, --event EV        event to sample (repeatable, or a comma list; default cycles,
                        cpu-clock where there is no hardware PMU); {a,b}:S
                        samples the leader and reads the group at each sample
  -F, --freq HZ         sampling frequency (default 4000)
  -c, --count N         sample every N events (a fixed period)
  -g                    frame-pointer call chains
  --call-graph MODE     fp | dwarf[,stack bytes]
  -p, --pid PID         an existing process
  -a, --all-cpus        every CPU (system-wide)
  -C, --cpu LIST        these CPUs ("0,2-3"), system-wide on them
  -m, --mmap-pages N    ring data pages per ring (a power of two)
  --switch-events       record context switches
  --off-cpu             off-CPU samples: the call chain at each switch-out of a
                        blocked thread, event 'offcpu-time', period = ns until
                        its switch-in (alone, or beside the -e events)
  --off-cpu-thresh US   leave out waits shorter than US microseconds
  --overwrite           flight recorder: keep the newest records, write them at the end
  --duration SEC        stop after SEC seconds (else when the command or pid ends, or Ctrl-C)
  -o, --output FILE     output file (default perf.data)
]==]

local function cpu_list(s)
  local out = {}
  for part in s:gmatch("[^,]+") do
    local a, b = part:match("^(%d+)%-(%d+)$")
    if a then
      for c = tonumber(a), tonumber(b) do out[#out + 1] = c end
    elseif part:match("^%d+$") then
      out[#out + 1] = tonumber(part)
    else
      return nil, "bad CPU list '" .. s .. "'"
    end
  end
  return out
end

local function parse(args)
  local o = { events = {}, output = "perf.data" }
  local function callgraph(t, m)
    if m ~= "fp" and not m:match("^dwarf") then
      return "--call-graph: expected fp or dwarf[,size], got '" .. m .. "'"
    end
    t.callchain = m
  end
  local function cpus(t, s)
    local l, err = cpu_list(s)
    t.cpus = l
    return err
  end
  local freq, period = options.number("freq", "-F needs a number"), options.number("period", "-c needs a number")
  local pid, pages = options.number("pid", "-p needs a pid"), options.number("pages", "-m needs a number of pages")
  local takes = {
    ["-e"] = options.events, ["--event"] = options.events,
    ["-F"] = freq, ["--freq"] = freq, ["-c"] = period, ["--count"] = period,
    ["--call-graph"] = callgraph, ["-p"] = pid, ["--pid"] = pid,
    ["-C"] = cpus, ["--cpu"] = cpus, ["-m"] = pages, ["--mmap-pages"] = pages,
    ["--off-cpu-thresh"] = options.number("offcpu_thresh", "--off-cpu-thresh needs a number of microseconds", 0),
    ["--duration"] = options.number("duration", "--duration needs seconds", 0),
    ["-o"] = "output", ["--output"] = "output",
  }
  local flags = { ["-g"] = { "callchain", "fp" }, ["-a"] = "all", ["--all-cpus"] = "all",
    ["--switch-events"] = "switch", ["--off-cpu"] = "offcpu", ["--overwrite"] = "overwrite",
    ["-h"] = "help", ["--help"] = "help" }
  local ok, err = options.parse(args, o, takes, flags, "cmd")
  if not ok then error({ msg = err }) end
  if o.help then return o end
  if o.freq and o.period then error({ msg = "give -F or -c, not both" }) end
  if o.offcpu_thresh and not o.offcpu then error({ msg = "--off-cpu-thresh needs --off-cpu" }) end
  if o.offcpu and o.overwrite then error({ msg = "--off-cpu and --overwrite do not go together" }) end
  if not o.cmd and not o.pid and not o.all and not o.cpus then
    error({ msg = "nothing to record: give a command, -p PID, -a or -C" })
  end
  return o
end

local function open_session(o, events)
  -- tracepoints get their raw payload and every hit from the session
  local opts = {
    events = #events > 0 and events or nil,
    offcpu = o.offcpu, offcpu_thresh = o.offcpu_thresh,
    freq = o.freq, period = o.period,
    callchain = o.callchain,
    pages = o.pages,
    context_switch = o.switch or nil,
    overwrite = o.overwrite or nil,
    -- system-wide sessions do not run the command: run() starts it itself
    cmd = not (o.all or o.cpus) and o.cmd or nil,
  }
  if not opts.freq and not opts.period then opts.freq = 4000 end
  if o.pid then opts.pid = o.pid
  elseif o.all or o.cpus then opts.pid = -1; opts.cpus = o.cpus end
  -- argument errors (a -m that is not a power of two, ...) raise: report them
  local ok, s, err, errno = pcall(perf.session, opts)
  if not ok then return nil, s end
  return s, err, errno
end

-- "luaperf record: cannot run 'PROG': why", whichever layer said why.
local function cannot_run(prog, why)
  why = tostring(why):gsub("^start: ", ""):gsub("^cannot exec '[^']*': ", "")
  return "luaperf record: cannot run '" .. tostring(prog) .. "': " .. why .. "\n"
end

local function run(args)
  local ok, o = pcall(parse, args)
  if not ok then
    io.stderr:write("luaperf record: ", type(o) == "table" and o.msg or tostring(o), "\n", USAGE)
    return 129
  end
  if o.help then io.stdout:write(USAGE); return 0 end

  local events = o.events
  local s, err, errno
  if #events == 0 and o.offcpu then
    -- off-CPU samples alone (perf adds its default event: give -e for one)
    s, err, errno = open_session(o, events)
  elseif #events == 0 then
    -- perf's default, and its fallback where there is no hardware PMU
    s, err, errno = open_session(o, { "cycles" })
    if not s then
      events = { "cpu-clock" }
      s, err, errno = open_session(o, events)
    end
  else
    s, err, errno = open_session(o, events)
  end
  if not s then
    io.stderr:write("luaperf record: ", tostring(err), "\n")
    return 1
  end

  local w, werr = perf.writer(o.output)
  if not w then
    s:close()
    io.stderr:write("luaperf record: ", tostring(werr), "\n")
    return 1
  end
  -- The header's cmdline names the command run, as perf's names perf
  -- (arg[0]: bin/luaperf's path; not the interpreter running it).
  local argv = { _G.arg and _G.arg[0] or "luaperf", "record" }
  for _, a in ipairs(args) do argv[#argv + 1] = a end
  w:add_session(s)
  w:cmdline(argv)
  -- A command is exec'd under the events: the kernel reports its COMM and
  -- mmaps.  Tasks that run already need them synthesized from /proc, after
  -- the events are on, so no task slips between the two.
  local st_ok, started_err = s:start()
  if not st_ok then
    -- nothing half-written stays behind
    w:close(); s:close()
    os.remove(o.output)
    if o.cmd then
      -- as perf: the workload named, with why it could not run; the exit
      -- status is the command's, 255 when it cannot run (as luaperf stat)
      io.stderr:write(cannot_run(o.cmd[1], started_err))
      return 255
    end
    io.stderr:write("luaperf record: ", tostring(started_err), "\n")
    return 1
  end
  local sok, serr
  if o.all or o.cpus then
    sok, serr = w:synthesize(-1)
  elseif o.pid then
    sok, serr = w:synthesize(o.pid)
  else
    sok, serr = w:synthesize()
  end
  if not sok then io.stderr:write("luaperf record: warning: ", tostring(serr), "\n") end
  local duration_ms = o.duration and math.floor(o.duration * 1000) or nil
  -- -a/-C with a command: the machine is recorded while the command runs;
  -- the command is forked blocked, then exec'd (never through a shell).
  local wl, watch
  if o.cmd and (o.all or o.cpus) then
    local werr2
    wl, werr2 = perf.core.workload(o.cmd)
    local started, serr2
    if wl then started, serr2 = wl:start() end
    if not wl or not started then
      if wl then wl:close() end
      w:close(); s:close()
      os.remove(o.output)
      io.stderr:write(cannot_run(o.cmd[1], serr2 or werr2))
      return 255
    end
    watch = wl:pid()
  end
  local stats, rerr
  if o.overwrite then
    stats, rerr = w:record_overwrite(s, { duration_ms = duration_ms, watch_pid = watch })
  else
    stats, rerr = w:record(s, { duration_ms = duration_ms, watch_pid = watch })
  end
  -- as perf record: the command's exit status is ours
  local status = 0
  if wl then
    status = wl:wait() or 0
    wl:close()
  elseif o.cmd and s.wait then
    local code, why = s:wait()
    if code then
      status = code
    elseif type(why) == "string" then
      status = 128 + (tonumber(why:match("(%d+)")) or 0)
    end
  end
  local cok, cerr = w:close()
  local s_stats = s:stats()
  s:close()
  if not stats or not cok then
    io.stderr:write("luaperf record: ", tostring(rerr or cerr), "\n")
    return 1
  end
  local f = io.open(o.output, "rb")
  local size = f and f:seek("end") or 0
  if f then f:close() end
  if stats.lost > 0 or stats.lost_samples > 0 then
    io.stderr:write(string.format(
      "Warning: lost %d samples (%d more dropped by the kernel): the ring buffer was full; " ..
      "use a larger -m or a lower -F/-c rate\n", stats.lost, stats.lost_samples))
  end
  if stats.throttled > 0 then
    io.stderr:write(string.format(
      "Warning: the event was throttled %d times: the rate exceeds " ..
      "kernel.perf_event_max_sample_rate; lower -F or raise -c\n", stats.throttled))
  end
  local oc = o.offcpu and s_stats and s_stats.offcpu
  if oc then
    io.stderr:write(string.format("[ luaperf record: %d off-CPU samples, %.3f s blocked " ..
      "(%d switch-outs: %d preempted, %d shorter than the threshold) ]\n",
      oc.samples, oc.ns / 1e9, oc.switch_outs, oc.preempted, oc.short))
  end
  io.stderr:write(string.format("[ perf record: Captured and wrote %.3f MB %s (%d samples) ]\n",
    size / 1024 / 1024, o.output, stats.samples))
  return status
end

return run
