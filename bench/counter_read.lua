-- counter:read() in a loop, as bench/counter_read.c does with read(2):
-- ns per read (best of rounds) and the heap growth over the loop with a
-- reused table.  Usage: counter_read.lua EVENT N ROUNDS
local perf = require "perf"
local event, n, rounds = arg[1] or "task-clock:u", tonumber(arg[2]) or 1000000, tonumber(arg[3]) or 5
local c = assert(perf.counter(event))
local clock = perf.core.clock
local t = {}
c:read(t)
local best = math.huge
collectgarbage()
collectgarbage()
local kb0 = collectgarbage("count")
for _ = 1, rounds do
  local t0 = clock()
  for _ = 1, n do c:read(t) end
  local dt = (clock() - t0) / n * 1e9
  if dt < best then best = dt end
end
local kb1 = collectgarbage("count")
-- For contrast: a fresh result table per read.
local t0 = clock()
for _ = 1, n do c:read() end
local fresh = (clock() - t0) / n * 1e9
print(("%.1f %.3f %.1f"):format(best, kb1 - kb0, fresh))
