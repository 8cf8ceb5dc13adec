-- What alloc = N and wait = true cost on their own (issue 17's targets:
-- alloc <= 3% at 256 KiB and wait <= 1%, against the same run unprofiled):
--   lua5.4|luajit bench/luaprofile_costs.lua [ROUNDS [alloc|wait|waitcost]]
-- alloc: the densest allocation pattern of Lua (1.5M string
-- concatenations and two-field tables, about 30M allocator calls a second
-- on Lua 5.4), run unprofiled, with the sampler alone at 1 Hz (it takes no
-- sample: what start and stop cost), with alloc = 1 GiB (the allocator
-- shim alone: it samples nothing) and with alloc = 256 KiB.
-- wait: the wait-heavy loop (1 ms of Lua work, then a blocking read; 300
-- waits), unprofiled, at 1 Hz, and at 1 Hz with wait = true.
-- waitcost: one wait's cost, amplified so the machine's noise (a few
-- percent between runs) cannot hide it: 3,000 waits of 0.1 ms of work
-- each (a line every 0.2 ms), and the extra CPU time per wait over the
-- 1 Hz run, for wait = true with and without native frames; the implied
-- overhead on the 1 ms loop above is that cost over 1 ms.
-- The variants' order turns each round, so none always runs first (the
-- first run of a round was up to 3% faster or slower here).  CPU seconds
-- (os.clock); each variant's cost is the median over rounds of its time
-- over the unprofiled time of the same round.
local B = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "luaprofile_work.lua")
local rounds = tonumber(arg[1]) or 15
local only = arg[2]
local who = _VERSION .. (jit and " (LuaJIT)" or "")

local function measure(what, variants, work, ...)
  local t, last = {}, {}
  for r = 1, rounds do
    for k = 0, #variants - 1 do
      local v = variants[(r + k) % #variants + 1]
      local c, st = B.run(v[2], work, ...)
      t[v[1]] = t[v[1]] or {}
      table.insert(t[v[1]], c)
      last[v[1]] = st
    end
  end
  for _, v in ipairs(variants) do
    print(string.format("%s %s %-20s %.3f s CPU  %+.2f%% of unprofiled",
      who, what, v[1], B.median(t[v[1]]), B.overhead(t, v[1]) * 100))
  end
  return last, t
end

local st
if only == nil or only == "alloc" then
st = measure("alloc", {
  { "unprofiled", nil },
  { "1 Hz", { freq = 1 } },
  { "1 Hz + alloc=1GiB", { freq = 1, alloc = 1024 * 1024 * 1024 } },
  { "1 Hz + alloc=256KiB", { freq = 1, alloc = 256 * 1024 } },
}, B.alloc_work)["1 Hz + alloc=256KiB"]
print(string.format("%s alloc 256 KiB: %d samples, %.1f MB counted, safe points %.1f us each",
  who, st.alloc_samples, st.alloc_bytes / 1e6,
  st.safepoints > 0 and st.safepoint_ns / st.safepoints / 1e3 or 0))
end

if only == nil or only == "wait" then
local nwait = 300
st = measure("wait ", {
  { "unprofiled", nil },
  { "1 Hz", { freq = 1 } },
  { "1 Hz + wait", { freq = 1, wait = true } },
}, B.wait_work, nwait)["1 Hz + wait"]
print(string.format("%s wait  %d waits counted of %d, safe points %.1f us each",
  who, st.waits, nwait, st.safepoints > 0 and st.safepoint_ns / st.safepoints / 1e3 or 0))
end

if only == "waitcost" then
local nwait = 3000
local st, t = measure("wait/0.1ms", {
  { "unprofiled", nil },
  { "1 Hz", { freq = 1 } },
  { "1 Hz + wait", { freq = 1, wait = true } },
  { "1 Hz + wait, native=false", { freq = 1, wait = true, native = false } },
}, B.wait_work, nwait, 0.1, 0.2)
for _, name in ipairs({ "1 Hz + wait", "1 Hz + wait, native=false" }) do
  local d = {}
  for r, x in ipairs(t[name]) do d[r] = (x - t["1 Hz"][r]) / nwait end
  local us = B.median(d) * 1e6
  print(string.format("%s %-26s %5.1f us CPU a wait (%d counted): %.2f%% on 1 ms of work a wait",
    who, name, us, st[name].waits, us / 10))
end
end
