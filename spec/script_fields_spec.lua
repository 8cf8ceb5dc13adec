-- luaperf script -F/--fields and the sample filters (--comm, --pid, --tid,
-- -C, --time) against perf script 6.1 on the same perf.data files: the
-- same lines byte for byte, the same samples selected, the same refusals.
local util = require "util"
local pu = require "perfdata_util"

local dir = util.tmpdir()
local shaped = pu.shaped()
-- Records once per run (perf is the slow part); each test reuses the files.
local file = pu.recorder(dir)
local function g_file()
  return file("g.data", "-e cpu-clock -c 100000 -g -- " .. shaped .. " 60")
end
local function multi_file()
  return file("multi.data", "-e cpu-clock,task-clock -c 100000 -- " .. shaped .. " 60")
end
-- -a: cpu-clock samples every CPU, idle ones too, so each CPU has samples
local function tp_file()
  return file("tp.data", "-a -g -e sched:sched_switch -e cpu-clock -c 100000 -- " .. shaped .. " 60")
end

local lines = util.lines

-- Both sides of a command: stdout (stderr apart) and whether it succeeded.
local ours, theirs = util.luaperf_split, util.perf_stdout

-- The same lines as perf script, line for line (symbol aliases included:
-- the symbolizer picks perf's name among those at one address).
local function assert_same(a_text, b_text, what)
  local a, b = lines(a_text), lines(b_text)
  assert.are.equal(#b, #a, what .. ": line count")
  for i = 1, #b do
    if not util.same_line_as_perf(a[i], b[i]) then
      assert.are.equal(b[i], a[i], what .. ", line " .. i)
    end
  end
  return #b
end

local function compare(path, opts, what)
  local a, ok, err = ours("script -i " .. path .. " " .. opts)
  assert.is_true(ok, what .. ": " .. err)
  local b, pok = theirs("script -i " .. path .. " " .. opts)
  assert.is_true(pok, what .. ": perf failed")
  return assert_same(a, b, what), a
end

describe("luaperf script -F", function()
  it("lays out each field and combination as perf script does (call chain file)", function()
    local p = g_file()
    for _, f in ipairs({ "comm", "tid", "pid", "time", "event", "period", "ip", "sym",
                         "ip,sym", "ip,dso", "ip,sym,symoff", "sym,dso", "comm,pid,tid",
                         "comm,tid,ip,sym,dso", "pid,tid,time,event,ip,sym,symoff,dso",
                         "+pid", "-comm", "-ip", "-dso", "-symoff", "time,comm,event,period" }) do
      local n = compare(p, "-F " .. f, "-F " .. f)
      -- sym without ip prints empty lines, as perf does
      if not f:match("^sym") then assert.is_true(n > 0, "-F " .. f .. " printed nothing") end
    end
    -- ip with a call chain: the frames follow, comm is not padded
    local _, text = compare(p, "-F comm,tid,ip,sym", "chain")
    assert.matches("\nshaped +%d+ \n\t +%x+ %S+\n", "\n" .. text)
  end)

  it("one-line samples, -G, --ns and two events padded to the longest name", function()
    local p = multi_file()
    for _, f in ipairs({ "comm,tid,time,event", "event,ip,sym,symoff,dso", "ip,sym", "-time",
                         "+pid,-period", "period,event,comm" }) do
      compare(p, "-F " .. f, "-F " .. f)
      compare(p, "--ns -F " .. f, "--ns -F " .. f)
    end
    compare(g_file(), "-G -F comm,tid,ip,sym,dso", "-G")
    local _, text = compare(p, "-F event,period", "event")
    assert.matches("\n    100000  cpu%-clock: \n", "\n" .. text)
  end)

  it("tracepoint fields, per-type field lists and tracepoint call chains", function()
    if not pu.tracefs() then pending("no tracefs") return end
    local p = tp_file()
    -- -G: one line per sample, so every line compares
    for _, f in ipairs({ "comm,tid,cpu,time,event,trace", "trace", "event,trace", "cpu,event",
                         "period,event" }) do
      compare(p, "-G -F " .. f, "-G -F " .. f)
    end
    -- symbols of the recorded program only: a -a capture also holds
    -- whatever else ran, and a binary rebuilt since is named from perf's
    -- build-id cache, not from the file we read
    for _, f in ipairs({ "-trace", "+period", "trace:comm,trace", "sw:comm,ip,sym",
                         "trace:-trace", "+cpu,-period" }) do
      local n = compare(p, "-G --comm shaped -F " .. f, "-G -F " .. f)
      assert.is_true(n > 0)
    end
    -- with call chains: perf drops a few chains of -a captures (see
    -- perfdata_util.diff), so fields without ip compare whole and the
    -- others by their sample lines
    for _, f in ipairs({ "comm,tid,cpu,time,event,trace", "-ip", "period,event" }) do
      compare(p, "-F " .. f, "-F " .. f)
    end
    for _, f in ipairs({ "comm,pid,tid,cpu,time,event,trace,ip,sym", "+period", "sw:+pid",
                         "trace:comm,trace" }) do
      local a = ours("script -i " .. p .. " -F " .. f)
      local b = theirs("script -i " .. p .. " -F " .. f)
      local function heads(s)
        local t = {}
        for _, l in ipairs(lines(s)) do
          if l ~= "" and not l:match("^\t") then t[#t + 1] = l end
        end
        return table.concat(t, "\n")
      end
      assert_same(heads(a), heads(b), "-F " .. f .. " sample lines")
    end
    local _, text = compare(p, "-G -F trace", "trace")
    assert.matches("\nprev_comm=.- prev_pid=%d+ .-==> next_comm=", "\n" .. text)
  end)

  it("addr: the data address, and for page faults its object (and symbol) as perf", function()
    local p = file("pf.data", "-d -e page-faults -c 1 -- " .. shaped .. " 5")
    compare(p, "-F addr", "addr")
    compare(p, "-F comm,tid,time,addr,ip", "addr,ip")
    compare(p, "-F addr,dso", "addr,dso")
    -- perf names data objects (STT_OBJECT) too; ours names functions only
    local a = lines((ours("script -i " .. p .. " -F addr,sym,symoff,dso")))
    local b = lines((theirs("script -i " .. p .. " -F addr,sym,symoff,dso")))
    assert.are.equal(#b, #a)
    -- (and an ifunc's address may carry another alias: strnlen / __strnlen_ifunc)
    local named, same = 0, 0
    for i = 1, #b do
      local addr_a, sym_a, dso_a = a[i]:match("^%s*(%x+) (%S+) %((.*)%)$")
      local addr_b, sym_b, dso_b = b[i]:match("^%s*(%x+) (%S+) %((.*)%)$")
      assert.are.equal(addr_b, addr_a, "line " .. i)
      assert.are.equal(dso_b, dso_a, "line " .. i)
      if sym_a ~= "[unknown]" then
        named = named + 1
        if sym_a == sym_b then same = same + 1 end
      end
    end
    assert.is_true(named > 0 and same >= named * 0.5, same .. " of " .. named .. " symbols as perf names them")
  end)

  it("refuses what perf refuses, with a message naming the supported fields", function()
    local p = multi_file()
    local function both_fail(opts, want)
      local _, ok, err = ours("script -i " .. p .. " " .. opts)
      local _, pok = theirs("script -i " .. p .. " " .. opts)
      assert.is_false(pok, "perf accepted " .. opts)
      assert.is_false(ok, "we accepted " .. opts)
      assert.matches(want, err)
    end
    both_fail("-F comm,bogus", "invalid field 'bogus'.*comm,tid,pid,time,cpu,event,period,ip,sym,symoff,dso,addr,trace")
    both_fail("-F cpu", "do not have CPU attribute set")
    both_fail("-F +addr", "do not have ADDR attribute set")
    both_fail("-F ip,symoff", "symbol is not selected")
    both_fail("-F comm,+tid", "cannot mix")
    both_fail("-F sw:trace", "not valid for software events")
    both_fail("-F foo:comm", "invalid event type")
    both_fail("-F trace:", "tracepoint events do not exist")
    both_fail("-C 0", "no CPU")
  end)
end)

describe("luaperf script filters", function()
  -- perf script's selection, as comparable lines
  local F = "-F comm,pid,tid,cpu,time,event,period --ns"

  it("--comm, --pid, --tid and -C select the samples perf selects", function()
    if not pu.tracefs() then pending("no tracefs") return end
    local p = tp_file()
    local all = theirs("script -i " .. p .. " " .. F)
    local pid = all:match("shaped +(%d+)/")
    assert.is_truthy(pid, "no sample of shaped")
    local total, cpus = #lines(all), {}
    for c in all:gmatch("%[(%d+)%]") do cpus[c] = true end
    local multi_cpu = cpus["000"] and cpus["001"]
    for _, opts in ipairs({ "--comm shaped", "--comm shaped,swapper", "--pid " .. pid,
                            "--pid 0," .. pid, "--tid " .. pid, "--tid=" .. pid, "-C 0", "--cpu 1",
                            "-C 0-1", "-C 1 --comm shaped", "--comm nosuchcomm" }) do
      local n = compare(p, F .. " " .. opts, opts)
      -- (a one-CPU machine has all its samples on CPU 0)
      if opts ~= "-C 0-1" and (multi_cpu or not opts:match("^%-C") and not opts:match("^%-%-cpu")) then
        assert.is_true(n < total, opts .. " selected everything")
      end
      if opts:match("^%-%-comm shaped") or opts:match("^%-%-pid") then
        assert.is_true(n > 0, opts .. " selected nothing")
      end
    end
    -- the default listing with call chains, filtered
    local a = ours("script -i " .. p .. " -G --comm shaped")
    local b = theirs("script -i " .. p .. " -G --comm shaped")
    assert_same(a, b, "-G --comm shaped")
  end)

  it("--time START,STOP (inclusive, either side empty) selects as perf does", function()
    local p = multi_file()
    local all = lines((theirs("script -i " .. p .. " -F time --ns")))
    local times = {}
    for _, l in ipairs(all) do times[#times + 1] = l:match("(%d+%.%d+):") end
    assert.is_true(#times > 30)
    local t1, t2 = times[math.floor(#times / 3)], times[math.floor(2 * #times / 3)]
    local usec = t1:sub(1, -4)   -- microseconds, perf's printed form
    for _, span in ipairs({ t1 .. "," .. t2, "," .. t1, t2 .. ",", usec .. "," .. usec .. "999" }) do
      local n = compare(p, "-F comm,tid,time,event --ns --time " .. span, "--time " .. span)
      assert.is_true(n > 0 and n < #times, "--time " .. span .. ": " .. n .. " samples")
    end
    -- whole seconds before every sample (the first's): all of them
    assert.are.equal(#times, compare(p, "-F time --ns --time " .. times[1]:match("^%d+") .. ",", "seconds"))
    -- the ends are inclusive: a span of one timestamp keeps its samples
    local n = compare(p, "-F time --ns --time " .. t1 .. "," .. t1, "one instant")
    assert.is_true(n >= 1)
    local _, ok, err = ours("script -i " .. p .. " --time " .. t2 .. "," .. t1)
    assert.is_false(ok)
    assert.matches("start is after the stop", err)
    _, ok, err = ours("script -i " .. p .. " --time 10%")
    assert.is_false(ok)
    assert.matches("START,STOP", err)
  end)

  it("apply to Lua scripts' samples too", function()
    if not pu.tracefs() then pending("no tracefs") return end
    local p = tp_file()
    local script = dir .. "/count.lua"
    util.write(script, [[
      local n, sw = 0, 0
      function sample(rec) n = n + 1 end
      function sched__sched_switch(rec) sw = sw + 1 end
      function finish() print("samples " .. n .. " switches " .. sw) end
    ]])
    for _, opts in ipairs({ "--comm shaped", "-C 1", "--comm swapper -C 0" }) do
      local out, ok = ours("script -i " .. p .. " " .. opts .. " " .. script)
      assert.is_true(ok, out)
      local want, want_sw = 0, 0
      for l in (theirs("script -i " .. p .. " -F event " .. opts)):gmatch("[^\n]+") do
        if l:match("sched:sched_switch:") then want_sw = want_sw + 1 else want = want + 1 end
      end
      assert.are.equal("samples " .. want .. " switches " .. want_sw, out:match("samples %d+ switches %d+"),
        opts)
    end
  end)
end)
