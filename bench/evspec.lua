-- Event specs and the catalog: perf.parse per spec, and the whole catalog
-- (luaperf list vs perf list, same machine, same run).
local perf = require "perf"

local function clock() return os.clock() end
local function wall(cmd)
  local t0 = io.popen("date +%s%N"):read("*l")
  os.execute(cmd .. " >/dev/null 2>&1")
  local t1 = io.popen("date +%s%N"):read("*l")
  return (tonumber(t1) - tonumber(t0)) / 1e9
end

local specs = { "cycles:u", "cpu-clock", "L1-dcache-load-misses", "msr/tsc/", "r01c4",
  "mem:0x1000/8:rw", "sched:sched_switch" }
for _, s in ipairs(specs) do
  local n, t0 = 20000, clock()
  for _ = 1, n do assert(perf.parse(s)) end
  local dt = clock() - t0
  print(string.format("perf.parse %-24s %8.2f us/spec", s, dt / n * 1e6))
end

local best_ours, best_perf = math.huge, math.huge
for _ = 1, 5 do
  best_ours = math.min(best_ours, wall("bin/luaperf list"))
  best_perf = math.min(best_perf, wall("perf list"))
end
print(string.format("luaperf list %.3f s, perf list %.3f s (best of 5): ratio %.2f",
  best_ours, best_perf, best_ours / best_perf))
