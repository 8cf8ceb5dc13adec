-- Event specs: perf.parse against perf itself (the attr `perf stat -vv`
-- opens, the names `perf stat` prints), every form of the grammar, and a
-- table of malformed specs with the exact message each gets.
local perf = require "perf"
local util = require "util"

-- The interpreter under test, with the sanitizer runtime when make test-asan
-- preloads one (child processes load our module too).
local function interp()
  return (util.preload and ("env LD_PRELOAD=" .. util.q(util.preload) .. " ") or "") .. util.lua
end

-- Tracepoints need tracefs; mount it when we can (root) and it is not.
local function ensure_tracefs()
  if not util.read("/sys/kernel/tracing/events/sched/sched_switch/id") and util.is_root() then
    util.sh("mount -t tracefs nodev /sys/kernel/tracing")
  end
  return util.read("/sys/kernel/tracing/events/sched/sched_switch/id") ~= nil
end

-- A 64-bit value as lowercase hex text, whatever its Lua shape (integer,
-- number, or the "0x..." string LuaJIT gets above 2^53).
local function hex(v)
  if v == nil then return "0x0" end
  if type(v) == "string" then
    if v:match("^0[xX]") then return (v:lower():gsub("^0x0*(%x)", "0x%1")) end
    v = tonumber(v)
  end
  if type(v) == "boolean" then return v and "0x1" or "0x0" end
  return string.format("0x%x", v)
end

local compared = { "type", "config", "config1", "config2", "bp_type", "exclude_user",
  "exclude_kernel", "exclude_hv", "exclude_host", "exclude_guest", "exclude_idle",
  "precise_ip", "pinned", "exclusive" }

-- The first perf_event_attr block `perf stat -vv` prints for spec (before
-- any fallback), as { field = hex }.  Absent fields are zero.
local function perf_attr(spec)
  local out = util.perf("stat -e " .. util.q(spec) .. " -vv true")
  local block = out:match("perf_event_attr:\n(.-)\n%-%-%-")
  assert(block, "perf did not open " .. spec .. ":\n" .. out)
  local t = {}
  for line in block:gmatch("[^\n]+") do
    local k, v = line:match("^%s+(.-)%s%s+(%S+)$")
    if k == "{ bp_addr, config1 }" then k = "config1" end
    if k == "{ bp_len, config2 }" then k = "config2" end
    if k then t[k] = v end
  end
  local r = {}
  for _, f in ipairs(compared) do r[f] = hex(t[f] or "0") end
  return r
end

local function ours(spec)
  local t, err = perf.parse(spec)
  assert(t, err)
  local r = {}
  for _, f in ipairs(compared) do r[f] = hex(t[f]) end
  return r, t
end

-- Specs perf 6.1 accepts on this machine (hardware ones parse even where
-- they cannot open).
local specs = {
  "cycles", "cpu-cycles:uk", "cycles:u", "instructions:k", "cache-references",
  "cache-misses", "branches", "branch-instructions", "branch-misses", "bus-cycles",
  "stalled-cycles-frontend", "stalled-cycles-backend", "idle-cycles-frontend",
  "ref-cycles:h",
  "cpu-clock", "task-clock", "page-faults", "faults", "minor-faults", "major-faults",
  "context-switches", "cs", "cpu-migrations", "migrations", "alignment-faults",
  "emulation-faults", "dummy", "bpf-output", "cgroup-switches",
  "L1-dcache-load-misses", "L1-dcache-loads", "L1-dcache-stores", "L1-dcache-prefetch-misses",
  "L1-icache-load-misses", "L1-icache-prefetches", "LLC-loads", "LLC-store-misses",
  "dTLB-load-misses", "dTLB-stores", "iTLB-load-misses", "branch-loads", "branch-load-misses",
  "node-loads", "node-prefetch-misses", "L1-dcache", "l1d-loads", "LLC-misses",
  "L1-data-write-miss", "Data-TLB-read-access", "bpu-misses", "L2-speculative-read-misses",
  "L1-dcache-load-store", "L1-dcache-misses-load", "L1-dcache-miss-misses", "LLC-load-prefetch",
  "r01c4", "r1c4:u", "r0", "rffffffffffffffff", "1:0", "1:3:u",
  "mem:0x1000", "mem:0x1000/8:rw", "mem:0x1000:x", "mem:0x2000/2:w:k", "mem:4096:r",
  "mem:0x1000:u",
  "msr/tsc/", "msr/tsc/u", "msr/event=0x0/", "msr/config=5/", "msr/event=0,config=5/",
  "tsc", "uprobe/ref_ctr_offset=5/", "uprobe/retprobe/", "uprobe/retprobe=1,config=0x40/",
  "cpu-clock:k", "cpu-clock:h", "cpu-clock:uk", "cpu-clock:ukh", "cpu-clock:G", "cpu-clock:H",
  "cpu-clock:GH", "cpu-clock:p", "cpu-clock:pp", "cpu-clock:ppp", "cpu-clock:ukp",
  "cpu-clock:I", "cpu-clock:D", "cpu-clock:e", "cpu-clock:hp", "cpu-clock:uG", "cpu-clock:Gu",
  "cpu-clock:pG", "cpu-clock:P", "cpu-clock:S", "task-clock:uDe",
}
local tracepoint_specs = { "sched:sched_switch", "sched:sched_switch:u",
  "sched:sched_wakeup", "syscalls:sys_enter_read:k", "raw_syscalls:sys_exit" }

