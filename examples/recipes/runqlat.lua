-- runqlat (bcc): run queue latency, the time from a task's wakeup to its getting
-- a CPU, as a log2 histogram (perf.hist) in microseconds, every CPU for SECONDS.
-- From the sched_wakeup, sched_wakeup_new and sched_switch tracepoints, recorded into a
-- perf.data and read back with their fields (bcc keeps this in BPF maps).
--   lua5.4 examples/recipes/runqlat.lua [SECONDS]
local perf = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
local path = os.tmpname()
local s = assert(perf.session{ events = { "sched:sched_wakeup", "sched:sched_wakeup_new", "sched:sched_switch" },
  pid = -1, cpus = perf.parse_cpu_list(io.open("/sys/devices/system/cpu/online"):read("*l")), pages = 256 })
local w = assert(perf.writer(path))
w:add_session(s); assert(s:start()); w:synthesize()
assert(w:record(s, { duration_ms = 1000 * (tonumber(arg[1]) or 1) })); assert(w:close()); s:close()
local woken, h = {}, perf.hist()
for rec in assert(perf.open(path)):records{ type = "SAMPLE" } do
  local f = rec.fields
  if rec.event ~= "sched:sched_switch" then woken[f.pid] = rec.time
  elseif woken[f.next_pid] then             -- whole microseconds, truncated as bcc
    h:add(math.floor((rec.time - woken[f.next_pid]) / 1000)); woken[f.next_pid] = nil
  end
end
os.remove(path)
print(("%d wakeups, p50 %s us, p99 %s us, max %s us"):format(h:count(), h:percentile(50), h:percentile(99), h:max()))
io.write(h:text{ unit = "usecs" })
