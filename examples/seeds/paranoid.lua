-- perf-profiling-tool.txt, "perf_event_paranoid and What Each Level Permits":
-- which scopes perf_event_open(2) refuses an unprivileged user, and with which
-- errno (EACCES/EPERM: scope, never EINVAL: capability).  As root the probe runs
-- as `nobody` (setpriv); --all-levels sets each level -1..2 in turn for the probe
-- and puts the sysctl back.  The tracepoint column opens the id root read from
-- tracefs (tracefs itself is root-only here) as a sampled event, with RAW.
--   lua5.4 examples/seeds/paranoid.lua [--all-levels]
local perf = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
local E = { [1] = "EPERM", [13] = "EACCES", [22] = "EINVAL", [2] = "ENOENT" }
local cols = { "user-only, own pid", "kernel (excl_kernel=0)", "CPU-wide (pid -1)", "tracepoint RAW", "ring 16 MiB > mlock_kb", "freq > max rate" }
if arg[1] == "--probe" then
  local probes = { function() return perf.counter("cpu-clock:u", { pid = 0 }) end,
    function() return perf.counter("cpu-clock", { pid = 0 }) end,
    function() return perf.counter("cpu-clock:u", { pid = -1, cpu = 0 }) end,
    function() return perf.session{ events = { "tracepoint/config=" .. arg[2] .. "/" }, pid = 0, user_only = true } end,
    function() return perf.session{ events = { "cpu-clock" }, pid = 0, pages = 4096, user_only = true } end,
    function() return perf.session{ events = { ("software/config=0,freq=%d/"):format(perf.caps().max_sample_rate + 1) }, pid = 0, user_only = true } end }
  local cells = {}
  for i, probe in ipairs(probes) do local ok, _, errno = probe(); cells[i] = ok and "ok" or E[errno] or tostring(errno) end
  print(("%5d  %-22s %-22s %-22s %-22s %-22s %s"):format(perf.caps().paranoid, (table.unpack or unpack)(cells))); return
end
local tp = assert(perf.parse("sched:sched_switch")).config
local probe = ("setpriv --reuid=nobody --regid=nogroup --clear-groups %s %s --probe %d"):format(arg[-1], arg[0], tp)
print(("level  %-22s %-22s %-22s %-22s %-22s %s"):format((table.unpack or unpack)(cols)))
io.stdout:flush()
if arg[1] ~= "--all-levels" then os.execute(probe) return end
local path = "/proc/sys/kernel/perf_event_paranoid"
local saved = io.open(path):read("*l")
for level = -1, 2 do
  local f = io.open(path, "w"); f:write(level); f:close()
  local ok = pcall(os.execute, probe)
  f = io.open(path, "w"); f:write(saved); f:close()
  if not ok then break end
end
