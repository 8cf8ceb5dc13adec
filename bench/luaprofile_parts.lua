-- Where a perf.luaprofile sample's cost goes: the same work unprofiled,
-- under a plain session (the timer interrupt and the record: what perf
-- record costs), a session with frame-pointer call chains (what perf
-- record -g costs), and luaprofile with and without native frames and with
-- the real-time signal; all at 9999 Hz in one process, rounds interleaved,
-- medians of the rounds.  Per-sample cost = (time - unprofiled) / samples.
--
--   lua5.4 bench/luaprofile_parts.lua [rounds]
local perf = require "perf"
local B = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "luaprofile_work.lua")
local work = B.work
local rounds = tonumber(arg and arg[1]) or 15
local HZ = 9999
local variants = {
  { "unprofiled" },
  { "luaprofile", function() return perf.luaprofile{ freq = HZ } end },
  { "luaprofile max_stack=127", function() return perf.luaprofile{ freq = HZ, max_stack = 127 } end },
  { "luaprofile native=false", function() return perf.luaprofile{ freq = HZ, native = false } end },
  { "luaprofile realtime", function() return perf.luaprofile{ freq = HZ, signal = "realtime" } end },
  { "session fp", function()
      return perf.session{ events = { "cpu-clock:u" }, freq = HZ, pid = 0, inherit = false,
                           pages = 512, callchain = "fp" } end },
  { "session (timer only)", function()
      return perf.session{ events = { "cpu-clock:u" }, freq = HZ, pid = 0, inherit = false,
                           pages = 512 } end },
}
local res = {}
for r = 1, rounds do
  for k = 1, #variants do
    local v = variants[(r + k - 2) % #variants + 1]
    collectgarbage()
    local o = v[2] and assert(v[2]())
    if o then o:start() end
    local t0 = os.clock()
    work(10)
    local dt = os.clock() - t0
    local n = 0
    if o and o.records then
      o:stop()
      for _ in o:records{ type = "SAMPLE" } do n = n + 1 end
      o:close()
    elseif o then
      n = o:stop():total()
      o:close()
    end
    res[v[1]] = res[v[1]] or {}
    table.insert(res[v[1]], { dt, n })
  end
end
local function med(t, i)
  local c = {}
  for k, x in ipairs(t) do c[k] = x[i] end
  table.sort(c)
  return c[math.floor((#c + 1) / 2)]
end
local base = med(res.unprofiled, 1)
print(("%s, %d rounds at %d Hz; unprofiled %.3f s"):format(jit and jit.version or _VERSION, rounds, HZ, base))
for _, v in ipairs(variants) do
  local dt, n = med(res[v[1]], 1), med(res[v[1]], 2)
  print(("%-26s %.3f s  %+6.1f%%  %6d samples  %5.1f us/sample"):format(v[1], dt,
    100 * (dt / base - 1), n, n > 0 and (dt - base) / n * 1e6 or 0))
end
