-- Soak (issue 9): sampling at the machine's maximum rate, with inherit, over
-- a workload that forks and execs without pause, for SECS seconds.
--
--   lua5.4 bench/soak.lua SECS [RSS_EVERY_S [PAGES]]
--
-- PAGES (ring data pages, default perf's) small, e.g. 1, makes the kernel
-- drop records, to check that the losses are all accounted for.
--
-- Every record goes through s:records() into Lua (the decoder and the
-- push path run for each one).  Checked at the end:
--   * the profiler's RSS is flat after warm-up (the first fifth, >= 20 s):
--     the largest RSS seen later minus the RSS at the end of warm-up;
--   * every loss is accounted for: the LOST/LOST_SAMPLES records seen add up
--     to stats().lost and stats().lost_records, and SAMPLE records seen to
--     stats().samples;
--   * samples + lost against what the kernel should have generated: the
--     workload's task-clock (an inherited counter) times the rate.
-- Exits 1 when a check fails.
local perf = require "perf"

local secs = tonumber(arg[1]) or 600
local every = tonumber(arg[2]) or 5
local pages = tonumber(arg[3])
local here = arg[0]:match("^(.*)/bench/[^/]*$") or "."
local forker = here .. "/build/progs/forker"

local function sysctl(name)
  local f = io.open("/proc/sys/kernel/" .. name)
  if not f then return nil end
  local v = tonumber(f:read("*l"))
  f:close()
  return v
end

local function status_kb(field)
  for line in io.lines("/proc/self/status") do
    local v = line:match("^" .. field .. ":%s*(%d+)")
    if v then return tonumber(v) end
  end
end

local function nfds()
  local f = assert(io.open("/proc/self/stat"))
  local pid = f:read("*l"):match("^(%d+)")
  f:close()
  local n = 0
  local p = assert(io.popen("ls /proc/" .. pid .. "/fd"))
  for _ in p:lines() do n = n + 1 end
  p:close()
  return n
end

local rate0 = sysctl("perf_event_max_sample_rate") or 1000
local s = assert(perf.session{ events = { "cpu-clock" }, freq = rate0, inherit = true, pages = pages,
  cmd = { forker, "loop", tostring(secs) } })
-- The reference for the expected sample count: the workload tree's CPU time.
local clock = assert(perf.counter("task-clock", { pid = s:pid(), inherit = true }))
assert(s:start())

local seen = { records = 0, samples = 0, lost = 0, lost_records = 0, comm = 0, fork = 0, exit = 0 }
local rss = {}            -- { t, kb } every `every` seconds
local t0 = perf.core.clock()
local next_rss = 0
local done
repeat
  local _, d = assert(s:poll(100))
  done = d
  for rec in s:records() do
    seen.records = seen.records + 1
    local ty = rec.type
    if ty == "SAMPLE" then
      seen.samples = seen.samples + 1
    elseif ty == "LOST" or ty == "LOST_SAMPLES" then
      seen.lost = seen.lost + rec.lost
      seen.lost_records = seen.lost_records + 1
    elseif ty == "COMM" then
      seen.comm = seen.comm + 1
    elseif ty == "FORK" then
      seen.fork = seen.fork + 1
    elseif ty == "EXIT" then
      seen.exit = seen.exit + 1
    end
  end
  local t = perf.core.clock() - t0
  if t >= next_rss then
    rss[#rss + 1] = { t = t, kb = status_kb("VmRSS"), fds = nfds() }
    next_rss = next_rss + every
  end
until done
for rec in s:records() do
  seen.records = seen.records + 1
  if rec.type == "SAMPLE" then seen.samples = seen.samples + 1
  elseif rec.type == "LOST" or rec.type == "LOST_SAMPLES" then
    seen.lost = seen.lost + rec.lost
    seen.lost_records = seen.lost_records + 1
  end
end
local elapsed = perf.core.clock() - t0
local status = s:wait()
local st = s:stats()
local task = clock:read()
clock:close()
s:close()
local rate1 = sysctl("perf_event_max_sample_rate")

-- Flat after warm-up.
local warm = math.max(20, secs / 5)
local at_warm, peak, last, fds_warm
for _, r in ipairs(rss) do
  if r.t >= warm then
    at_warm = at_warm or r.kb
    fds_warm = fds_warm or r.fds
    peak = math.max(peak or 0, r.kb)
  end
  last = r.kb
end
at_warm = at_warm or last
peak = peak or last
local growth = peak - at_warm

local expected = (tonumber(task.value) or 0) / 1e9 * rate0
local got = st.samples + st.lost
local fails = {}
local function check(ok, what)
  if not ok then fails[#fails + 1] = what end
end
check(status == 0, "the workload failed: " .. tostring(status))
check(seen.records == st.records, "records seen " .. seen.records .. " ~= stats " .. tostring(st.records))
check(seen.samples == st.samples, "samples seen " .. seen.samples .. " ~= stats " .. tostring(st.samples))
check(seen.lost == st.lost, "lost in LOST records " .. seen.lost .. " ~= stats " .. tostring(st.lost))
check(seen.lost_records == st.lost_records, "LOST records " .. seen.lost_records ..
  " ~= stats " .. tostring(st.lost_records))
-- 1 MiB of slack: Lua's collector and malloc's free lists move a little.
check(growth <= 1024, "RSS grew " .. growth .. " KiB after warm-up")
fds_warm = fds_warm or rss[#rss].fds
check(rss[#rss].fds == fds_warm, "fds " .. fds_warm .. " after warm-up -> " .. rss[#rss].fds)

print(string.format("soak: %d s at %d Hz (max_sample_rate %d -> %s), inherit, forker loop, %s",
  secs, rate0, rate0, tostring(rate1), pages and (pages .. "-page rings") or "default rings"))
print(string.format("  elapsed %.1f s; workload task-clock %.2f s; forks %d, execs (COMM) %d, exits %d",
  elapsed, (tonumber(task.value) or 0) / 1e9, seen.fork, seen.comm, seen.exit))
print(string.format("  records %d (%.0f/s); samples %d; lost %d in %d LOST records; throttled %d, unthrottled %d",
  st.records, st.records / elapsed, st.samples, st.lost, st.lost_records, st.throttled, st.unthrottled))
print(string.format("  samples+lost %d vs task-clock x rate %.0f (%.1f%%)", got, expected,
  expected > 0 and 100 * got / expected or 0))
print(string.format("  RSS: start %d KiB, at warm-up end (%.0f s) %d KiB, peak after %d KiB, end %d KiB: growth %d KiB",
  rss[1].kb, warm, at_warm, peak, last, growth))
local line = {}
for _, r in ipairs(rss) do line[#line + 1] = string.format("%.0f:%d", r.t, r.kb) end
print("  RSS samples (s:KiB): " .. table.concat(line, " "))
if #fails > 0 then
  print("FAILED: " .. table.concat(fails, "; "))
  os.exit(1)
end
print("soak: ok")
