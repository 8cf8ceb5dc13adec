-- perf-sampling-limits.txt and perf-profiling-tool.txt, "Per-event throttling":
-- an event that overflows max_samples_per_tick = ceil(max_sample_rate / HZ) times
-- in one tick is stopped until the next one, and the ring says so with
-- PERF_RECORD_THROTTLE / UNTHROTTLE; samples it never took are not LOST records.
-- A hardware PMU reaches 400 a tick easily; this VM's hrtimer clock does not at
-- the default rate, so (as root) the rate is lowered for one run, as the text's
-- `sysctl -w kernel.perf_event_max_sample_rate=...`, and put back.  The last row
-- is the other loss: a one-page ring drained every 50 ms (LOST, no THROTTLE).
--   lua5.4 examples/seeds/throttle.lua [lowered rate, default 10000]
local perf, root = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
local path = "/proc/sys/kernel/perf_event_max_sample_rate"
local function rate(v)
  local f = assert(io.open(path, v and "w" or "r"))
  local old = f:read("*l") or f:write(v); f:close(); return old
end
local cfg = io.popen("zcat /proc/config.gz 2>/dev/null | sed -n 's/^CONFIG_HZ=//p'")
local saved, hz = tonumber(rate()), tonumber(cfg:read("*a")) or 250; cfg:close()
local function run(label, pages, poll_ms, rounds)
  local s = assert(perf.session{ events = { "cpu-clock:u" }, period = 20000, pages = pages, cmd = { root .. "/build/progs/shaped", rounds or "60" } })
  local n, t, t0 = { SAMPLE = 0, THROTTLE = 0, UNTHROTTLE = 0, LOST = 0 }, 0, perf.clock()
  s:start()
  repeat local _, done = s:poll(poll_ms); perf.sleep(poll_ms)
    for rec in s:records() do n[rec.type] = (n[rec.type] or 0) + (rec.type == "LOST" and rec.lost or 1) end
  until done
  print(("%-42s %8d %8d %8d %10d %9.0f"):format(label, n.SAMPLE, n.THROTTLE, n.UNTHROTTLE, n.LOST, n.SAMPLE / (perf.clock() - t0)))
  s:close()
end
print(("cpu-clock:u every 20 us (50,000/s) on build/progs/shaped; HZ=%d, max_samples_per_tick=ceil(rate/HZ)"):format(hz))
print(("%-42s %8s %8s %8s %10s %9s"):format("run", "SAMPLE", "THROTTLE", "UNTHROT", "LOST(smp)", "samples/s"))
run(("max_sample_rate %d (as set), 256 pages"):format(saved), 256, 20)
if io.open(path, "w") then
  local low = tonumber(arg[1]) or 10000
  rate(tostring(low))
  local ok, err = pcall(run, ("max_sample_rate %d (%d/tick)"):format(low, math.ceil(low / hz)), 256, 20)
  rate(tostring(saved)); assert(ok, err)
else print("(not root: the rate cannot be lowered here)") end
run(("max_sample_rate %d, 1 page, drained /50ms"):format(saved), 1, 50, "300")
