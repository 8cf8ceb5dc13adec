-- perf.luaprofile's frames, wait and alloc (issue 17): what they cost.
--   lua5.4|luajit bench/luaprofile_frames.lua [ROUNDS]
-- 1. prof:frame() per call (a started profiler, 1e6 marks), and so its
--    share of a second at 1,000 frames a second;
-- 2. an allocation-heavy loop (1.5M strings and tables), unprofiled,
--    profiled at 999 Hz, and at 999 Hz with alloc = 1 GiB (the shim alone)
--    and 256 KiB, alternating in each round: median CPU seconds (os.clock);
-- 3. a wait-heavy loop (1 ms of fixed Lua work, then a blocking read of a line
--    that a child writes every 2 ms), unprofiled, profiled, and profiled
--    with wait = true: median CPU seconds per variant (the wall time is
--    the child's pace; the profiler's cost shows as CPU).
local perf = require "perf"
local B = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "luaprofile_work.lua")
local run, alloc_work, wait_work, median = B.run, B.alloc_work, B.wait_work, B.median
local rounds = tonumber(arg[1]) or 7

-- 1. the frame mark, and with counters (a read of the group at each mark)
for _, opts in ipairs({ { freq = 999 }, { freq = 999, counters = { "page-faults", "task-clock" } } }) do
  local prof = assert(perf.luaprofile(opts))
  prof:start()
  local n = opts.counters and 200000 or 1000000
  local t0 = os.clock()
  for _ = 1, n do prof:frame() end
  local per = (os.clock() - t0) / n * 1e9
  prof:stop()
  prof:close()
  print(string.format("%s frame()%s: %.0f ns a mark, %.3f%% of a second at 1000 frames/s",
    _VERSION .. (jit and " (LuaJIT)" or ""), opts.counters and " with 2 counters" or "",
    per, per * 1000 / 1e9 * 100))
end

-- alloc's own cost is the difference from the 999 Hz run; a rate of 1 GiB
-- samples nothing, so it shows the allocator shim alone (every allocation
-- and free goes through it while alloc is on).
local variants = {
  { "unprofiled", nil },
  { "999 Hz", { freq = 999 } },
  { "999 Hz + alloc=1GiB", { freq = 999, alloc = 1024 * 1024 * 1024 } },
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
print(string.format("alloc-heavy alloc=256KiB's own cost: %+.2f%% of the unprofiled run",
  (median(t["999 Hz + alloc=256KiB"]) - median(t["999 Hz"])) / base * 100))

-- The wait-heavy loop: wait = true's own cost is the difference between
-- the profiled runs with and without it (the 999 Hz sampler's cost is
-- apart: on this VM a per-thread cpu-clock timer costs at each of the
-- thread's context switches, as it does under perf record -F 999).
local nwait = 300
variants = {
  { "unprofiled", nil },
  { "999 Hz", { freq = 999 } },
  { "999 Hz + wait", { freq = 999, wait = true } },
}
t = {}
for r = 1, rounds do
  for _, v in ipairs(variants) do
    t[v[1]] = t[v[1]] or {}
    local c, st = run(v[2], wait_work, nwait)
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
  print(string.format("wait-heavy  %-22s %.3f s CPU  %+.1f%%  (%d waits)", v[1], m, (m / base - 1) * 100, nwait))
end
local own = median(t["999 Hz + wait"]) - median(t["999 Hz"])
print(string.format("wait-heavy  wait = true's own cost: %.1f us a wait, %+.2f%% of the unprofiled run",
  own / nwait * 1e6, own / base * 100))
-- The profiler's own clock: what a safe point after a wait costs in user
-- space (the stack read, the switch ring drained, the stack counted); the
-- kernel's part (the switch sample and records, the SIGTRAP) is the rest
-- of the difference above.
print(string.format("wait-heavy  safe point after a wait: %.1f us (median of %d rounds)",
  median(t.sp), #t.sp))