describe("perf.parse", function()
  local have_tracefs = ensure_tracefs()

  it("gives the attr perf opens, for every form perf accepts here", function()
    local list = {}
    for _, s in ipairs(specs) do list[#list + 1] = s end
    if have_tracefs then
      for _, s in ipairs(tracepoint_specs) do list[#list + 1] = s end
    end
    local bad = {}
    for _, s in ipairs(list) do
      local mine, theirs = ours(s), perf_attr(s)
      for _, f in ipairs(compared) do
        if mine[f] ~= theirs[f] then
          bad[#bad + 1] = string.format("%s: %s is %s, perf says %s", s, f, mine[f], theirs[f])
        end
      end
    end
    assert.are.same({}, bad)
  end)

  it("names events as perf stat prints them", function()
    local list = { "cycles:u", "cpu-clock", "cpu-clock:k", "faults", "cs", "L1-dcache-load-misses",
      "msr/tsc/", "msr/tsc/u", "msr/event=0x0,name=foo/", "msr/tsc,name=bar/k", "tsc", "r01c4",
      "mem:0x1000/8:rw", "mem:0x1000:x", "1:0", "cpu-clock:ppp", "task-clock:uk" }
    if have_tracefs then
      list[#list + 1] = "sched:sched_switch"
      list[#list + 1] = "sched:sched_switch:u"
    end
    local args = {}
    for _, s in ipairs(list) do args[#args + 1] = "-e " .. util.q(s) end
    local out = util.perf("stat -x, " .. table.concat(args, " ") .. " true")
    local names = {}
    for line in out:gmatch("[^\n]+") do
      local name = line:match("^[^,]*,[^,]*,([^,]+),")
      if name then names[#names + 1] = name end
    end
    local mine = {}
    for _, s in ipairs(list) do mine[#mine + 1] = ours(s) and select(2, ours(s)).name end
    assert.are.same(names, mine)
  end)

  it("returns the fields of the attr with their types", function()
    local t = assert(perf.parse("cpu-clock:u"))
    assert.are.equal("cpu-clock:u", t.name)
    assert.are.equal("software", t.pmu)
    assert.are.equal("software", t.kind)
    assert.are.equal(1, t.type)
    assert.are.equal(0, t.config)
    assert.is_true(t.size >= 112)        -- PERF_ATTR_SIZE_VER7 or later
    assert.is_false(t.exclude_user)
    assert.is_true(t.exclude_kernel)
    assert.is_true(t.exclude_hv)
    assert.is_false(t.has_period)
    assert.is_nil(t.sample_period)

    local k = {}
    for _, s in ipairs{ "cycles", "cpu-clock", "LLC-loads", "r1", "mem:0x10", "msr/tsc/" } do
      k[#k + 1] = assert(perf.parse(s)).kind
    end
    assert.are.same({ "hardware", "software", "cache", "raw", "breakpoint", "pmu" }, k)
  end)

  it("reads tracepoint ids from tracefs", function()
    if not have_tracefs then pending("tracefs not available") return end
    local root = util.read("/proc/mounts"):match("%S+ (%S+) tracefs ") or "/sys/kernel/tracing"
    local id = tonumber(util.read(root .. "/events/sched/sched_switch/id"))
    local t = assert(perf.parse("sched:sched_switch"))
    assert.are.equal(2, t.type)
    assert.are.equal(id, t.config)
    assert.are.equal("tracepoint", t.kind)
    assert.are.equal("sched:sched_switch", t.name)
  end)

  it("takes period= and freq= terms", function()
    local t = assert(perf.parse("msr/tsc,period=1000/"))
    assert.is_true(t.has_period)
    assert.are.equal(1000, t.sample_period)
    assert.is_false(t.freq)
    t = assert(perf.parse("msr/tsc,freq=99/"))
    assert.is_true(t.freq)
    assert.are.equal(99, t.sample_freq)
    -- Breakpoints carry perf's default period of one, not a spec term.
    t = assert(perf.parse("mem:0x1000"))
    assert.are.equal(1, t.sample_period)
    assert.is_false(t.has_period)
    assert.are.equal(4096, t.bp_addr)
    assert.are.equal(4, t.bp_len)
  end)

  it("sets precise_max and sample_read for :P and :S", function()
    local t = assert(perf.parse("cpu-clock:PS"))
    assert.is_true(t.precise_max)
    assert.is_true(t.sample_read)
  end)

  it("keeps 64-bit configs whole", function()
    local t = assert(perf.parse("rffffffffffffffff"))
    assert.are.equal("0xffffffffffffffff", hex(t.config))
    t = assert(perf.parse("msr/event=0x8000000000000001/"))
    assert.are.equal("0x8000000000000001", hex(t.config))
  end)

  local E = { ENOENT = 2, E2BIG = 7, EINVAL = 22, ERANGE = 34 }
  local errors = {
    { "", "empty event spec", "EINVAL" },
    { "cyclez", "unknown event 'cyclez' (did you mean 'cycles'?)", "ENOENT" },
    { "cyclez:u", "unknown event 'cyclez' in 'cyclez:u' (did you mean 'cycles'?)", "ENOENT" },
    { "instrutions", "unknown event 'instrutions' (did you mean 'instructions'?)", "ENOENT" },
    { "page-fault", "unknown event 'page-fault' (did you mean 'page-faults'?)", "ENOENT" },
    { "cpu-clcok", "unknown event 'cpu-clcok' (did you mean 'cpu-clock'?)", "ENOENT" },
    { "L1-dcache-load-mises",
      "unknown event 'L1-dcache-load-mises' (did you mean 'L1-dcache-load-misses'?)", "ENOENT" },
    { "xyzzy-plugh", "unknown event 'xyzzy-plugh' (luaperf list, or perf.list(), shows the events here)", "ENOENT" },
    { "L1-icache-stores",
      "invalid cache event 'L1-icache-stores': the L1-icache has no store operation", "EINVAL" },
    { "iTLB-prefetches",
      "invalid cache event 'iTLB-prefetches': the iTLB has no prefetch operation", "EINVAL" },
    { "L1-icache-store-load",
      "invalid cache event 'L1-icache-store-load': the L1-icache has no store operation", "EINVAL" },
    { "cycles:uu", "modifier 'u' given twice in 'cycles:uu'", "EINVAL" },
    { "cycles:q", "unknown modifier 'q' in 'cycles:q' (modifiers: u k h G H I p P D e S)", "EINVAL" },
    { "cycles:pppp", "precise level 4 in 'cycles:pppp' is above 3 (:ppp)", "EINVAL" },
    { "cycles:W", "modifier 'W' in 'cycles:W' is not supported by luaperf", "EINVAL" },
    { "cycles:", "missing modifier after ':' in 'cycles:'", "EINVAL" },
    { "cycles:u:k", "too many ':' in 'cycles:u:k' (modifiers go in one group: cycles:uk)", "EINVAL" },
    { "cycles:ukhGHIpppPDeSppp", "too many modifiers 'ukhGHIpppPDeSppp' in 'cycles:ukhGHIpppPDeSppp'",
      "EINVAL" },
    { "a:b:c:d", "too many ':' in 'a:b:c:d'", "EINVAL" },
    { ":u", "missing event name before ':' in ':u'", "EINVAL" },
    { "r12345678901234567", "raw event 'r12345678901234567' is larger than 64 bits", "ERANGE" },
    { "1:99999999999999999999",
      "too large config '99999999999999999999' in '1:99999999999999999999'", "ERANGE" },
    { "4294967296:0", "event type '4294967296' in '4294967296:0' is too large", "ERANGE" },
    { "mem:", "bad breakpoint address '' in 'mem:'", "EINVAL" },
    { "mem:0x10000000000000000",
      "too large breakpoint address '0x10000000000000000' in 'mem:0x10000000000000000'", "ERANGE" },
    { "mem:0x1000/3x", "bad breakpoint length '3x' in 'mem:0x1000/3x' (1 to 8 bytes)", "EINVAL" },
    { "mem:0x1000/16", "bad breakpoint length '16' in 'mem:0x1000/16' (1 to 8 bytes)", "EINVAL" },
    { "mem:0x1000:rr", "breakpoint access 'r' given twice in 'mem:0x1000:rr'", "EINVAL" },
    { "mem:0x1000:rq:u", "bad breakpoint access 'rq' in 'mem:0x1000:rq:u' (r, w, x)", "EINVAL" },
    { "msr/tsc", "missing closing '/' in 'msr/tsc' (pmu/term=value,.../)", "EINVAL" },
    { "/tsc/", "missing PMU name before '/' in '/tsc/'", "EINVAL" },
    { "mrs/tsc/", "unknown PMU 'mrs' in 'mrs/tsc/' (did you mean 'msr'?)", "ENOENT" },
    { "msr/evnt=1/", "unknown term 'evnt' for PMU 'msr' in 'msr/evnt=1/' (did you mean 'event'?)",
      "ENOENT" },
    { "msr/event=/", "missing value after 'event=' in 'msr/event=/'", "EINVAL" },
    { "msr/event=zz/", "value 'zz' of term 'event' in 'msr/event=zz/' is not a number", "EINVAL" },
    { "msr/event=0x10000000000000000/",
      "value '0x10000000000000000' of term 'event' in 'msr/event=0x10000000000000000/' does not fit in 64 bits",
      "ERANGE" },
    { "msr/tsc,,/", "empty term in 'msr/tsc,,/'", "EINVAL" },
    { "msr/tsc,/", "empty term in 'msr/tsc,/'", "EINVAL" },
    { "msr/tsc/:u", "unexpected ':' after '/' in 'msr/tsc/:u' (write msr/tsc/u)", "EINVAL" },
    { "msr/tsc/u/", "unexpected '/' in modifiers 'u/' of 'msr/tsc/u/'", "EINVAL" },
    { "msr/tsc/q", "unknown modifier 'q' in 'msr/tsc/q' (modifiers: u k h G H I p P D e S)", "EINVAL" },
    { "msr/tsc,period=0/", "term 'period' in 'msr/tsc,period=0/' must be above 0", "EINVAL" },
    { "msr/tsc,period=10,freq=10/", "both period= and freq= in 'msr/tsc,period=10,freq=10/'",
      "EINVAL" },
    { "msr/name=a:b/", "bad character in name 'a:b' in 'msr/name=a:b/'", "EINVAL" },
    { "msr/config/", "term 'config' in 'msr/config/' needs a value (config=N)", "EINVAL" },
    { "msr/ev$nt=1/", "bad term 'ev$nt' in 'msr/ev$nt=1/'", "EINVAL" },
    { "cpu-*", "wildcards are not supported in event specs ('cpu-*'); "
      .. "perf.list('cpu-*') shows the matching events", "EINVAL" },
    { "cycles,instructions", "',' in 'cycles,instructions': one event per spec "
      .. "(split a list first: perf.split, evspec__split)", "EINVAL" },
    -- perf's group syntax: malformed groups say what is wrong with them.
    { "{task-clock,page-faults", "missing '}' in group '{task-clock,page-faults'", "EINVAL" },
    { "{}", "empty group '{}' in '{}'", "EINVAL" },
    { "{}:u", "empty group '{}' in '{}:u'", "EINVAL" },
    { "{task-clock,{cs}}", "nested '{' at offset 12 in '{task-clock,{cs}}': groups do not nest",
      "EINVAL" },
    { "{task-clock,}", "empty event in group '{task-clock,}'", "EINVAL" },
    { "{,cs}", "empty event in group '{,cs}'", "EINVAL" },
    { "{cs}x", "unexpected 'x' after '}' in group '{cs}x' (a group ends with '}' or '}:mods')",
      "EINVAL" },
    { "{cs}}", "unexpected '}' after '}' in group '{cs}}' (a group ends with '}' or '}:mods')",
      "EINVAL" },
    { "{cs}:", "missing modifier after ':' in group '{cs}:'", "EINVAL" },
    { "{cs}:q", "unknown modifier 'q' (modifiers: u k h G H I p P D e S) (in group '{cs}:q')",
      "EINVAL" },
    { "{cs,nosuch}", "unknown event 'nosuch' (luaperf list, or perf.list(), shows the events "
      .. "here) (in group '{cs,nosuch}')", "ENOENT" },
    { "cs}", "unexpected '}' at offset 2 in 'cs}' (a group is {ev1,ev2,...} or "
      .. "{ev1,ev2,...}:mods)", "EINVAL" },
    { "cs{", "unexpected '{' at offset 2 in 'cs{' (a group is {ev1,ev2,...} or "
      .. "{ev1,ev2,...}:mods)", "EINVAL" },
    { "cycles instructions", "unexpected space at offset 6 in 'cycles instructions'", "EINVAL" },
    { "cycles\t", "unexpected character at offset 6 in 'cycles\t'", "EINVAL" },
    { "cycles\0:u", "event spec contains a NUL byte", "EINVAL" },
    { string.rep("a", 300), "event spec '" .. string.rep("a", 40)
      .. "...' is too long (at most 255 bytes)", "E2BIG" },
  }
  local tp_errors = {
    { "sched:sched_swich", "unknown tracepoint 'sched:sched_swich' (did you mean 'sched:sched_switch'?)",
      "ENOENT" },
    { "sched:sched_swich:u",
      "unknown tracepoint 'sched:sched_swich' in 'sched:sched_swich:u' (did you mean 'sched:sched_switch'?)",
      "ENOENT" },
    { "schde:sched_switch",
      "unknown tracepoint system 'schde' in 'schde:sched_switch' (did you mean 'sched'?)", "ENOENT" },
    { "sched:", "missing tracepoint event after 'sched:' in 'sched:'", "EINVAL" },
    { "sched:*", "wildcards are not supported in event specs ('sched:*'); "
      .. "perf.list('sched:*') shows the matching tracepoints", "EINVAL" },
    { "sched:sched_switch:uu", "modifier 'u' given twice in 'sched:sched_switch:uu'", "EINVAL" },
  }

  it("rejects malformed specs with the exact message and errno", function()
    local list = {}
    for _, e in ipairs(errors) do list[#list + 1] = e end
    if have_tracefs then
      for _, e in ipairs(tp_errors) do list[#list + 1] = e end
    end
    local bad = {}
    for _, e in ipairs(list) do
      local t, msg, errno = perf.parse(e[1])
      if t ~= nil or msg ~= e[2] or errno ~= E[e[3]] then
        bad[#bad + 1] = string.format("%q -> %s / %s / %s", e[1], tostring(t and t.name),
          tostring(msg), tostring(errno))
      end
    end
    assert.are.same({}, bad)
  end)

  it("raises on a wrong argument type", function()
    assert.has_error(function() perf.parse() end)
    assert.has_error(function() perf.parse({}) end)
  end)

  it("survives hostile input", function()
    -- Bytes of every value, long runs of the grammar's punctuation, huge numbers.
    math.randomseed(7)
    local alphabet = "abcrmeu:/,=0x123456789fF{}*?-_ pPkhGHIDSW\1\255"
    for _ = 1, 3000 do
      local n = math.random(0, 60)
      local b = {}
      for i = 1, n do
        local k = math.random(#alphabet)
        b[i] = alphabet:sub(k, k)
      end
      local s = table.concat(b)
      local t, msg = perf.parse(s)
      assert(t ~= nil or type(msg) == "string", s)
    end
    for _, s in ipairs{ "mem:" .. string.rep("9", 200), "msr/event=" .. string.rep("f", 200) .. "/",
                        string.rep("msr/", 60), string.rep(":", 255), string.rep("r", 255) } do
      local t, msg = perf.parse(s)
      assert.is_nil(t)
      assert.is_string(msg)
    end
  end)

  it("says how to mount tracefs when it is not mounted", function()
    if not util.is_root() or not have_tracefs then pending("needs root and tracefs") return end
    -- A private mount namespace: the test unmounts tracefs only for itself.
    local code = [[local p = require "perf"; print((select(2, p.parse("sched:sched_switch"))))]]
    local dir = util.tmpdir()
    util.write(dir .. "/run.sh", "umount /sys/kernel/debug/tracing 2>/dev/null\n"
      .. "umount /sys/kernel/tracing 2>/dev/null; umount /sys/kernel/tracing 2>/dev/null\n"
      .. interp() .. " -e " .. util.q(code) .. "\n")
    local out, ok = util.sh("unshare -m sh " .. dir .. "/run.sh")
    util.sh("rm -rf " .. dir)
    assert.is_true(ok, out)
    assert.are.equal("tracepoint 'sched:sched_switch': tracefs is not mounted "
      .. "(as root: mount -t tracefs nodev /sys/kernel/tracing)\n", out)
  end)
end)

describe("perf.parse unprivileged", function()
  it("says tracefs is closed to the user, and still parses the rest", function()
    if not util.is_root() then pending("needs root to drop to nobody") return end
    local mode = util.sh("stat -c %a /sys/kernel/tracing 2>/dev/null")
    local code = [[local p = require "perf"
      print((select(2, p.parse("sched:sched_switch"))))
      print(p.parse("cpu-clock:u").name, (select(2, p.parse("cyclez:u"))))]]
    local out, ok = util.sh(util.as_nobody_prefix() .. util.lua .. " -e " .. util.q(code))
    assert.is_true(ok, out)
    local first, second = out:match("^([^\n]*)\n([^\n]*)\n$")
    if mode:match("^7[0-5]0") or mode:match("^700") then
      assert.are.equal("tracepoint 'sched:sched_switch': cannot read /sys/kernel/tracing "
        .. "(tracefs is readable by root only here; run as root or open up its mode)", first)
    end
    assert.are.equal("cpu-clock:u\tunknown event 'cyclez' in 'cyclez:u' (did you mean 'cycles'?)",
      second)
  end)
end)

describe("perf.split", function()
  it("splits at top-level commas only", function()
    assert.are.same({ "cycles", "msr/event=0,config=5/u", "mem:0x10/8", "cs", "{a,b}:u" },
      perf.split("cycles,msr/event=0,config=5/u,mem:0x10/8,cs,{a,b}:u"))
    assert.are.same({ "a", "", "b", "" }, perf.split("a,,b,"))
    assert.are.same({ "" }, perf.split(""))
  end)

  it("gives pieces perf.parse takes", function()
    for _, s in ipairs(perf.split("cpu-clock:u,msr/tsc,period=10/,faults")) do
      assert.is_table((perf.parse(s)))
    end
  end)
end)

describe("PMU formats from sysfs", function()
  -- A PMU this machine lacks, described in a directory like sysfs.
  local dir
  setup(function()
    dir = util.tmpdir()
    local files = {
      ["fake/type"] = "42\n",
      ["fake/format/event"] = "config:0-7\n",
      ["fake/format/umask"] = "config:8-15\n",
      ["fake/format/cmask"] = "config:24-31\n",
      ["fake/format/split"] = "config:0-3,21-23\n",
      ["fake/format/ldlat"] = "config1:0-15\n",
      ["fake/format/fe"] = "config2:0-23\n",
      ["fake/format/any"] = "config:21\n",
      ["fake/format/broken"] = "config:9-3\n",
      ["fake/events/foo"] = "event=0x3c,umask=0x01\n",
      ["fake/events/bar"] = "event=0x2e,umask=0x4f,ldlat=3\n",
      ["fake/events/bar.scale"] = "1e-3\n",
      ["fake/caps/max_precise"] = "3\n",
      ["fake/caps/branches"] = "32\n",
      ["other/type"] = "43\n",
    }
    for path, text in pairs(files) do
      util.sh("mkdir -p " .. util.q(dir .. "/" .. path:match("^(.*)/")))
      util.write(dir .. "/" .. path, text)
    end
  end)
  teardown(function() util.sh("rm -rf " .. util.q(dir)) end)

  -- Runs specs through perf.parse in a child whose PMU root is the fake one.
  local function parse_all(list)
    local code = [[
      local perf = require "perf"
      for spec in io.read("*a"):gmatch("[^\n]+") do
        local t, err = perf.parse(spec)
        if t then
          print(string.format("%s|%s|%s|%s|%s|%s", spec, tostring(t.type), tostring(t.config),
            tostring(t.config1), tostring(t.config2), t.name))
        else
          print(spec .. "|" .. err)
        end
      end]]
    local input = dir .. "/input"
    util.write(input, table.concat(list, "\n") .. "\n")
    local out, ok = util.sh("LUAPERF_PMU_ROOT=" .. util.q(dir) .. " " .. interp() .. " -e "
      .. util.q(code) .. " < " .. util.q(input))
    assert(ok, out)
    local r = {}
    for line in out:gmatch("[^\n]+") do r[#r + 1] = line end
    return r
  end

  it("spreads values over the format's bit ranges", function()
    assert.are.same({
      "fake/event=0x3c,umask=0x01/|42|316|0|0|fake/event=0x3c,umask=0x01/",
      "fake/split=0x7f/|42|14680079|0|0|fake/split=0x7f/",
      "fake/cmask=1,any/|42|18874368|0|0|fake/cmask=1,any/",
      "fake/ldlat=3,fe=0xffffff/|42|0|3|16777215|fake/ldlat=3,fe=0xffffff/",
      "fake/foo/|42|316|0|0|fake/foo/",
      "fake/bar,name=x/u|42|20270|3|0|x",
      "foo|42|316|0|0|foo",
      "fake/config=0x100000000,event=1/|42|4294967297|0|0|fake/config=0x100000000,event=1/",
    }, parse_all{ "fake/event=0x3c,umask=0x01/", "fake/split=0x7f/", "fake/cmask=1,any/",
                  "fake/ldlat=3,fe=0xffffff/", "fake/foo/", "fake/bar,name=x/u", "foo",
                  "fake/config=0x100000000,event=1/" })
  end)

  it("rejects values that do not fit and terms the PMU lacks", function()
    assert.are.same({
      "fake/split=0x80/|value '0x80' of term 'split' in 'fake/split=0x80/' is too big (at most 127)",
      "fake/event=256/|value '256' of term 'event' in 'fake/event=256/' is too big (at most 255)",
      "fake/umsk=1/|unknown term 'umsk' for PMU 'fake' in 'fake/umsk=1/' (did you mean 'umask'?)",
      "fake/zzzzzz/|unknown term 'zzzzzz' for PMU 'fake' in 'fake/zzzzzz/' (valid terms: "
        .. "any,broken,cmask,event,fe,ldlat,split,umask,config,config1,config2,name,period,freq,bar,foo)",
      "fake/broken=1/|the sysfs format of term 'broken' of PMU 'fake' is malformed",
      "fake/foo=1/|unknown term 'foo' for PMU 'fake' in 'fake/foo=1/' (valid terms: "
        .. "any,broken,cmask,event,fe,ldlat,split,umask,config,config1,config2,name,period,freq,bar,foo)",
      "fkae/foo/|unknown PMU 'fkae' in 'fkae/foo/' (did you mean 'fake'?)",
      "nope/x/|unknown PMU 'nope' in 'nope/x/' (PMUs here: fake,other)",
      "fooo|unknown event 'fooo' (did you mean 'foo'?)",
      "43:7|43|7|0|0|43:7",
    }, parse_all{ "fake/split=0x80/", "fake/event=256/", "fake/umsk=1/", "fake/zzzzzz/",
                  "fake/broken=1/", "fake/foo=1/", "fkae/foo/", "nope/x/", "fooo", "43:7" })
  end)
end)
