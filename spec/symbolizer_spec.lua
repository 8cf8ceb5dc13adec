-- The symbolizer against the references: nm (names), addr2line -f -i -C
-- (file:line and inline chains), /proc/kallsyms, perf script.  Test
-- programs are built here (PIE, non-PIE, a shared library, C++, inlining,
-- stripped with a separate debug file), run until they stop themselves
-- (SIGSTOP), and their addresses resolved from /proc/PID/maps.
local perf = require "perf"
local util = require "util"

local q = util.q
local progs = util.root .. "/spec/progs/"

local function sleep(s) os.execute("sleep " .. s) end

-- Starts cmd in the background and waits until it has stopped itself.
local function spawn_stopped(cmd)
  local out = util.sh(cmd .. " >/dev/null 2>&1 & echo $!")
  local pid = assert(tonumber(out:match("(%d+)%s*$")), out)
  for _ = 1, 1000 do
    local st = util.read("/proc/" .. pid .. "/stat")
    assert(st, "process " .. pid .. " died: " .. cmd)
    if st:match("^%d+ %b() T") then return pid end
    sleep(0.01)
  end
  error("process did not stop: " .. cmd)
end

local function kill(pid)
  if pid then os.execute("kill -9 " .. pid .. " 2>/dev/null") end
end

