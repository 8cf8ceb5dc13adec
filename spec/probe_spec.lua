-- Dynamic probes (issue 19): uprobe:PATH:FUNC[+OFF], uretprobe:PATH:FUNC,
-- kprobe:FUNC through the uprobe/kprobe PMUs.  References: nm and readelf
-- for where a function is, perf probe + perf stat for how often it runs,
-- perf script for what luaperf record wrote, and the calls the test
-- programs are known to make.
local perf = require "perf"
local util = require "util"

local SHAPED = util.root .. "/build/progs/shaped"
local KNOWN = util.root .. "/build/progs/known_calls"
local UPROBE = "/sys/bus/event_source/devices/uprobe"

-- A shared library and a PIE that calls it N times with 1..N.
local LIB = [[
volatile long lib_sink;
__attribute__((noinline)) long lib_step(long i) { lib_sink += i; return lib_sink; }
]]
local MAIN = [[
#include <stdlib.h>
long lib_step(long i);
__attribute__((noinline)) long pie_step(long i) { return lib_step(i) + 1; }
int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 10, i, s = 0;
  for (i = 1; i <= n; i++) s += pie_step(i);
  return s == 42;
}
]]

-- The file offset of a symbol, from nm's address and readelf's segments.
local function file_offset(path, name)
  local addr = util.sh("nm " .. util.q(path) .. " | awk '$3 == \"" .. name .. "\" {print $1}'")
  addr = tonumber(addr:match("%x+"), 16)
  for line in util.sh("readelf -lW " .. util.q(path)):gmatch("[^\n]+") do
    local off, va, filesz = line:match("^%s*LOAD%s+0x(%x+)%s+0x(%x+)%s+0x%x+%s+0x(%x+)")
    if off then
      off, va, filesz = tonumber(off, 16), tonumber(va, 16), tonumber(filesz, 16)
      if addr >= va and addr < va + filesz then return addr - va + off end
    end
  end
end

-- luaperf stat -x, counts by event name.
local function stat_counts(events, cmd)
  local out, ok = util.luaperf("stat -x, -e " .. util.q(events) .. " -- " .. cmd)
  assert(ok, out)
  local t = {}
  for v, name in out:gmatch("\n?(%d+),[^,]*,([^,\n]+)") do t[name] = tonumber(v) end
  return t, out
end

