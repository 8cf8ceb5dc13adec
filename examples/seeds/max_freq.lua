-- perf-profiling-tool.txt, "The rate ceiling, measured": bisect sample_freq
-- against EINVAL to find the largest frequency perf_event_open(2) takes, and
-- compare it with the sysctls it comes from (perf-sampling-limits.txt derives
-- max_samples_per_tick = ceil(rate/HZ), the 10 us period and the 2.5 us
-- allowance from them).  The spec's freq= term goes to the kernel as is
-- (perf.session's freq= option clamps to the sysctl, as perf record -F does).
--   lua5.4 examples/seeds/max_freq.lua
local perf = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
local function accepted(f)
  local s, _, errno = perf.session{ events = { ("software/config=0,freq=%d/"):format(f) }, pid = 0, pages = 1 }
  if s then s:close() return true end
  assert(errno == 22, "not EINVAL: errno " .. tostring(errno))
  return false
end
local lo, hi, tries = 1, 2 ^ 31 - 1, 0          -- lo is taken, hi is refused
while hi - lo > 1 do
  local mid = math.floor((lo + hi) / 2)
  if accepted(mid) then lo = mid else hi = mid end
  tries = tries + 1
end
local function sysctl(name)
  local f = io.open("/proc/sys/kernel/" .. name)
  local v = f and tonumber(f:read("*l")); if f then f:close() end
  return v
end
local p = io.popen("zcat /proc/config.gz 2>/dev/null | sed -n 's/^CONFIG_HZ=//p'")
local hz, rate, pct = tonumber(p:read("*a")), sysctl("perf_event_max_sample_rate"), sysctl("perf_cpu_time_max_percent")
p:close()
print(("max accepted sample_freq = %d Hz   (%d opens, EINVAL at %d)"):format(lo, tries, hi))
print(("perf_event_max_sample_rate = %d   perf_cpu_time_max_percent = %d   perf_event_mlock_kb = %d"):format(rate, pct, sysctl("perf_event_mlock_kb")))
print(("HZ = %s   max_samples_per_tick = %s   perf_sample_period_ns = %d   perf_sample_allowed_ns = %d"):format(
  hz or "?", hz and math.ceil(rate / hz) or "?", math.floor(1e9 / rate), math.floor(1e9 / rate * pct / 100)))
io.stdout:flush()
os.execute("dmesg 2>/dev/null | grep 'perf: interrupt took too long' || echo 'no ratchet in the kernel log: the rate is as set'")
