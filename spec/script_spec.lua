-- luaperf script against perf script on the same files: the default
-- listing line by line, and Lua scripts with perf script's hooks.
local util = require "util"
local pu = require "perfdata_util"

local dir = util.tmpdir()
local shaped = pu.shaped()
-- Records once per run (perf is the slow part); each test reuses the files.
local file = pu.recorder(dir)

local lines = util.lines

-- Line by line: sample lines equal; in call chain lines the address equals
-- and "sym+off (dso)" equals for most frames (symbol tables may name an
-- alias differently from perf).
local function compare_listing(ours, theirs)
  local a, b = lines(ours), lines(theirs)
  assert.are.equal(#b, #a, "line count")
  local frames, same_sym = 0, 0
  for i = 1, #b do
    if b[i]:match("^\t") then
      local addr_a, sym_a = a[i]:match("^\t%s*(%x+) (.*)$")
      local addr_b, sym_b = b[i]:match("^\t%s*(%x+) (.*)$")
      assert.are.equal(addr_b, addr_a, "line " .. i)
      frames = frames + 1
      if sym_a == sym_b then same_sym = same_sym + 1 end
    else
      -- the ip's symbol on a one-line sample may differ like a frame's
      local head_a = a[i]:match("^(.-:%s+%x+) ") or a[i]
      local head_b = b[i]:match("^(.-:%s+%x+) ") or b[i]
      assert.are.equal(head_b, head_a, "line " .. i)
    end
  end
  return frames, same_sym
end

describe("luaperf script", function()
  it("prints perf script's default lines and call chains (-g file)", function()
    local p = file("g.data", "-e cpu-clock -c 100000 -g -- " .. shaped .. " 60")
    local ours, ok = util.luaperf("script -i " .. p)
    assert.is_true(ok, ours)
    local theirs = util.sh("perf script -i " .. p .. " 2>/dev/null")
    local frames, same = compare_listing(ours, theirs)
    assert.is_true(frames > 0)
    assert.is_true(same >= frames * 0.9, same .. " of " .. frames .. " frames named as perf does")
  end)

  it("one line per sample without call chains, event names padded like perf (two events)", function()
    local p = file("multi.data", "-e cpu-clock,task-clock -c 100000 -- " .. shaped .. " 60")
    local ours, ok = util.luaperf("script -i " .. p)
    assert.is_true(ok, ours)
    local theirs = util.sh("perf script -i " .. p .. " 2>/dev/null")
    compare_listing(ours, theirs)
    assert.matches("\n%s+shaped +%d+ +%d+%.%d+: +100000  cpu%-clock: ", "\n" .. ours)
  end)

  it("-G hides call chains, --ns prints nanoseconds, like perf script", function()
    local p = file("g.data", "-e cpu-clock -c 100000 -g -- " .. shaped .. " 60")
    local ours = util.luaperf("script -G --ns -i " .. p)
    local theirs = util.sh("perf script -G --ns -i " .. p .. " 2>/dev/null")
    compare_listing(ours, theirs)
    assert.matches("%d+%.%d%d%d%d%d%d%d%d%d:", ours)
  end)

  it("tracepoint samples print their fields as perf does", function()
    if not pu.tracefs() then pending("no tracefs") return end
    local p = file("tp.data", "-a -e sched:sched_switch -e sched:sched_wakeup -- " .. shaped .. " 60")
    local ours = util.luaperf("script -i " .. p)
    local theirs = util.sh("perf script -i " .. p .. " 2>/dev/null")
    local a, b = lines(ours), lines(theirs)
    assert.are.equal(#b, #a)
    local n = 0
    for i = 1, #b do
      local ta, tb = a[i]:match("(sched:sched_%w+: .*)$"), b[i]:match("(sched:sched_%w+: .*)$")
      assert.are.equal(tb, ta, "line " .. i)
      if ta then n = n + 1 end
    end
    assert.is_true(n > 0)
  end)

  it("runs a Lua script with begin, sample, subsys__event, record and finish", function()
    if not pu.tracefs() then pending("no tracefs") return end
    local p = file("tp2.data", "-a -g -e sched:sched_switch -e cpu-clock -c 100000 -- " .. shaped .. " 60")
    local script = dir .. "/count.lua"
    util.write(script, [[
      local order, counts, switches, other, frames = {}, {}, 0, {}, 0
      local comms = {}
      function begin() order[#order + 1] = "begin" end
      function sample(rec)
        counts[rec.event] = (counts[rec.event] or 0) + 1
        if rec.frames and rec.frames[1] and rec.frames[1].name then frames = frames + 1 end
      end
      function sched__sched_switch(rec)
        switches = switches + 1
        comms[#comms + 1] = rec.fields.prev_comm .. ">" .. rec.fields.next_pid
      end
      function record(rec) other[rec.type] = (other[rec.type] or 0) + 1 end
      function finish()
        order[#order + 1] = "finish"
        print("order " .. table.concat(order, ","))
        print("cpu-clock " .. (counts["cpu-clock"] or 0))
        print("switch " .. switches)
        print("symbolized " .. frames)
        print("comm " .. (other.COMM or 0))
        print("first " .. (comms[1] or ""))
        print("args " .. table.concat(argv, " "))
      end
    ]])
    local out, ok = util.luaperf("script -i " .. p .. " " .. script .. " a1 a2")
    assert.is_true(ok, out)
    local theirs = util.sh("perf script -i " .. p .. " -F event,trace 2>/dev/null")
    local want_clock, want_switch = 0, 0
    local first
    for l in theirs:gmatch("[^\n]+") do
      if l:match("cpu%-clock:") then want_clock = want_clock + 1 end
      if l:match("sched:sched_switch:") then
        want_switch = want_switch + 1
        first = first or (l:match("prev_comm=(.-) prev_pid") .. ">" .. l:match("next_pid=(%d+)"))
      end
    end
    assert.matches("order begin,finish", out)
    assert.are.equal(want_clock, tonumber(out:match("cpu%-clock (%d+)")))
    assert.are.equal(want_switch, tonumber(out:match("switch (%d+)")))
    assert.are.equal(first, out:match("first ([^\n]*)"))
    local stats = pu.perf_stats(p)
    assert.are.equal(stats.COMM or 0, tonumber(out:match("comm (%d+)")))
    assert.is_true(tonumber(out:match("symbolized (%d+)")) > 0)
    assert.matches("args a1 a2", out)
  end)

  it("a bad file or a script error: a message and exit status 1", function()
    local out, ok = util.luaperf("script -i " .. dir .. "/nope.data")
    assert.is_false(ok)
    assert.matches("nope.data", out)
    local p = file("multi.data", "-e cpu-clock,task-clock -c 100000 -- " .. shaped .. " 60")
    local bad = dir .. "/bad.lua"
    util.write(bad, "function sample(rec) error('boom') end")
    out, ok = util.luaperf("script -i " .. p .. " " .. bad)
    assert.is_false(ok)
    assert.matches("sample: .*boom", out)
  end)
end)
