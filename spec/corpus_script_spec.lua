-- luaperf script against perf script 6.1 on perf.data files nobody here
-- shaped (../shared/perfdata-corpus: kernels 3.2-6.8, x86-64, armv7,
-- i686, piped): the fields the reader and the layout own (comm, tid,
-- time, event names with their modifiers, period, ip, call chain
-- addresses, the memory fields) line for line; symbol names are left to
-- the symbol specs.  Also: files cut short (read up to the cut with a
-- warning, exit 0), a corrupt stream (one clear line, non-zero), a
-- malformed feature (skipped with a warning), events named from their
-- attrs as perf names them (crafted pipe streams, perf's output the
-- reference).
local util = require "util"
local pu = require "perfdata_util"

local dir = util.tmpdir()
local corpus = util.root .. "/../shared/perfdata-corpus"
local have_corpus = select(2, util.sh("test -r " .. util.q(corpus .. "/perf.data.weight_struct")))
local _, have_perf = util.sh("perf version")
local file = pu.recorder(dir)

local lines = util.lines

-- stdout apart from stderr, for both sides
local ours, theirs = util.luaperf_split, util.perf_stdout

local function assert_same(a_text, b_text, what)
  local a, b = lines(a_text), lines(b_text)
  for i = 1, math.max(#a, #b) do
    if a[i] ~= b[i] then
      error(string.format("%s: line %d differs\n perf: %s\n ours: %s", what, i,
        tostring(b[i]), tostring(a[i])), 0)
    end
  end
  return #b
end

local function compare(path, args, what)
  local b, pok = theirs("script -i " .. util.q(path) .. " " .. args)
  assert.is_true(pok, what .. ": perf script failed")
  local a, ok, err = ours("script -i " .. util.q(path) .. " " .. args)
  assert.is_true(ok, what .. ": " .. err)
  return assert_same(a, b, what)
end

-- little-endian integers without string.pack (LuaJIT has none)
local le, get = util.le, util.le_at
local function u16(v) return le(v, 2) end
local function u32(v) return le(v, 4) end
local function u64(v) return le(v, 8) end
local function put(s, off, bytes) return s:sub(1, off) .. bytes .. s:sub(off + #bytes + 1) end

local function skip_unless_corpus()
  if not have_corpus then
    pending("no perf.data corpus at " .. corpus .. " (../shared/perfdata-corpus beside the checkout)")
    return true
  end
  if not have_perf then pending("perf is not installed: it is the reference"); return true end
end

describe("luaperf script on the perf.data corpus", function()
  local names = {}
  if have_corpus then
    local out = util.sh("ls " .. util.q(corpus))
    for n in out:gmatch("(perf%.data%.[^\n]+)") do
      -- Intel PT is decoded into branch samples by perf: out of scope
      if not n:find("intel_pt", 1, true) and not n:find("corrupted", 1, true) then
        names[#names + 1] = n
      end
    end
  end

  it("finds the corpus files", function()
    if skip_unless_corpus() then return end
    assert.is_true(#names >= 20, #names .. " files")
  end)

  for _, n in ipairs(names) do
    it(n .. ": comm, tid, time, event, period, ip and call chains as perf prints them", function()
      if skip_unless_corpus() then return end
      local count = compare(corpus .. "/" .. n, "-F comm,tid,time,event,period,ip", n)
      assert.is_true(count > 0, n .. ": no lines")
    end)
  end

  it("weight_struct: raw memory events show addr, data_src decoded, weight, ins_lat as perf", function()
    if skip_unless_corpus() then return end
    local p = corpus .. "/perf.data.weight_struct"
    compare(p, "-F comm,tid,cpu,time,event,period,addr,data_src,weight,ins_lat,ip", "memory fields")
    -- the default field set of raw events adds them by itself
    local a = ours("script -i " .. util.q(p))
    assert.truthy(a:find("|OP LOAD|LVL LFB/MAB or LFB/MAB hit|SNP None|TLB L1 or L2 hit|LCK No|BLK  N/A", 1, true))
    assert.truthy(a:find("MEM_TRANS_RETIRED.LOAD_LATENCY:ldlat=64:precise=2:mh:mg:pinned: ", 1, true))
  end)

  it("lost_samples-4.4: event names with their modifiers (cycles:pp, instructions:pp)", function()
    if skip_unless_corpus() then return end
    local a = ours("script -i " .. util.q(corpus .. "/perf.data.lost_samples-4.4") .. " -F event")
    assert.truthy(a:find("      cycles:pp: ", 1, true))
    assert.truthy(a:find("instructions:pp: ", 1, true))
  end)

  it("32-bit kernels (armv7, i686): kernel samples are [kernel.kallsyms]'s by their cpumode", function()
    if skip_unless_corpus() then return end
    for _, n in ipairs({ "perf.data.armv7-3.4", "perf.data.piped.target.throttled-3.4" }) do
      compare(corpus .. "/" .. n, "-F comm,tid,time,event,ip,dso", n)
    end
  end)

  it("the corrupt stream: one line naming the file and the offset, exit non-zero, as perf refuses it", function()
    if skip_unless_corpus() then return end
    local p = corpus .. "/perf.data.piped.corrupted.zero_size_sample-3.2"
    local _, pok = theirs("script -i " .. util.q(p))
    assert.is_false(pok)
    local _, ok, err = ours("script -i " .. util.q(p))
    assert.is_false(ok)
    local l = lines(err)
    assert.are.equal(1, #l, err)
    assert.truthy(l[1]:find("^luaperf script: .*zero_size_sample%-3%.2: offset 49104: record type 9 has size 0"), err)
    assert.is_nil(l[1]:find("%.lua:%d+:"), err)
    assert.is_nil(err:find("traceback", 1, true), err)
  end)

  it("rec.period of a fixed-period event without PERF_SAMPLE_PERIOD is the attr's period", function()
    if skip_unless_corpus() then return end
    local perf = require "perf"
    local f = assert(perf.open(corpus .. "/perf.data.busy.1-3.8"))
    local n = 0
    for rec in f:records{ type = "SAMPLE" } do
      assert.are.equal(1000000, rec.period)
      n = n + 1
      if n == 50 then break end
    end
    f:close()
    assert.are.equal(50, n)
  end)
end)

describe("luaperf script on files cut short", function()
  local path, full
  local function recorded()
    if not path then
      path = file("cut.data", "-e cpu-clock -c 100000 -- " .. pu.shaped() .. " 60")
      full = util.read(path)
    end
    return path, full
  end

  -- SAMPLE records complete before byte `stop`, walking the data from its
  -- start, and whether `stop` falls between two records
  local function complete_samples(bytes, doff, stop)
    local off, n = doff, 0
    while off + 8 <= stop do
      local t, sz = get(bytes, off, 4), get(bytes, off + 6, 2)
      if sz < 8 or off + sz > stop then break end
      if t == 9 then n = n + 1 end
      off = off + sz
    end
    return n, off == stop
  end

  -- comm left out: a COMM record past the cut leaves its thread's old name
  local F = "-F tid,time,event,period,ip --ns"

  -- Each line one of perf's on the whole file, and in time order: a cut
  -- keeps the records before it, which per-CPU rounds interleave in time.
  local function assert_subset(got, want, what)
    local have = {}
    for _, l in ipairs(want) do have[l] = (have[l] or 0) + 1 end
    local last = ""
    for i, l in ipairs(got) do
      assert.is_true((have[l] or 0) > 0, what .. ", line " .. i .. " is not perf's: " .. l)
      have[l] = have[l] - 1
      local t = l:match("(%d+%.%d+):")
      assert.is_true(#t > #last or (#t == #last and t >= last), what .. ": out of time order at line " .. i)
      last = t
    end
  end

  it("reads up to the cut, warns with the offset and exits 0 (data shorter than the header says)", function()
    if not have_perf then return pending("perf is not installed") end
    local p, bytes = recorded()
    local want = lines(theirs("script -i " .. p .. " " .. F))
    local doff, dsize = get(bytes, 40, 8), get(bytes, 48, 8)
    assert.is_true(#want > 100, #want .. " samples")
    for _, frac in ipairs({ 0.9, 0.5, 0.23, 0.01 }) do
      local cut = doff + math.floor(dsize * frac) + 3
      local cp = dir .. "/cut." .. frac
      util.write(cp, bytes:sub(1, cut))
      local out, ok, err = ours("script -i " .. cp .. " " .. F)
      assert.is_true(ok, err)
      assert.truthy(err:find("warning: offset 48: the data section", 1, true), err)
      local whole, between = complete_samples(bytes, doff, cut)
      -- the record the cut went through (or a header cut in two)
      if not between then
        assert.truthy(err:find("warning: offset %d+: .*: truncated file%? records read up to there"), err)
      end
      local got = lines(out)
      assert.are.equal(whole, #got, "cut at " .. cut)
      assert_subset(got, want, "cut at " .. cut)
    end
  end)

  it("a recorder killed before it wrote the header (data size 0): the same, to the last whole record", function()
    if not have_perf then return pending("perf is not installed") end
    local p, bytes = recorded()
    local want = lines(theirs("script -i " .. p .. " " .. F))
    local doff, dsize = get(bytes, 40, 8), get(bytes, 48, 8)
    local cut = doff + math.floor(dsize * 0.6) + 5
    -- data size 0, no features: what perf record leaves when killed
    local b = put(bytes:sub(1, cut), 48, u64(0))
    b = put(b, 72, string.rep("\0", 32))
    local cp = dir .. "/killed.data"
    util.write(cp, b)
    local out, ok, err = ours("script -i " .. cp .. " " .. F)
    assert.is_true(ok, err)
    local whole, between = complete_samples(bytes, doff, cut)
    if not between then
      assert.truthy(err:find("warning: offset %d+: .*: truncated file%? records read up to there"), err)
    end
    local got = lines(out)
    assert.are.equal(whole, #got)
    assert_subset(got, want, "killed")
  end)

  it("a malformed feature section is skipped with a warning naming it; the records are all there", function()
    if not have_perf then return pending("perf is not installed") end
    local p, bytes = recorded()
    local want = ours("script -i " .. p .. " " .. F)
    -- the cmdline feature (bit 11): its string count made impossible
    local doff, dsize = get(bytes, 40, 8), get(bytes, 48, 8)
    local idx = 0
    for bit = 1, 10 do
      if math.floor(get(bytes, 72, 8) / 2^bit) % 2 == 1 then idx = idx + 1 end
    end
    assert.is_true(math.floor(get(bytes, 72, 8) / 2^11) % 2 == 1, "no cmdline feature")
    local foff = get(bytes, doff + dsize + 16 * idx, 8)
    local cp = dir .. "/badfeat.data"
    util.write(cp, put(bytes, foff, u32(0xfffffff0)))
    local out, ok, err = ours("script -i " .. cp .. " " .. F)
    assert.is_true(ok, err)
    assert.truthy(err:find("warning: cmdline feature at offset %d+: .*feature skipped"), err)
    assert.are.equal(want, out)
    local perf = require "perf"
    local f = assert(perf.open(cp))
    assert.truthy(f:warnings()[1]:find("cmdline", 1, true))
    f:close()
  end)
end)

describe("event names from the attr alone, as perf names them", function()
  -- A pipe stream: one HEADER_ATTR (no name anywhere) and one SAMPLE.
  local function stream(a)
    local flags = a.flags or 0
    local attr = u32(a.type) .. u32(128) .. u64(a.config or 0) .. u64(1000) .. u64(0x107) ..
      u64(0) .. u64(flags) .. u32(0) .. u32(a.bp_type or 0) .. u64(a.bp_addr or 0) .. u64(0)
    attr = attr .. string.rep("\0", 128 - #attr)
    local hattr = u32(64) .. u16(0) .. u16(8 + 128 + 8) .. attr .. u64(1)
    local sample = u32(9) .. u16(1) .. u16(40) .. u64(0x81000000) .. u32(1) .. u32(1) ..
      u64(1000000000) .. u64(1000)
    return "PERFILE2" .. u64(16) .. hattr .. sample
  end
  local EXCL_USER, EXCL_KERNEL, EXCL_HV = 2^4, 2^5, 2^6
  local EXCL_HOST, EXCL_GUEST, PRECISE2 = 2^19, 2^20, 2 * 2^15
  local cases = {
    { { type = 0, config = 0, flags = PRECISE2 + EXCL_GUEST }, "cycles:ppH" },
    { { type = 0, config = 1, flags = EXCL_KERNEL + EXCL_HV + EXCL_GUEST }, "instructions:uH" },
    { { type = 0, config = 0 }, "cycles:HG" },
    { { type = 0, config = 0, flags = EXCL_HOST }, "cycles:G" },
    { { type = 1, config = 0, flags = EXCL_GUEST }, "cpu-clock" },
    { { type = 1, config = 2, flags = EXCL_USER + EXCL_GUEST }, "page-faults:khH" },
    { { type = 4, config = 0x1cd, flags = PRECISE2 + EXCL_GUEST }, "raw 0x1cd:ppH" },
    { { type = 3, config = 0x10000, flags = EXCL_GUEST }, "L1-dcache-load-misses" },
    { { type = 3, config = 0, flags = EXCL_GUEST }, "L1-dcache-loads" },
    { { type = 5, bp_type = 3, bp_addr = 0x1000, flags = EXCL_GUEST }, "mem:0x1000:rw" },
  }
  for i, c in ipairs(cases) do
    it(c[2], function()
      local p = dir .. "/attr" .. i .. ".data"
      util.write(p, stream(c[1]))
      local perf = require "perf"
      local f = assert(perf.open(p))
      assert.are.equal(c[2], f:header().events[1].name)
      f:close()
      if have_perf then compare(p, "-F event,ip", c[2]) end
    end)
  end
end)
