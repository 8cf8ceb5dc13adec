-- Cost of the coroutine tracking on Lua 5.1-5.4: coroutine.resume and the
-- functions of coroutine.wrap go through a C wrapper while a profile runs
-- (a 1 Hz profile, so sampling itself costs nothing here).
--   lua5.4 bench/luaprofile_coroutines.lua
local perf = require "perf"
local N = 1000000
local function run()
  local co = coroutine.wrap(function() while true do coroutine.yield() end end)
  local c2 = coroutine.create(function() while true do coroutine.yield() end end)
  local t0 = os.clock()
  for i = 1, N do co() coroutine.resume(c2) end
  return (os.clock() - t0) / (2 * N) * 1e9
end
local prof = assert(perf.luaprofile{ freq = 1 })
local a, b = {}, {}
for r = 1, 5 do
  a[r] = run()
  prof:start() b[r] = run() prof:stop()
end
table.sort(a) table.sort(b)
print(("%s: resume+yield %.0f ns unprofiled, %.0f ns with the profile started (wrappers)"):format(_VERSION, a[3], b[3]))