-- nm's functions: { {addr=, size=, names={...}} } with sizes, sorted.
local function nm_functions(bin)
  local byaddr, list = {}, {}
  -- c++filt -p: perf's default form of C++ names (no parameter list)
  local out = assert(util.sh("nm -S --defined-only " .. q(bin) .. " | c++filt -p"))
  for a, s, t, name in out:gmatch("(%x+) (%x+) ([TtWw]) ([^\n]+)") do
    local addr, size = tonumber(a, 16), tonumber(s, 16)
    if size > 0 then
      local f = byaddr[addr]
      if not f then
        f = { addr = addr, size = size, names = {} }
        byaddr[addr] = f
        list[#list + 1] = f
      end
      f.names[name] = true
    end
  end
  table.sort(list, function(x, y) return x.addr < y.addr end)
  return list
end

-- addr2line -a -f -i -C: for each address, the frames {name=, file=, line=}.
local function addr2line(bin, addrs)
  local res, cur = {}, nil
  local args = {}
  for i, a in ipairs(addrs) do args[i] = string.format("0x%x", a) end
  local out = util.sh("addr2line -a -f -i -C -e " .. q(bin) .. " " .. table.concat(args, " "))
  local lines = {}
  for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
  local i = 1
  while i <= #lines do
    local a = lines[i]:match("^0x(%x+)$")
    if a then
      cur = {}
      res[#res + 1] = cur
      i = i + 1
    else
      local name, pos = lines[i], lines[i + 1] or ""
      pos = pos:gsub(" %(discriminator %d+%)", "")
      local file, line = pos:match("^(.*):(%d+)$")
      if not file or file == "??" then file, line = nil, nil end
      cur[#cur + 1] = { name = name, file = file, line = line and tonumber(line) }
      i = i + 2
    end
  end
  assert(#res == #addrs, "addr2line answered " .. #res .. " of " .. #addrs)
  return res
end

-- The load bias of bin in pid: mapping at offset 0 minus the first PT_LOAD.
local function load_bias(pid, path)
  local maps = assert(util.read("/proc/" .. pid .. "/maps"))
  local start
  for l in maps:gmatch("[^\n]+") do
    local s, off, p = l:match("^(%x+)%-%x+ %S+ (%x+) %S+ %d+%s+(.*)$")
    if p == path and tonumber(off, 16) == 0 then start = tonumber(s, 16) break end
  end
  assert(start, "no mapping of " .. path)
  local ph = util.sh("readelf -lW " .. q(path))
  local vaddr = assert(ph:match("LOAD%s+0x%x+%s+0x(%x+)"))
  vaddr = tonumber(vaddr, 16)
  return start - (vaddr - vaddr % 4096)
end

local function build_id(path)
  return util.sh("readelf -n " .. q(path)):match("Build ID: (%x+)")
end

-- Compares every function's start and middle with nm + addr2line.
-- ref: the unstripped binary whose nm/addr2line are the reference.
local function check_functions(sym, pid, path, ref, opts)
  opts = opts or {}
  local funcs = nm_functions(ref)
  assert.is_true(#funcs >= (opts.min or 3), "too few functions in " .. ref)
  local bias = load_bias(pid, path)
  local vaddrs = {}
  for _, f in ipairs(funcs) do
    vaddrs[#vaddrs + 1] = f.addr
    vaddrs[#vaddrs + 1] = f.addr + math.floor(f.size / 2)
  end
  local a2l = addr2line(ref, vaddrs)
  local bad, checked = {}, 0
  for i, va in ipairs(vaddrs) do
    local f = funcs[math.floor((i + 1) / 2)]
    local r, err = sym:resolve(pid, bias + va, { lines = true })
    checked = checked + 1
    local ref_line = a2l[i][1]
    if not r then
      bad[#bad + 1] = string.format("0x%x: %s", va, tostring(err))
    elseif not f.names[r.name] then
      bad[#bad + 1] = string.format("0x%x: name %s, nm says %s", va, r.name, next(f.names))
    elseif r.offset ~= va - f.addr then
      bad[#bad + 1] = string.format("0x%x: offset %s", va, tostring(r.offset))
    elseif r.dso ~= path then
      bad[#bad + 1] = string.format("0x%x: dso %s", va, tostring(r.dso))
    elseif r.file ~= ref_line.file or r.line ~= ref_line.line then
      bad[#bad + 1] = string.format("0x%x %s: %s:%s, addr2line says %s:%s", va, r.name,
        tostring(r.file), tostring(r.line), tostring(ref_line.file), tostring(ref_line.line))
    end
  end
  assert.are.same({}, bad)
  -- Lines that were expected at all (not only ??:0 everywhere).
  local with_lines = 0
  for _, fr in ipairs(a2l) do if fr[1].file then with_lines = with_lines + 1 end end
  assert.is_true(with_lines >= (opts.min_lines or 4), "addr2line found too few lines")
  return checked
end

local src_prog = util.read(progs .. "sym_prog.c")

describe("symbolizer", function()
  local dir, pids = nil, {}
  setup(function()
    dir = util.tmpdir()
    local function cc(cmd) local out, ok = util.sh(cmd); assert(ok, out) end
    util.write(dir .. "/prog.c", src_prog)
    util.write(dir .. "/lib.c", util.read(progs .. "sym_lib.inc"))
    util.write(dir .. "/cxx.cc", util.read(progs .. "sym_cxx.inc"))
    util.write(dir .. "/inl.c", util.read(progs .. "sym_inline.inc"))
    local base = "cc -O1 -g -fno-omit-frame-pointer -fno-inline "
    cc(base .. "-fPIE -pie -o " .. dir .. "/pie " .. dir .. "/prog.c")
    cc(base .. "-fno-pie -no-pie -o " .. dir .. "/nopie " .. dir .. "/prog.c")
    cc(base .. "-fPIC -shared -o " .. dir .. "/libsym.so " .. dir .. "/lib.c")
    cc(base .. "-DWITH_LIB -o " .. dir .. "/withlib " .. dir .. "/prog.c -L" .. dir ..
       " -lsym -Wl,-rpath," .. dir)
    cc("g++ -O1 -g -fno-inline -o " .. dir .. "/cxx " .. dir .. "/cxx.cc")
    cc("cc -O2 -g -o " .. dir .. "/inl " .. dir .. "/inl.c")
    -- Stripped, with the debug info beside it through .gnu_debuglink.
    cc("mkdir -p " .. dir .. "/s && cp " .. dir .. "/pie " .. dir .. "/s/prog && cd " .. dir ..
       "/s && objcopy --only-keep-debug prog prog.debug && strip --strip-all prog && " ..
       "objcopy --add-gnu-debuglink=prog.debug prog")
  end)
  teardown(function()
    for _, p in ipairs(pids) do kill(p) end
    if dir then os.execute("rm -rf " .. q(dir)) end
  end)
  local function run(bin)
    local pid = spawn_stopped(bin)
    pids[#pids + 1] = pid
    return pid
  end

  it("is a userdata that closes idempotently and refuses use after close", function()
    local sym = perf.symbolizer()
    sym:close()
    sym:close()
    assert.has_error(function() sym:resolve(1, 0x1000) end, "attempt to use a closed symbolizer")
    assert.has_error(function() perf.symbolizer(42) end)
  end)

  it("resolves a PIE executable like nm and addr2line", function()
    local pid = run(dir .. "/pie")
    local sym = perf.symbolizer()
    assert.is_true(sym:load(pid))
    check_functions(sym, pid, dir .. "/pie", dir .. "/pie")
    -- The build id is the file's, and the map lookup agrees with /proc.
    local bias = load_bias(pid, dir .. "/pie")
    local f = nm_functions(dir .. "/pie")[1]
    local r = assert(sym:resolve(pid, bias + f.addr))
    assert.are.equal(build_id(dir .. "/pie"), r.build_id)
    local m = assert(sym:map(pid, bias + f.addr))
    assert.are.equal(dir .. "/pie", m.path)
    assert.is_true(m.start <= bias + f.addr and bias + f.addr < m["end"])
    sym:close()
  end)

  it("names assembler labels in code (NOTYPE symbols) as perf does", function()
    -- An entry point written in asm has no type and no size (ld.so's
    -- _start); perf counts it as a function that runs to the next symbol.
    local bin = util.cc([[
      #include <signal.h>
      __asm__(".text\n.globl asm_entry\nasm_entry:\n nop\n nop\n ret\n");
      void asm_entry(void);
      int main(void) { raise(SIGSTOP); asm_entry(); return 0; }
    ]], "-O1 -g", "label")
    local pid = run(bin)
    local sym = perf.symbolizer()
    assert.is_true(sym:load(pid))
    local nm = util.sh("nm " .. q(bin))
    local a = assert(nm:match("(%x+) T asm_entry"), nm)
    local bias = load_bias(pid, bin)
    local r = assert(sym:resolve(pid, bias + tonumber(a, 16) + 1))
    assert.are.equal("asm_entry", r.name)
    assert.are.equal(1, r.offset)
    sym:close()
  end)

  it("names the PLT slots of an object only when it has symbols of its own, as perf does", function()
    -- perf synthesizes name@plt only when the object's symbol tables gave
    -- one: a stripped executable that exports nothing (addr2line) keeps
    -- its PLT unnamed.  Reference: perf script over a recording whose every
    -- sample is the getppid@plt slot (a breakpoint on it: non-PIE, the slot
    -- runs where the file puts it).  Each build its own build id (-N: none
    -- goes to perf's cache, where a copy with symbols would name the slot).
    local function record(stripped)
      local bin = util.cc("#include <unistd.h>\nint main(void) { for (int i = 0; i < 300; i++) " ..
        "getppid(); return " .. (stripped and 1 or 0) .. "; }\n", "-O1 -fno-pie -no-pie",
        stripped and "pltstripped" or "pltnamed")
      if stripped then assert(select(2, util.sh("strip --strip-all " .. q(bin)))) end
      local slot = util.sh("objdump -d -j .plt " .. q(bin)):match("(%x+) <getppid@plt>:")
      assert.is_string(slot)
      local data = bin .. ".data"
      local out = util.perf("record -q -N -e mem:0x" .. slot .. ":x -o " .. q(data) .. " " ..
                            q(bin) .. " 2>&1")
      local theirs = util.perf("script -F ip,sym -i " .. q(data) .. " 2>/dev/null")
      local ours, ok, err = util.luaperf_split("script -F ip,sym -i " .. q(data))
      assert.is_true(ok, err)
      -- (some VMs take execute breakpoints and never fire them: perf
      -- counts none either, and there is no reference to compare with)
      if theirs == "" then return nil end
      assert.are.equal(300, select(2, theirs:gsub("\n", "\n")), out .. theirs)
      return theirs, ours
    end
    local theirs, ours = record(true)
    if not theirs then
      return pending("execute breakpoints fire nowhere here: perf record -e mem:ADDR:x recorded no sample")
    end
    assert.is_truthy(theirs:find("[unknown]", 1, true))
    assert.are.equal(theirs, ours)
    -- with its .symtab the slot is named (perf 6.1 prints its _init
    -- stretched over .plt there, 6.3 and later getppid@plt: flame_spec)
    theirs, ours = record(false)
    assert.is_truthy(ours:find("getppid@plt", 1, true))
    assert.are.equal(theirs:gsub("_init", "getppid@plt"), ours)
  end)

  it("names PLT slots of ifuncs (IRELATIVE) @plt, as perf 6.1 does", function()
    -- libc's memcpy and friends go through such slots
    local pid = run("/bin/sh -c 'kill -STOP $$; exec sleep 30'")
    local libc = assert(util.read("/proc/" .. pid .. "/maps"):match("(/%S+/libc%.so%.6)\n"), "no libc")
    local rel = util.sh("readelf -rW " .. q(libc))
    local sec = util.sh("readelf -SW " .. q(libc))
    local plt = tonumber(assert(sec:match("%] %.plt%s+PROGBITS%s+(%x+)")), 16)
    local i, slot, addend = 0, nil, nil
    for line in rel:match("'%.rela%.plt'.-\n(.*)$"):gmatch("[^\n]+") do
      if line:match("^%x+%s+%x+%s+R_X86_64_") then
        if line:find("IRELATIVE", 1, true) then
          slot, addend = i, line:match("(%x+)%s*$")
          break
        end
        i = i + 1
      end
    end
    if not slot then pending("this libc has no IRELATIVE PLT slot") return end
    local sym = perf.symbolizer()
    assert.is_true(sym:load(pid))
    local r = assert(sym:resolve(pid, load_bias(pid, libc) + plt + 16 + slot * 16 + 4))
    -- (perf 6.1 names the slot after the null symbol; 6.3 and later
    -- "*ABS*+0x" .. addend .. "@plt")
    assert.is_string(addend)
    assert.are.equal("@plt", r.name)
    assert.are.equal(4, r.offset)
    sym:close()
  end)

  it("names C++ PLT slots demangled @plt, data objects, and no absolute symbol, as perf does", function()
    -- A frame-pointer chain of a system-wide recording holds PLT slots of
    -- C++ imports and, through stale frames, addresses of data (a vtable):
    -- perf demangles a slot's symbol before adding "@plt", names data
    -- objects, and skips absolute symbols (a version's name, at 0).
    local d = util.tmpdir()
    util.write(d .. "/lib.cc", "namespace ns { long __attribute__((noinline)) twice(long v) { return 2 * v; } }\n")
    util.write(d .. "/main.cc", [[
      #include <signal.h>
      namespace ns { long twice(long v); }
      extern const long lookup_table[16];
      const long lookup_table[16] = { 1, 2, 3 };
      int main() { raise(SIGSTOP); return (int)ns::twice(lookup_table[1]); }
    ]])
    util.write(d .. "/v.map", "V1 { global: *; };\n")
    local out, ok = util.sh(string.format("cd %s && g++ -O1 -g -fPIC -shared -Wl,--version-script=v.map " ..
      "-o libtw.so lib.cc && g++ -O1 -g -Wl,-z,noseparate-code -o main main.cc -L. -ltw -Wl,-rpath,%s", q(d), q(d)))
    assert(ok, out)
    local pid = run(d .. "/main")
    local sym = perf.symbolizer()
    assert.is_true(sym:load(pid))
    local bias = load_bias(pid, d .. "/main")
    -- the slot of ns::twice: objdump names it, c++filt -p demangles the symbol
    local dis = util.sh("objdump -d --no-show-raw-insn -j .plt -j .plt.sec " .. q(d .. "/main"))
    local addr, mangled = dis:match("\n(%x+) <(_ZN2ns5twice%w*)@plt>:")
    assert(addr, dis)
    local want = util.sh("echo " .. mangled .. " | c++filt -p"):gsub("%s+$", "") .. "@plt"
    local r = assert(sym:resolve(pid, bias + tonumber(addr, 16) + 4))
    assert.are.equal(want, r.name)
    assert.are.equal(4, r.offset)
    -- a data object, as nm lists it (read-only data in the code segment,
    -- as in the objects an old-style layout maps r-xp whole)
    local nm = util.sh("nm " .. q(d .. "/main"))
    local obj = assert(nm:match("(%x+) R lookup_table"), nm)
    r = assert(sym:resolve(pid, bias + tonumber(obj, 16) + 8))
    assert.are.equal("lookup_table", r.name)
    assert.are.equal(8, r.offset)
    -- the library's version name is absolute: its first page stays unnamed
    assert.truthy(util.sh("readelf -W --dyn-syms " .. q(d .. "/libtw.so")):find("OBJECT%s+GLOBAL%s+DEFAULT%s+ABS V1"))
    local lib = assert(util.read("/proc/" .. pid .. "/maps"):match("\n(%x+)%-%x+ r%-%-p 00000000 %S+ %d+%s+" ..
      d:gsub("%p", "%%%0") .. "/libtw%.so\n"))
    r = sym:resolve(pid, tonumber(lib, 16) + 0x40)
    assert.is_true(r == nil or r.name ~= "V1", r and r.name)
    sym:close()
  end)

  it("says why each address it cannot name has no symbol, the last miss's own reason", function()
    local pid = run(dir .. "/pie")
    local sym = perf.symbolizer()
    assert.is_true(sym:load(pid))
    local bias = load_bias(pid, dir .. "/pie")
    local heap = util.read("/proc/" .. pid .. "/maps"):match("\n(%x+)%-%x+ [^\n]*%[heap%]")
    -- code no symbol covers: the end of a function that no other symbol
    -- starts at (alignment padding), as nm -S lists them
    local nm = util.sh("nm -S " .. q(dir .. "/pie"))
    local starts, gap = {}, nil
    for a in nm:gmatch("(%x+) [%x ]* ?%a [^\n]+") do starts[tonumber(a, 16)] = true end
    for a, size in nm:gmatch("(%x+) (%x+) [Tt] [^\n]+") do
      local e = tonumber(a, 16) + tonumber(size, 16)
      if not starts[e] and tonumber(size, 16) > 0 then gap = e break end
    end
    assert(gap, nm)
    local function header()
      local r, err = sym:resolve(pid, bias + gap)
      assert.is_nil(r, r and r.name)
      assert.are.equal(string.format("no symbol in %s/pie at 0x%x", dir, gap), err)
    end
    header()
    if heap then   -- anonymous memory: JIT code named by a perf map, and there is none
      local addr = tonumber(heap, 16) + 16
      local r, err = sym:resolve(pid, addr)
      assert.is_nil(r)
      assert.are.equal(string.format("no symbol at 0x%x in pid %d: no /tmp/perf-%d.map", addr, pid,
        pid), err)
    end
    header()
    -- a name between two misses leaves no reason behind
    local main = assert(nm:match("(%x+) %x+ T main\n"), nm)
    assert.are.equal("main", assert(sym:resolve(pid, bias + tonumber(main, 16))).name)
    header()
    sym:close()
  end)

  it("resolves a non-PIE executable like nm and addr2line", function()
    local pid = run(dir .. "/nopie")
    local sym = perf.symbolizer()
    assert.is_true(sym:load(pid))
    assert.are.equal(0, load_bias(pid, dir .. "/nopie"))
    check_functions(sym, pid, dir .. "/nopie", dir .. "/nopie")
  end)

  it("resolves a shared library and its executable", function()
    local pid = run(dir .. "/withlib")
    local sym = perf.symbolizer()
    assert.is_true(sym:load(pid))
    check_functions(sym, pid, dir .. "/libsym.so", dir .. "/libsym.so", { min = 3 })
    check_functions(sym, pid, dir .. "/withlib", dir .. "/withlib")
  end)

  it("resolves the vdso as nm -D reads its image from the process", function()
    if not util.is_root() then pending("needs root to read /proc/PID/mem") return end
    local pid = run(dir .. "/pie")
    local maps = assert(util.read("/proc/" .. pid .. "/maps"))
    local s, e = maps:match("(%x+)%-(%x+) [^\n]*%[vdso%]")
    if not s then pending("no [vdso] mapping") return end
    local start, size = tonumber(s, 16), tonumber(e, 16) - tonumber(s, 16)
    local img = dir .. "/vdso.so"
    assert(util.sh(string.format("dd if=/proc/%d/mem of=%s bs=4096 skip=%d count=%d 2>/dev/null",
      pid, img, math.floor(start / 4096), math.floor(size / 4096))))
    local funcs = {}
    for a, sz, name in util.sh("nm -D -S --defined-only " .. q(img)):gmatch("(%x+) (%x+) [Tt] (%S+)") do
      -- nm -D adds the version ("@@LINUX_2.6"); .dynsym names have none (perf agrees).
      funcs[#funcs + 1] = { addr = tonumber(a, 16), size = tonumber(sz, 16), name = name:gsub("@.*", "") }
    end
    assert.is_true(#funcs >= 4, "vdso exports too few functions")
    local sym = perf.symbolizer()
    assert.is_true(sym:load(pid))
    local seen = {}
    for _, f in ipairs(funcs) do
      -- The vdso links at 0: its address is the mapping's start plus nm's value.
      local r = assert(sym:resolve(pid, start + f.addr + math.floor(f.size / 2)))
      assert.are.equal("[vdso]", r.dso)
      assert.are.equal("vdso", r.kind)
      assert.are.equal(math.floor(f.size / 2), r.offset)
      seen[r.name] = true
      local same = false
      for _, g in ipairs(funcs) do
        if g.addr == f.addr and g.name == r.name then same = true end
      end
      assert.is_true(same, r.name .. " is not at " .. f.name .. "'s address")
    end
  end)

  it("resolves C++ namespaces, templates and methods demangled as perf does (nm | c++filt -p)", function()
    local pid = run(dir .. "/cxx")
    local sym = perf.symbolizer()
    assert.is_true(sym:load(pid))
    check_functions(sym, pid, dir .. "/cxx", dir .. "/cxx", { min = 6 })
    -- And the names are the interesting ones, not only the C runtime's.
    local bias = load_bias(pid, dir .. "/cxx")
    local seen = {}
    for _, f in ipairs(nm_functions(dir .. "/cxx")) do
      local r = assert(sym:resolve(pid, bias + f.addr))
      seen[r.name] = r
    end
    assert.truthy(seen["outer::inner::Box::get"])
    assert.truthy(seen["outer::inner::twice<int>"])
    assert.truthy(seen["outer::inner::Box::as<long>"])
    assert.are.equal("_ZNK5outer5inner3Box3getEv", seen["outer::inner::Box::get"].mangled)
  end)

  it("resolves a stripped binary through its .gnu_debuglink debug file", function()
    assert.is_nil(util.sh("nm " .. q(dir .. "/s/prog")):match(" T main"))
    local pid = run(dir .. "/s/prog")
    local sym = perf.symbolizer()
    assert.is_true(sym:load(pid))
    check_functions(sym, pid, dir .. "/s/prog", dir .. "/pie")
  end)

  it("resolves a stripped binary through /usr/lib/debug/.build-id", function()
    if not util.is_root() then pending("needs root to write /usr/lib/debug") return end
    local bid = build_id(dir .. "/pie")
    local d = "/usr/lib/debug/.build-id/" .. bid:sub(1, 2)
    local dbg = d .. "/" .. bid:sub(3) .. ".debug"
    local existed = util.read(dbg) ~= nil
    util.sh("mkdir -p " .. d .. " && mkdir -p " .. dir .. "/b && cp " .. dir .. "/pie " ..
            dir .. "/b/prog && strip --strip-all " .. dir .. "/b/prog")
    if not existed then util.sh("cp " .. dir .. "/s/prog.debug " .. dbg) end
    local ok, err = pcall(function()
      local pid = run(dir .. "/b/prog")
      local sym = perf.symbolizer()
      assert.is_true(sym:load(pid))
      check_functions(sym, pid, dir .. "/b/prog", dir .. "/pie")
    end)
    if not existed then os.remove(dbg) end
    assert(ok, err)
  end)

  it("gives inline chains as addr2line -f -i -C", function()
    local pid = run(dir .. "/inl")
    local sym = perf.symbolizer()
    assert.is_true(sym:load(pid))
    local bias = load_bias(pid, dir .. "/inl")
    local hot
    for _, f in ipairs(nm_functions(dir .. "/inl")) do
      if f.names.hot then hot = f end
    end
    assert.truthy(hot)
    local vaddrs = {}
    for a = hot.addr, hot.addr + hot.size - 1 do vaddrs[#vaddrs + 1] = a end
    local ref = addr2line(dir .. "/inl", vaddrs)
    local bad, deep = {}, 0
    local rt = {}
    for i, va in ipairs(vaddrs) do rt[i] = bias + va end
    local all = sym:resolve_all(pid, rt, { inlines = true })
    for i, va in ipairs(vaddrs) do
      local r = all[i]
      assert.truthy(r, string.format("0x%x unresolved", va))
      -- addr2line's frames: the inlined functions, then the symbol at the call site.
      local got = {}
      for k, inl in ipairs(r.inlined or {}) do got[k] = inl end
      if r.inlined then
        assert.are.equal(r.file, r.inlined[1].file)
        assert.are.equal(r.line, r.inlined[1].line)
        got[#got + 1] = { name = r.name, file = r.call_file, line = r.call_line }
        deep = deep + 1
      else
        got[1] = { name = r.name, file = r.file, line = r.line }
      end
      for k, fr in ipairs(ref[i]) do
        local g = got[k] or {}
        if g.name ~= fr.name or g.file ~= fr.file or g.line ~= fr.line then
          bad[#bad + 1] = string.format("0x%x frame %d: %s %s:%s, addr2line %s %s:%s", va, k,
            tostring(g.name), tostring(g.file), tostring(g.line), fr.name, tostring(fr.file),
            tostring(fr.line))
          break
        end
      end
      if #got ~= #ref[i] then
        bad[#bad + 1] = string.format("0x%x: %d frames, addr2line %d", va, #got, #ref[i])
      end
    end
    assert.are.same({}, bad)
    assert.is_true(deep > 5, "no inlined code found in hot()")
    -- Single resolve agrees with the batch.
    local mid = math.floor(#rt / 2) + 1
    local one = assert(sym:resolve(pid, rt[mid], { inlines = true }))
    assert.are.same(all[mid], one)
  end)

  it("resolves kernel addresses as /proc/kallsyms says", function()
    local ks = util.read("/proc/kallsyms") or ""
    local text = {}
    local byaddr = {}
    for a, t, name in ks:gmatch("(%x+) ([tTwW]) (%S+)") do
      local addr = tonumber(a, 16)
      if addr ~= 0 then
        byaddr[a] = byaddr[a] or {}
        byaddr[a][name] = true
        text[#text + 1] = a
      end
    end
    if #text == 0 then pending("kallsyms addresses are hidden here") return end
    table.sort(text)
    local sym = perf.symbolizer()
    local bad, n = {}, 0
    -- A spread of symbols: every k-th, their start and their second byte
    -- (not when the next symbol starts there: retbleed_untrain_ret is one
    -- byte long, its second byte is retbleed_return_thunk).
    local step = math.max(1, math.floor(#text / 400))
    for i = 1, #text - 1, step do
      local a, b = text[i], text[i + 1]
      if a ~= b and #a == 16 and a:sub(9) ~= "ffffffff" then
        local one_byte = #b == 16 and b:sub(1, 8) == a:sub(1, 8) and
          tonumber(b:sub(9), 16) - tonumber(a:sub(9), 16) == 1
        for _, delta in ipairs(one_byte and { 0 } or { 0, 1 }) do
          -- As a string: LuaJIT's doubles cannot hold kernel addresses.
          local addr = "0x" .. a:sub(1, 8) .. string.format("%08x", tonumber(a:sub(9), 16) + delta)
          local r, err = sym:resolve(-1, addr)
          n = n + 1
          if not r then
            bad[#bad + 1] = a .. ": " .. tostring(err)
          elseif not byaddr[a][r.name] then
            bad[#bad + 1] = a .. ": " .. r.name .. " not in kallsyms there"
          elseif r.offset ~= delta then
            bad[#bad + 1] = a .. ": offset " .. tostring(r.offset)
          end
        end
      end
    end
    assert.is_true(n > 100)
    assert.are.same({}, bad)
    -- Module symbols carry the module's name as their dso.
    local ma, mname, mod = ks:match("(%x+) [tT] (%S+)\t%[(%S+)%]")
    if ma and tonumber(ma, 16) ~= 0 then
      local r = assert(sym:resolve(-1, "0x" .. ma))
      assert.are.equal("[" .. mod .. "]", r.dso)
      assert.truthy(byaddr[ma][r.name], mname)
    end
  end)

  it("says once, clearly, when kptr_restrict hides kernel addresses", function()
    local f = dir .. "/kallsyms0"
    util.write(f, "0000000000000000 T _stext\n0000000000000000 t foo\n0000000000000000 T bar\t[mod]\n")
    local sym = assert(perf.symbolizer{ kallsyms = f })
    local r, err = sym:resolve(-1, "0xffffffff81000000")
    assert.is_nil(r)
    assert.truthy(err:find("kptr_restrict", 1, true), err)
    local w = sym:warning()
    assert.truthy(w and w:find("kptr_restrict", 1, true))
    assert.is_nil(sym:warning())
    -- A file that cannot be read is an error at creation.
    local s2, e2, errno = perf.symbolizer{ kallsyms = dir .. "/missing" }
    assert.is_nil(s2)
    assert.truthy(e2:find("missing", 1, true))
    assert.are.equal(2, errno)
  end)

  it("tells an unprivileged user why kernel addresses do not resolve", function()
    if not util.is_root() then pending("needs root to drop to nobody") return end
    local env = "LUA_PATH=" .. q(package.path) .. " LUA_CPATH=" .. q(package.cpath) ..
      (util.preload and (" LD_PRELOAD=" .. q(util.preload)) or "")
    local hidden = util.sh("setpriv --reuid=nobody --regid=nogroup --clear-groups head -1 /proc/kallsyms")
      :match("^0+ ") ~= nil
    local ks = util.read("/proc/kallsyms")
    local a, name = ks:match("(%x+) [Tt] (schedule)\n")
    if not a then a, name = ks:match("(%x+) [Tt] (%S+)\n") end
    local code = "local s = require('perf').symbolizer(); local r, e = s:resolve(-1, '0x" .. a ..
      "'); print(r and r.name or e); print(s:warning())"
    local out, ok = util.sh("cd /tmp && setpriv --reuid=nobody --regid=nogroup --clear-groups env " ..
      env .. " " .. util.lua .. " -e " .. q(code))
    if not ok and out:find("module 'perf", 1, true) then
      pending("the build is not readable by nobody") return
    end
    assert.is_true(ok, out)
    if hidden then
      -- The reason on each failure, the warning once, both naming the sysctls.
      local reason, warning = out:match("^([^\n]*)\n([^\n]*)\n$")
      assert.truthy(reason and reason:find("kptr_restrict", 1, true), out)
      assert.truthy(reason:find("perf_event_paranoid", 1, true), out)
      assert.truthy(warning:find("shows every address as 0", 1, true), out)
    else
      assert.are.equal(name, out:match("^([^\n]*)"))
    end
  end)

  describe("perf maps", function()
    local pid, sym, map
    local function write_map(text)
      os.remove(map)
      util.write(map, text)
    end
    before_each(function()
      pid = run(dir .. "/pie")
      map = "/tmp/perf-" .. pid .. ".map"
      sym = perf.symbolizer()
      assert.is_true(sym:load(pid))
    end)
    after_each(function()
      os.remove(map)
      sym:close()
    end)

    it("names JIT code from /tmp/perf-PID.map and rereads it when it grows", function()
      write_map("7f0000001000 100 jitted_one\n7f0000001100 0x80 LuaJIT::trace 2\n")
      local r = assert(sym:resolve(pid, 0x7f0000001010))
      assert.are.equal("jitted_one", r.name)
      assert.are.equal(0x10, r.offset)
      assert.are.equal("jit", r.kind)
      assert.are.equal(map, r.dso)
      assert.are.equal("LuaJIT::trace 2", assert(sym:resolve(pid, 0x7f000000117f)).name)
      assert.is_nil(sym:resolve(pid, 0x7f0000001180))
      local f = assert(io.open(map, "a"))
      f:write("7f0000002000 40 appended_later\n")
      f:close()
      assert.are.equal("appended_later", assert(sym:resolve(pid, 0x7f0000002004)).name)
    end)

    it("rereads a map renamed over the old one, even a smaller one (perf.jitmap's rewrite)", function()
      write_map("7f0000001000 100 flushed_trace_with_a_long_name\n")
      assert.are.equal("flushed_trace_with_a_long_name", assert(sym:resolve(pid, 0x7f0000001010)).name)
      util.write(map .. ".new", "7f0000003000 40 new\n")
      assert(os.rename(map .. ".new", map))
      assert.are.equal("new", assert(sym:resolve(pid, 0x7f0000003004)).name)
    end)

    it("ignores a map owned by another user", function()
      if not util.is_root() then pending("needs root to chown") return end
      write_map("7f0000001000 100 planted\n")
      util.sh("chown nobody " .. q(map))
      local r, err = sym:resolve(pid, 0x7f0000001010)
      assert.is_nil(r)
      assert.truthy(err:find("owned by uid", 1, true), err)
    end)

    it("ignores a symlinked map", function()
      local target = dir .. "/target.map"
      util.write(target, "7f0000001000 100 planted\n")
      os.remove(map)
      util.sh("ln -s " .. q(target) .. " " .. q(map))
      local r, err = sym:resolve(pid, 0x7f0000001010)
      assert.is_nil(r)
      assert.truthy(err:find("symlink", 1, true), err)
    end)
  end)

  it("follows mmap, fork and exec from fed records", function()
    local sym = perf.symbolizer()
    local lib = dir .. "/libsym.so"
    local f = nm_functions(lib)[1]
    -- The text segment's file offset: map it where the records say.
    local off = tonumber(util.sh("readelf -lW " .. q(lib)):match("LOAD%s+0x(%x+)%s+0x%x+%s+0x%x+%s+0x%x+%s+0x%x+%s+R E"), 16)
    local vaddr_of_off = off -- shared objects: vaddr == offset for the text segment here
    local base = 0x7f1234500000
    assert.are.equal(1, sym:feed{ type = "MMAP2", pid = 100, tid = 100, start = base, len = 0x10000,
      pgoff = off, filename = lib, cpumode = "user" })
    local addr = base + (f.addr - vaddr_of_off)
    local r = assert(sym:resolve(100, addr))
    assert.truthy(f.names[r.name])
    -- Data maps and kernel maps are not code.
    assert.are.equal(0, sym:feed{ type = "MMAP2", pid = 100, start = 0x1000, len = 0x1000, pgoff = 0,
      filename = lib, data = true })
    assert.is_nil(sym:resolve(100, 0x1000))
    -- fork copies; exec keeps the maps until the new image's replace them,
    -- as perf's (a sample during the exec has the old image's stack)
    sym:feed{ { type = "FORK", pid = 101, ppid = 100, tid = 101, ptid = 100 },
              { type = "COMM", pid = 101, tid = 101, comm = "x", exec = false } }
    assert.are.equal(r.name, assert(sym:resolve(101, addr)).name)
    assert.are.equal(0, sym:feed{ type = "COMM", pid = 101, tid = 101, comm = "y", exec = true })
    assert.are.equal(r.name, assert(sym:resolve(101, addr)).name)
    sym:feed{ type = "MMAP2", pid = 101, tid = 101, start = base, len = 0x10000, pgoff = 0,
      filename = "/usr/bin/y", cpumode = "user" }
    assert.are.equal("/usr/bin/y", assert(sym:map(101, addr)).path)
    assert.are.equal(r.name, assert(sym:resolve(100, addr)).name)
    -- A later overlapping mmap replaces the old one.
    sym:feed{ type = "MMAP", pid = 100, tid = 100, start = base, len = 0x1000, pgoff = 0,
      filename = "//anon" }
    assert.are.equal("//anon", assert(sym:map(100, base)).path)
    -- A source with :records() is iterated.
    local src = { list = { { type = "MMAP2", pid = 200, start = base, len = 0x10000, pgoff = off,
      filename = lib } } }
    function src:records() local i = 0 return function() i = i + 1 return self.list[i] end end
    assert.are.equal(1, sym:feed(src))
    assert.are.equal(r.name, assert(sym:resolve(200, addr)).name)
    assert.has_error(function() sym:feed(42) end)
    assert.has_error(function() sym:feed{ type = "MMAP", pid = 1 } end)
  end)

  it("returns nil and a reason for unknown pids and addresses", function()
    local sym = perf.symbolizer()
    local r, err = sym:resolve(999999, 0x1000)
    assert.is_nil(r)
    assert.truthy(err:find("no maps for pid 999999", 1, true), err)
    local ok, e, errno = sym:load(2 ^ 30)
    assert.is_nil(ok)
    assert.truthy(e:find("/proc/", 1, true))
    assert.are.equal(3, errno) -- ESRCH
    assert.has_error(function() sym:resolve("x", 1) end)
    -- A path from a recording that is no regular file is refused, not opened
    -- (a FIFO would block).
    local fifo = dir .. "/fifo"
    assert(util.sh("mkfifo " .. q(fifo)))
    sym:feed{ type = "MMAP2", pid = 7, start = 0x400000, len = 0x1000, pgoff = 0, filename = fifo }
    local none, why = sym:resolve(7, 0x400010)
    assert.is_nil(none)
    assert.truthy(why:find("fifo", 1, true), why)
  end)

  -- The maps of a pid are kept sorted with room at both ends (libraries
  -- come top-down, synthesized lists bottom-up): against a plain model of
  -- the rules (a new map replaces what it overlaps, the rest of a cut map
  -- stays on either side), for maps fed top-down, bottom-up, shuffled and
  -- overlapping, then copied by a fork.
  it("keeps a pid's maps as a model of mmap's rules says, in any order of arrival", function()
    local page = 0x1000
    local function feed_all(sym, pid, list)
      for _, m in ipairs(list) do
        sym:feed{ type = "MMAP2", pid = pid, tid = pid, start = m.start, len = m.len, pgoff = 0,
          filename = m.path, cpumode = "user" }
      end
    end
    -- model: one owner per page
    local function model(list)
      local owner = {}
      for _, m in ipairs(list) do
        for a = m.start, m.start + m.len - 1, page do owner[a] = m.path end
      end
      return owner
    end
    local function check(sym, pid, owner, lo, hi)
      for a = lo, hi, page do
        local m = sym:map(pid, a + 0x10)
        local want = owner[a]
        if want then
          assert(m and m.path == want, string.format("pid %d page %x: %s, want %s", pid, a,
            m and m.path or "none", want))
        else
          assert(m == nil, string.format("pid %d page %x: %s, want none", pid, a, m and m.path or "?"))
        end
      end
    end
    local rnd = 12345
    local function random(n) rnd = (rnd * 1103515245 + 12345) % 2147483648 return rnd % n + 1 end
    local base, n = 0x7f0000000000, 300
    local orders = {
      down = function(i) return n - i + 1 end,
      up = function(i) return i end,
    }
    local pid = 1000
    for name, slot_of in pairs(orders) do
      local sym, list = perf.symbolizer(), {}
      for i = 1, n do
        local s = slot_of(i)
        list[#list + 1] = { start = base + (s - 1) * 4 * page, len = 2 * page, path = name .. s }
      end
      pid = pid + 1
      feed_all(sym, pid, list)
      check(sym, pid, model(list), base, base + n * 4 * page)
    end
    -- shuffled, with maps that cover several others and maps that cut one
    local sym, list = perf.symbolizer(), {}
    for i = 1, 2 * n do
      local s, len = random(n), page * random(3)
      if i % 25 == 0 then len = page * (8 + random(40)) end
      list[#list + 1] = { start = base + (s - 1) * 2 * page, len = len, path = "m" .. i }
    end
    feed_all(sym, 2000, list)
    local owner = model(list)
    check(sym, 2000, owner, base, base + (2 * n + 50) * page)
    -- a fork copies them all; the child's new maps leave the parent's alone
    sym:feed{ type = "FORK", pid = 2001, ppid = 2000, tid = 2001, ptid = 2000 }
    check(sym, 2001, owner, base, base + (2 * n + 50) * page)
    local more = {}
    for i = 1, 60 do
      more[#more + 1] = { start = base + (n - i) * 2 * page, len = page, path = "child" .. i }
    end
    feed_all(sym, 2001, more)
    local child = model(list)
    for _, m in ipairs(more) do child[m.start] = m.path end
    check(sym, 2001, child, base, base + (2 * n + 50) * page)
    check(sym, 2000, owner, base, base + (2 * n + 50) * page)
    -- forks share the maps until one side writes: the parent's new maps
    -- leave a child and a grandchild that never wrote alone, and theirs
    -- leave the parent's
    sym:feed{ type = "FORK", pid = 2002, ppid = 2000, tid = 2002, ptid = 2000 }
    sym:feed{ type = "FORK", pid = 2003, ppid = 2002, tid = 2003, ptid = 2002 }
    local pmore = {}
    for i = 1, 40 do
      pmore[#pmore + 1] = { start = base + (2 * i) * 2 * page, len = 3 * page, path = "parent" .. i }
    end
    feed_all(sym, 2000, pmore)
    local parent = model(list)
    for _, m in ipairs(pmore) do
      for a = m.start, m.start + m.len - 1, page do parent[a] = m.path end
    end
    check(sym, 2000, parent, base, base + (2 * n + 50) * page)
    check(sym, 2002, owner, base, base + (2 * n + 50) * page)
    check(sym, 2003, owner, base, base + (2 * n + 50) * page)
    feed_all(sym, 2003, more)
    check(sym, 2003, child, base, base + (2 * n + 50) * page)
    check(sym, 2002, owner, base, base + (2 * n + 50) * page)
    check(sym, 2001, child, base, base + (2 * n + 50) * page)
  end)

  it("demangles C++ names as perf prints them (c++filt -p) and Rust names as c++filt, without hashes", function()
    local names = {
      "_ZN5outer5inner5twiceIiEET_S2_", "_ZNK5outer5inner3Box3getEv", "_ZNSt6vectorIiSaIiEED2Ev",
      "_ZN4core3fmt5write17h0123456789abcdefE",
      "_ZN66_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$core..ops..drop..Drop$GT$4drop17h1b2c3d4e5f607182E",
      "_RNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal",
      "main", "_Znotmangled",
    }
    for _, n in ipairs(names) do
      local want = util.sh("c++filt -p " .. q(n)):gsub("\n$", "")
      if n:find("17h%x+E$") then
        -- perf drops the hash c++filt keeps
        want = util.sh("c++filt --format=rust " .. q(n)):gsub("\n$", ""):gsub("::h%x+$", "")
      elseif n:find("^_R") then
        -- and the crate disambiguators ([e28293b1aa0f68bd])
        want = util.sh("c++filt " .. q(n)):gsub("\n$", ""):gsub("%[%x+%]", "")
      end
      assert.are.equal(want, perf.demangle(n))
      if n:find("^_Z") and not n:find("17h%x+E$") then
        -- verbose: with the parameters, as c++filt prints them
        assert.are.equal((util.sh("c++filt " .. q(n)):gsub("\n$", "")), perf.demangle(n, true))
      end
    end
  end)

  it("names C++ and Rust (legacy and v0) frames of a perf.data file as perf script does", function()
    -- spec/progs/mangled.c: C functions under mangled names, so no C++ or
    -- Rust toolchain is needed
    local prog = util.root .. "/build/progs/mangled"
    local data = dir .. "/mangled.data"
    assert(util.sh("perf record -q -g -e cpu-clock -o " .. q(data) .. " " .. q(prog) .. " 100"))
    local function frames(out)
      local t = {}
      for name in out:gmatch("\n%s+%x+ ([^\n]-)%+0x%x+ %(" .. prog:gsub("%p", "%%%0") .. "%)") do
        t[#t + 1] = name
      end
      return t
    end
    local theirs = frames(util.sh("perf script -i " .. q(data) .. " 2>/dev/null"))
    local ours = frames(util.luaperf("script -g -i " .. q(data)))
    assert.is_true(#theirs > 100, #theirs .. " frames")
    assert.are.same(theirs, ours)
    local seen = {}
    for _, n in ipairs(ours) do seen[n] = true end
    assert.truthy(seen["outer::inner::twice<int>"])
    assert.truthy(seen["outer::inner::Box::get"])
    assert.truthy(seen["hashbrown::raw::RawTable<T,A>::reserve_rehash"])
    assert.truthy(seen["std::rt::lang_start_internal::{closure#0}::{closure#0}::{closure#1}"])
  end)

  -- Our user frames of every sample of a perf.data file against perf script's.
  local function compare_file(data)
    local f = assert(perf.open(data))
    local sym = perf.symbolizer()
    assert.is_true(sym:feed(f) >= 3)
    -- Our frames: each sample's user part of the callchain, resolved.
    local ours = {}
    for rec in f:records{ type = "SAMPLE" } do
      local names = {}
      local cc = rec.callchain or {}
      for i = (rec.callchain_kernel or 0) + 1, #cc do
        local r = sym:resolve(rec.pid, cc[i])
        if not (r and r.kind == "kernel") then
          names[#names + 1] = r and (r.name .. " (" .. r.dso .. ")") or "[unknown]"
        end
      end
      ours[#ours + 1] = table.concat(names, "\n")
    end
    f:close()
    sym:close()
    -- perf script's: the same samples, in the same order, frames as "sym (dso)".
    local script = util.perf("script -i " .. q(data) .. " -F ip,sym,dso 2>/dev/null")
    local theirs = {}
    for block in (script .. "\n\n"):gmatch("(.-)\n\n+") do
      local names = {}
      for name, dso in block:gmatch("%x+ ([^\n]-) %(([^\n]-)%)") do
        local kernel = dso:match("^%[") and dso ~= "[vdso]" and dso ~= "[unknown]"
        if not kernel then
          names[#names + 1] = name == "[unknown]" and "[unknown]" or (name .. " (" .. dso .. ")")
        end
      end
      if block:find("%S") then theirs[#theirs + 1] = table.concat(names, "\n") end
    end
    assert.is_true(#ours > 100, "only " .. #ours .. " samples")
    assert.are.equal(#theirs, #ours)
    local bad, frames = {}, 0
    for i = 1, #ours do
      if ours[i] ~= theirs[i] and #bad < 5 then
        bad[#bad + 1] = "sample " .. i .. ":\n" .. ours[i] .. "\n-- perf script:\n" .. theirs[i]
      end
      for _ in ours[i]:gmatch("[^\n]+") do frames = frames + 1 end
    end
    assert.are.same({}, bad)
    assert.is_true(frames > #ours)
    return ours
  end

  it("symbolizes the user frames of a perf record -g file as perf script does", function()
    if not perf.open then pending("perf.open (the perf.data reader) is not built") return end
    local data = dir .. "/g.data"
    local out, ok = util.perf("record -q -g -F 1000 -e cpu-clock -o " .. q(data) .. " -- " ..
      dir .. "/withlib 400 exit")
    assert(ok, out)
    compare_file(data)
  end)

  it("resolves a binary rebuilt since the recording through perf's build-id cache", function()
    if not perf.open then pending("perf.open (the perf.data reader) is not built") return end
    local bin, data = dir .. "/rebuilt", dir .. "/r.data"
    local function build(opt)
      local out, ok = util.sh("cc " .. opt .. " -g -fno-omit-frame-pointer -fno-inline -o " ..
        bin .. " " .. dir .. "/prog.c")
      assert(ok, out)
    end
    build("-O1")
    local before = build_id(bin)
    local out, ok = util.perf("record -q -g -F 1000 -e cpu-clock -o " .. q(data) .. " -- " ..
      bin .. " 300 exit")
    assert(ok, out)
    build("-O0 -DREBUILT=1")
    assert.are_not.equal(before, build_id(bin))
    local cached = (os.getenv("HOME") or "") .. "/.debug/.build-id/" .. before:sub(1, 2) .. "/" ..
      before:sub(3) .. "/elf"
    if not util.read(cached) then pending("perf kept no build-id cache copy") return end
    local ours = compare_file(data)
    local found = false
    for _, s in ipairs(ours) do if s:find("burn_inner", 1, true) then found = true break end end
    assert.is_true(found, "no sample in burn_inner")
  end)

  it("symbolizes the user frames of a live perf record -g -p as perf script does", function()
    -- Run a workload, profile it while it burns CPU, then resolve once stopped.
    local out = util.sh(dir .. "/withlib 1500 >/dev/null 2>&1 & echo $!")
    pid = assert(tonumber(out:match("(%d+)%s*$")))
    pids[#pids + 1] = pid
    local data = dir .. "/perf.data"
    local rec, ok = util.perf("record -q -g -F 2000 -e cpu-clock -p " .. pid .. " -o " .. q(data) ..
      " -- sleep 0.7")
    assert(ok, rec)
    -- Wait for it to stop itself (its 1.5 s of CPU can take longer on a busy machine).
    for _ = 1, 3000 do
      local st = util.read("/proc/" .. pid .. "/stat") or ""
      if st:match("^%d+ %b() T") then break end
      sleep(0.01)
    end
    local script = util.perf("script -i " .. q(data) .. " -F ip,sym,dso 2>/dev/null")
    local sym = perf.symbolizer()
    assert.is_true(sym:load(pid))
    -- perf script prints frames map-relative (file offsets): back to addresses
    -- through the stopped process's own maps.
    local maps = {}
    for l in util.read("/proc/" .. pid .. "/maps"):gmatch("[^\n]+") do
      local s, e, perms, off, path = l:match("^(%x+)%-(%x+) (%S+) (%x+) %S+ %d+%s+(/.*)$")
      if s and perms:find("x") then
        maps[#maps + 1] = { start = tonumber(s, 16), size = tonumber(e, 16) - tonumber(s, 16),
          off = tonumber(off, 16), path = path }
      end
    end
    local function absolute(rel, path)
      for _, m in ipairs(maps) do
        if m.path == path and rel >= m.off and rel < m.off + m.size then
          return m.start + rel - m.off
        end
      end
    end
    local frames, bad = 0, {}
    for ip, name, dso in script:gmatch("\n%s*(%x+) ([^\n]-) %(([^\n]-)%)") do
      if dso:sub(1, 1) == "/" then
        local addr = absolute(tonumber(ip, 16), dso)
        frames = frames + 1
        local r = addr and sym:resolve(pid, addr)
        local got = r and r.name or "[unknown]"
        if got ~= name or (r and r.dso ~= dso) then
          bad[#bad + 1] = string.format("%s: %s (%s), perf script %s (%s)", ip, got,
            tostring(r and r.dso), name, dso)
        end
      end
    end
    assert.is_true(frames > 20, "perf script gave only " .. frames .. " user frames")
    assert.are.same({}, bad)
  end)
end)
