-- CPU time per thread from a perf.data sampled on a clock event
-- (cpu-clock or task-clock: a sample's period is nanoseconds of CPU).
--
--   luaperf record -e cpu-clock -F 999 -a -- sleep 5
--   luaperf script -i perf.data examples/per_thread.lua
local threads, total = {}, 0
local event   -- the first clock event seen; others would count the time twice

function sample(rec)
  event = event or rec.event
  if rec.event ~= event then return end
  local t = threads[rec.tid]
  if not t then
    t = { pid = rec.pid, tid = rec.tid, ns = 0, samples = 0 }
    threads[rec.tid] = t
  end
  t.comm = rec.comm or t.comm
  local period = rec.period or 0
  t.ns = t.ns + period
  t.samples = t.samples + 1
  total = total + period
end

function finish()
  local list = {}
  for _, t in pairs(threads) do list[#list + 1] = t end
  table.sort(list, function(a, b) return a.ns > b.ns end)
  print(string.format("%-16s %7s %7s %8s %12s %7s", "comm", "pid", "tid", "samples", "cpu ms", "share"))
  for _, t in ipairs(list) do
    print(string.format("%-16s %7d %7d %8d %12.3f %6.2f%%", t.comm or ("[" .. t.tid .. "]"),
      t.pid, t.tid, t.samples, t.ns / 1e6, total > 0 and 100 * t.ns / total or 0))
  end
end
