-- The record decoder (record.c) on records built byte by byte from the
-- layouts in linux/perf_event.h, in the kernel's field order; truncated and
-- inconsistent records must be rejected with a message, never read past.
local perf = require "perf"
local core = perf.core

-- Little-endian packers that work on 5.1/LuaJIT too (no string.pack there).
-- v: a number below 2^53, or a hex string for larger values.
local function u(v, n)
  local bytes = {}
  if type(v) == "string" then
    local h = v:gsub("^0x", "")
    h = string.rep("0", n * 2 - #h) .. h
    for i = n, 1, -1 do
      bytes[#bytes + 1] = string.char(tonumber(h:sub(2 * i - 1, 2 * i), 16))
    end
    return table.concat(bytes)
  end
  for _ = 1, n do
    local b = v % 256
    bytes[#bytes + 1] = string.char(b)
    v = (v - b) / 256
  end
  return table.concat(bytes)
end
local function u64(v) return u(v, 8) end
local function u32(v) return u(v, 4) end
local function u16(v) return u(v, 2) end

local function rec(type, misc, body)
  return u32(type) .. u16(misc) .. u16(8 + #body) .. body
end

-- PERF_SAMPLE_* and PERF_FORMAT_* bits
local S = { IP = 1, TID = 2, TIME = 4, ADDR = 8, READ = 16, CALLCHAIN = 32, ID = 64,
  CPU = 128, PERIOD = 256, STREAM_ID = 512, RAW = 1024, BRANCH_STACK = 2048,
  REGS_USER = 4096, STACK_USER = 8192, WEIGHT = 16384, DATA_SRC = 32768,
  IDENTIFIER = 65536, TRANSACTION = 131072, REGS_INTR = 262144, PHYS_ADDR = 524288,
  AUX = 1048576, CGROUP = 2097152, DATA_PAGE_SIZE = 4194304, CODE_PAGE_SIZE = 8388608,
  WEIGHT_STRUCT = 16777216 }
local F = { TOTAL_TIME_ENABLED = 1, TOTAL_TIME_RUNNING = 2, ID = 4, GROUP = 8, LOST = 16 }
local function bits(...)
  local v = 0
  for _, b in ipairs({ ... }) do v = v + b end
  return v
end

local CTX_KERNEL = "ffffffffffffff80"
local CTX_USER = "fffffffffffffe00"
local KADDR = "ffffffff81000010"

-- A kernel address as lperf_pushu64 gives it: integer on 5.3+, "0x.." string otherwise.
local function is_kaddr(v)
  if type(v) == "string" then return v == "0x" .. KADDR end
  return string.format("%x", v) == KADDR
end

describe("record decoder", function()
  it("decodes a sample in the kernel's field order, callchain markers removed", function()
    local st = bits(S.IDENTIFIER, S.IP, S.TID, S.TIME, S.ADDR, S.ID, S.STREAM_ID, S.CPU,
      S.PERIOD, S.CALLCHAIN)
    local body = u64(77) .. u64(0x401000) .. u32(100) .. u32(101) .. u64(123456789)
      .. u64(0xdead) .. u64(77) .. u64(5) .. u32(1) .. u32(0) .. u64(250000)
      .. u64(5) .. u64(CTX_KERNEL) .. u64(KADDR) .. u64(CTX_USER) .. u64(0x401000) .. u64(0x400500)
    local r = assert(core.decode_record(rec(9, 2, body),
      { { sample_type = st, name = "cycles", ids = { 77 } }, { sample_type = st, name = "other", ids = { 78 } } }))
    assert.equal("SAMPLE", r.type)
    assert.equal("cycles", r.event)
    assert.equal(0x401000, r.ip)
    assert.equal(100, r.pid)
    assert.equal(101, r.tid)
    assert.equal(123456789, r.time)
    assert.equal(0xdead, r.addr)
    assert.equal(77, r.id)
    assert.equal(5, r.stream_id)
    assert.equal(1, r.cpu)
    assert.equal(250000, r.period)
    assert.equal("user", r.cpumode)
    assert.equal(3, #r.callchain)
    assert.is_true(is_kaddr(r.callchain[1]))
    assert.equal(0x401000, r.callchain[2])
    assert.equal(0x400500, r.callchain[3])
    assert.equal(1, r.callchain_kernel)
  end)

  it("maps records to events by PERF_SAMPLE_IDENTIFIER and sample_id_all trailers", function()
    local st = bits(S.IDENTIFIER, S.IP, S.TID, S.TIME, S.CPU)
    local evs = { { sample_type = st, sample_id_all = true, name = "a", ids = { 11, 12 } },
      { sample_type = st, sample_id_all = true, name = "b", ids = { 21 } } }
    -- COMM: pid, tid, comm (padded), trailer: pid/tid, time, cpu, identifier
    local body = u32(42) .. u32(43) .. "worker\0\0" .. u32(42) .. u32(43) .. u64(999) .. u32(1) .. u32(0) .. u64(21)
    local r = assert(core.decode_record(rec(3, 0x2000, body), evs))
    assert.equal("COMM", r.type)
    assert.equal("worker", r.comm)
    assert.is_true(r.exec)
    assert.equal("b", r.event)
    assert.equal(999, r.time)
    assert.equal(1, r.cpu)
    assert.equal(21, r.id)
    -- an id no event owns: non-sample records still decode, without an event
    body = u32(42) .. u32(43) .. "worker\0\0" .. u32(42) .. u32(43) .. u64(999) .. u32(1) .. u32(0) .. u64(5)
    r = assert(core.decode_record(rec(3, 0, body), evs))
    assert.is_nil(r.event)
    -- a sample with an unknown id cannot be decoded: rejected with a reason
    local ok, err = core.decode_record(rec(9, 2, u64(5) .. u64(1) .. u32(1) .. u32(1) .. u64(1) .. u32(0) .. u32(0)), evs)
    assert.is_nil(ok)
    assert.truthy(err:find("matches no known event"), err)
  end)

  it("decodes READ values for every read_format", function()
    -- group: nr, enabled, running, {value, id, lost} x nr
    local rf = bits(F.GROUP, F.ID, F.LOST, F.TOTAL_TIME_ENABLED, F.TOTAL_TIME_RUNNING)
    local st = bits(S.IDENTIFIER, S.READ)
    local evs = { { sample_type = st, read_format = rf, name = "lead", ids = { 1 } },
      { sample_type = st, read_format = rf, name = "member", ids = { 2 } } }
    local body = u64(1) .. u64(2) .. u64(1000) .. u64(900)
      .. u64(10) .. u64(1) .. u64(0) .. u64(20) .. u64(2) .. u64(3)
    local r = assert(core.decode_record(rec(9, 2, body), evs))
    assert.equal(1000, r.read.time_enabled)
    assert.equal(900, r.read.time_running)
    assert.equal(2, #r.read)
    assert.same({ value = 10, id = 1, lost = 0, event = "lead" }, r.read[1])
    assert.same({ value = 20, id = 2, lost = 3, event = "member" }, r.read[2])
    -- not a group: value, enabled, running, id (the times sit between value and id)
    rf = bits(F.ID, F.TOTAL_TIME_ENABLED, F.TOTAL_TIME_RUNNING)
    r = assert(core.decode_record(rec(9, 2, u64(1) .. u64(55) .. u64(70) .. u64(60) .. u64(1)),
      { { sample_type = st, read_format = rf, name = "solo", ids = { 1 } } }))
    assert.same({ value = 55, id = 1, event = "solo" }, r.read[1])
    assert.equal(70, r.read.time_enabled)
    assert.equal(60, r.read.time_running)
    -- PERF_RECORD_READ: pid, tid, values (only enabled here), no trailer
    r = assert(core.decode_record(rec(8, 0, u32(7) .. u32(8) .. u64(99) .. u64(1234)),
      { { sample_type = S.TID, read_format = F.TOTAL_TIME_ENABLED } }))
    assert.equal("READ", r.type)
    assert.equal(7, r.pid)
    assert.equal(99, r.read[1].value)
    assert.equal(1234, r.read.time_enabled)
  end)

  it("decodes raw, branch stack with hw_idx, regs by popcount, stack_user, weight_struct, page sizes, aux", function()
    local st = bits(S.RAW, S.BRANCH_STACK, S.REGS_USER, S.STACK_USER, S.WEIGHT_STRUCT,
      S.DATA_SRC, S.TRANSACTION, S.REGS_INTR, S.PHYS_ADDR, S.CGROUP, S.DATA_PAGE_SIZE,
      S.CODE_PAGE_SIZE, S.AUX)
    local body = u32(12) .. "raw-payload!" -- 4 + 12 = 16: u64 aligned
      .. u64(2) .. u64(9) -- nr, hw_idx
      .. u64(0x1000) .. u64(0x2000) .. u64(1) .. u64(0x3000) .. u64(0x4000) .. u64(2)
      .. u64(2) .. u64(111) .. u64(222) .. u64(333) -- abi 64, 3 regs (mask 0x13)
      .. u64(16) .. "stackstackstack!" .. u64(8) -- size, data, dyn_size
      .. u64(0x0003000200000064) -- var3=3 var2=2 var1=100
      .. u64(0x42) .. u64(0x7) -- data_src, transaction
      .. u64(0) -- regs_intr abi NONE: no registers follow
      .. u64(0xabc000) .. u64(5) .. u64(4096) .. u64(2097152) -- phys, cgroup, data/code page
      .. u64(8) .. "auxbytes" -- AUX last, as the kernel writes it
    local r = assert(core.decode_record(rec(9, 2, body), { { sample_type = st,
      branch_sample_type = 131072 + 1, sample_regs_user = 0x13, sample_regs_intr = 0xff } }))
    assert.equal("raw-payload!", r.raw)
    assert.equal(9, r.branch_hw_idx)
    assert.equal(2, #r.branch_stack)
    assert.same({ from = 0x3000, to = 0x4000, flags = 2 }, r.branch_stack[2])
    assert.same({ abi = 2, 111, 222, 333 }, r.regs_user)
    assert.equal("stacksta", r.stack_user)
    assert.equal(16, r.stack_user_size)
    assert.equal(100, r.weight)
    assert.equal(2, r.weight_var2)
    assert.equal(3, r.weight_var3)
    assert.equal(0x42, r.data_src)
    assert.equal(7, r.transaction)
    assert.same({ abi = 0 }, r.regs_intr)
    assert.equal(0xabc000, r.phys_addr)
    assert.equal(5, r.cgroup)
    assert.equal(4096, r.data_page_size)
    assert.equal(2097152, r.code_page_size)
    assert.equal("auxbytes", r.aux)
  end)

  it("decodes MMAP2 with and without a build id, and other kernel records", function()
    local evs = { { sample_type = 0 } }
    local common = u32(5) .. u32(6) .. u64(0x400000) .. u64(0x1000) .. u64(0)
    local r = assert(core.decode_record(rec(10, 2, common .. u32(8) .. u32(1) .. u64(1234) .. u64(0)
      .. u32(5) .. u32(2) .. "/bin/x\0\0"), evs))
    assert.equal("MMAP2", r.type)
    assert.equal("/bin/x", r.filename)
    assert.equal(8, r.maj)
    assert.equal(1234, r.ino)
    assert.equal(5, r.prot)
    local bid = string.char(20, 0, 0, 0) .. string.rep("\171", 20)
    r = assert(core.decode_record(rec(10, 0x4002, common .. bid .. u32(5) .. u32(2) .. "/bin/y\0\0"), evs))
    assert.equal(string.rep("ab", 20), r.build_id)
    assert.is_nil(r.ino)
    r = assert(core.decode_record(rec(2, 0, u64(3) .. u64(17)), evs))
    assert.same({ "LOST", 3, 17 }, { r.type, r.id, r.lost })
    r = assert(core.decode_record(rec(7, 0, u32(10) .. u32(1) .. u32(11) .. u32(1) .. u64(5)), evs))
    assert.same({ "FORK", 10, 1, 11, 1 }, { r.type, r.pid, r.ppid, r.tid, r.ptid })
    r = assert(core.decode_record(rec(5, 0, u64(1) .. u64(2) .. u64(3)), evs))
    assert.same({ "THROTTLE", 1, 2, 3 }, { r.type, r.time, r.id, r.stream_id })
    r = assert(core.decode_record(rec(13, 0, u64(4)), evs))
    assert.same({ "LOST_SAMPLES", 4 }, { r.type, r.lost })
    r = assert(core.decode_record(rec(15, 0x2000, u32(9) .. u32(10)), evs))
    assert.same({ "SWITCH_CPU_WIDE", 9, 10, true }, { r.type, r.next_prev_pid, r.next_prev_tid, r.out })
    r = assert(core.decode_record(rec(16, 0, u32(1) .. u32(1) .. u64(1) .. u64(3) .. u64(4)), evs))
    assert.same({ { dev = 3, ino = 4 } }, r.namespaces)
    r = assert(core.decode_record(rec(17, 0, u64(0x1000) .. u32(64) .. u16(1) .. u16(0) .. "bpf_prog\0\0\0\0\0\0\0\0"), evs))
    assert.same({ "KSYMBOL", 0x1000, 64, 1, "bpf_prog" }, { r.type, r.addr, r.len, r.ksym_type, r.name })
    r = assert(core.decode_record(rec(18, 0, u16(1) .. u16(0) .. u32(33) .. "\1\2\3\4\5\6\7\8"), evs))
    assert.same({ "BPF_EVENT", 1, 33, "0102030405060708" }, { r.type, r.bpf_type, r.bpf_id, r.tag })
    r = assert(core.decode_record(rec(19, 0, u64(7) .. "/sys\0\0\0\0"), evs))
    assert.same({ "CGROUP", 7, "/sys" }, { r.type, r.cgroup_id, r.path })
    r = assert(core.decode_record(rec(20, 0, u64(0x10) .. u16(1) .. u16(2) .. "abc\0"), evs))
    assert.same({ "TEXT_POKE", "a", "bc" }, { r.type, r.old_bytes, r.new_bytes })
    r = assert(core.decode_record(rec(21, 0, u64(9)), evs))
    assert.same({ "AUX_OUTPUT_HW_ID", 9 }, { r.type, r.hw_id })
    r = assert(core.decode_record(rec(11, 0, u64(1) .. u64(2) .. u64(3)), evs))
    assert.same({ "AUX", 1, 2, 3 }, { r.type, r.aux_offset, r.aux_size, r.flags })
  end)

  it("keeps unknown and user-space record types as raw bytes", function()
    local r = assert(core.decode_record(rec(200, 0, "abcdefgh"), { { sample_type = 0 } }))
    assert.equal("UNKNOWN", r.type)
    assert.equal(200, r.type_id)
    assert.equal("abcdefgh", r.raw)
    r = assert(core.decode_record(rec(68, 0, ""), {}))
    assert.equal("FINISHED_ROUND", r.type)
  end)

  it("rejects truncated and inconsistent records with a message", function()
    local evs = { { sample_type = bits(S.IP, S.CALLCHAIN) } }
    local cases = {
      -- callchain nr far beyond the record
      { rec(9, 2, u64(1) .. u64(1000000) .. u64(1)), "callchain" },
      -- header size larger than the bytes given
      { u32(9) .. u16(2) .. u16(64) .. u64(1), "size 64" },
      -- header size below the header
      { u32(9) .. u16(2) .. u16(4) .. u64(1), "size 4" },
      -- bytes left over: the sample_type does not match the record
      { rec(9, 2, u64(1) .. u64(0) .. u64(7)), "left after" },
      -- a string without its NUL
      { rec(3, 0, u32(1) .. u32(1) .. "abcdefgh"), "NUL" },
      -- a read group that claims more values than the record holds
      { rec(9, 2, u64(4) .. u64(1)), "read group" },
      -- fewer bytes than a header
      { "abc", "header" },
    }
    for i, c in ipairs(cases) do
      local e = evs
      if i == 6 then e = { { sample_type = S.READ, read_format = F.GROUP } } end
      local ok, err = core.decode_record(c[1], e)
      assert.is_nil(ok, "case " .. i)
      assert.truthy(err:find(c[2], 1, true), "case " .. i .. ": " .. tostring(err))
    end
    -- a stack_user dyn_size larger than the data it describes
    local ok, err = core.decode_record(rec(9, 2, u64(8) .. "12345678" .. u64(64)),
      { { sample_type = S.STACK_USER } })
    assert.is_nil(ok)
    assert.truthy(err:find("dyn_size"), err)
  end)

  it("survives random corruption of a valid sample without reading past it", function()
    local st = bits(S.IDENTIFIER, S.IP, S.TID, S.READ, S.CALLCHAIN, S.RAW, S.BRANCH_STACK, S.STACK_USER)
    local body = u64(1) .. u64(2) .. u32(3) .. u32(4) .. u64(2) .. u64(10) .. u64(1) .. u64(20) .. u64(2)
      .. u64(2) .. u64(5) .. u64(6) .. u32(4) .. "abcd" .. u64(0) .. u64(8) .. "stackxyz" .. u64(8)
    local evs = { { sample_type = st, read_format = bits(F.GROUP, F.ID), ids = { 1 } } }
    local good = rec(9, 2, body)
    assert.truthy(core.decode_record(good, evs))
    math.randomseed(7)
    local rejected = 0
    for _ = 1, 2000 do
      local pos = math.random(9, #good)
      local b = string.char(math.random(0, 255))
      local bad = good:sub(1, pos - 1) .. b .. good:sub(pos + 1)
      if math.random() < 0.3 then bad = bad:sub(1, math.random(8, #bad)) end
      local ok, err = core.decode_record(bad, evs)
      if not ok then
        rejected = rejected + 1
        assert.is_string(err)
      end
    end
    assert.is_true(rejected > 0)
  end)
end)
