-- perf.luaprofile at a loop's own rate (usage: luaprofile_phase.lua [ROUNDS]).
-- 1. A loop whose every round takes 1/999 s of CPU, 60% in partA, sampled
--    at freq = 999 (each interval drawn around 1/999 s) and at the fixed
--    period = 1001001 ns (the same mean, never drawn): partA's share.
-- 2. What the draw costs: a CPU-bound loop unprofiled, at the fixed period
--    and at freq = 999, alternated, medians of ROUNDS (CPU seconds).
local perf = require "perf"
local B = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "luaprofile_work.lua")
local rounds = tonumber(arg[1]) or 9
local T = 1 / 999

function partA(t) while os.clock() < t do end end
function partB(t) while os.clock() < t do end end

-- The share (0..100) of samples with a frame named like pat, and the total.
local function share(p, pat)
  local n, total = 0, 0
  for _, r in ipairs(p:report{ by = "sym", children = true }) do
    if r.sym:find(pat) then n = n + r.pct end
  end
  for _, count in p:stacks() do total = total + count end
  return n, total
end

local function phase(opts)
  local prof = assert(perf.luaprofile(opts))
  prof:start()
  local t = os.clock()
  local stop = t + 1
  while t < stop do
    partA(t + 0.6 * T)
    partB(t + T)
    t = t + T
  end
  local p = prof:stop()
  prof:close()
  return share(p, "^%[Lua%] partA ")
end

local function burn(n) local x = 0 for i = 1, n do x = x + i % 7 end return x end
local function cost(opts)
  local prof
  if opts then prof = assert(perf.luaprofile(opts)); prof:start() end
  local t0 = os.clock()
  for _ = 1, 300 do burn(100000) end
  local t = os.clock() - t0
  local n = 0
  if prof then
    local p = prof:stop()
    prof:close()
    for _, c in p:stacks() do n = n + c end
  end
  return t, n
end


print(("# %s: partA's share (the loop gives it 60%%), one line a round"):format(_VERSION))
for r = 1, 3 do
  local a, n = phase{ freq = 999 }
  local b, m = phase{ period = 1001001 }
  print(("round %d: freq = 999 %.1f%% (%d samples), period = 1001001 %.1f%% (%d samples)")
    :format(r, a, n, b, m))
end

local none, fixed, drawn, nf, nd = {}, {}, {}, 0, 0
for _ = 1, rounds do
  none[#none + 1] = cost(nil)
  local t, n = cost{ period = 1001001 }
  fixed[#fixed + 1] = t
  nf = nf + n
  t, n = cost{ freq = 999 }
  drawn[#drawn + 1] = t
  nd = nd + n
end
local m0, m1, m2 = B.median(none), B.median(fixed), B.median(drawn)
print(("cost, medians of %d: unprofiled %.4f s; period = 1001001 %.4f s (%+.1f%%, %.0f samples); " ..
  "freq = 999 %.4f s (%+.1f%%, %.0f samples)")
  :format(rounds, m0, m1, 100 * (m1 / m0 - 1), nf / rounds, m2, 100 * (m2 / m0 - 1), nd / rounds))
