-- The perf.data reader (perfdata_read.c, l_file.c) against perf 6.1 itself:
-- files recorded by perf in every mode we claim, read by perf.open, compared
-- sample by sample with `perf script` and record by record with
-- `perf report --stats`.  Then corrupt files: each must fail with a message
-- naming the offset, never crash.
local util = require "util"
local pu = require "perfdata_util"
local perf = require "perf"

local function num(v) return tonumber(v) end

local dir = util.tmpdir()
local shaped = pu.shaped()
-- Records once per run (perf is the slow part); each test reuses the files.
local file = pu.recorder(dir)
-- A one-page ring's file: thousands of rounds, some LOST records, 1.4 MB.
local function lost_file()
  return file("lost.data", "-m 1 -e cpu-clock -c 10000 -g -- " .. shaped .. " 100")
end

local function same_as_perf(path, with_cpu, hide_chain)
  local theirs = pu.perf_samples(path, with_cpu, hide_chain)
  local ours = pu.our_samples(path, with_cpu, hide_chain)
  assert.is_true(#theirs > 0, "perf script printed no samples for " .. path)
  pu.discarded = 0
  local d = pu.diff(ours, theirs)
  assert.is_nil(d, d)
  assert.is_true(pu.discarded * 100 <= #ours, pu.discarded .. " call chains perf discarded")
  return ours
end

-- Little-endian u64 read/write on byte strings (no string.pack on LuaJIT).
local function get64(s, off)
  local v = 0
  for i = 8, 1, -1 do v = v * 256 + s:byte(off + i) end
  return v
end
local function u64(v)
  local b = {}
  for i = 1, 8 do
    local x = v % 256
    b[i] = string.char(x)
    v = (v - x) / 256
  end
  return table.concat(b)
end
local function put(s, off, bytes)
  return s:sub(1, off) .. bytes .. s:sub(off + #bytes + 1)
end

-- Timed records delivered older than the newest one delivered before them
-- (what stats.unordered must count), and every timed record's offset.
local function older_than_delivered(f)
  local newest, older, offs = 0, 0, {}
  for rec in f:records() do
    local t = rec.time
    if t and t ~= 0 then
      if t < newest then older = older + 1 else newest = t end
      offs[#offs + 1] = rec.offset
    end
  end
  return older, offs
end

local function times_of(f)
  local t = {}
  for rec in f:records{ type = "SAMPLE" } do t[#t + 1] = rec.time end
  return t
end

-- A perf.data file with one cpu-clock event (sample_type IP|TID|TIME) and
-- these records: a number is a SAMPLE at that time, "R" a FINISHED_ROUND.
local function perfdata_with_times(list)
  local function hdr(type, size) return string.char(type, 0, 0, 0, 0, 0, size, 0) end
  local recs = {}
  for i, t in ipairs(list) do
    if t == "R" then
      recs[#recs + 1] = hdr(68, 8)
    else   -- ip, pid/tid 42, time
      recs[#recs + 1] = hdr(9, 32) .. u64(0x400000 + i) .. u64(42 + 42 * 2^32) .. u64(t)
    end
  end
  local data = table.concat(recs)
  local attr = u64(1 + 64 * 2^32) .. u64(0) .. u64(1000) .. u64(7) .. u64(0):rep(4)
  return "PERFILE2" .. u64(104) .. u64(80) .. u64(104) .. u64(80) .. u64(184) .. u64(#data) ..
    u64(0) .. u64(0) .. u64(0):rep(4) .. attr .. u64(0) .. u64(0) .. data
end

-- A u32 pair as 8 little-endian bytes (fast enough for 100,000s of ids).
local function u32x2(lo, hi)
  local function b4(v)
    return string.char(v % 256, math.floor(v / 256) % 256, math.floor(v / 65536) % 256,
                       math.floor(v / 16777216) % 256)
  end
  return b4(lo) .. b4(hi or 0)
end

-- A perf.data file with two events, cpu-clock (index 0) and page-faults
-- (index 1), sample_type IDENTIFIER|IP|TID|TIME and no ids in the attrs
-- section: ids 1..nids map to them through ID_INDEX records of at most
-- per_rec entries (id k to event k % 2), then one SAMPLE for each id in
-- `samples`.
local function perfdata_with_id_index(nids, per_rec, samples)
  local function hdr(type, size) return u32x2(type, size * 65536) end
  local recs = {}
  local k = 1
  while k <= nids do
    local n = math.min(per_rec, nids - k + 1)
    local e = { hdr(69, 16 + 32 * n), u32x2(n) }
    for id = k, k + n - 1 do
      -- { id, idx, cpu, tid }
      e[#e + 1] = u32x2(id) .. u32x2(id % 2) .. u32x2(0) .. u32x2(42)
    end
    recs[#recs + 1] = table.concat(e)
    k = k + n
  end
  for i, id in ipairs(samples) do   -- identifier, ip, pid/tid 42, time
    recs[#recs + 1] = hdr(9, 40) .. u32x2(id) .. u32x2(0x400000 + i) .. u32x2(42, 42) .. u32x2(1000 + i)
  end
  local data = table.concat(recs)
  local function attr(config)
    -- flags: exclude_guest, as perf record sets it (no :HG in the names)
    return u32x2(1, 64) .. u32x2(config) .. u32x2(1000) .. u32x2(0x10007) .. u64(0) ..
      u32x2(0x100000) .. u64(0):rep(2) .. u64(0) .. u64(0)   -- its ids section: none
  end
  return "PERFILE2" .. u64(104) .. u64(80) .. u64(104) .. u64(160) .. u64(264) .. u64(#data) ..
    u64(0) .. u64(0) .. u64(0):rep(4) .. attr(0) .. attr(2) .. data
end

describe("perf.open on files recorded by perf", function()
  it("-g: every sample (pid, tid, time, period, ip, call chain) equals perf script", function()
    local p = file("g.data", "-e cpu-clock -c 100000 -g -- " .. shaped .. " 60")
    same_as_perf(p)
  end)

  it("--call-graph dwarf: sample fields and ip equal perf script, user stacks are kept", function()
    local p = file("dwarf.data", "-e cpu-clock -c 200000 --call-graph dwarf,4096 -- " .. shaped .. " 40")
    same_as_perf(p, false, true)
    local f = assert(perf.open(p))
    local n = 0
    for rec in f:records{ type = "SAMPLE" } do
      assert.is_string(rec.stack_user)
      assert.is_table(rec.regs_user)
      n = n + 1
    end
    assert.is_true(n > 0)
    f:close()
  end)

  it("several events: per-event sample counts and every sample equal perf script", function()
    local p = file("multi.data", "-e cpu-clock,task-clock -c 100000 -- " .. shaped .. " 60")
    local ours = same_as_perf(p)
    local f = assert(perf.open(p))
    local s = f:scan()
    local want = pu.count_by_event(ours)
    assert.is_true((want["cpu-clock"] or 0) > 0 and (want["task-clock"] or 0) > 0)
    assert.are.same(want, s.by_event)
    f:close()
  end)

  it("-a with tracepoints and -g: cpu, fields and call chains equal perf script", function()
    if not pu.tracefs() then pending("no tracefs") return end
    local p = file("tp.data", "-a -g -e sched:sched_switch -e sched:sched_wakeup -e cpu-clock -c 100000 -- "
      .. shaped .. " 60")
    same_as_perf(p, true)
    -- tracepoint fields decoded from the file's formats, as perf prints them
    local out = util.sh("perf script -i " .. p .. " -F trace 2>/dev/null")
    local f = assert(perf.open(p))
    local n, checked = 0, 0
    local lines = {}
    for l in out:gmatch("prev_comm=[^\n]*") do lines[#lines + 1] = l end
    for rec in f:records{ type = "SAMPLE", event = "sched:sched_switch" } do
      n = n + 1
      local x = rec.fields
      assert.is_table(x)
      local l = lines[n]
      if l then
        assert.are.equal(l:match("prev_comm=(.-) prev_pid="), x.prev_comm)
        assert.are.equal(tonumber(l:match("next_pid=(%d+)")), x.next_pid)
        assert.are.equal(tonumber(l:match("prev_pid=(%d+)")), x.prev_pid)
        checked = checked + 1
      end
    end
    assert.are.equal(#lines, n)
    assert.is_true(checked > 0)
    f:close()
  end)

  it("--switch-events: SWITCH records as many as perf report --stats counts", function()
    -- the sleep blocks, so there is a switch even on an idle machine (a
    -- CPU-bound program may run its whole life without one)
    local p = file("sw.data", "--switch-events -e cpu-clock -c 100000 -- sh -c '" .. shaped ..
      " 60; sleep 0.05'")
    same_as_perf(p)
    local stats = pu.perf_stats(p)
    local f = assert(perf.open(p))
    local s = f:scan()
    assert.is_true((stats.SWITCH or 0) > 0)
    assert.are.equal(stats.SWITCH, s.by_type.SWITCH)
    f:close()
  end)

  it("pipe mode (perf record -o -): header, events and samples equal perf script", function()
    local p = dir .. "/pipe.data"
    local _, ok = util.sh("perf record -q -o - -e cpu-clock -c 100000 -g -- " .. shaped ..
      " 60 > " .. p .. " 2>/dev/null")
    assert.is_true(ok)
    same_as_perf(p)
    local f = assert(perf.open(p))
    local h = f:header()
    assert.are.equal("pipe", h.mode)
    assert.are.equal("cpu-clock", h.events[1].name)
    assert.is_string(f:features().hostname)
    f:close()
  end)

  it("a one-page ring that lost records: record counts and LOST totals equal perf report --stats", function()
    local p = lost_file()
    -- thousands of rounds: the time order across them is perf's, sample by sample
    same_as_perf(p)
    local stats, out = pu.perf_stats(p)
    local f = assert(perf.open(p))
    local s = f:scan()
    assert.are.equal(stats.TOTAL, s.records)
    for name, n in pairs(stats) do
      if name ~= "TOTAL" then assert.are.equal(n, s.by_type[name], name) end
    end
    -- perf report's "Total Lost Samples" is the LOST_SAMPLES sum
    local total_lost = util.sh("perf report -i " .. p .. " --stdio 2>/dev/null | grep 'Total Lost Samples'")
    local want = tonumber(total_lost:match("(%d+)")) or 0
    assert.are.equal(want, s.lost_samples)
    f:close()
    assert.is_string(out)
  end)

  it("time ordering: bounded memory flushes early; file order on request; same records", function()
    local p = lost_file()
    local f = assert(perf.open(p))
    local s = f:scan()
    local older, offs = older_than_delivered(f)
    f:close()
    -- With room for a round nothing is flushed early, and what still comes
    -- late (a ring written after its round closed, which losses in a
    -- one-page ring can cause; perf calls them out-of-order events) is
    -- exactly what is counted as unordered: rare here.
    assert.are.equal(0, s.forced_flushes)
    assert.are.equal(older, s.unordered)
    assert.is_true(older <= s.records / 100, older .. " late of " .. s.records)
    -- A 4 KiB queue cannot hold a round: half is flushed whenever it fills.
    -- A round holds one ring after another, so after a migration the next
    -- ring's records can be older than what was flushed: those come late,
    -- and exactly those are counted as unordered.
    local small = assert(perf.open(p, { max_queue = 4096 }))
    local s2 = small:scan()
    local older2, offs2 = older_than_delivered(small)
    small:close()
    assert.are.equal(s.records, s2.records)
    assert.are.same(s.by_type, s2.by_type)
    assert.is_true(s2.forced_flushes > 0)
    assert.are.equal(s2.unordered, older2)
    table.sort(offs)
    table.sort(offs2)
    assert.are.same(offs, offs2)
    local raw = assert(perf.open(p, { unordered = true }))
    local s3 = raw:scan()
    raw:close()
    assert.are.same(s.by_type, s3.by_type)
  end)

  it("a file's records read through windows equal the same bytes read whole from a FIFO", function()
    -- A regular file's records are read(2) in 512 KiB windows, a FIFO's
    -- bytes all into memory: the same records, in the same order, in both
    -- orders and with a queue too small for a round.
    local p = lost_file()
    local size = assert(io.open(p, "rb")):seek("end")
    assert.is_true(size > 2 * 512 * 1024, size .. " bytes: too few to cross windows")
    local function records(path, opts)
      local f = assert(perf.open(path, opts))
      local t = {}
      for rec in f:records() do
        local cc = rec.callchain
        t[#t + 1] = table.concat({ rec.type, tostring(rec.offset), tostring(rec.time),
          tostring(rec.ip), tostring(rec.pid), cc and #cc or "-", cc and tostring(cc[#cc]) or "-" }, " ")
      end
      f:close()
      return t
    end
    local fifo = dir .. "/window.fifo"
    local function from_fifo(opts)
      assert.is_true(os.execute("rm -f " .. fifo .. " && mkfifo " .. fifo) ~= false)
      assert.is_true(os.execute("cat " .. p .. " > " .. fifo .. " &") ~= false)
      return records(fifo, opts)
    end
    for _, opts in ipairs({ {}, { unordered = true }, { max_queue = 4096 } }) do
      local mapped, whole = records(p, opts), from_fifo(opts)
      assert.is_true(#mapped > 10000)
      assert.are.equal(#whole, #mapped)
      for i = 1, #whole do
        if whole[i] ~= mapped[i] then assert.are.equal(whole[i], mapped[i], "record " .. i) end
      end
    end
  end)

  -- Built files: SAMPLE records with the times given, "R" a FINISHED_ROUND.
  it("time ordering, built cases: rounds, a forced flush, and what is counted as unordered", function()
    -- two rings in one round, the second older: a 1-byte queue must flush early
    local p = dir .. "/rings.data"
    util.write(p, perfdata_with_times{ 10, 20, 30, 40, 15, 25, 35, 45, "R" })
    local f = assert(perf.open(p))
    assert.are.same({ 10, 15, 20, 25, 30, 35, 40, 45 }, times_of(f))
    local s = f:scan()
    assert.are.equal(0, s.forced_flushes)
    assert.are.equal(0, s.unordered)
    f:close()
    f = assert(perf.open(p, { max_queue = 1 }))
    local got = times_of(f)
    s = f:scan()
    local older = older_than_delivered(f)
    f:close()
    local sorted = {}
    for i, t in ipairs(got) do sorted[i] = t end
    table.sort(sorted)
    assert.are.same({ 10, 15, 20, 25, 30, 35, 40, 45 }, sorted)
    assert.is_true(s.forced_flushes > 0)
    assert.is_true(s.unordered > 0)
    assert.are.equal(s.unordered, older)
    f = assert(perf.open(p, { unordered = true }))
    assert.are.same({ 10, 20, 30, 40, 15, 25, 35, 45 }, times_of(f))
    f:close()

    -- perf's round rule: a round flushes up to the previous round's newest
    -- time; records older than what was delivered (a broken file) come as
    -- soon as their round allows, each counted, even after an unordered one
    p = dir .. "/rounds.data"
    util.write(p, perfdata_with_times{ 10, 20, "R", "R", 15, 18, 40, "R", 19 })
    f = assert(perf.open(p))
    assert.are.same({ 10, 20, 15, 18, 19, 40 }, times_of(f))
    s = f:scan()
    assert.are.equal(3, s.unordered)
    assert.are.equal(3, older_than_delivered(f))
    assert.are.equal(0, s.forced_flushes)
    f:close()
  end)

  it("compressed (-z): decompressed with zstd, samples equal perf script", function()
    local p = file("z.data", "-z -e cpu-clock -c 100000 -g -- " .. shaped .. " 60")
    same_as_perf(p)
    local f = assert(perf.open(p))
    local ft = f:features()
    assert.are.equal("zstd", ft.compressed.type)
    local s = f:scan()
    assert.is_true(s.decompressed_bytes > 0)
    f:close()
  end)

  it("features: event groups (group_desc) as perf report --header-only prints them, file and pipe", function()
    local p = file("grp.data", "-e '{cpu-clock,task-clock}' -c 100000 -- " .. shaped .. " 30")
    local out = util.sh("perf report --header-only -i " .. p .. " 2>/dev/null")
    local f = assert(perf.open(p))
    local ft, hdr = f:features(), f:header()
    assert.are.equal(1, #ft.group_desc)
    local g = ft.group_desc[1]
    assert.are.equal("{anon_group}", g.name)
    local names = {}
    for i = g.leader, g.leader + g.members - 1 do names[#names + 1] = hdr.events[i].name end
    assert.are.equal(out:match("# group: ([^\n]*)"), "{" .. table.concat(names, ",") .. "}")
    f:close()
    -- a pipe's group_desc comes in its feature records
    local piped = util.root .. "/../shared/perfdata-corpus/perf.data.piped.header_feautres_group_desc-6.8"
    if util.read(piped) then
      f = assert(perf.open(piped))
      ft, hdr = f:features(), f:header()
      g = ft.group_desc[1]
      assert.are.same({ 1, 2 }, { g.leader, g.members })
      assert.are.equal("cycles:u", hdr.events[g.leader].name)
      f:close()
    end
    -- a file without groups has none
    f = assert(perf.open(file("nogrp.data", "-e cpu-clock -c 100000 -- " .. shaped .. " 10")))
    assert.is_nil(f:features().group_desc)
    f:close()
  end)

  it("features: header fields as perf report --header-only prints them", function()
    local p = file("g.data", "-e cpu-clock -c 100000 -g -- " .. shaped .. " 60")
    local out = util.sh("perf report --header-only -I -i " .. p .. " 2>/dev/null")
    local f = assert(perf.open(p))
    local ft = f:features()
    assert.are.equal(out:match("# hostname : ([^\n]*)"), ft.hostname)
    assert.are.equal(out:match("# os release : ([^\n]*)"), ft.osrelease)
    assert.are.equal(out:match("# perf version : ([^\n]*)"), ft.version)
    assert.are.equal(out:match("# arch : ([^\n]*)"), ft.arch)
    assert.are.equal(tonumber(out:match("# nrcpus online : (%d+)")), ft.nrcpus.online)
    assert.are.equal(tonumber(out:match("# nrcpus avail : (%d+)")), ft.nrcpus.available)
    assert.are.equal(out:match("# cpudesc : ([^\n]*)"), ft.cpudesc)
    assert.are.equal(out:match("# cpuid : ([^\n]*)"), ft.cpuid)
    assert.are.equal(tonumber(out:match("# total memory : (%d+)")), ft.total_mem)
    assert.are.equal(out:match("# cmdline : ([^\n]-)%s*\n"), table.concat(ft.cmdline, " "))
    assert.is_table(ft.cpu_topology)
    local siblings = out:match("# sibling threads : ([^\n]*)")
    assert.are.equal(siblings, ft.cpu_topology.thread_siblings[1])
    -- build ids: the ones perf lists
    local bl = util.sh("perf buildid-list -i " .. p .. " 2>/dev/null")
    local n = 0
    for id, name in bl:gmatch("(%x+) ([^\n]+)") do
      local found = false
      for _, b in ipairs(ft.build_ids) do
        if b.build_id == id and b.filename == name then found = true end
      end
      assert.is_true(found, "build id " .. id .. " " .. name)
      n = n + 1
    end
    assert.are.equal(n, #ft.build_ids)
    -- features perf writes that we do not decode are listed, with their ids
    for _, sk in ipairs(ft.skipped) do
      assert.is_number(sk.id)
      assert.is_true(sk.size >= 0)
    end
    local h = f:header()
    assert.are.equal("file", h.mode)
    assert.are.equal("cpu-clock", h.events[1].name)
    assert.are.equal(100000, h.events[1].sample_period)
    f:close()
  end)

  it("records look like live ones and filters apply in C", function()
    local p = file("multi.data", "-e cpu-clock,task-clock -c 100000 -- " .. shaped .. " 60")
    local f = assert(perf.open(p))
    local all, tc = 0, 0
    for rec in f:records() do all = all + 1 end
    for rec in f:records{ type = "SAMPLE", event = "task-clock" } do
      assert.are.equal("SAMPLE", rec.type)
      assert.are.equal("task-clock", rec.event)
      assert.is_number(rec.offset)
      tc = tc + 1
    end
    assert.are.equal(f:scan().by_event["task-clock"], tc)
    local nouser = 0
    for rec in f:records{ user = false } do
      assert.is_true(rec.type_id < 64)
      nouser = nouser + 1
    end
    assert.is_true(nouser < all)
    assert.has_error(function() f:records{ type = "NOPE" } end)
    f:close()
    assert.has_error(function() f:header() end, "attempt to use a closed perf.File")
    f:close()   -- idempotent
  end)

  it("f:profile() aggregates in C: sample total equals the file's samples", function()
    local p = file("g.data", "-e cpu-clock -c 100000 -g -- " .. shaped .. " 60")
    local f = assert(perf.open(p))
    local prof = assert(f:profile())
    local s = f:scan()
    local total = prof:total()
    if type(total) == "table" then total = total.samples end
    assert.are.equal(s.samples, total)
    f:close()
  end)

  it("f:profile() of several events with call chains: samples and periods per event and thread equal perf script", function()
    -- two events: a sample's event is found by its id (system-wide files
    -- have two too, perf's tracking event beside the sampled one)
    local p = file("multi_g.data", "-e cpu-clock,task-clock -c 100000 -g -- " .. shaped .. " 60")
    local ours = same_as_perf(p)
    local want = {}
    for _, s in ipairs(ours) do
      local k = s.event .. " " .. s.tid
      want[k] = want[k] or { 0, 0 }
      want[k][1] = want[k][1] + 1
      want[k][2] = want[k][2] + s.period
    end
    local f = assert(perf.open(p))
    local prof = assert(f:profile())
    local got = {}
    for e in prof:stacks() do
      local k = e.event .. " " .. e.tid
      got[k] = got[k] or { 0, 0 }
      got[k][1] = got[k][1] + num(e.count)
      got[k][2] = got[k][2] + num(e.period)
    end
    assert.is_true(pu.count_by_event(ours)["task-clock"] > 0)
    assert.are.same(want, got)
    -- the pass's stacks added again are found (the pass drops the index
    -- that finds them; an add makes it again): keyed as add_stack keys
    -- them, without thread names or address space generations
    local bare = assert(f:profile{ symbolizer = false, thread_comms = false })
    local again = perf.profile()
    for e in bare:stacks() do
      again:add_stack(e.addrs, { pid = e.pid, tid = e.tid, event = e.event, kernel = e.kernel,
        count = num(e.count), period = num(e.period) })
    end
    local n = bare:count()
    assert.are.equal(n, again:count())
    bare:merge(again)
    assert.are.equal(n, bare:count())
    assert.are.equal(2 * #ours, num(bare:total()))
    f:close()
  end)
end)

describe("perf.open on bad input", function()
  local good, good_path
  setup(function()
    good_path = file("g.data", "-e cpu-clock -c 100000 -g -- " .. shaped .. " 60")
    good = util.read(good_path)
  end)

  local function try(bytes)
    local p = dir .. "/bad.data"
    util.write(p, bytes)
    local f, err = perf.open(p)
    if not f then return nil, err end
    -- errors inside the data section come from the iterator
    local ok, e = pcall(function() for _ in f:records() do end end)
    f:close()
    if ok then return true end
    return nil, e
  end

  -- Hostile input (issue 12): every ID_INDEX entry used to sort all the
  -- ids read so far, and every ID_INDEX record rebuilt the event table.
  it("100,000 ID_INDEX entries, in big records or one per record: linear time, every id mapped", function()
    for _, shape in ipairs({ { 100000, 2047 }, { 30000, 1 } }) do
      local nids, per_rec = shape[1], shape[2]
      local samples = { 1, 2, 3, nids / 2 + 1, nids - 1, nids }
      local p = dir .. "/id_index.data"
      util.write(p, perfdata_with_id_index(nids, per_rec, samples))
      local t0 = os.clock()
      local f = assert(perf.open(p))
      local got = {}
      for rec in f:records{ type = "SAMPLE" } do
        got[#got + 1] = tostring(rec.event)
      end
      f:close()
      local secs = os.clock() - t0
      -- linear: tens of milliseconds; quadratic took minutes
      assert.is_true(secs < 3, string.format("%d ids, %d per record: %.2f s", nids, per_rec, secs))
      local want = {}
      for i, id in ipairs(samples) do
        want[i] = id % 2 == 0 and "cpu-clock" or "page-faults"
      end
      assert.are.same(want, got)
    end
  end)

  it("a missing file: nil, message, errno", function()
    local f, err, errno = perf.open(dir .. "/nope.data")
    assert.is_nil(f)
    assert.matches("No such file", err)
    assert.are.equal(2, errno)
  end)

  it("wrong magic", function()
    local _, err = try("NOTPERF!" .. good:sub(9))
    assert.matches("offset 0: bad magic", err)
  end)

  it("truncated inside the header", function()
    local _, err = try(good:sub(1, 50))
    assert.matches("truncated", err)
  end)

  -- A file cut short (copied while perf wrote it, truncated) is read up to
  -- the cut, with warnings naming where (perf.data corpus spec: the CLI).
  it("truncated inside the data section: the records up to the cut, and warnings", function()
    local doff, dsize = get64(good, 40), get64(good, 48)
    local p = dir .. "/cut.data"
    util.write(p, good:sub(1, doff + math.floor(dsize / 2) + 3))
    local f = assert(perf.open(p))
    assert.matches("offset 48: the data section .* runs past the end of the file", f:warnings()[1])
    local n = 0
    for _ in f:records() do n = n + 1 end
    assert.is_true(n > 10, n .. " records")
    local w = f:warnings()
    assert.are.equal(2, #w)
    -- (the cut falls inside a record, or inside its 8-byte header)
    assert.matches("^offset %d+: .*: truncated file%? records read up to there$", w[2])
    assert.is_truthy(w[2]:find("runs past the end", 1, true) or w[2]:find("too few for a record header", 1, true))
    -- a second pass meets the same cut, not a new warning
    for _ in f:records() do end
    assert.are.equal(2, #f:warnings())
    f:close()
  end)

  it("cut by another process while its records are read: they end there, with a warning", function()
    local src = lost_file()
    local p = dir .. "/shrinking.data"
    local bytes = util.read(src)
    util.write(p, bytes)
    local size = #bytes
    local f = assert(perf.open(p))
    local n = 0
    -- (through the mapping, the first read past the new end is a SIGBUS)
    for _ in f:records() do
      n = n + 1
      if n == 100 then assert.is_true(os.execute("truncate -s " .. math.floor(size / 2) .. " " .. p) ~= false) end
    end
    local w = table.concat(f:warnings(), "\n")
    assert.matches("the file ends %d+ bytes before its data did when it was opened %(cut while being read%?%)", w)
    assert.is_true(n > 1000, n .. " records")
    local whole = assert(perf.open(src))
    local all = whole:scan().records
    whole:close()
    assert.is_true(n < all, n .. " of " .. all .. " records")
    f:close()
  end)

  it("an attrs section past the end", function()
    local _, err = try(put(good, 24, u64(#good + 100)))
    assert.matches("offset 24: attrs section .* past the end", err)
  end)

  it("overlapping sections", function()
    -- the (unused) event_types section claims bytes of the data section
    local doff = get64(good, 40)
    local _, err = try(put(put(good, 56, u64(doff + 8)), 64, u64(16)))
    assert.matches("overlaps", err)
  end)

  it("a zero-size record", function()
    local doff = get64(good, 40)
    local _, err = try(put(good, doff + 6, "\0\0"))
    assert.matches("offset " .. doff .. ": record type %d+ has size 0, expected at least 8", err)
  end)

  it("a record whose size runs past the data section: the data ends there, with a warning", function()
    -- the last record made 65,535 bytes long (the data section is cut
    -- nowhere: the feature headers follow it)
    local doff, dsize = get64(good, 40), get64(good, 48)
    local last, off, before = nil, doff, 0
    while off < doff + dsize do
      last = off
      off = off + good:byte(off + 7) + 256 * good:byte(off + 8)
      before = before + 1
    end
    assert.is_true(doff + dsize - last < 65535)
    local p = dir .. "/past.data"
    util.write(p, put(good, last + 6, "\255\255"))
    local f, g = assert(perf.open(p)), assert(perf.open(good_path))
    local n, all = 0, 0
    for _ in f:records() do n = n + 1 end
    for _ in g:records() do all = all + 1 end
    assert.are.equal(all - 1, n)
    assert.matches("^offset " .. last .. ": .* record of 65535 bytes runs past the end", f:warnings()[1])
    assert.are.equal(1, #f:warnings())
    f:close()
    g:close()
  end)

  it("an unknown record type is yielded as UNKNOWN, not an error", function()
    local doff = get64(good, 40)
    local p = dir .. "/unknown.data"
    util.write(p, put(good, doff, "\200\0\0\0"))
    local f = assert(perf.open(p))
    local first
    for rec in f:records() do first = first or rec end
    f:close()
    assert.is_table(first)
  end)

  it("an unknown feature bit: listed as skipped with its id", function()
    -- feature bit 200: its section entry must exist, so claim it in place of the last one
    local doff, dsize = get64(good, 40), get64(good, 48)
    local bits = {}
    for i = 0, 3 do bits[i] = get64(good, 72 + 8 * i) end
    -- move the highest set bit in word 0 to bit 200 (word 3, bit 8): same table size
    local w0 = bits[0]
    local hi = 0
    for b = 0, 52 do if math.floor(w0 / 2^b) % 2 == 1 then hi = b end end
    local bytes = put(good, 72, u64(w0 - 2^hi))
    bytes = put(bytes, 72 + 24, u64(bits[3] + 256))
    local p = dir .. "/unkfeat.data"
    util.write(p, bytes)
    local f = assert(perf.open(p))
    local found = false
    for _, s in ipairs(f:features().skipped) do if s.id == 200 then found = true end end
    f:close()
    assert.is_true(found)
    assert.is_true(doff + dsize < #good)
  end)

  it("random damage never crashes: every outcome is a file or a message", function()
    local seed = 12345
    local function rnd(n) seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n end
    for _ = 1, 60 do
      local b = good
      for _ = 1, 8 do
        local off = rnd(#b - 8)
        b = put(b, off, string.char(rnd(256), rnd(256)))
      end
      local ok, err = try(b)
      assert.is_true(ok == true or type(err) == "string")
    end
  end)
end)
