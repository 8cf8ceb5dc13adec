-- perf.stat: the one-call form of counting, as `perf stat` does it.
--
--   local res, err, errno = perf.stat{
--     events = {"task-clock", "page-faults"} or "task-clock,page-faults",
--                                  -- default: perf stat's set
--     run = {"make", "-j2"},       -- a command: forked, counted from its exec,
--                                  -- children included; or a function (this
--                                  -- process, children it forks included)
--     pid = 1234,                  -- count a process instead (run, if given,
--                                  -- is then only a timer), or
--     cpu = "all" | n,             -- count every CPU (perf stat -a) or one
--     duration = seconds,          -- with pid/cpu and no run: how long
--     ["repeat"] = 5,              -- runs; values are means, stddev of the mean
--     interval = 100,              -- ms: sample every interval (commands, pids,
--     on_interval = function(row)  --   CPUs), rows in res.intervals
--     inherit = true,              -- default true
--     exclude_user = ..., ...      -- exclude_* overrides for every event
--     user_fallback = true,        -- as perf at paranoid 2: retry refused
--   }                              --   unmodified events as :u
--
--   res.events[i] / res.events[name] = { name=, spec=, unit=, scale=,
--     supported=, counted=, value= (mean), stddev=, values={per run},
--     raw=, enabled=, running=, metric=, metric_unit= ("CPUs utilized",
--     "K/sec", "insn per cycle", ...), error=, errno= (when unsupported) }
--   res.elapsed, res.elapsed_stddev (s), res.status / res.how / res.signal
--   (the command's exit), res.user, res.sys (s), res.intervals, res.runs
--
-- Events that the machine lacks (ENOENT, EOPNOTSUPP, EINVAL, ...) become
-- rows with supported = false, as perf prints <not supported>; any other
-- open failure (EACCES, ESRCH, EMFILE, ...) returns nil, msg, errno.
return function(perf)
  local core = perf.core

  -- perf stat's default set (tools/perf/builtin-stat.c): cpu-clock replaces
  -- task-clock system-wide; the stalled-cycles pair only where the PMU has it.
  local function default_events(system_wide)
    local evs = { system_wide and "cpu-clock" or "task-clock", "context-switches",
                  "cpu-migrations", "page-faults", "cycles" }
    local dir = "/sys/bus/event_source/devices/cpu/events/"
    for _, e in ipairs({ "stalled-cycles-frontend", "stalled-cycles-backend" }) do
      local f = io.open(dir .. e, "r")
      if f then f:close(); evs[#evs + 1] = e end
    end
    for _, e in ipairs({ "instructions", "branches", "branch-misses" }) do evs[#evs + 1] = e end
    return evs
  end
  perf.stat_default_events = default_events

  -- What perf stat reports as <not supported> instead of failing.
  local unsupported_errno = { [2] = true, [95] = true, [22] = true, [38] = true,
                              [6] = true, [19] = true }  -- ENOENT EOPNOTSUPP EINVAL ENOSYS ENXIO ENODEV

  -- Kinds by perf's names, modifiers stripped, for units and derived ratios.
  local kinds = {
    ["task-clock"] = "clock", ["cpu-clock"] = "clock",
    ["cycles"] = "cycles", ["cpu-cycles"] = "cycles",
    ["instructions"] = "instructions",
    ["branches"] = "branches", ["branch-instructions"] = "branches",
    ["branch-misses"] = "branch-misses",
    ["cache-references"] = "cache-references", ["cache-misses"] = "cache-misses",
    ["stalled-cycles-frontend"] = "stalled-frontend", ["idle-cycles-frontend"] = "stalled-frontend",
    ["stalled-cycles-backend"] = "stalled-backend", ["idle-cycles-backend"] = "stalled-backend",
  }
  local function kind_of(name)
    return kinds[(name:gsub(":.*$", ""))]
  end

  local function split_events(events, system_wide)
    if events == nil then return default_events(system_wide) end
    if type(events) == "string" then
      local list = {}
      -- Commas inside pmu/.../ and {...} belong to the event.
      local depth, cur = 0, {}
      for ch in events:gmatch(".") do
        if ch == "/" then depth = depth == 0 and 1 or 0 end
        if ch == "{" then depth = depth + 1 elseif ch == "}" then depth = depth - 1 end
        if ch == "," and depth == 0 then
          list[#list + 1] = table.concat(cur); cur = {}
        else
          cur[#cur + 1] = ch
        end
      end
      list[#list + 1] = table.concat(cur)
      local out = {}
      for _, e in ipairs(list) do if e ~= "" then out[#out + 1] = e end end
      return out
    end
    if type(events) ~= "table" then
      error("perf.stat: events must be a table or a comma-separated string", 3)
    end
    for i, e in ipairs(events) do
      if type(e) ~= "string" then error("perf.stat: event " .. i .. " must be a string", 3) end
    end
    return events
  end

  local function close_all(counters)
    for _, c in ipairs(counters) do if c.counter then c.counter:close() end end
  end

  -- Opens every event; rows for unsupported ones; nil, msg, errno on a fatal failure.
  -- user_fallback: as perf stat does at perf_event_paranoid 2, an event
  -- without modifiers that is refused (EACCES/EPERM) is retried as :u.
  local function open_events(specs, copts, user_fallback)
    local rows = {}
    local fell_back = false
    for i, spec in ipairs(specs) do
      local plain = not spec:find("[:/]")
      local c, msg, errno
      if fell_back and plain then
        spec = spec .. ":u"
        c, msg, errno = core.counter(spec, copts)
      else
        c, msg, errno = core.counter(spec, copts)
        if not c and (errno == 13 or errno == 1) and user_fallback and plain then
          local c2, msg2, errno2 = core.counter(spec .. ":u", copts)
          if c2 or unsupported_errno[errno2] then
            c, msg, errno, spec, fell_back = c2, msg2, errno2, spec .. ":u", true
            -- The events already opened keep kernel counting; perf renames
            -- only the rows it retried, and so do we.
          end
        end
      end
      local row = { spec = spec, name = c and c:name() or spec, counter = c }
      if not c then
        if not unsupported_errno[errno] then
          close_all(rows)
          return nil, msg, errno
        end
        row.supported, row.error, row.errno = false, msg, errno
      else
        row.supported = true
      end
      row.kind = kind_of(row.name)
      row.unit = row.kind == "clock" and "msec" or ""
      row.scale = row.kind == "clock" and 1e-6 or 1
      rows[i] = row
    end
    return rows
  end

  local function for_counters(rows, method)
    for _, r in ipairs(rows) do
      if r.counter then
        local ok, msg, errno = r.counter[method](r.counter)
        if not ok then return nil, msg, errno end
      end
    end
    return true
  end

  -- Cumulative reads of every counter into r.now = {raw, enabled, running}.
  local function read_all(rows)
    for _, r in ipairs(rows) do
      if r.counter then
        local v, msg, errno = r.counter:read(r.buf)
        if not v then return nil, msg, errno end
        r.buf = v
      end
    end
    return true
  end

  -- One sample of every event: deltas against prev (or totals).
  local function snapshot(rows, prev)
    local out = {}
    for i, r in ipairs(rows) do
      local s = { name = r.name, spec = r.spec, kind = r.kind, unit = r.unit,
                  scale = r.scale, supported = r.supported, error = r.error, errno = r.errno }
      if r.counter then
        local b = r.buf
        local raw, ena, run = b.raw or 0, b.enabled, b.running
        s.cum = { raw = raw, enabled = ena, running = run }
        local p = prev and prev[i] and prev[i].cum
        if p then
          raw, ena, run = raw - p.raw, ena - p.enabled, run - p.running
        end
        s.raw, s.enabled, s.running = raw, ena, run
        s.counted = run > 0
        if s.counted then
          -- Scaled for multiplexing; an unscaled count stays an integer.
          if run < ena then s.value = raw * (ena / run) else s.value = raw end
        end
      else
        s.counted = false
        s.enabled, s.running = 0, 0
      end
      out[i] = s
    end
    return out
  end

  -- perf's derived ratios, from one set of samples and the wall time (ns).
  local function convert_unit(v)
    if v > 1e9 then return v / 1e9, "G" end
    if v > 1e6 then return v / 1e6, "M" end
    if v > 1e3 then return v / 1e3, "K" end
    return v, ""
  end

  local function add_metrics(samples, wall_ns)
    local by = {}
    for _, s in ipairs(samples) do
      if s.counted and s.kind and not by[s.kind] then by[s.kind] = s end
    end
    local clock = by.clock
    local function pct(v, total) return total and total.value ~= 0 and 100 * v / total.value or 0 end
    for _, s in ipairs(samples) do
      if s.counted then
        local k = s.kind
        if k == "clock" then
          s.metric, s.metric_unit, s.metric_fmt = wall_ns > 0 and s.value / wall_ns or 0,
            "CPUs utilized", "%8.3f"
        elseif k == "cycles" then
          if clock then
            s.metric, s.metric_unit, s.metric_fmt = s.value / clock.value, "GHz", "%8.3f"
          else
            s.metric_unit = "Ghz"
          end
        elseif k == "instructions" then
          s.metric_unit = "insn per cycle"
          if by.cycles and by.cycles.value ~= 0 then
            s.metric, s.metric_fmt = s.value / by.cycles.value, "%7.2f "
          end
        elseif k == "branch-misses" then
          s.metric_unit = "of all branches"
          if by.branches then s.metric, s.metric_fmt = pct(s.value, by.branches), "%7.2f%%" end
        elseif k == "cache-misses" then
          s.metric_unit = "of all cache refs"
          if by["cache-references"] then
            s.metric, s.metric_fmt = pct(s.value, by["cache-references"]), "%8.3f %%"
          end
        elseif k == "stalled-frontend" or k == "stalled-backend" then
          s.metric_unit = k == "stalled-frontend" and "frontend cycles idle" or "backend cycles idle"
          if by.cycles then s.metric, s.metric_fmt = pct(s.value, by.cycles), "%7.2f%%" end
        elseif clock then
          local v, u = 0, ""
          if clock.value ~= 0 then v, u = convert_unit(1e9 * s.value / clock.value) end
          s.metric, s.metric_unit, s.metric_fmt = v, u .. "/sec", "%8.3f"
        end
      end
    end
  end

  local function mean_stddev(xs)
    local n = #xs
    if n == 0 then return nil, 0 end
    local sum = 0
    for _, x in ipairs(xs) do sum = sum + x end
    local mean = sum / n
    if n < 2 then return mean, 0 end
    local m2 = 0
    for _, x in ipairs(xs) do m2 = m2 + (x - mean) ^ 2 end
    -- perf reports the standard deviation of the mean.
    return mean, math.sqrt(m2 / (n - 1) / n)
  end

  local function check_opts(o)
    if type(o) ~= "table" then error("perf.stat: expected a table of options", 3) end
    local run = o.run
    if run ~= nil and type(run) ~= "function" and type(run) ~= "table" then
      error("perf.stat: run must be a function or an argv table", 3)
    end
    if type(run) == "table" and #run == 0 then error("perf.stat: run is an empty command", 3) end
    local rep = o["repeat"] or 1
    if type(rep) ~= "number" or rep < 1 or rep ~= math.floor(rep) then
      error("perf.stat: repeat must be a positive integer", 3)
    end
    if o.interval ~= nil and (type(o.interval) ~= "number" or o.interval < 1) then
      error("perf.stat: interval must be a number of milliseconds >= 1", 3)
    end
    if o.pid ~= nil and type(o.pid) ~= "number" then error("perf.stat: pid must be a number", 3) end
    if o.duration ~= nil and type(o.duration) ~= "number" then
      error("perf.stat: duration must be a number of seconds", 3)
    end
    if o.interval ~= nil and type(run) == "function" then
      error("perf.stat: interval needs a command, a pid or CPUs, not a function", 3)
    end
    if o.on_interval ~= nil and type(o.on_interval) ~= "function" then
      error("perf.stat: on_interval must be a function", 3)
    end
    return rep
  end

  -- One run: open, run, read.  Returns a run table or nil, msg, errno.
  local function one_run(o, specs, run_idx, res)
    -- A CPU given without a pid counts everything on it, as perf stat -C.
    local system_wide = o.cpu == "all" or o.system_wide or (type(o.cpu) == "number" and not o.pid)
    local workload, target_pid
    local copts = { inherit = o.inherit ~= false, cpu = o.cpu, disabled = true }
    for _, k in ipairs({ "exclude_user", "exclude_kernel", "exclude_hv", "exclude_idle",
                         "exclude_host", "exclude_guest" }) do copts[k] = o[k] end
    if system_wide then copts.cpu = o.cpu == nil and "all" or o.cpu end
    if type(o.run) == "table" and not o.pid and not system_wide then
      local w, msg, errno = core.workload(o.run)
      if not w then return nil, msg, errno end
      workload, target_pid = w, w:pid()
      copts.pid, copts.enable_on_exec, copts.disabled = target_pid, true, nil
    elseif type(o.run) == "table" then
      local w, msg, errno = core.workload(o.run)
      if not w then return nil, msg, errno end
      workload = w
      copts.pid = o.pid or (system_wide and -1) or 0
    else
      copts.pid = o.pid or (system_wide and -1) or 0
    end
    if system_wide and not o.pid then copts.pid = -1 end

    local rows, msg, errno = open_events(specs, copts, o.user_fallback)
    if not rows then
      if workload then workload:close() end
      return nil, msg, errno
    end
    local run = { intervals = {} }
    local t0, t_prev, prev
    local interval = o.interval
    local function tick(now)
      local ok, m, e = read_all(rows)
      if not ok then return nil, m, e end
      local samples = snapshot(rows, prev)
      add_metrics(samples, (now - t_prev) * 1e9)
      local row = { time = now - t0, events = samples, run = run_idx }
      run.intervals[#run.intervals + 1] = row
      if o.on_interval then o.on_interval(row) end
      prev, t_prev = samples, now
      return true
    end
    -- Waits for a command, a pid, a duration or ^C, ticking every interval.
    local function wait_loop(wait_once)
      while true do
        local limit = -1
        if interval then limit = math.max(0, math.floor((t_prev + interval / 1000 - core.clock()) * 1000 + 0.5)) end
        local done, interrupted = wait_once(limit)
        if done or interrupted then return interrupted end
        if interval then
          local ok, m, e = tick(core.clock())
          if not ok then return nil, m, e end
        end
      end
    end

    local fail
    if not workload or copts.enable_on_exec == nil then
      local ok, m, e = for_counters(rows, "enable")
      if not ok then fail = { m, e } end
    end
    t0 = core.clock(); t_prev = t0
    if not fail and workload then
      local ok, m, e = workload:start()
      if not ok then fail = { "Workload failed: " .. tostring(m), e } end
    end
    if not fail then
      if type(o.run) == "function" then
        local ok, err = pcall(o.run)
        if not ok then
          close_all(rows)
          error(err, 0)
        end
      elseif workload then
        run.interrupted = wait_loop(function(limit)
          local st, how, n = workload:wait(limit, true)
          if st then
            run.status, run.how, run.signal = st, how, how == "signaled" and n or nil
            return true
          end
          if how == "interrupted" then
            -- ^C reached the command too: wait for it, without a limit.
            st, how, n = workload:wait()
            if st then run.status, run.how = st, how end
            return true, true
          end
          return false
        end)
      else
        local deadline = o.duration and (t0 + o.duration)
        run.interrupted = wait_loop(function(limit)
          if deadline then
            local left = math.floor((deadline - core.clock()) * 1000 + 0.5)
            if left <= 0 then return true end
            if limit < 0 or left < limit then limit = left end
          end
          local why = core.sleep(limit, o.pid and o.pid > 0 and o.pid or 0, true)
          if why == "interrupted" then return true, true end
          if why == "exited" then return true end
          if deadline and core.clock() >= deadline then return true end
          return false
        end)
      end
    end
    local t1 = core.clock()
    if not fail then
      for_counters(rows, "disable")
      local ok, m, e = read_all(rows)
      if not ok then fail = { m, e } end
    end
    if fail then
      close_all(rows)
      if workload then workload:close() end
      return nil, fail[1], fail[2]
    end
    if interval and (#run.intervals == 0 or t1 - t_prev > 0.0005) then tick(t1) end
    run.elapsed = t1 - t0
    run.events = snapshot(rows, nil)
    if workload then
      run.user, run.sys = workload:rusage()
      workload:close()
    end
    close_all(rows)
    res.target_pid = target_pid
    return run
  end

  function perf.stat(o)
    local reps = check_opts(o)
    local system_wide = o.cpu == "all" or o.system_wide or (type(o.cpu) == "number" and not o.pid)
    local specs = split_events(o.events, system_wide and not o.pid)
    if #specs == 0 then error("perf.stat: no events", 2) end
    if o.run == nil and not o.pid and not system_wide and not o.duration then
      error("perf.stat: give run (a function or argv), pid, cpu=\"all\" or duration", 2)
    end
    local res = { runs = {}, ["repeat"] = reps, interval = o.interval,
                  cmd = type(o.run) == "table" and o.run or nil, pid = o.pid,
                  system_wide = system_wide and true or false, intervals = {} }
    for i = 1, reps do
      local run, msg, errno = one_run(o, specs, i, res)
      if not run then return nil, msg, errno end
      res.runs[i] = run
      for _, iv in ipairs(run.intervals) do res.intervals[#res.intervals + 1] = iv end
      if run.interrupted then break end
    end
    -- Aggregate over runs: mean and standard deviation of the mean.
    local n = #res.runs
    local walls = {}
    for i, r in ipairs(res.runs) do walls[i] = r.elapsed end
    res.elapsed, res.elapsed_stddev = mean_stddev(walls)
    local events = {}
    for i, spec in ipairs(specs) do
      local first = res.runs[1].events[i]
      local ev = { spec = spec, name = first.name, kind = first.kind, unit = first.unit,
                   scale = first.scale, supported = first.supported, error = first.error,
                   errno = first.errno, values = {} }
      local ena, run = 0, 0
      for _, r in ipairs(res.runs) do
        local s = r.events[i]
        if s.counted then ev.values[#ev.values + 1] = s.value end
        ena, run = ena + (s.enabled or 0), run + (s.running or 0)
      end
      ev.enabled, ev.running = ena / n, run / n
      ev.counted = #ev.values > 0
      if ev.counted then
        ev.value, ev.stddev = mean_stddev(ev.values)
        if n == 1 then ev.raw = res.runs[1].events[i].raw end
        if n == 1 then ev.enabled, ev.running = first.enabled, first.running end
      end
      events[i] = ev
    end
    add_metrics(events, res.elapsed * 1e9)
    for i, ev in ipairs(events) do
      if events[ev.name] == nil then events[ev.name] = ev end
      if events[ev.spec] == nil then events[ev.spec] = ev end
      events[i] = ev
    end
    res.events = events
    local last = res.runs[n]
    res.status, res.how, res.signal = last.status, last.how, last.signal
    res.user, res.sys = last.user, last.sys
    res.interrupted = last.interrupted
    return res
  end

  perf.stat_metrics = add_metrics
end
