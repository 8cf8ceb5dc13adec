-- luaperf record writes perf.data files that perf 6.1 reads without a
-- warning, with the same samples perf script shows as our own reader.
local util = require "util"
local pu = require "perfdata_util"
local perf = require "perf"

local dir = util.tmpdir()
local shaped = pu.shaped()

local function record(name, args)
  local path = dir .. "/" .. name
  local out, ok = util.luaperf("record -o " .. path .. " " .. args)
  assert.is_true(ok, out)
  return path, out
end

-- perf report and perf script on the file: no warning, no error.  One
-- exception: samples the ring had no room for on a loaded host are LOST
-- records in the file, and perf's "lost N chunks" warning is then the
-- right reading of it, N as many as the file holds.
local function perf_reads_cleanly(path)
  local lost = 0
  local f = assert(perf.open(path))
  for _ in f:records{ type = "LOST" } do lost = lost + 1 end
  f:close()
  local function told(s)
    if lost == 0 then return s end
    return (s:gsub("Warning:\nProcessed %d+ events and lost " .. lost ..
      " chunks!\n\nCheck IO/CPU overload!\n\n", "", 1))
  end
  local rep = told(util.sh("perf report -i " .. path .. " --stdio 2>&1 >/dev/null"))
  assert.is_nil(rep:lower():match("warn"), rep)
  assert.is_nil(rep:lower():match("error"), rep)
  local scr = told(util.sh("perf script -i " .. path .. " 2>&1 >/dev/null"))
  assert.are.equal("", scr)
end