describe("dynamic probes", function()
  local libdir, pie
  setup(function()
    libdir = util.tmpdir()
    util.write(libdir .. "/lib.c", LIB)
    util.write(libdir .. "/main.c", MAIN)
    local out, ok = util.sh(string.format(
      "cd %s && cc -O1 -g -fPIC -shared -o libstep.so lib.c && " ..
      "cc -O1 -g -fno-omit-frame-pointer -fPIE -pie -o pie main.c -L. -lstep -Wl,-rpath,%s", util.q(libdir), util.q(libdir)))
    assert(ok, out)
    pie = libdir .. "/pie"
  end)

  it("places a function at its file offset in the uprobe PMU's attr (nm, readelf)", function()
    local a = assert(perf.parse("uprobe:" .. SHAPED .. ":leaf_io"))
    assert.equal("uprobe", a.kind)
    assert.equal("uprobe", a.pmu)
    assert.equal(tonumber(util.read(UPROBE .. "/type")), a.type)
    assert.equal(file_offset(SHAPED, "leaf_io"), a.config2)
    assert.equal(0, a.config)
    assert.equal(1, a.sample_period)
    assert.equal(SHAPED, a.probe.path)
    assert.equal("leaf_io", a.probe.func)
    assert.equal(a.config2, a.probe.offset)
    local nm_addr = util.sh("nm " .. SHAPED .. " | awk '$3 == \"leaf_io\" {print $1}'"):match("%x+")
    assert.equal(tonumber(nm_addr, 16), a.probe.addr)
    assert.is_false(a.probe.ret)
    local b = assert(perf.parse("uprobe:" .. SHAPED .. ":leaf_io+4"))
    assert.equal(a.config2 + 4, b.config2)
    -- the retprobe bit where the PMU's format says ("config:0" here)
    local bit = tonumber(util.read(UPROBE .. "/format/retprobe"):match("config:(%d+)"))
    local r = assert(perf.parse("uretprobe:" .. SHAPED .. ":leaf_io"))
    assert.equal(2 ^ bit, r.config)
    assert.equal(a.config2, r.config2)
    -- in a shared object, in a PIE
    assert.equal(file_offset(libdir .. "/libstep.so", "lib_step"),
      assert(perf.parse("uprobe:" .. libdir .. "/libstep.so:lib_step")).config2)
    assert.equal(file_offset(pie, "pie_step"), assert(perf.parse("uprobe:" .. pie .. ":pie_step")).config2)
  end)

  it("finds libraries and programs by bare name, and aliases the symbol table folds", function()
    -- libc's write is a weak alias of __write: same address, both findable
    local w = assert(perf.parse("uprobe:libc:write"))
    local w2 = assert(perf.parse("uprobe:libc:__write"))
    assert.equal(w.config2, w2.config2)
    local libc = util.sh("ldd " .. KNOWN .. " | awk '/libc.so/ {print $3}'"):gsub("%s+$", "")
    local dyn = util.sh("readelf -sW --dyn-syms " .. util.q(libc) ..
      " | awk '$8 ~ /^write@/ {print $2}'"):match("%x+")
    assert.truthy(dyn)
    local ok_off = file_offset and w.config2 ~= nil
    assert.is_true(ok_off)
    -- dynsym values of a shared object are its addresses; offsets differ by the segment's shift
    local exec_seg
    for line in util.sh("readelf -lW " .. util.q(libc)):gmatch("[^\n]+") do
      local off, va = line:match("^%s*LOAD%s+0x(%x+)%s+0x(%x+).-R E")
      if off then exec_seg = tonumber(va, 16) - tonumber(off, 16) end
    end
    assert.equal(tonumber(dyn, 16) - exec_seg, w.config2)
    local sh = util.sh("command -v sh"):gsub("%s+$", "")
    assert.truthy(sh ~= "")
  end)

  it("takes C++ names demangled or mangled (nm -C, nm)", function()
    local prog = util.root .. "/build/progs/mangled"
    local off = file_offset(prog, "_ZNK5outer5inner3Box3getEv")
    assert.equal(off, assert(perf.parse("uprobe:" .. prog .. ":_ZNK5outer5inner3Box3getEv")).config2)
    -- nm -C's name without its parameter list, as perf prints it
    local demangled = util.sh("nm -C " .. prog .. " | awk '$1 == \"" ..
      string.format("%016x", tonumber(util.sh("nm " .. prog ..
        " | awk '$3 == \"_ZNK5outer5inner3Box3getEv\" {print $1}'"):match("%x+"), 16)) ..
      "\" {$1=\"\"; $2=\"\"; print}'"):gsub("^%s+", ""):gsub("%s+$", "")
    assert.equal("outer::inner::Box::get() const", demangled)
    local bare = demangled:gsub("%(.*$", "")
    assert.equal(off, assert(perf.parse("uprobe:" .. prog .. ":" .. bare)).config2)
    local t, out = stat_counts("uprobe:" .. prog .. ":" .. bare .. ",uretprobe:" .. prog ..
      ":_ZNK5outer5inner3Box3getEv", prog .. " 7")
    assert.equal(7, t["uprobe:" .. prog .. ":" .. bare], out)
    assert.equal(7, t["uretprobe:" .. prog .. ":_ZNK5outer5inner3Box3getEv"], out)
  end)

  it("luaperf stat -e counts exactly the calls, as perf probe + perf stat do", function()
    local t, out = stat_counts("uprobe:" .. SHAPED .. ":leaf_io,uretprobe:" .. SHAPED .. ":leaf_io",
      SHAPED .. " 300")
    assert.equal(300, t["uprobe:" .. SHAPED .. ":leaf_io"], out)
    assert.equal(300, t["uretprobe:" .. SHAPED .. ":leaf_io"], out)
    -- perf's own count through a tracefs uprobe, removed afterwards
    local grp = "lp19_" .. util.sh("echo $$"):match("%d+")
    local add, added = util.sh("perf probe -q -x " .. SHAPED .. " -a " .. grp .. ":leaf=leaf_io")
    if added then
      local ref = util.sh("perf stat -x, -e " .. grp .. ":leaf -- " .. SHAPED .. " 300 2>&1 >/dev/null")
      util.sh("perf probe -q -d '" .. grp .. ":*'")
      assert.equal(300, tonumber(ref:match("(%d+),,?" .. grp)), ref)
    else
      print("perf probe unavailable: " .. add)
    end
  end)

  it("counts a shared library's function, a PIE's and libc's exactly", function()
    local n = 1234
    local lib, p = libdir .. "/libstep.so", pie
    local t, out = stat_counts(string.format("uprobe:%s:lib_step,uprobe:%s:pie_step,uretprobe:%s:lib_step",
      lib, p, lib), p .. " " .. n)
    assert.equal(n, t["uprobe:" .. lib .. ":lib_step"], out)
    assert.equal(n, t["uprobe:" .. p .. ":pie_step"], out)
    assert.equal(n, t["uretprobe:" .. lib .. ":lib_step"], out)
    local t2, out2 = stat_counts("uprobe:libc:write,uprobe:" .. KNOWN .. ":probe_target",
      KNOWN .. " calls 321")
    assert.equal(321, t2["uprobe:libc:write"], out2)
    assert.equal(321, t2["uprobe:" .. KNOWN .. ":probe_target"], out2)
  end)

  it("perf.counter counts a probe in a workload, and in the process itself", function()
    local wl = assert(perf.workload{ KNOWN, "calls", "55" })
    local c = assert(perf.counter("uprobe:" .. KNOWN .. ":probe_target", { pid = wl:pid(), enable_on_exec = true }))
    assert(wl:start())
    assert.equal(0, wl:wait())
    assert.equal(55, c:read().raw)
    c:close(); wl:close()
    -- the interpreter's own calls: os.clock is libc's clock(3)
    local self = assert(perf.counter("uprobe:libc:clock"))
    local before = self:read().raw
    for _ = 1, 100 do os.clock() end
    assert.equal(100, self:read().raw - before)
    self:close()
  end)

  it("probes are not inherited: a command that forks after exec keeps working", function()
    -- (the kernel would read the probe's path again in the forking task,
    -- where it is not, and fail the fork)
    local out, ok = util.luaperf("stat -x, -e uprobe:" .. SHAPED .. ":leaf_io -- sh -c " ..
      util.q(SHAPED .. " 10; echo forked-ok"))
    assert(ok, out)
    assert.truthy(out:find("forked-ok", 1, true), out)
  end)

  it("perf.session samples every hit with the arguments in registers and call chains", function()
    local n = 40
    local s = assert(perf.session{ events = { "uprobe:" .. libdir .. "/libstep.so:lib_step" },
      sample = { "regs" }, callchain = true, cmd = { pie, tostring(n) } })
    assert(s:start())
    local args, chains, bad = {}, 0, nil
    local sym = perf.symbolizer()
    local recs = {}
    local function drain()
      for r in s:records() do recs[#recs + 1] = r end
    end
    repeat local _, done = s:poll(20); drain() until done
    s:wait()
    drain()
    s:close()
    -- fed as they come: a drain merges the rings by time, so the exec's
    -- COMM (which empties the pid's maps) comes before the program's MMAP
    -- whichever CPU's ring holds each
    for _, r in ipairs(recs) do
      sym:feed(r)
      if r.type == "SAMPLE" then
        args[#args + 1] = tonumber(r.regs.di)
        -- at lib_step's entry its caller's frame is pie_step's, so fp
        -- chains show lib_step, then main (as perf's do)
        local names = {}
        for _, a in ipairs(r.callchain) do
          local f = sym:resolve(r.pid, a)
          names[#names + 1] = f and f.name or "?"
        end
        if names[1] == "lib_step" and names[2] == "main" then chains = chains + 1
        elseif not bad then bad = table.concat(names, ";") end
      end
    end
    assert.equal(n, #args)
    for i = 1, n do assert.equal(i, args[i]) end
    assert.equal(n, chains, bad)
  end)

  it("luaperf record -e writes every hit, and perf script reads them", function()
    local dir = util.tmpdir()
    local out, ok = util.luaperf("record -e uprobe:" .. KNOWN .. ":probe_target -g -o " .. dir ..
      "/p.data -- " .. KNOWN .. " calls 25")
    assert(ok, out)
    local text = util.perf("script -i " .. dir .. "/p.data -F event,ip,sym")
    local hits = 0
    for _ in text:gmatch("uprobe:[^\n]*probe_target:") do hits = hits + 1 end
    assert.equal(25, hits, text)
    -- perf sees each sample at the function's first instruction
    local _, entries = text:gsub("probe_target:%s*\n%s*%x+ probe_target\n", "")
    assert.equal(25, entries, text)
  end)

  it("refuses bad specs with clear messages", function()
    local function err(spec)
      local a, msg, errno = perf.parse(spec)
      assert.is_nil(a)
      return msg, errno
    end
    local m, e = err("uprobe:" .. SHAPED .. ":leaf_iox")
    assert.equal(2, e)
    assert.truthy(m:find("did you mean 'leaf_io'", 1, true), m)
    m = err("uprobe:" .. SHAPED .. ":qqqqqqqqqq")
    assert.truthy(m:find("no function 'qqqqqqqqqq'", 1, true), m)
    assert.truthy(m:find("nm -C", 1, true), m)
    m, e = err("uprobe:/nonexistent/x:main")
    assert.equal(2, e)
    assert.truthy(m:find("No such file", 1, true), m)
    m = err("uprobe:no-such-lib-or-prog:main")
    assert.truthy(m:find("cannot find 'no-such-lib-or-prog'", 1, true), m)
    m = err("uprobe:/etc/hostname:main")
    assert.truthy(m:find("not an ELF object", 1, true), m)
    m = err("uprobe:" .. SHAPED)
    assert.truthy(m:find("PATH:FUNC", 1, true), m)
    m = err("uprobe:" .. SHAPED .. ":")
    assert.truthy(m:find("PATH:FUNC", 1, true), m)
    m = err("uretprobe:" .. SHAPED .. ":leaf_io+4")
    assert.truthy(m:find("takes no offset", 1, true), m)
    m = err("uprobe:" .. SHAPED .. ":leaf_io+zz")
    assert.truthy(m:find("bad offset", 1, true), m)
    m = err("uprobe:" .. SHAPED .. ":leaf_io+100000")
    assert.truthy(m:find("past the end of leaf_io", 1, true), m)
    -- the command says the same and exits non-zero
    local out, ok = util.luaperf("stat -e uprobe:" .. SHAPED .. ":leaf_iox -- true")
    assert.is_false(ok)
    assert.truthy(out:find("did you mean 'leaf_io'", 1, true), out)
  end)

  it("explains kprobes on a kernel without a kprobe PMU, and fills them where there is one", function()
    local here = util.sh("test -d /sys/bus/event_source/devices/kprobe && echo yes"):find("yes")
    if not here then
      local a, msg = perf.parse("kprobe:do_sys_openat2")
      assert.is_nil(a)
      assert.truthy(msg:find("no kprobe PMU", 1, true), msg)
      local _, m2 = perf.parse("kretprobe:do_sys_openat2")
      assert.truthy(m2:find("no kprobe PMU", 1, true), m2)
    end
    -- a PMU root that describes one (as sysfs would)
    local root = util.tmpdir()
    util.sh("mkdir -p " .. root .. "/kprobe/format && echo 42 > " .. root .. "/kprobe/type && " ..
      "echo config:0 > " .. root .. "/kprobe/format/retprobe")
    util.write(root .. "/k.lua", [[
      local perf = require "perf"
      local a = assert(perf.parse("kprobe:do_sys_openat2+8"))
      local r = assert(perf.parse("kretprobe:do_sys_openat2"))
      print("type=" .. a.type .. "\tkind=" .. a.kind .. "\toff=" .. a.config2 .. "\tret=" .. r.config)
    ]])
    -- (a child interpreter loads our module: under make test-asan it gets
    -- the sanitizer runtime first, as the runner does)
    local pre = util.preload_env()
    local out = util.sh(pre .. "LUAPERF_PMU_ROOT=" .. root .. " " .. util.lua .. " " .. root .. "/k.lua")
    local f = util.fields(out)
    assert.equal(42, f.type, out)
    assert.equal("kprobe", f.kind)
    assert.equal(8, f.off)
    assert.equal(1, f.ret)
  end)

  it("unprivileged: explains the capability the uprobe PMU wants; with it, counts", function()
    if not util.is_root() then return pending("needs root to drop to nobody") end
    local t = util.nobody_tree()
    local prog = t.dir .. "/known_calls"
    util.sh("cp " .. KNOWN .. " " .. prog .. " && chmod a+rx " .. prog)
    local code = "local perf = require 'perf' " ..
      "local wl = perf.workload{'" .. prog .. "', 'calls', '17'} " ..
      "local c, m, e = perf.counter('uprobe:" .. prog .. ":probe_target', {pid = wl:pid(), enable_on_exec = true}) " ..
      "if not c then print('errno=' .. e) print(m) return end " ..
      "wl:start() wl:wait() print('count=' .. c:read().raw)"
    util.write(t.dir .. "/u.lua", code)
    util.sh("chmod a+r " .. t.dir .. "/u.lua")
    local out = util.sh(util.as_nobody_prefix() .. util.lua .. " u.lua")
    assert.equal(13, util.fields(out).errno, out)
    assert.truthy(out:find("CAP_SYS_ADMIN", 1, true), out)
    -- CAP_PERFMON is not what the kernel asks for (the message says so)
    local withp = util.sh(util.as_nobody_prefix():gsub("%-%-clear%-groups",
      "--clear-groups --inh-caps=+perfmon --ambient-caps=+perfmon") .. util.lua .. " u.lua")
    local fp = util.fields(withp)
    assert.is_true(fp.count == 17 or (fp.errno == 13 and withp:find("CAP_PERFMON is not enough", 1, true) ~= nil), withp)
    -- with CAP_SYS_ADMIN, a user counts the probe in their own process
    local withs = util.sh(util.as_nobody_prefix():gsub("%-%-clear%-groups",
      "--clear-groups --inh-caps=+sys_admin --ambient-caps=+sys_admin") .. util.lua .. " u.lua")
    assert.equal(17, util.fields(withs).count, withs)
  end)
end)
