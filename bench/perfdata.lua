-- perf.data reading benchmark, Lua side: every record through the Lua
-- iterator (a table per record), and f:scan() (all in C, one table).
-- Prints "<path> <records> <seconds> <MB/s>" with CPU seconds.
local perf = require "perf"
local path = assert(arg[1], "usage: perfdata.lua FILE")
local size = assert(io.open(path, "rb")):seek("end")

local function best(fn, reps)
  local b, n = math.huge, 0
  for _ = 1, reps do
    local t0 = os.clock()
    n = fn()
    local t = os.clock() - t0
    if t < b then b = t end
  end
  return n, b
end

local f = assert(perf.open(path))
local n, t = best(function()
  local k = 0
  for _ in f:records() do k = k + 1 end
  return k
end, 1)
print(string.format("lua-iterator %d %.4f %.1f", n, t, size / 1048576 / t))
n, t = best(function()
  local k = 0
  for _ in f:records{ type = "SAMPLE", fields = false } do k = k + 1 end
  return k
end, 1)
print(string.format("lua-iterator-samples %d %.4f %.1f", n, t, size / 1048576 / t))
n, t = best(function() return f:scan().records end, 2)
print(string.format("f:scan %d %.4f %.1f", n, t, size / 1048576 / t))
f:close()
