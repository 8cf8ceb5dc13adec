-- perf.stat: the one-call form of counting, as `perf stat` does it.
--
--   local res, err, errno = perf.stat{
--     events = {"task-clock", "page-faults"} or "task-clock,page-faults",
--                                  -- default: perf stat's set; "{a,b}:mods"
--                                  -- is a group (a row per member, .group)
--     run = {"make", "-j2"},       -- a command: forked, counted from its exec,
--                                  -- children included; or a function (this
--                                  -- process, children it forks included)
--     pid = 1234,                  -- count a process instead (run, if given,
--                                  -- is then only a timer), or
--     cpu = "all" | n | {0, 1} | "0-1,3",  -- count every CPU (perf stat -a),
--                                  -- one, or a list (perf stat -C): system
--                                  -- wide on them unless a pid is given
--     per_cpu = true,              -- with cpu: values per CPU too (perf stat -A)
--     per_thread = true,           -- with pid: count every thread of the
--                                  -- process, values per thread too
--                                  -- (perf stat --per-thread -p)
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
--   With per_cpu, each event (and interval row event) has cpus = { {cpu=,
--   value=, raw=, enabled=, running=, counted=, metric=, metric_unit=},
--   ... } in CPU order, and res.cpus lists the CPUs; with per_thread,
--   threads = { {tid=, comm=, value=, ...}, ... } in tid order, and
--   res.threads = { {tid=, comm=}, ... }.  With repeat, per-CPU/thread
--   values are means over the runs.
--   res.cpu_list: the CPU list as given (perf's 'CPU(s) 0-1' header).
--   res.elapsed, res.elapsed_stddev (s), res.status / res.how / res.signal
--   (the command's exit), res.user, res.sys (s), res.intervals, res.runs
--
-- Events that the machine lacks (ENOENT, EOPNOTSUPP, EINVAL, ...) become
-- rows with supported = false, as perf prints <not supported>; any other
-- open failure (EACCES, ESRCH, EMFILE, ...) returns nil, msg, errno.  An
-- event that does not parse returns nil, msg, errno, "syntax".
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

  -- perf's CPU list syntax ("0-1,3") -> { 0, 1, 3 } ascending, as perf's
  -- cpu map orders it; nil, msg when malformed or a CPU repeats.
  local function parse_cpu_list(str)
    local seen, list = {}, {}
    for part in (str .. ","):gmatch("([^,]*),") do
      local a, b = part:match("^(%d+)%-(%d+)$")
      if not a then a = part:match("^(%d+)$"); b = a end
      if not a then return nil, "bad CPU list '" .. str .. "' (expected e.g. 0, 0-1 or 0,2)" end
      a, b = tonumber(a), tonumber(b)
      if b < a or b > 4095 then return nil, "bad CPU range '" .. part .. "' in '" .. str .. "'" end
      for c = a, b do
        if seen[c] then return nil, "CPU " .. c .. " is listed twice in '" .. str .. "'" end
        seen[c] = true
        list[#list + 1] = c
      end
    end
    table.sort(list)
    return list
  end
  perf.parse_cpu_list = parse_cpu_list

  local function read_line(path)
    local f = io.open(path, "r")
    if not f then return nil end
    local s = f:read("*l")
    f:close()
    return s
  end

  local function online_cpus()
    local s = read_line("/sys/devices/system/cpu/online")
    local list = s and parse_cpu_list(s)
    if not list then return nil, "cannot read the online CPUs from /sys/devices/system/cpu/online", 2 end
    return list
  end

  -- The cpu option as core.counter takes it, and its text for the header.
  local function normalize_cpu(cpu)
    if cpu == nil or cpu == "all" then return cpu, nil end
    if type(cpu) == "number" then
      if cpu ~= math.floor(cpu) or cpu < -1 then error("perf.stat: cpu must be a CPU number", 3) end
      return cpu, tostring(cpu)
    end
    if type(cpu) == "string" then
      local list, err = parse_cpu_list(cpu)
      if not list then error("perf.stat: " .. err, 3) end
      return list, cpu
    end
    if type(cpu) ~= "table" or #cpu == 0 then
      error("perf.stat: cpu must be \"all\", a CPU number, a list of them or a list string", 3)
    end
    local list, seen = {}, {}
    for i, c in ipairs(cpu) do
      if type(c) ~= "number" or c ~= math.floor(c) or c < 0 then
        error("perf.stat: cpu list element " .. i .. " must be a CPU number", 3)
      end
      if seen[c] then error("perf.stat: CPU " .. c .. " is listed twice", 3) end
      seen[c] = true
      list[i] = c
    end
    table.sort(list)
    return list, table.concat(list, ",")
  end

  local function split_events(events, system_wide)
    if events == nil then return default_events(system_wide) end
    if type(events) == "string" then
      -- Commas inside pmu/.../ and {...} belong to the event (the core's split).
      local out = {}
      for _, e in ipairs(core.split(events)) do if e ~= "" then out[#out + 1] = e end end
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

  -- perf.split_events("a,cpu/event=1,umask=2/,b") -> { "a", "cpu/...", "b" }
  perf.split_events = function(events) return split_events(events, false) end

  -- A group's rows share its counter; its first row (the leader) drives it.
  local function drives(r) return r.counter and (r.member or 1) == 1 end

  local function close_all(rows)
    for _, r in ipairs(rows) do if drives(r) then r.counter:close() end end
  end

  local function new_row(spec, name, counter)
    local row = { spec = spec, name = name, counter = counter, supported = true }
    row.kind = kind_of(name)
    row.unit = row.kind == "clock" and "msec" or ""
    row.scale = row.kind == "clock" and 1e-6 or 1
    return row
  end

  -- "{a,b}:mods" with each member's own text (what perf.parse gives).
  local function group_text(members, mods, suffix)
    local list = {}
    for i, m in ipairs(members) do list[i] = m .. (suffix or "") end
    return "{" .. table.concat(list, ",") .. "}" .. (mods ~= "" and (":" .. mods) or "")
  end

  -- A group spec: one core group, one row per member.  As perf stat: a
  -- member the machine lacks is <not supported> and the others <not
  -- counted> (perf's group read no longer matches the group); a leader it
  -- lacks fails the whole count.  user_fallback retries an unmodified
  -- group refused at paranoid 2 with every member :u, as perf does.
  local function open_group(spec, copts, user_fallback)
    local parsed = assert(core.parse(spec))
    local members = {}
    for i = 1, parsed.members do members[i] = parsed[i].spec end
    local plain = parsed.mods == "" and not spec:find("[:/]", 2)
    local g, msg, errno = core.group(spec, copts)
    local names = members
    if not g and (errno == 13 or errno == 1) and user_fallback and plain then
      local g2, msg2, errno2 = core.group(group_text(members, "", ":u"), copts)
      if g2 or unsupported_errno[errno2] then
        g, msg, errno = g2, msg2, errno2
        names = {}
        for i, m in ipairs(members) do names[i] = m .. ":u" end
      end
    end
    local rows = {}
    if g then
      local shared = {}
      for i = 1, #members do
        local row = new_row(names[i], g:name(i), g)
        row.member, row.shared, row.group, row.given = i, shared, spec, members[i]
        rows[i] = row
      end
      return rows
    end
    if not unsupported_errno[errno] then return nil, msg, errno end
    -- Which member the machine lacks: each alone, with the group's modifiers.
    local bad
    for i, m in ipairs(names) do
      local one, m1, e1 = core.group(group_text({ m }, parsed.mods), copts)
      if one then one:close() elseif unsupported_errno[e1] then bad = { i, m1, e1 }; break end
    end
    if not bad or bad[1] == 1 then return nil, msg, errno end
    for i = 1, #members do
      local row = new_row(names[i], parsed[i].name, nil)
      row.group, row.given = spec, members[i]
      if i == bad[1] then
        row.supported, row.error, row.errno = false, bad[2], bad[3]
      else
        row.uncounted = true
      end
      rows[i] = row
    end
    return rows
  end

  -- Opens every event; rows for unsupported ones; nil, msg, errno on a fatal failure.
  -- user_fallback: as perf stat does at perf_event_paranoid 2, an event
  -- without modifiers that is refused (EACCES/EPERM) is retried as :u.
  -- A group spec ("{a,b}:mods") gives one row per member.
  local function open_events(specs, copts, user_fallback)
    local rows = {}
    local fell_back = false
    for _, spec in ipairs(specs) do
      if spec:sub(1, 1) == "{" then
        local grows, msg, errno = open_group(spec, copts, user_fallback)
        if not grows then
          close_all(rows)
          return nil, msg, errno
        end
        for _, r in ipairs(grows) do rows[#rows + 1] = r end
      else
        local given = spec
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
        local row = new_row(spec, c and c:name() or spec, c)
        row.given = given
        if not c then
          if not unsupported_errno[errno] then
            close_all(rows)
            return nil, msg, errno
          end
          row.supported, row.error, row.errno = false, msg, errno
        end
        rows[#rows + 1] = row
      end
    end
    return rows
  end

  local function for_counters(rows, method)
    for _, r in ipairs(rows) do
      if drives(r) then
        local ok, msg, errno = r.counter[method](r.counter)
        if not ok then return nil, msg, errno end
      end
    end
    return true
  end

  -- Cumulative reads of every counter into r.buf = {raw, enabled, running};
  -- with fd sets (per CPU or thread), r.each too, and r.buf their sum, so
  -- the total and its parts come from the same read.
  local function read_all(rows, per_set)
    for _, r in ipairs(rows) do
      local sh = r.shared
      if r.counter and per_set then
        local e = sh and sh.each or (not sh and r.each) or nil
        if drives(r) then
          local msg, errno
          e, msg, errno = r.counter:read_each(e)
          if not e then return nil, msg, errno end
          if sh then sh.each = e end
        end
        r.each = r.each or {}
        local raw, ena, run = 0, 0, 0
        for j, x in ipairs(e) do
          if r.member then x = x[r.member] end
          r.each[j] = x
          raw, ena, run = raw + (x.raw or 0), ena + x.enabled, run + x.running
        end
        r.buf = { raw = raw, enabled = ena, running = run }
      elseif r.counter then
        if drives(r) then
          local v, msg, errno = r.counter:read(sh and sh.buf or r.buf)
          if not v then return nil, msg, errno end
          if sh then sh.buf = v else r.buf = v end
        end
        if sh then r.buf = sh.buf[r.member] end
      end
    end
    return true
  end

  -- Counts since prev (a cumulative {raw, enabled, running}) into s.
  local function fill_delta(s, b, p)
    local raw, ena, run = b.raw or 0, b.enabled, b.running
    s.cum = { raw = raw, enabled = ena, running = run }
    if p then
      raw, ena, run = raw - p.raw, ena - p.enabled, run - p.running
    end
    s.raw, s.enabled, s.running = raw, ena, run
    s.counted = run > 0
    if s.counted then
      -- Scaled for multiplexing; an unscaled count stays an integer.
      if run < ena then s.value = raw * (ena / run) else s.value = raw end
    end
  end

  local function new_sample(r)
    return { name = r.name, spec = r.spec, given = r.given, kind = r.kind, unit = r.unit, group = r.group,
             scale = r.scale, supported = r.supported, error = r.error, errno = r.errno }
  end

  -- One sample of every event: deltas against prev (or totals).  sets (per
  -- CPU or per thread: { {cpu=} or {tid=, comm=}, ... } in fd set order)
  -- adds s[sets.field] = one sample per set.
  local function snapshot(rows, prev, sets)
    local out = {}
    for i, r in ipairs(rows) do
      local s = new_sample(r)
      if r.counter then
        fill_delta(s, r.buf, prev and prev[i] and prev[i].cum)
      else
        s.counted = false
        s.enabled, s.running = 0, 0
      end
      if sets then
        local list = {}
        for j, key in ipairs(sets) do
          local x = new_sample(r)
          x.cpu, x.tid, x.comm = key.cpu, key.tid, key.comm
          if r.counter then
            local p = prev and prev[i] and prev[i][sets.field][j]
            fill_delta(x, r.each[j], p and p.cum)
          else
            x.counted = false
            x.enabled, x.running = 0, 0
          end
          list[j] = x
        end
        s[sets.field] = list
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

  -- The same ratios per CPU or thread: each against its own clock.
  local function add_set_metrics(samples, field, wall_ns)
    local first = samples[1] and samples[1][field]
    if not first then return end
    for j = 1, #first do
      local list = {}
      for i, s in ipairs(samples) do list[i] = s[field][j] end
      add_metrics(list, wall_ns)
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
    if o.per_cpu and o.per_thread then
      error("perf.stat: per_cpu and per_thread cannot be used together", 3)
    end
    if o.per_thread and not o.pid then
      -- As perf stat: a thread list needs a process to take it from.
      error("perf.stat: per_thread needs pid", 3)
    end
    return rep
  end

  -- One run: open, run, read.  Returns a run table or nil, msg, errno.
  local function one_run(o, specs, run_idx, res)
    -- A CPU given without a pid counts everything on it, as perf stat -C.
    local system_wide = o.cpu == "all" or o.system_wide or (o.cpu ~= nil and not o.pid)
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

    -- The fd sets to report one by one, in perf's order: the CPUs
    -- ascending, or the threads the process has now.
    local sets
    if o.per_cpu then
      local cpus = copts.cpu
      if cpus == "all" then
        local m, e
        cpus, m, e = online_cpus()
        if not cpus then
          if workload then workload:close() end
          return nil, m, e
        end
      elseif type(cpus) == "number" then
        cpus = { cpus }
      end
      copts.cpu = cpus
      sets = { field = "cpus" }
      for j, c in ipairs(cpus) do sets[j] = { cpu = c } end
    elseif o.pid and o.pid > 0 then
      -- As perf stat -p: every thread the process has now (threads they
      -- start are inherited).  A process that is gone keeps its pid, so
      -- the open fails with errmsg's explanation.
      local tids = core.threads(o.pid) or { o.pid }
      copts.pid = tids
      if o.per_thread then
        sets = { field = "threads" }
        for j, t in ipairs(tids) do
          local comm = read_line("/proc/" .. o.pid .. "/task/" .. t .. "/comm") or "?"
          sets[j] = { tid = t, comm = comm }
        end
      end
    end
    res.sets = sets

    local rows, msg, errno = open_events(specs, copts, o.user_fallback)
    if not rows then
      if workload then workload:close() end
      return nil, msg, errno
    end
    local run = { intervals = {} }
    local t0, t_prev, prev
    local interval = o.interval
    local function tick(now)
      local ok, m, e = read_all(rows, sets)
      if not ok then return nil, m, e end
      local samples = snapshot(rows, prev, sets)
      add_metrics(samples, (now - t_prev) * 1e9)
      if sets then add_set_metrics(samples, sets.field, (now - t_prev) * 1e9) end
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
      local ok, m, e = read_all(rows, sets)
      if not ok then fail = { m, e } end
    end
    if fail then
      close_all(rows)
      if workload then workload:close() end
      return nil, fail[1], fail[2]
    end
    if interval and (#run.intervals == 0 or t1 - t_prev > 0.0005) then tick(t1) end
    run.elapsed = t1 - t0
    run.events = snapshot(rows, nil, sets)
    if workload then
      run.user, run.sys = workload:rusage()
      workload:close()
    end
    close_all(rows)
    res.target_pid = target_pid
    return run
  end

  -- Means over runs of per-CPU/thread samples, matched by CPU or tid.
  local function merge_sets(runs, i, field, n)
    local order, by = {}, {}
    for _, r in ipairs(runs) do
      for _, x in ipairs(r.events[i][field] or {}) do
        local k = x.cpu or x.tid
        local m = by[k]
        if not m then
          m = { name = x.name, spec = x.spec, kind = x.kind, unit = x.unit, scale = x.scale,
                supported = x.supported, error = x.error, errno = x.errno, cpu = x.cpu,
                tid = x.tid, comm = x.comm, values = {}, enabled = 0, running = 0, raw = x.raw }
          by[k] = m
          order[#order + 1] = m
        end
        if x.counted then m.values[#m.values + 1] = x.value end
        m.enabled, m.running = m.enabled + x.enabled / n, m.running + x.running / n
      end
    end
    for _, m in ipairs(order) do
      m.counted = #m.values > 0
      if m.counted then m.value = mean_stddev(m.values) end
      if n > 1 then m.raw = nil end
    end
    return order
  end

  function perf.stat(o)
    local reps = check_opts(o)
    local cpu, cpu_list = normalize_cpu(o.cpu)
    -- The options with the CPU list parsed; everything else as given.
    o = setmetatable({ cpu = cpu }, { __index = o })
    local system_wide = cpu == "all" or o.system_wide or (type(cpu) ~= "nil" and not o.pid)
    if o.per_cpu and not system_wide then
      error("perf.stat: per_cpu needs cpu (\"all\", a number or a list) and no pid", 2)
    end
    local specs = split_events(o.events, system_wide and not o.pid)
    if #specs == 0 then error("perf.stat: no events", 2) end
    -- An event that does not parse is a mistake in the request (perf stat's
    -- "event syntax error"), not a <not supported> row: nil, msg, errno,
    -- and "syntax" to tell it from a failure to count.
    for _, spec in ipairs(specs) do
      local parsed, perr, perrno = core.parse(spec)
      if not parsed then return nil, perr, perrno, "syntax" end
    end
    if o.run == nil and not o.pid and not system_wide and not o.duration then
      error("perf.stat: give run (a function or argv), pid, cpu=\"all\" or duration", 2)
    end
    local res = { runs = {}, ["repeat"] = reps, interval = o.interval,
                  cmd = type(o.run) == "table" and o.run or nil, pid = o.pid,
                  system_wide = system_wide and true or false, intervals = {},
                  cpu_list = cpu_list, per_cpu = o.per_cpu and true or nil,
                  per_thread = o.per_thread and true or nil }
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
    for i, first in ipairs(res.runs[1].events) do
      local ev = { spec = first.given or first.spec, name = first.name, kind = first.kind, unit = first.unit,
                   group = first.group,
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
      if res.sets then ev[res.sets.field] = merge_sets(res.runs, i, res.sets.field, n) end
      events[i] = ev
    end
    add_metrics(events, res.elapsed * 1e9)
    if res.sets then
      add_set_metrics(events, res.sets.field, res.elapsed * 1e9)
      local list = {}
      for j, x in ipairs(events[1][res.sets.field]) do
        list[j] = res.sets.field == "cpus" and x.cpu or { tid = x.tid, comm = x.comm }
      end
      res[res.sets.field] = list
      res.sets = nil
    end
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
