-- Overhead of perf.luaprofile on a CPU-bound Lua benchmark, against the
-- same work unprofiled, against a plain perf session sampling this thread at
-- the same rate (the timer interrupt and the record alone: what
-- `perf record -F` costs the program, with no signal and no Lua work) and
-- (LuaJIT) against jit.p at the same rate, all in one process: rounds of
-- every variant interleaved; each variant's figure is the median over
-- rounds of its time over that round's unprofiled time.
--
--   lua5.4 bench/luaprofile.lua [rounds]     luajit bench/luaprofile.lua [rounds]
local perf = require "perf"
local rounds = tonumber(arg and arg[1]) or 7
local is_jit = jit ~= nil

-- The workload: calls, tables, strings and closures, ~0.5 s per run.
local B = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "luaprofile_work.lua")
local work, median = B.work, B.median

-- Calibrate: about 0.5 s of CPU per run.
local scale = 1
while true do
  local t0 = os.clock()
  work(scale)
  if os.clock() - t0 > 0.05 then
    scale = math.max(1, math.floor(scale * 0.5 / (os.clock() - t0)))
    break
  end
  scale = scale * 2
end

local function max_rate()
  local f = io.open("/proc/sys/kernel/perf_event_max_sample_rate")
  local v = f and tonumber(f:read("*l"))
  if f then f:close() end
  return v or 9999
end

local variants = {
  { name = "unprofiled" },
  { name = "luaprofile 99 Hz", freq = 99 },
  { name = "luaprofile 999 Hz", freq = 999 },
  -- at 10 kHz the cost per sample stands out of the machine's noise
  -- (or the kernel's limit, kernel.perf_event_max_sample_rate)
  { name = "luaprofile 9999 Hz", freq = math.min(9999, max_rate()) },
  { name = "timer only 999 Hz", session = 999 },
  { name = "timer only 9999 Hz", session = math.min(9999, max_rate()) },
}
if is_jit then
  -- jit.p's mechanism and per-sample work (jit.profile with a callback
  -- that dumps and counts the stack as jit.p's does), so its real rate is
  -- known: ITIMER_PROF ticks at most CONFIG_HZ times a second.
  table.insert(variants, { name = "jit.p 100 Hz (i10)", jitp = "fi10" })
  table.insert(variants, { name = "jit.p 1000 Hz (i1)", jitp = "fi1" })
end

local times, samples = {}, {}
for _, v in ipairs(variants) do times[v.name] = {} samples[v.name] = 0 end
for r = 1, rounds do
  -- each round starts with another variant: no variant always runs first
  for k = 1, #variants do
    local v = variants[(r + k - 2) % #variants + 1]
    local prof, jp, sess
    collectgarbage("collect")
    -- LuaJIT: starting its profiler flushes every trace; so does every
    -- variant here, or the unprofiled one would run other traces
    if is_jit then jit.flush() end
    if v.session then
      sess = assert(perf.session{ events = { "cpu-clock:u" }, freq = v.session, pid = 0,
                                  inherit = false, pages = 256 })
      sess:start()
    elseif v.freq then
      prof = assert(perf.luaprofile{ freq = v.freq })
      prof:start()
    elseif v.jitp then
      local profile = require "jit.profile"
      local counts = {}
      jp = profile
      profile.start(v.jitp, function(th, n)
        samples[v.name] = samples[v.name] + n
        local k = profile.dumpstack(th, "f", 1)
        counts[k] = (counts[k] or 0) + n
      end)
    end
    local t0 = os.clock()
    work(scale)
    local dt = os.clock() - t0
    if sess then
      sess:stop()
      for rec in sess:records{ type = "SAMPLE" } do samples[v.name] = samples[v.name] + 1 end
      sess:close()
    elseif prof then
      local p = prof:stop()
      samples[v.name] = samples[v.name] + p:total()
      prof:close()
    elseif jp then
      jp.stop()
    end
    table.insert(times[v.name], dt)
  end
end

local function overhead(name) return B.overhead(times, name) end
local base = median(times.unprofiled)
print(("%s, %d rounds, %.3f s per run (median CPU time)"):format(
  is_jit and jit.version or _VERSION, rounds, base))
print(("%-22s %9s %9s %9s"):format("variant", "median s", "overhead", "samples/run"))
for _, v in ipairs(variants) do
  print(("%-22s %9.3f %8.2f%% %9s"):format(v.name, median(times[v.name]), 100 * overhead(v.name),
    v.name ~= "unprofiled" and ("%.0f"):format(samples[v.name] / rounds) or "-"))
end
-- The cost of one sample, from 10 kHz where it stands out of the noise,
-- and what it makes at 999 Hz: all of it, and the part over the timer's.
local function per_sample(name)
  return overhead(name) * base / (samples[name] / rounds)
end
local lp, timer = per_sample("luaprofile 9999 Hz"), per_sample("timer only 9999 Hz")
print(("cost per sample: luaprofile %.1f us (%.2f%% at 999 Hz), timer alone %.1f us (%.2f%%),"
  .. " luaprofile's own %.1f us (%.2f%%)"):format(lp * 1e6, 100 * lp * 999, timer * 1e6,
  100 * timer * 999, (lp - timer) * 1e6, 100 * (lp - timer) * 999))
