-- Wakeup latency per task: time from sched_wakeup to the sched_switch that
-- puts the task on a CPU.
--
--   luaperf record -e sched:sched_wakeup -e sched:sched_switch -a -- sleep 2
--   luaperf script -i perf.data examples/wakeup_latency.lua
local woken = {}      -- pid -> wakeup time (ns)
local stats = {}      -- comm -> { n, sum, max }

function sched__sched_wakeup(rec)
  woken[rec.fields.pid] = rec.time
end

function sched__sched_switch(rec)
  local f = rec.fields
  local t0 = woken[f.next_pid]
  if t0 and rec.time >= t0 then
    woken[f.next_pid] = nil
    local lat = rec.time - t0
    local s = stats[f.next_comm]
    if not s then
      s = { n = 0, sum = 0, max = 0 }
      stats[f.next_comm] = s
    end
    s.n = s.n + 1
    s.sum = s.sum + lat
    if lat > s.max then s.max = lat end
  end
end

function finish()
  local list = {}
  for comm, s in pairs(stats) do list[#list + 1] = { comm, s } end
  table.sort(list, function(a, b) return a[2].max > b[2].max end)
  print(string.format("%-16s %8s %12s %12s", "task", "wakeups", "avg us", "max us"))
  for _, e in ipairs(list) do
    local s = e[2]
    print(string.format("%-16s %8d %12.1f %12.1f", e[1], s.n, s.sum / s.n / 1000, s.max / 1000))
  end
end
