-- perf stat's report text for perf.stat results (tools/perf/util/stat-display.c's
-- layout: fixed-width columns, derived ratios, <not supported>/<not counted>
-- rows, +- noise with repeats, (xx.xx%) when multiplexed, CSV with a separator).
--
--   perf.stat_report(res [, { sep = "," }])  -> text
--   perf.stat_interval_formatter([{ sep = "," }]) -> function(row) -> text
--
-- Results with per-CPU values (perf.stat{per_cpu=true}) print one row per
-- CPU and event (perf stat -A: "CPU0   count  event"); with per-thread
-- values one row per thread ("comm-tid  count  event"), busiest first.
return function(perf)
  local METRIC_LEN = 35
  -- %.2f as C rounds it (LuaJIT rounds ties away from zero).
  local fixed = require("perf.report").fixed

  -- string.format("%-*s") without the *: Lua's format has no width 0.
  local function ljust(s, w) return s .. string.rep(" ", w - #s) end
  local function rjust(s, w) return string.rep(" ", w - #s) .. s end

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
      local line = rjust(tag, 18) .. " " .. unit .. " " .. ljust(ev.name, 25) .. string.rep(" ", METRIC_LEN)
      -- Enabled but never running: perf still says how little it ran.
      if ev.running ~= ev.enabled then
        line = line .. "  (" .. fixed(pct_running(ev), 2) .. "%)"
      end
      return line
    end
    local v = ev.value * ev.scale
    local num = ev.scale ~= 1 and rjust(fixed(v, 2), 18) or string.format("%18.0f", v)
    local line = num .. " " .. unit .. " " .. ljust(ev.name, 32) .. fmt_metric_std(ev)
    if reps > 1 then
      local p = noise_pct(ev)
      if p ~= 0 then line = line .. "  ( +-" .. rjust(fixed(p, 2), 6) .. "% )" end
    end
    if ev.running ~= ev.enabled then
      line = line .. "  (" .. fixed(pct_running(ev), 2) .. "%)"
    end
    return line
  end

  local function row_csv(ev, sep, reps)
    local out = {}
    if not ev.supported or not ev.counted then
      out[1] = (ev.supported and "<not counted>" or "<not supported>") .. sep .. ev.unit .. sep .. ev.name
    else
      local v = ev.value * ev.scale
      out[1] = (ev.scale ~= 1 and fixed(v, 2) or string.format("%.0f", v)) ..
        sep .. ev.unit .. sep .. ev.name
    end
    if reps > 1 then out[#out + 1] = sep .. fixed(noise_pct(ev), 2) .. "%" end
    out[#out + 1] = sep .. string.format("%.0f", ev.running or 0) .. sep ..
      fixed(pct_running(ev), 2)
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

  -- The rows of one event: { {prefix, sample}, ... } in perf's order (CPUs
  -- ascending; threads by count, highest first, ties in tid order), or
  -- nil when the event has no per-CPU/thread values.
  local function set_rows(ev, sep)
    local std = sep == nil
    if ev.cpus then
      local out = {}
      for j, x in ipairs(ev.cpus) do
        out[j] = { std and string.format("CPU%-7d ", x.cpu) or ("CPU" .. x.cpu .. sep), x }
      end
      return out
    end
    if ev.threads then
      local order = {}
      for j, x in ipairs(ev.threads) do order[j] = { j, x } end
      table.sort(order, function(a, b)
        -- perf sorts by the count; with repeats only the mean is left.
        local va = a[2].counted and (a[2].raw or a[2].value) or 0
        local vb = b[2].counted and (b[2].raw or b[2].value) or 0
        if va ~= vb then return va > vb end
        return a[1] < b[1]
      end)
      local out = {}
      for j, o in ipairs(order) do
        local x = o[2]
        out[j] = { std and string.format("%16s-%-8d ", x.comm, x.tid) or
                   (x.comm .. "-" .. x.tid .. sep), x }
      end
      return out
    end
    return nil
  end

  -- What the header names, as perf stat says it.
  local function target_desc(res)
    if res.system_wide and res.cpu_list then return "'CPU(s) " .. res.cpu_list .. "'" end
    if res.system_wide then return "'system wide'" end
    if res.pid then return "process id '" .. res.pid .. "'" end
    if res.cmd then return "'" .. table.concat(res.cmd, " ") .. "'" end
    return "'Lua function'"
  end

  -- perf's get_precision: two digits more than the stddev's magnitude.
  local function precision(sd)
    if sd > 1 then return 2 end
    if sd <= 0 then return 11 end
    return math.floor(math.ceil(-math.log(sd, 10)) + 0.5) + 2
  end

  local function report(res, o)
    local out = { write = function(self, ...) for _, s in ipairs({ ... }) do self[#self + 1] = s end end }
    local reps = res["repeat"]
    local events = res.events
    local uw = unit_width(events)
    if o.sep then
      for _, ev in ipairs(events) do
        local rows = set_rows(ev, o.sep)
        if rows then
          for _, r in ipairs(rows) do out:write(r[1], row_csv(r[2], o.sep, 1), "\n") end
        else
          out:write(row_csv(ev, o.sep, reps), "\n")
        end
      end
      return table.concat(out)
    end
    out:write("\n Performance counter stats for ", target_desc(res))
    if reps > 1 then out:write(" (", reps, " runs)") end
    out:write(":\n\n")
    for _, ev in ipairs(events) do
      local rows = set_rows(ev)
      if rows then
        -- perf prints no noise per CPU or thread.
        for _, r in ipairs(rows) do out:write(r[1], row_std(r[2], uw, 1), "\n") end
      else
        out:write(row_std(ev, uw, reps), "\n")
      end
    end
    out:write("\n")
    if reps == 1 then
      out:write(string.format(" %17.9f seconds time elapsed", res.elapsed))
      -- perf shows rusage only for a command it forked and counted itself.
      if res.user and not res.system_wide and not res.pid then
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
    return table.concat(out)
  end

  -- A function(row) -> text for perf.stat's on_interval, with perf's header
  -- every 25 intervals (none in CSV).
  local function interval_formatter(o)
    local printed = 0
    return function(row)
      local out = { write = function(self, ...) for _, s in ipairs({ ... }) do self[#self + 1] = s end end }
      local uw = unit_width(row.events)
      local t = row.time
      local sec = math.floor(t)
      local prefix = string.format("%6d.%09d", sec, math.floor((t - sec) * 1e9))
      local first = row.events[1] or {}
      if not o.sep and printed % 25 == 0 then
        -- perf's headers per aggregation (stat-display.c print_interval).
        if first.cpus then
          out:write("#           time CPU                    counts ", rjust("unit", uw), " events\n")
        elseif first.threads then
          out:write("#           time             comm-pid                  counts ",
            rjust("unit", uw), " events\n")
        else
          out:write("#           time             counts ", rjust("unit", uw), " events\n")
        end
      end
      printed = printed + 1
      local sep = o.sep or " "
      for _, ev in ipairs(row.events) do
        local rows = set_rows(ev, o.sep)
        if rows then
          for _, r in ipairs(rows) do
            out:write(prefix, sep, r[1], o.sep and row_csv(r[2], o.sep, 1) or row_std(r[2], uw, 1), "\n")
          end
        elseif o.sep then
          out:write(prefix, o.sep, row_csv(ev, o.sep, 1), "\n")
        else
          out:write(prefix, " ", row_std(ev, uw, 1), "\n")
        end
      end
      return table.concat(out)
    end
  end

  function perf.stat_report(res, o)
    if type(res) ~= "table" or type(res.events) ~= "table" then
      error("perf.stat_report: expected the results of perf.stat", 2)
    end
    return report(res, o or {})
  end

  function perf.stat_interval_formatter(o)
    return interval_formatter(o or {})
  end
end
