-- perf.luaprofile against `perf record -F 999 -g` on the same workload, in
-- the same run: each variant is a child process running the same fixed
-- work (calls, tables, strings; ~1 s), timed by its own CPU clock
-- (os.clock: the sampling interrupts it takes are charged to it, whoever
-- asked for them).  Rounds interleave the variants; a variant's figure is
-- the median over rounds of its time over that round's unprofiled time.
--
--   lua5.4 bench/luaprofile_perf.lua [rounds]     luajit bench/luaprofile_perf.lua [rounds]
local mode = arg and arg[1]
local is_jit = jit ~= nil

local B = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "luaprofile_work.lua")
local work, median = B.work, B.median

if mode == "child" then
  -- child VARIANT SCALE: prints the CPU time of the work and what it sampled
  local variant, scale = arg[2], tonumber(arg[3])
  local prof
  if variant:match("^luaprofile") then
    local perf = require "perf"
    prof = assert(perf.luaprofile{ freq = tonumber(variant:match("%d+")) })
    prof:start()
  end
  local t0 = os.clock()
  work(scale)
  local dt = os.clock() - t0
  local samples, sp = 0, 0
  if prof then
    local p = prof:stop()
    samples, sp = p:total(), p:meta().safepoint_ns
    prof:close()
  end
  print(("cpu=%.6f samples=%d safepoint_ns=%d"):format(dt, samples, sp))
  return
end

local rounds = tonumber(mode) or 7
local interp = is_jit and "luajit" or "lua5.4"
local self = debug.getinfo(1, "S").source:sub(2)
local data = os.tmpname()

-- Calibrate in this process: ~1 s of CPU per run (the effect at 999 Hz is
-- a point or two: shorter runs drown it in the machine's noise).
local scale = 1
while true do
  local t0 = os.clock()
  work(scale)
  local dt = os.clock() - t0
  if dt > 0.1 then scale = math.max(1, math.floor(scale * 1.0 / dt)) break end
  scale = scale * 2
end

local variants = {
  { name = "unprofiled", run = "none" },
  { name = "luaprofile 999 Hz", run = "luaprofile999" },
  { name = "perf record -F 999 -g", run = "none",
    wrap = "perf record -q -F 999 -g -o " .. data .. " -- " },
  { name = "luaprofile 9999 Hz", run = "luaprofile9999" },
  { name = "perf record -F 9999 -g", run = "none",
    wrap = "perf record -q -F 9999 -g -o " .. data .. " -- " },
}
local times, samples, spns = {}, {}, {}
for _, v in ipairs(variants) do times[v.name], samples[v.name], spns[v.name] = {}, 0, 0 end
for r = 1, rounds do
  for k = 1, #variants do
    local v = variants[(r + k - 2) % #variants + 1]
    local cmd = (v.wrap or "") .. interp .. " " .. self .. " child " .. v.run .. " " .. scale
    local f = assert(io.popen(cmd .. " 2>/dev/null"))
    local out = f:read("a")
    f:close()
    local cpu = tonumber(out:match("cpu=([%d%.]+)"))
    if not cpu then error(v.name .. ": " .. out) end
    table.insert(times[v.name], cpu)
    samples[v.name] = samples[v.name] + tonumber(out:match("samples=(%d+)"))
    spns[v.name] = spns[v.name] + tonumber(out:match("safepoint_ns=(%d+)"))
    if v.wrap then
      -- perf's own count of the samples it wrote
      local p = io.popen("perf report -i " .. data .. " --stats 2>/dev/null | awk '/SAMPLE events:/ {print $3}'")
      samples[v.name] = samples[v.name] + (tonumber(p:read("a"):match("%d+")) or 0)
      p:close()
    end
  end
end
os.remove(data)

local function overhead(name) return B.overhead(times, name) end
print(("%s, %d rounds, %.3f s of CPU per run unprofiled (median)"):format(
  is_jit and jit.version or _VERSION, rounds, median(times.unprofiled)))
print(("%-24s %9s %9s %12s %14s"):format("variant", "median s", "overhead", "samples/run", "us per sample"))
for _, v in ipairs(variants) do
  local n = samples[v.name] / rounds
  local o = overhead(v.name)
  print(("%-24s %9.3f %8.2f%% %12s %14s"):format(v.name, median(times[v.name]), 100 * o,
    v.name == "unprofiled" and "-" or ("%.0f"):format(n),
    v.name == "unprofiled" and "-" or ("%.1f"):format(o * median(times.unprofiled) / n * 1e6)))
end
for _, name in ipairs({ "luaprofile 999 Hz", "luaprofile 9999 Hz" }) do
  print(("%s: at its safe points %.2f us per sample (prof:stop():meta().safepoint_ns)"):format(
    name, spns[name] / samples[name] / 1000))
end
