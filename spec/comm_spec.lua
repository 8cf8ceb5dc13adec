-- Command names of forking workloads: a sample is named as its thread was
-- when it was taken (perf's rules: COMM in time order, a FORK names the
-- child after its parent, the idle task is swapper, a thread nobody named
-- is ":TID" until its first COMM renames it).  luaperf report, flame and
-- f:profile() against perf report and perf script on recordings perf makes
-- here: a shell that loops, forks a subshell, then execs xz; a system-wide
-- capture with the idle task.
local util = require "util"
local perf = require "perf"
local stacks = require "perf.stacks"

local rows_of, same_rows, report_both = util.report_rows, util.same_report_rows, util.report_both

-- perf script's samples per (comm, pid)
local function script_counts(data)
  local out = util.perf("script -i " .. data .. " -F comm,pid 2>/dev/null")
  local c = {}
  for line in out:gmatch("[^\n]+") do
    local comm, pid = line:match("^%s*(.-)%s+(%d+)%s*$")
    if comm then
      local k = comm .. "/" .. pid
      c[k] = (c[k] or 0) + 1
    end
  end
  return c
end

describe("command names of forking workloads", function()
  local dir, data, shell_pid, sub_pid
  setup(function()
    dir = util.tmpdir()
    -- a few MB of real input for xz: the start of the binaries in /usr/bin
    util.sh("cat /usr/bin/* 2>/dev/null | head -c 3000000 > " .. dir .. "/input")
    data = dir .. "/fork.data"
    local out, ok = util.perf("record -q -g -o " .. data .. " -- sh -c " .. util.q(
      "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; " ..
      "(j=0; while [ $j -lt 200000 ]; do j=$((j+1)); done); " ..
      "exec xz -9 -c " .. dir .. "/input > /dev/null") .. " >/dev/null 2>&1")
    assert(ok, out)
    -- the shell (which becomes xz) and its subshell, from perf's own view
    local tasks = util.perf("script -i " .. data .. " --show-task-events 2>/dev/null")
    sub_pid, shell_pid = tasks:match("PERF_RECORD_FORK%((%d+):%d+%):%((%d+):%d+%)")
    assert(sub_pid and shell_pid, tasks)
  end)
  teardown(function() util.sh("rm -rf " .. util.q(dir)) end)

  it("report --sort comm,pid: each sample under the name its thread had then", function()
    local ours, theirs = report_both(data, "--sort comm,pid")
    local rows = same_rows(ours, theirs)
    -- the shell before its exec, its subshell (named by the fork), xz after
    assert.is_not_nil(rows["sh|" .. shell_pid .. ":xz"], theirs)
    assert.is_not_nil(rows["sh|" .. sub_pid .. ":sh"], theirs)
    assert.is_not_nil(rows["xz|" .. shell_pid .. ":xz"], theirs)
  end)

  it("report --sort comm --comm sh, and --tid of the subshell", function()
    local ours, theirs = report_both(data, "--sort comm --comm sh")
    local rows = same_rows(ours, theirs)
    -- perf's percentages are of every sample, not of the ones kept
    assert.is_true(rows.sh[1] > 5 and rows.sh[1] < 95, theirs)
    same_rows(report_both(data, "--sort comm,pid --no-children --tid " .. sub_pid))
  end)

  it("flame --format folded: the root frames weigh what perf script's comms do", function()
    local out, ok = util.luaperf("flame -i " .. data .. " --format folded -o -")
    assert(ok, out)
    local roots = {}
    for k, n in pairs(util.parse_folded(out)) do
      local root = k:match("^[^;]*")
      roots[root] = (roots[root] or 0) + n
    end
    local want = {}
    for k, n in pairs(script_counts(data)) do
      local comm = k:match("^(.*)/")
      want[comm] = (want[comm] or 0) + n
    end
    assert.same(want, roots)
    assert.is_true((want.sh or 0) > 0 and (want.xz or 0) > 0)
  end)

  it("f:profile() keys stacks by comm: the pid that exec'd has entries under both names", function()
    local f = assert(perf.open(data))
    local p = assert(f:profile())
    local got, thread_comm = {}, {}
    for e in p:stacks() do
      local k = tostring(e.comm) .. "/" .. e.pid
      got[k] = (got[k] or 0) + e.count
      thread_comm[e.tid] = e.thread_comm
    end
    f:close()
    assert.same(script_counts(data), got)
    assert.is_true(got["sh/" .. shell_pid] > 0 and got["xz/" .. shell_pid] > 0)
    assert.equal("xz", thread_comm[tonumber(shell_pid)])
    assert.equal("sh", thread_comm[tonumber(sub_pid)])
    -- the per-sample list (flame charts) names them the same way
    local per = assert(stacks.load(data, { per_sample = true }))
    local per_got = {}
    for _, s in ipairs(per) do
      local k = tostring(s.comm) .. "/" .. s.pid
      per_got[k] = (per_got[k] or 0) + s.count
    end
    assert.same(got, per_got)
  end)

  it("a thread nobody named is :TID, and its first COMM renames its earlier samples", function()
    -- the same file with the shell's first two COMMs (perf-exec, the exec
    -- of sh) given to a tid that never runs: the shell is unnamed until
    -- it execs xz, and its subshell forks from an unnamed parent
    local d = util.read(data)
    local function u(at, n) return util.le_at(d, at - 1, n) end  -- 1-based at
    local off, size = u(41, 8), u(49, 8)
    local parts, pos, at, n = {}, 1, off, 0
    while at < off + size and n < 2 do
      local typ, sz = u(at + 1, 4), u(at + 7, 2)
      assert(sz > 0)
      if typ == 3 and u(at + 13, 4) == tonumber(shell_pid) then
        parts[#parts + 1] = d:sub(pos, at + 8)
        parts[#parts + 1] = "\159\134\1\0\159\134\1\0"   -- 99999, 99999
        pos = at + 17
        n = n + 1
      end
      at = at + sz
    end
    assert.equal(2, n)
    parts[#parts + 1] = d:sub(pos)
    local patched = dir .. "/unnamed.data"
    util.write(patched, table.concat(parts))
    local ours, theirs = report_both(patched, "--sort comm,pid")
    local rows = same_rows(ours, theirs)
    -- (when perf's own report shows the unnamed subshell: some runs the
    -- shell's other records name every thread first, and perf shows no
    -- ":TID" row; the rows agree either way)
    local unnamed = false
    for k in pairs(rows) do if k:find("^:") then unnamed = true end end
    if unnamed then
      assert.is_not_nil(rows[":" .. sub_pid .. "|" .. sub_pid .. "::" .. sub_pid], theirs)
      assert.is_nil(rows["sh|" .. shell_pid .. ":xz"], theirs)
    else
      io.stderr:write("\ncomm_spec: no unnamed thread in perf's report of this recording\n")
    end
  end)
end)

-- The samples of pid in a perf.data given to pid 0, tid 0 (the idle task):
-- for a machine whose other work leaves no CPU idle during the capture.
-- Samples laid out as perf record -a -g writes them: ip, then pid/tid.
local function to_idle(src, dst, pid)
  local d = util.read(src)
  local function u(at, n) return util.le_at(d, at - 1, n) end  -- 1-based at
  local attrs, stype = u(25, 8), nil
  stype = u(attrs + 1 + 24, 8)
  -- PERF_SAMPLE_IP | PERF_SAMPLE_TID, no PERF_SAMPLE_IDENTIFIER
  assert(stype % 4 == 3 and math.floor(stype / 65536) % 2 == 0, "sample_type " .. stype)
  local off, size = u(41, 8), u(49, 8)
  local parts, pos, at, n = {}, 1, off, 0
  while at < off + size do
    local typ, sz = u(at + 1, 4), u(at + 7, 2)
    assert(sz > 0)
    if typ == 9 and u(at + 17, 4) == pid then
      parts[#parts + 1] = d:sub(pos, at + 16)
      parts[#parts + 1] = string.rep("\0", 8)
      pos = at + 25
      n = n + 1
    end
    at = at + sz
  end
  parts[#parts + 1] = d:sub(pos)
  util.write(dst, table.concat(parts))
  return n
end

describe("command names system-wide", function()
  local dir, data
  setup(function()
    dir = util.tmpdir()
    data = dir .. "/sys.data"
    -- one CPU busy, the others mostly idle: the idle task is sampled,
    -- unless other work fills every CPU for the whole capture (then again)
    -- (twice more); failing that, the busy loop's samples are given to it
    for _ = 1, 3 do
      local out, ok = util.sh("timeout 3 sh -c 'while :; do :; done' & " ..
        "perf record -q -a -g -F 999 -o " .. data .. " -- sleep 2 >/dev/null 2>&1; rc=$?; wait; exit $rc")
      assert(ok, out)
      local rows = util.perf("report -i " .. data .. " --stdio -g none --sort pid 2>/dev/null")
      if rows:match("%%%s+0:swapper") then return end
    end
    local rows = util.perf("report -i " .. data .. " --stdio -g none --sort pid 2>/dev/null")
    local busy = tonumber(rows:match("%%%s+(%d+):sh"))
    assert(busy, rows)
    assert.is_true(to_idle(data, dir .. "/idle.data", busy) > 0)
    data = dir .. "/idle.data"
  end)
  teardown(function() util.sh("rm -rf " .. util.q(dir)) end)

  it("pid 0 is swapper, and every comm,pid row is perf's", function()
    local ours, theirs = report_both(data, "--sort comm,pid")
    local rows, n = same_rows(ours, theirs)
    assert.is_not_nil(rows["swapper|0:swapper"], theirs)
    assert.is_true(n >= 3)
  end)
end)
