-- perf-profiling-tool.txt, "The mmap'd Ring Buffer" (measured drain) and the
-- Chinese text's section 4 (the kernel writes at data_head, user space reads up
-- to it and publishes data_tail).  A clock sampled every 2 ms over a quarter second of a loop,
-- one control page + 8 data pages, drained once: the records' sizes add up to
-- how far data_head moved (luaperf does the head/tail protocol in C: stats.bytes);
-- samples x period agrees with a counter of the same clock.  Then the record
-- size each sample_type gives: +8 bytes a frame, +the stack bytes for DWARF.
-- The text sampled cycles (no PMU here: task-clock, period in ns).
--   lua5.4 examples/seeds/ring_drain.lua
local perf, root = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
local period, pages = 2000000, 8
local s = assert(perf.session{ events = { "task-clock" }, period = period, pid = 0, pages = pages, user_only = true })
local c = assert(perf.counter("task-clock", { pid = 0, disabled = true }))
print(("mmap: %d pages = %d bytes  (1 control page + %d data pages)"):format(pages + 1, (pages + 1) * 4096, pages))
assert(s:start()); c:enable()
local t0, x = perf.clock(), 0.0
repeat for i = 1, 1e5 do x = x + 1.0 / i end until perf.clock() - t0 > 0.25
c:disable(); s:stop()
local n, bytes, by = 0, 0, { SAMPLE = 0, LOST = 0, THROTTLE = 0, UNTHROTTLE = 0 }
for rec in s:records() do
  bytes, by[rec.type] = bytes + rec.size, (by[rec.type] or 0) + 1
  if rec.type == "SAMPLE" and by.SAMPLE <= 6 then
    print(("  PERF_RECORD_SAMPLE size=%d ip=0x%x pid=%d tid=%d time=%d"):format(rec.size, rec.ip, rec.pid, rec.tid, rec.time))
  end
end
print(("drained: %d bytes = data_head - data_tail (stats.bytes %d): %d PERF_RECORD_SAMPLE, %d PERF_RECORD_LOST, %d THROTTLE/UNTHROTTLE"):format(
  bytes, s:stats().bytes, by.SAMPLE, by.LOST, by.THROTTLE + by.UNTHROTTLE))
local counted = c:read().raw
print(("%d samples x %d ns = %d ns; the counter: %d ns (%.1f%%)"):format(by.SAMPLE, period, by.SAMPLE * period, counted, 100 * by.SAMPLE * period / counted))
for _, cc in ipairs{ false, "fp", "dwarf,4096", "dwarf" } do      -- a frame-pointer program: chains end
  local s2 = assert(perf.session{ events = { "task-clock:u" }, period = 1e6, callchain = cc or nil, cmd = { root .. "/build/progs/shaped", "20" } })
  s2:start(); repeat local _, done = s2:poll(100) until done
  local lo, hi, k = math.huge, 0, 0
  for rec in s2:records{ type = "SAMPLE" } do lo, hi, k = math.min(lo, rec.size), math.max(hi, rec.size), k + 1 end
  print(("callchain %-10s record size %5d..%-5d bytes  (%d samples of build/progs/shaped)"):format(cc or "none", lo, hi, k))
  s2:close()
end
