-- perf.luaprofile's frames, wait time and allocations (issue 17), on the
-- game-loop fixture spec/hosts/gameloop.lua: 60 frames, frame 30 burns
-- 60 ms of CPU, every tenth frame waits 50 ms for a child process, every
-- frame builds garbage strings.  Run from Lua (5.4 and LuaJIT, in a child
-- interpreter) and from a C host of the C API (Lua 5.4).  References are
-- measured in the same run: each frame's thread CPU time (os.clock, or
-- CLOCK_THREAD_CPUTIME_ID in the host) against its wall time, and the
-- state's memory count with the collector stopped (every byte allocated
-- stays counted).
local util = require "util"

local dir = util.tmpdir()
local fixture = util.root .. "/spec/hosts/gameloop.lua"

-- Sum of a folded text's values, and the part whose stack matches pat.
local function sums(folded, pat)
  local all, part = 0, 0
  for stack, v in folded:gmatch("([^\n]*) (%d+)\n") do
    v = tonumber(v)
    all = all + v
    if pat and stack:find(pat) then part = part + v end
  end
  return all, part
end

-- The leaf Lua function of the heaviest self time in a folded text.
local function top_lua(folded)
  local self = {}
  for stack, v in folded:gmatch("([^\n]*) (%d+)\n") do
    local leaf
    for fr in stack:gmatch("[^;]+") do
      local name = fr:match("^%[Lua%] (%S+)")
      if name then leaf = name end
    end
    if leaf then self[leaf] = (self[leaf] or 0) + tonumber(v) end
  end
  local best, bv = nil, -1
  for k, v in pairs(self) do if v > bv then best, bv = k, v end end
  return best
end

