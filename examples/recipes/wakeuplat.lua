-- Wakeup latency per task (bpftrace's wakeuptime/runqlat by comm; the live form
-- of examples/wakeup_latency.lua): sched_wakeup to the sched_switch that puts
-- the task on a CPU, every CPU for SECONDS, per command: count, average, max.
--   lua5.4 examples/recipes/wakeuplat.lua [SECONDS]
local perf = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
local path = os.tmpname()
local s = assert(perf.session{ events = { "sched:sched_wakeup", "sched:sched_switch" },
  pid = -1, cpus = perf.parse_cpu_list(io.open("/sys/devices/system/cpu/online"):read("*l")), pages = 256 })
local w = assert(perf.writer(path))
w:add_session(s); assert(s:start()); w:synthesize()
assert(w:record(s, { duration_ms = 1000 * (tonumber(arg[1]) or 1) })); assert(w:close()); s:close()
local woken, stats = {}, {}
for rec in assert(perf.open(path)):records{ type = "SAMPLE" } do
  local f = rec.fields
  if rec.event == "sched:sched_wakeup" then woken[f.pid] = rec.time
  elseif woken[f.next_pid] then
    local lat, st = rec.time - woken[f.next_pid], stats[f.next_comm] or { comm = f.next_comm, n = 0, sum = 0, max = 0 }
    stats[f.next_comm], st.n, st.sum, st.max, woken[f.next_pid] = st, st.n + 1, st.sum + lat, math.max(st.max, lat), nil
  end
end
os.remove(path)
local list = {}
for _, st in pairs(stats) do list[#list + 1] = st end
table.sort(list, function(a, b) return a.max > b.max end)
print(("%-16s %8s %12s %12s"):format("TASK", "WAKEUPS", "AVG us", "MAX us"))
for i = 1, math.min(#list, 15) do local st = list[i]
  print(("%-16s %8d %12.1f %12.1f"):format(st.comm, st.n, st.sum / st.n / 1000, st.max / 1000))
end
