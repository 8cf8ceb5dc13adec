-- counter:read(t) against read(2) in a C loop on the same fd (the rawread
-- module from bench/counter_read.c), alternating 5000-read chunks in one
-- process so machine noise hits both alike; then the heap over N reads
-- with a reused table.  Usage: counter_read.lua EVENT N
-- Prints: raw_median_ns lua_median_ns raw_min_ns lua_min_ns heap_growth_kb fresh_table_ns
local perf = require "perf"
local rawread = require "rawread"
local event, n = arg[1] or "task-clock:u", tonumber(arg[2]) or 1000000
local c = assert(perf.counter(event))
local fd = c:fd()
local clock = perf.core.clock
local t = {}
c:read(t)

local chunk = 5000
local raw, lua = {}, {}
for k = 1, math.max(4, math.floor(2 * n / chunk)) do
  if k % 2 == 0 then
    raw[#raw + 1] = rawread.loop(fd, chunk) / chunk * 1e9
  else
    local a = clock()
    for _ = 1, chunk do c:read(t) end
    lua[#lua + 1] = (clock() - a) / chunk * 1e9
  end
end
table.sort(raw)
table.sort(lua)
local function median(xs) return xs[math.floor(#xs / 2) + 1] end

-- Garbage: the heap before and after n reads into one table.
collectgarbage()
collectgarbage()
local kb0 = collectgarbage("count")
for _ = 1, n do c:read(t) end
local kb1 = collectgarbage("count")

-- For contrast: a fresh result table per read.
local a = clock()
for _ = 1, n / 10 do c:read() end
local fresh = (clock() - a) / (n / 10) * 1e9

print(("%.1f %.1f %.1f %.1f %.3f %.1f"):format(median(raw), median(lua), raw[1], lua[1], kb1 - kb0, fresh))
