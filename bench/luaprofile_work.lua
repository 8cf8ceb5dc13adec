-- The workload of the luaprofile benchmarks (bench/luaprofile.lua,
-- bench/luaprofile_perf.lua, bench/luaprofile_parts.lua): calls, tables,
-- strings and closures; the densest allocation loop of Lua (issue 17's
-- alloc benchmarks); one timed run under a profiler; and the medians they
-- report.
--   local B = dofile("bench/luaprofile_work.lua")
--   B.work(scale); B.alloc_work(); B.wait_work(lines); B.run(opts, work, ...);
--   B.median(list);
--   B.overhead(times, name)
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local function tables(n)
  local t = {}
  for i = 1, n do t[i] = { id = i, name = "n" .. (i % 100) } end
  local s = 0
  for _, v in ipairs(t) do s = s + v.id + #v.name end
  return s
end
local function strings(n)
  local parts = {}
  for i = 1, n do parts[#parts + 1] = ("%05d"):format(i) end
  return #table.concat(parts, ",")
end
local B = {}
function B.work(scale)
  local r = 0
  for _ = 1, scale do
    r = r + fib(22) + tables(20000) + strings(20000)
  end
  return r
end
-- 1.5M string concatenations and two-field tables (about 30M allocator
-- calls a second on Lua 5.4), a few kept so no JIT sinks them.
local keep = {}
function B.alloc_work()
  local n = 0
  for i = 1, 1500000 do
    local s = "key " .. i .. " with enough text to be a long string " .. n
    keep[i % 512 + 1] = { s, i }
    n = n + #s
  end
  return n
end
-- A wait-heavy loop: work_ms (default 1) of fixed Lua work (calibrated
-- once, so that what a profiler adds shows as CPU time instead of being
-- absorbed by a loop that runs until the clock says 1 ms), then a blocking
-- read of a line that a child writes every every_ms (default 2).  One
-- writer for the whole run (perl is in every Debian system): a shell loop
-- would fork a sleep(1) per line, and that exec every 2 ms evicts the
-- reader's caches and moves it between CPUs, a noise larger than the cost
-- being measured.
local function spin(n)
  local x = 0
  for i = 1, n do x = x + i % 7 end
  return x
end
local per_ms
function B.wait_work(lines, work_ms, every_ms)
  if per_ms == nil then
    local n, t0 = 2000000, os.clock()
    spin(n)
    per_ms = math.floor(n / ((os.clock() - t0) * 1000))
  end
  local n = math.floor(per_ms * (work_ms or 1))
  local f = io.popen("perl -e '$|=1; for (1.." .. lines ..
    ") { select(undef, undef, undef, " .. (every_ms or 2) / 1000 .. "); print \"$_\\n\" }'")
  local x = 0
  for _ in f:lines() do x = x + spin(n) end
  f:close()
  return x
end
-- CPU seconds (os.clock) of work(...) under perf.luaprofile(opts) (none:
-- unprofiled), and the profiler's stats at the end.
function B.run(opts, work, ...)
  local prof
  if opts then prof = assert(require("perf").luaprofile(opts)); prof:start() end
  local c0 = os.clock()
  work(...)
  local c = os.clock() - c0
  local st
  if prof then st = prof:stats(); prof:stop(); prof:close() end
  return c, st
end
function B.median(t)
  local c = {}
  for i, x in ipairs(t) do c[i] = x end
  table.sort(c)
  return c[math.floor((#c + 1) / 2)]
end
-- The median over rounds of a variant's time over the unprofiled time of
-- its own round (times[name][round]): the machine's load drifts between
-- rounds, not within one.
function B.overhead(times, name)
  local r = {}
  for i, x in ipairs(times[name]) do r[i] = x / times.unprofiled[i] - 1 end
  return B.median(r)
end
return B
