-- Decode + aggregate through the Lua-facing paths, on a perf.data file and
-- on a live session.  Times are CPU seconds of this process (os.clock), so
-- a busy machine does not inflate them.  Prints "name samples seconds rate".
--
--   lua5.4 bench/decode.lua FILE DEEP_PROG [expected_samples]
local perf = require "perf"

local path, prog, expected = arg[1], arg[2], tonumber(arg[3])

local function line(name, n, secs)
  print(string.format("%-34s %8d samples %8.4f s %12.0f samples/s", name, n, secs, n / secs))
end

local function best(fn, reps)
  local b, n = math.huge, 0
  for _ = 1, reps do
    local t0 = os.clock()
    n = fn()
    local t = os.clock() - t0
    if t < b then b = t end
  end
  return n, b
end

-- C path: the file reader feeding the stack table (f:profile()).
local n, t = best(function()
  local f = assert(perf.open(path))
  local p = f:profile()
  local s = p:total()
  f:close()
  return tonumber(s)
end, 5)
if expected then assert(n == expected, ("profile has %d samples, perf script %d"):format(n, expected)) end
line("file:profile() (C)", n, t)

-- Lua iterator: one table per record, aggregated with p:add.
n, t = best(function()
  local f = assert(perf.open(path))
  local p = perf.profile()
  for rec in f:records() do
    if rec.type == "SAMPLE" then p:add(rec) end
  end
  f:close()
  return tonumber((p:total()))
end, 2)
line("file:records() + p:add (Lua)", n, t)

-- Live: the same program sampled by a session, drained with s:profile();
-- only the time spent inside s:profile() counts.
local s = assert(perf.session{ events = { "cpu-clock:u" }, period = 20000, callchain = "fp",
  inherit = false, pages = 1024, cmd = { prog, "2", "40" } })
assert(s:start())
local spent, done = 0, false
repeat
  local _, d = s:poll(100)
  done = d
  local t0 = os.clock()
  s:profile()
  spent = spent + os.clock() - t0
until done
local t0 = os.clock()
local p = s:profile()
spent = spent + os.clock() - t0
local st = s:stats()
s:close()
line("session s:profile() (C, live)", tonumber((p:total())), spent)
print(string.format("  live: %d stacks, lost %d, throttled %d", p:count(), tonumber(st.lost),
  tonumber(st.throttled)))
