-- perf.luaprofile's frames, wait and alloc (issue 17): what they cost.
--   lua5.4|luajit bench/luaprofile_frames.lua [ROUNDS]
-- 1. prof:frame() per call (a started profiler, 1e6 marks), and so its
--    share of a second at 1,000 frames a second;
-- 2. an allocation-heavy loop (strings and tables), unprofiled, profiled
--    at 999 Hz, and at 999 Hz with alloc = 256 KiB, alternating in each
--    round: median CPU seconds (os.clock);
-- 3. a wait-heavy loop (1 ms of fixed Lua work, then a blocking read of a line
--    that a child writes every 2 ms), unprofiled, profiled, and profiled
--    with wait = true: median CPU seconds per variant (the wall time is
--    the child's pace; the profiler's cost shows as CPU).
local perf = require "perf"
local rounds = tonumber(arg[1]) or 7

local function median(t)
  table.sort(t)
  return t[math.floor((#t + 1) / 2)]
end

-- 1. the frame mark
do
  local prof = assert(perf.luaprofile{ freq = 999 })
  prof:start()
  local n = 1000000
  local t0 = os.clock()
  for _ = 1, n do prof:frame() end
  local per = (os.clock() - t0) / n * 1e9
  prof:stop()
  prof:close()
  print(string.format("%s frame(): %.0f ns a mark, %.3f%% of a second at 1000 frames/s",
    _VERSION .. (jit and " (LuaJIT)" or ""), per, per * 1000 / 1e9 * 100))
end

local keep = {}
local function alloc_work()
  local n = 0
  for i = 1, 300000 do
    local s = "key " .. i .. " with enough text to be a long string " .. n
    keep[i % 512 + 1] = { s, i }
    n = n + #s
  end
  return n
end

-- A fixed amount of work (about 1 ms unprofiled, calibrated once), so
-- that what the profiler adds shows in the CPU time instead of being
-- absorbed by a loop that runs until the clock says 1 ms.
local function spin(n)
  local x = 0
  for i = 1, n do x = x + i % 7 end
  return x
end
local per_ms
do
  local n, t0 = 2000000, os.clock()
  spin(n)
  per_ms = math.floor(n / ((os.clock() - t0) * 1000))
end

local function wait_work(lines)
  local f = io.popen("i=0; while [ $i -lt " .. lines .. " ]; do sleep 0.002; echo $i; i=$((i+1)); done")
  local x = 0
  for _ in f:lines() do x = x + spin(per_ms) end
  f:close()
  return x
end

local function run(opts, work, ...)
  local prof
  if opts then prof = assert(perf.luaprofile(opts)); prof:start() end
  local c0 = os.clock()
  work(...)
  local c = os.clock() - c0
  local st
  if prof then st = prof:stats(); prof:stop(); prof:close() end
  return c, st
end

local variants = {
  { "unprofiled", nil },
  { "999 Hz", { freq = 999 } },
  { "999 Hz + alloc=256KiB", { freq = 999, alloc = 256 * 1024 } },
}
local t = {}
for r = 1, rounds do
  for _, v in ipairs(variants) do
    t[v[1]] = t[v[1]] or {}
    table.insert(t[v[1]], (run(v[2], alloc_work)))
  end
end
local base = median(t.unprofiled)
for _, v in ipairs(variants) do
  local m = median(t[v[1]])
  print(string.format("alloc-heavy %-22s %.3f s CPU  %+.1f%%", v[1], m, (m / base - 1) * 100))
end

variants = {
  { "unprofiled", nil },
  { "999 Hz", { freq = 999 } },
  { "999 Hz + wait", { freq = 999, wait = true } },
}
t = {}
for r = 1, rounds do
  for _, v in ipairs(variants) do
    t[v[1]] = t[v[1]] or {}
    local c, st = run(v[2], wait_work, 300)
    table.insert(t[v[1]], c)
    if st and st.waits then
      t.sp = t.sp or {}
      table.insert(t.sp, st.safepoint_ns / 1000 / math.max(1, st.safepoints))
    end
  end
end
base = median(t.unprofiled)
for _, v in ipairs(variants) do
  local m = median(t[v[1]])
  print(string.format("wait-heavy  %-22s %.3f s CPU  %+.1f%%  (300 waits)", v[1], m, (m / base - 1) * 100))
end
-- The profiler's own clock: what a safe point after a wait costs in user
-- space (the stack read, the switch ring drained, the stack counted); the
-- kernel's part (the switch sample and records, the SIGTRAP) is the rest
-- of the difference above.
print(string.format("wait-heavy  safe point after a wait: %.1f us (median of %d rounds)",
  median(t.sp), #t.sp))