-- The wait, alloc and slowest-frame checks shared by the Lua and C runs.
-- f: the run's fields; folded: weight -> folded text.
local function check(f, folded, msg)
  msg = msg .. "\n" .. (folded.wait or "") .. "\n" .. (folded.slowest or "")
  -- the slowest frame is the burning one; in its own profile the burner
  -- has the most self samples
  assert.are.equal(30, f.slowest_index, msg)
  assert.are.equal("burner", top_lua(folded.slowest), msg)
  -- wait: six waits of at least 50 ms (plus the child's start), all of
  -- them in off-CPU time the host measured around the waiting frames
  local wait, in_waiter = sums(folded.wait, "%[Lua%] waiter ")
  assert.is_true(wait >= 0.85 * 300e6, msg)
  assert.is_true(wait <= 1.15 * f.ref_waiter_off_ns, msg)
  assert.is_true(in_waiter >= 0.8 * wait, msg)
  -- alloc: scaled to the bytes allocated, mostly under the garbage builder
  -- (a sample per 16 KiB on average: ~1,400 samples of the loop's 22 MB,
  -- 2.7% of sampling error; at 64 KiB it was 5.4%, and the 15% bound
  -- failed about a run in 200)
  local alloc, in_garbage = sums(folded.alloc, "%[Lua%] garbage ")
  if util.lua:find("luajit") then
    -- LuaJIT frees some of what it allocates even with the collector
    -- stopped (its JIT compiler's buffers, a table part it replaces):
    -- allocated bytes the memory count's delta no longer holds.  Its
    -- delta is 8.4% below the exact count here, every run.  So the
    -- estimate is checked against the exact count, and that against the
    -- delta from below.
    assert.is_true(f.alloc_bytes >= 0.99 * f.ref_alloc and f.alloc_bytes <= 1.15 * f.ref_alloc, msg)
    assert.is_true(math.abs(alloc - f.alloc_bytes) <= 0.15 * f.alloc_bytes, msg .. "\n" .. folded.alloc)
  else
    assert.is_true(math.abs(alloc - f.ref_alloc) <= 0.15 * f.ref_alloc, msg .. "\n" .. folded.alloc)
  end
  assert.is_true(in_garbage >= 0.7 * alloc, msg .. "\n" .. folded.alloc)
  -- live: with the collector stopped, what was sampled is still allocated
  -- (the buffers the string functions free are not)
  local live = sums(folded.live)
  assert.is_true(live <= alloc and live >= 0.8 * alloc, msg .. "\n" .. folded.live)
end

describe("perf.luaprofile frames, wait and alloc", function()
  it("runs the game loop: the slowest frame, wait time and allocations", function()
    local out = util.run_lua(dir .. "/game.lua", [[
local perf = require "perf"
dofile(]] .. string.format("%q", fixture) .. [[)
collectgarbage("stop")
local prof = assert(perf.luaprofile{ freq = 999, wait = true, alloc = 16 * 1024 })
prof:start()
local cpu, c0 = {}, collectgarbage("count")
for i = 1, 60 do
  local t = os.clock()
  frame(i)
  cpu[i] = os.clock() - t
  prof:frame()
end
local c1 = collectgarbage("count")
local lp = prof:stop()
local m = lp:meta()
local frames = lp:frames()
local off, woff, allocs, waits = 0, 0, 0, 0
for i, fr in ipairs(frames) do
  assert(fr.index == i, "frame " .. i .. " has index " .. tostring(fr.index))
  local d = fr.duration - cpu[i] * 1e9
  off = off + d
  if i % 10 == 0 then woff = woff + d end
  allocs = allocs + fr.alloc
  waits = waits + fr.wait
end
print("nframes=" .. #frames, "ref_off_ns=" .. off, "ref_waiter_off_ns=" .. woff,
  "ref_alloc=" .. (c1 - c0) * 1024, "frames_alloc=" .. allocs, "frames_wait=" .. waits,
  "wait_ns=" .. m.wait_ns, "preempted_ns=" .. m.preempted_ns, "alloc_bytes=" .. m.alloc_bytes,
  "frame10_wait=" .. frames[10].wait, "frame11_wait=" .. frames[11].wait)
local slow = lp:frames{ slowest = 3 }
print("slowest_index=" .. slow[1].index, "slow_n=" .. #slow,
  "slow_sorted=" .. tostring(slow[1].duration >= slow[2].duration and slow[2].duration >= slow[3].duration),
  "slow_profiles=" .. tostring(slow[1].profile ~= nil and slow[3].profile ~= nil))
local function save(name, text)
  local fh = assert(io.open(]] .. string.format("%q", dir) .. [[ .. "/lua_" .. name .. ".folded", "w"))
  fh:write(text)
  fh:close()
end
save("samples", lp:folded())
save("wait", lp:folded{ weight = "wait" })
save("alloc", lp:folded{ weight = "alloc" })
save("live", lp:folded{ weight = "live" })
save("slowest", slow[1].profile:folded())
local svg = lp:flamegraph{ weight = "wait", title = "waiting" }
print("svg_waiter=" .. tostring(svg:find("waiter", 1, true) ~= nil))
local top = lp:top{ weight = "alloc", n = 3 }
print("top_rows=" .. #(top.rows or top))
local pp = lp:pprof{ weight = "wait" }
print("pprof_gzip=" .. tostring(pp:byte(1) == 0x1f and pp:byte(2) == 0x8b))
print("no_weight=" .. tostring(not pcall(function() return lp:folded{ weight = "bogus" } end)))
prof:close()
]])
    local f = util.fields(out)
    local folded = {}
    for _, w in ipairs({ "samples", "wait", "alloc", "live", "slowest" }) do
      folded[w] = assert(util.read(dir .. "/lua_" .. w .. ".folded"))
    end
    assert.are.equal(60, f.nframes, out)
    check(f, folded, out)
    -- the sum of the waits and preemptions is the thread's time off CPU
    assert.is_true(math.abs(f.wait_ns + f.preempted_ns - f.ref_off_ns) <= 0.15 * f.ref_off_ns, out)
    -- per frame: waits belong to the frames that waited, alloc is exact
    assert.is_true(f.frame10_wait >= 45e6 and f.frame11_wait < 10e6, out)
    assert.is_true(f.frames_wait <= f.wait_ns and f.frames_wait >= 0.9 * f.wait_ns, out)
    assert.is_true(math.abs(f.frames_alloc - f.ref_alloc) <= 0.15 * f.ref_alloc, out)
    assert.are.equal(3, f.slow_n, out)
    assert.are.equal("true", f.slow_sorted, out)
    assert.are.equal("true", f.slow_profiles, out)
    assert.are.equal("true", f.svg_waiter, out)
    assert.are.equal("true", f.pprof_gzip, out)
    assert.are.equal("true", f.no_weight, out)
    -- the samples view keeps only stacks that were sampled on CPU
    for line in folded.samples:gmatch("[^\n]+") do
      assert.is_true(tonumber(line:match(" (%d+)$")) > 0, line)
    end
  end)

  it("weight = live is what is still allocated at stop, blocks grown in place and compiled loops too", function()
    -- Half the tables kept, the rest collected; the kept array grows (in
    -- place, often).  The reference: the state's count before start and
    -- after stop, with a full collection.  LuaJIT runs the loop as a
    -- compiled trace, where no hook runs: thousands of samples wait for one
    -- safe point (once only the first 32 were tracked: live was 11% of it).
    local out = util.run_lua(dir .. "/live.lua", [[
local perf = require "perf"
local function sum(text) local s = 0; for v in text:gmatch(" (%d+)\n") do s = s + tonumber(v) end; return s end
local prof = assert(perf.luaprofile{ freq = 99, alloc = 4096 })
local keep = {}
local function build()
  for i = 1, 200000 do
    local t = { i, i + 1, tostring(i) .. "x" }
    if i % 2 == 0 then keep[#keep + 1] = t end
  end
end
collectgarbage("collect")
local before = collectgarbage("count")
prof:start()
build()
collectgarbage("collect")
local st = prof:stats()
local lp = prof:stop()
local after = collectgarbage("count")
print("retained=" .. math.floor((after - before) * 1024), "live=" .. sum(lp:folded{ weight = "live" } .. "\n"),
  "alloc=" .. sum(lp:folded{ weight = "alloc" } .. "\n"), "samples=" .. st.alloc_samples,
  "safepoints=" .. st.safepoints)
prof:close()
]])
    local f = util.fields(out)
    assert.is_true(f.samples >= 2000, out)
    assert.is_true(math.abs(f.live - f.retained) <= 0.08 * f.retained, out)
    assert.is_true(f.live < f.alloc, out)
  end)

  it("keeps the sampled blocks' books as a model does (frees, moves, growth, pauses)", function()
    -- plain C, against the core objects of the build under test
    local bin = util.build_with_core(util.root .. "/spec/harness/allocsample_model.c", "allocsample_model")
    local out, ok = util.sh(bin)
    assert(ok, out)
    assert.truthy(out:find("^ok "), out)
  end)

  it("gives each frame what its counters counted", function()
    -- every fifth frame touches 8 MB of fresh pages (2,048 faults: the
    -- strings are kept, so no block is reused).  The references: the
    -- thread's minor faults from /proc and the process's CPU time, read
    -- just before and just after each mark.  A frame's counts lie between
    -- what those readings bracket: at least from after the previous mark
    -- to before this one, at most from before the previous to after this
    -- (whatever runs next to a mark, a safe point or a /proc read, falls
    -- on either side).  The first frame also holds the first mark's own
    -- setup (under ASan, 200 faults of fresh shadow memory): compared
    -- from the second on.
    local out = util.run_lua(dir .. "/counters.lua", [[
local perf = require "perf"
local function minflt()
  local f = io.open("/proc/self/stat"); local s = f:read("*a"); f:close()
  return tonumber(s:match("^%d+ %b() %S+" .. string.rep(" %S+", 6) .. " (%d+)"))
end
local function oncpu()   -- the process's (one thread's) time on a CPU, ns
  return os.clock() * 1e9
end
local clock = require("perf.core").clock   -- monotonic, s
local prof = assert(perf.luaprofile{ freq = 999, counters = { "page-faults", "task-clock" } })
collectgarbage("stop")
prof:start()
local before, after, keep = {}, {}, {}   -- { faults, cpu } around each mark
after[0] = { minflt(), oncpu(), clock() * 1e9 }
before[0] = after[0]
for i = 1, 20 do
  if i % 5 == 0 then keep[i] = string.rep("x", 8 * 1024 * 1024 + i) end   -- (LuaJIT interns every string: each is another)
  local x = 0; for j = 1, 1000000 do x = x + j % 7 end
  before[i] = { minflt(), oncpu(), clock() * 1e9 }
  prof:frame()
  local c, w = oncpu(), clock() * 1e9
  after[i] = { minflt(), c, w }
end
local lp = prof:stop()
local sum, cpu_off = 0, 0
for i, fr in ipairs(lp:frames()) do
  if i > 1 then
    local pf, tc = fr.counters["page-faults"], fr.counters["task-clock"]
    local lo, hi = before[i][1] - after[i - 1][1], after[i][1] - before[i - 1][1]
    sum = sum + pf
    if i % 5 == 0 and pf < 2000 or pf < 0.95 * lo - 20 or pf > 1.05 * hi + 20 then
      print("bad_frame=" .. i .. ":" .. pf .. "/" .. lo .. "-" .. hi)
    end
    -- at least the scheduler's time on a CPU, at most the wall time
    lo, hi = before[i][2] - after[i - 1][2], after[i][3] - before[i - 1][3]
    local off = math.max((lo - tc) / lo, (tc - hi) / hi)
    if off > cpu_off then
      cpu_off = off
      print(string.format("cpu_frame_%d=%.0f/%.0f-%.0f", i, tc, lo, hi))
    end
  end
end
print("frames=" .. #lp:frames(), "sum=" .. sum, "ref=" .. (after[20][1] - after[1][1]), "cpu_off=" .. cpu_off)
prof:close()
]])
    local f = util.fields(out)
    assert.are.equal(20, f.frames, out)
    assert.is_nil(f.bad_frame, out)
    -- the frames' counts add up to the thread's, and each is its frame's
    -- (equal here; before LuaJIT's symbols were loaded at start, /proc
    -- counted 90 more than the event in the frame that loaded them)
    assert.is_true(math.abs(f.sum - f.ref) <= 0.01 * f.ref + 20, out)
    -- task-clock is the frame's time on a CPU as perf's clock counts it:
    -- at least the scheduler's CPU time (os.clock), which leaves out
    -- what a hypervisor took (steal time, with PARAVIRT_TIME_ACCOUNTING:
    -- CI saw task-clock 19% over os.clock on a busy host), and at most
    -- the frame's wall time
    assert.is_true(f.cpu_off <= 0.1, out)
  end)

  it("the C API host: the same game loop, allocator wrapped and given back", function()
    if util.lua ~= "lua5.4" then
      pending("runs under the Lua 5.4 pass (the host embeds Lua 5.4)")
      return
    end
    local out, ok = util.sh("cd " .. util.q(util.root) .. " && make -s all 2>&1")
    assert(ok, out)
    local bin = dir .. "/gamehost"
    out, ok = util.sh(string.format("cc -Wall -Wextra -Werror $(pkg-config --cflags lua5.4) -I%s -o %s %s " ..
      "$(pkg-config --libs lua5.4) -L%s -l:core.so -Wl,-rpath,%s",
      util.q(util.root .. "/csrc/include"), util.q(bin), util.q(util.root .. "/spec/hosts/gamehost.c"),
      util.q(util.root .. "/build/perf"), util.q(util.root .. "/build/perf")))
    assert(ok, out)
    local hdir = dir .. "/host"
    util.sh("mkdir -p " .. util.q(hdir))
    local pre = util.preload_env()
    out, ok = util.sh("cd " .. util.q(util.root) .. " && " .. pre .. "LUA_PATH='lua/?.lua;lua/?/init.lua;;'" ..
      " LUA_CPATH='build/?.so;;' " .. util.q(bin) .. " " .. util.q(fixture) .. " " .. util.q(hdir))
    assert(ok, out)
    local f = util.fields(out)
    assert.are.equal(1, f.plain_untouched, out)
    assert.are.equal(1, f.alloc_wrapped, out)
    assert.are.equal(1, f.alloc_restored, out)
    assert.are.equal(60, f.frames, out)
    assert.are.equal("null", f.bad_weight, out)
    local folded = {}
    for _, w in ipairs({ "samples", "wait", "alloc", "live", "slowest" }) do
      folded[w] = assert(util.read(hdir .. "/" .. w .. ".folded"))
    end
    check(f, folded, out)
  end)
end)