local function same_samples(path, with_cpu, hide_chain)
  local theirs = pu.perf_samples(path, with_cpu, hide_chain)
  local ours = pu.our_samples(path, with_cpu, hide_chain)
  assert.is_true(#ours > 0)
  pu.discarded = 0
  local d = pu.diff(ours, theirs)
  assert.is_nil(d, d)
  assert.is_true(pu.discarded * 100 <= #ours)
  return ours
end

describe("luaperf record", function()
  it("-g -- cmd: perf reads the file cleanly; samples and call chains equal ours; perf's summary", function()
    local p, out = record("g.data", "-e cpu-clock -c 100000 -g -- " .. shaped .. " 60")
    perf_reads_cleanly(p)
    local ours = same_samples(p, true)
    local mb, file, n = out:match("%[ perf record: Captured and wrote ([%d%.]+) MB (%S+) %((%d+) samples%) %]")
    assert.are.equal(p, file)
    assert.are.equal(#ours, tonumber(n))
    local size = #util.read(p)
    assert.is_true(math.abs(tonumber(mb) - size / 1048576) < 0.001)
    -- the call graph resolves through the recorded mmaps
    local rep = util.sh("perf report -i " .. p .. " --stdio --no-children 2>/dev/null")
    assert.matches("leaf_hash", rep)
    assert.matches("shaped", rep)
  end)

  it("the header and features perf shows: events with ids, hostname, cmdline, build ids", function()
    local p = record("h.data", "-e cpu-clock,task-clock -F 999 -- " .. shaped .. " 60")
    local hdr = util.sh("perf report --header-only -i " .. p .. " 2>&1")
    local uname = util.sh("uname -n"):gsub("%s+$", "")
    assert.are.equal(uname, hdr:match("# hostname : ([^\n]*)"))
    assert.matches("# event : name = cpu%-clock,.-id = {", hdr)
    assert.matches("# event : name = task%-clock,", hdr)
    assert.matches("# cmdline : .*record .*%-F 999", hdr)
    local bl = util.sh("perf buildid-list -i " .. p .. " 2>&1")
    local want = util.sh("readelf -n " .. shaped .. " | awk '/Build ID/ {print $3}'"):gsub("%s+$", "")
    assert.matches(want .. " " .. shaped:gsub("%p", "%%%0"), bl)
    perf_reads_cleanly(p)
    local ours = same_samples(p, true)
    local byev = pu.count_by_event(ours)
    assert.is_true((byev["cpu-clock"] or 0) > 0 and (byev["task-clock"] or 0) > 0)
  end)

  it("--call-graph dwarf: perf script shows the same samples", function()
    -- 1 kHz: 4 KiB stacks at a higher rate outrun the drain of a slow
    -- (sanitizer) build, and perf warns about the lost chunks
    local p = record("dwarf.data", "-e cpu-clock -c 1000000 --call-graph dwarf,4096 -- " .. shaped .. " 150")
    perf_reads_cleanly(p)
    same_samples(p, true, true)
    local f = assert(perf.open(p))
    for rec in f:records{ type = "SAMPLE" } do
      assert.is_string(rec.stack_user)
      assert.is_table(rec.regs_user)
    end
    f:close()
  end)

  it("-a with a tracepoint and -g: tracing data lets perf print the fields", function()
    if not pu.tracefs() then pending("no tracefs") return end
    local p = record("tp.data", "-a -g -e sched:sched_switch -- " .. shaped .. " 60")
    perf_reads_cleanly(p)
    same_samples(p, true)
    local out = util.sh("perf script -i " .. p .. " -F trace 2>/dev/null")
    assert.matches("prev_comm=%S+ prev_pid=%d+", out)
    -- processes that ran before recording got their COMM synthesized
    local comms = util.sh("perf script -i " .. p .. " -F comm 2>/dev/null")
    local total, unnamed, names, distinct = 0, 0, {}, 0
    for c in comms:gmatch("[^\n]+") do
      total = total + 1
      if c:match("^%s*:%d+") then unnamed = unnamed + 1 end
      if not names[c] then names[c] = true; distinct = distinct + 1 end
    end
    assert.is_true(distinct > 1, "system-wide: more tasks than the command")
    -- tasks /proc hides from us (sandboxes) or that come and go while we read it stay unnamed, as with perf
    assert.is_true(unnamed * 4 <= total, unnamed .. " of " .. total .. " samples without a comm")
  end)

  it("-p PID: COMM and MMAP2 synthesized, so perf names the task and its functions", function()
    local pidf = dir .. "/bg.pid"
    util.sh(shaped .. " 100000 >/dev/null 2>&1 & echo $! > " .. pidf)
    local pid = util.read(pidf):match("%d+")
    util.sh("sleep 0.1")
    local p = record("pid.data", "-e cpu-clock -F 999 -g -p " .. pid .. " --duration 0.5")
    util.sh("kill " .. pid)
    perf_reads_cleanly(p)
    local out = util.sh("perf script -i " .. p .. " -F comm,tid,ip,sym 2>/dev/null")
    assert.matches("shaped%s+" .. pid, out)
    assert.matches("leaf_", out)
    same_samples(p, true)
  end)

  it("--switch-events: SWITCH records that perf counts", function()
    -- sleep blocks, so it switches out even on an idle machine (a CPU-bound
    -- program may run its whole life without one)
    local p = record("sw.data", "--switch-events -e cpu-clock -c 100000 -- sleep 0.05")
    perf_reads_cleanly(p)
    local stats = pu.perf_stats(p)
    local f = assert(perf.open(p))
    local s = f:scan()
    f:close()
    assert.is_true((stats.SWITCH or 0) > 0)
    assert.are.equal(stats.SWITCH, s.by_type.SWITCH)
    assert.are.equal(stats.SAMPLE, s.samples)
  end)

  it("a one-page ring at a high rate: losses are warned about with their count", function()
    local p, out = record("lost.data", "-m 1 -e cpu-clock -c 10000 -g -- " .. shaped .. " 200")
    local f = assert(perf.open(p))
    local s = f:scan()
    f:close()
    if s.lost > 0 then
      assert.matches("Warning: lost " .. s.lost .. " samples", out)
      local rep = util.sh("perf report -i " .. p .. " --stdio 2>&1 >/dev/null")
      assert.matches("lost " .. s.by_type.LOST .. " chunks", rep)
    else
      assert.is_nil(out:match("Warning: lost"))
    end
  end)

  it("--overwrite: the newest records, in a file perf reads", function()
    local p = record("ow.data", "--overwrite -e cpu-clock -c 100000 -- " .. shaped .. " 60")
    perf_reads_cleanly(p)
    local f = assert(perf.open(p))
    local s = f:scan()
    f:close()
    assert.is_true(s.samples > 0)
  end)

  it("bad options: usage and exit status 1", function()
    local out, ok = util.luaperf("record --bogus -- true")
    assert.is_false(ok)
    assert.truthy(out:find("unknown option '--bogus'", 1, true), out)
    out, ok = util.luaperf("record -F 10 -c 10 -- true")
    assert.is_false(ok)
    out, ok = util.luaperf("record -e no-such-event -- true")
    assert.is_false(ok)
    assert.matches("no%-such%-event", out)
  end)
end)
