-- perf-profiling-tool.txt, "Counting, measured directly through perf_event_open(2)":
-- seven counters with read_format TOTAL_TIME_ENABLED|RUNNING, exclude_kernel=1,
-- around a fixed floating-point loop (s = s + 1/i), each read back as count,
-- enabled ns, running ns.  Five of the text's seven are hardware events; this
-- machine has no PMU (they fail ENOENT), so they print <not supported> and
-- five software events stand in for them.
--   lua5.4 examples/seeds/counting.lua [iterations]
local perf = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
local n = tonumber(arg[1]) or 6e6
local events = { "cycles", "instructions", "branches", "branch-misses", "cache-misses",
  "page-faults", "context-switches" }
local stand_in = { "task-clock", "cpu-clock", "minor-faults", "major-faults", "cpu-migrations" }
local counters, missing = {}, 0
for i, ev in ipairs(events) do
  local c, err, errno = perf.counter(ev .. ":u", { pid = 0, disabled = true })
  if c then counters[#counters + 1] = { c, ev } else
    missing = missing + 1
    print(("%20s  %-18s errno=%d (%s)"):format("<not supported>", ev, errno, err:match("%((.-)%)") or err))
    if stand_in[missing] then events[#events + 1] = stand_in[missing] end
  end
end
for _, c in ipairs(counters) do c[1]:reset(); c[1]:enable() end
local s = 0.0
for i = 1, n do s = s + 1.0 / i end
for _, c in ipairs(counters) do c[1]:disable() end
print(("=== COUNTING (perf.counter + c:read()), exclude_kernel=1, %d iterations, s=%.6f ==="):format(n, s))
for _, c in ipairs(counters) do
  local r = c[1]:read()
  print(("%20d  %-18s enabled=%d ns running=%d ns  (%.2f%% scheduled)"):format(r.raw, c[2],
    r.enabled, r.running, r.enabled > 0 and 100 * r.running / r.enabled or 0))
end
