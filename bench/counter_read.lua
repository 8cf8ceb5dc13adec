-- counter:read() in a loop, as bench/counter_read.c does with read(2):
-- ns per read (best of rounds) and the heap growth over the loop with a
-- reused table.  Under LuaJIT it also times a raw read(2) of the SAME fd
-- through the FFI, interleaved chunk by chunk with counter:read(), so both
-- see the same machine noise.
-- Usage: counter_read.lua EVENT N ROUNDS
-- Prints: best_ns heap_growth_kb fresh_table_ns [ffi_raw_median_ns interleaved_lua_median_ns]
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
local extra = ""
local ok, ffi = pcall(require, "ffi")
if ok then
  ffi.cdef("long read(int fd, void *buf, unsigned long n);")
  local buf = ffi.new("uint64_t[4]")
  local fd = c:fd()
  local chunk = 5000
  local raw, lua = {}, {}
  -- Alternating chunks, both orders; medians resist the noise of a busy VM.
  for k = 1, math.max(4, math.floor(n * rounds / chunk)) do
    local a = clock()
    if k % 2 == 0 then
      for _ = 1, chunk do ffi.C.read(fd, buf, 32) end
      raw[#raw + 1] = (clock() - a) / chunk * 1e9
    else
      for _ = 1, chunk do c:read(t) end
      lua[#lua + 1] = (clock() - a) / chunk * 1e9
    end
  end
  table.sort(raw)
  table.sort(lua)
  extra = (" %.1f %.1f"):format(raw[math.floor(#raw / 2) + 1], lua[math.floor(#lua / 2) + 1])
end
print(("%.1f %.3f %.1f%s"):format(best, kb1 - kb0, fresh, extra))
