-- Shared helpers for the specs: run commands, read files, locate the build.
local M = {}

M.root = os.getenv("PWD")
M.lua = os.getenv("LUAPERF_LUA") or "lua5.4"

function M.cpath_dir()
  return os.getenv("LUAPERF_CPATH") or (M.root .. "/build")
end

-- Quotes one argument for /bin/sh.
function M.q(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- The sanitizer runtime preloaded into the interpreter (make test-asan),
-- given back to commands that load our module and kept from the others.
M.preload = os.getenv("LUAPERF_PRELOAD")

-- The children the specs start find the module as the runner did: spec/run.sh
-- exports the paths; under a bare `busted` (.busted) they are exported here.
local env = ""
if not (os.getenv("LUA_CPATH") or ""):find(M.cpath_dir(), 1, true) then
  env = string.format("LUA_PATH=%s LUA_CPATH=%s; export LUA_PATH LUA_CPATH; ",
    M.q(M.root .. "/lua/?.lua;" .. M.root .. "/lua/?/init.lua;" .. M.root .. "/spec/?.lua;;"),
    M.q(M.cpath_dir() .. "/?.so;;"))
end

-- Runs a shell command; returns its stdout+stderr, success, exit code.
local function sh_once(cmd)
  local f = assert(io.popen(env .. "unset LD_PRELOAD; (" .. cmd .. ") 2>&1; echo \"__rc=$?\""))
  local out = f:read("a")
  f:close()
  local rc = tonumber(out:match("__rc=(%d+)%s*$"))
  out = out:gsub("__rc=%d+%s*$", "")
  return out, rc == 0, rc
end
function M.sh(cmd)
  local out, ok, rc = sh_once(cmd)
  -- make test-asan: LeakSanitizer's exit scan sometimes dies in its own
  -- tracer on this kernel ("Tracer caught signal 11", a bogus dynamic-TLS
  -- range), before it reports anything: not a finding of the program's,
  -- so the command runs once more.  A leak report is never retried.
  local function tracer_died()
    return not ok and M.preload and out:find("LeakSanitizer has encountered a fatal error", 1, true) and
      not out:find("detected memory leaks", 1, true)
  end
  if tracer_died() then
    out, ok, rc = sh_once(cmd)
  end
  -- Twice: some programs (a 10 kHz signal sampler) meet it at every exit;
  -- the leak check cannot run for them, the address and UB checks still do.
  if tracer_died() then
    out, ok, rc = sh_once("export ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:detect_leaks=0\"; " .. cmd)
  end
  return out, ok, rc
end

-- The environment a child that loads our module needs (bin/luaperf, an
-- interpreter running a script): under make test-asan the sanitizer
-- runtime, since the module it loads is the sanitized one (LUAPERF_CPATH,
-- which spec/run.sh exports).
function M.preload_env()
  return M.preload and ("LD_PRELOAD=" .. M.q(M.preload) .. " ") or ""
end

-- Runs bin/luaperf with the interpreter under test.
-- env (optional): variables to set, "NAME=value " words.
function M.luaperf(args, env)
  return M.sh(M.preload_env() .. (env or "") .. "LUAPERF_LUA=" .. M.lua .. " " .. M.root .. "/bin/luaperf " .. args)
end

-- bin/luaperf with stdout and stderr apart: stdout, success, stderr, exit code.
local errdir
function M.luaperf_split(args, env)
  errdir = errdir or M.tmpdir()
  local out, ok, rc, err
  -- M.sh's retries when LeakSanitizer's tracer dies at exit, looking at
  -- stderr, which M.sh does not see here
  for try = 1, 3 do
    local extra = try == 3 and "ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 " or ""
    out, ok, rc = M.luaperf(args .. " 2>" .. errdir .. "/stderr", extra .. (env or ""))
    err = M.read(errdir .. "/stderr") or ""
    if ok or not M.preload or not err:find("LeakSanitizer has encountered a fatal error", 1, true) or
       err:find("detected memory leaks", 1, true) then
      break
    end
  end
  return out, ok, err, rc
end

-- perf's stdout (stderr dropped) and success.
function M.perf_stdout(args)
  local out, ok = M.sh("perf " .. args .. " 2>/dev/null")
  return out, ok
end

-- The lines of a text, without the trailing empty ones.
function M.lines(s)
  local t = {}
  for l in (s .. "\n"):gmatch("([^\n]*)\n") do t[#t + 1] = l end
  while #t > 0 and t[#t] == "" do t[#t] = nil end
  return t
end

-- System calls whose counts depend on how the command was started, not on
-- the tracer: a shell asks and sets the disposition of each signal it
-- finds ignored, and a command luaperf starts (it catches SIGINT, as perf
-- does) finds SIGINT at default where under strace it inherits the
-- caller's (ignored in a background job, as a CI runner may start us);
-- the preloaded sanitizer runtime (make test-asan) adds its own handlers.
-- Counted against strace, they are left out.
M.signal_setup_calls = { rt_sigaction = true, rt_sigprocmask = true }

-- Our line against perf script's: equal, or equal but for a PLT slot.
-- perf 6.1 (Debian 12's) adds PLT symbols after sizing the others, so the
-- executable's zero-size _init stretches over a short .plt and wins the
-- lookup: it prints _init+0x36 where perf 6.3 and later, and we, print
-- atol@plt+0x6.  A sample landing in a PLT slot is rare; such a line is
-- compared with both names masked (flame_spec counts such stacks as perf's).
function M.same_line_as_perf(ours, perf_line)
  if ours == perf_line then return true end
  if ours == nil or perf_line == nil then return false end
  local a = ours:gsub("[%w_.]*@plt%f[^%w_.]", "PLT"):gsub("PLT%+0x%x+", "PLT")
  local b = perf_line:gsub("%f[%w_]_init%f[^%w_]", "PLT"):gsub("PLT%+0x%x+", "PLT")
  return a ~= ours and a == b
end

-- perf report --stdio rows (children mode or not): { [key columns] = { pcts } },
-- the key columns joined by "|", perf's padding dropped.
function M.report_rows(text)
  local rows = {}
  for line in text:gmatch("[^\n]+") do
    if not line:match("^#") then
      local pcts, rest = {}, line
      while true do
        local p, r = rest:match("^%s*([%d%.]+)%%(.*)$")
        if not p then break end
        pcts[#pcts + 1] = tonumber(p)
        rest = r
      end
      if #pcts > 0 and rest:match("%S") then
        local key = rest:gsub("^%s+", ""):gsub("%s+$", ""):gsub("%s%s+", "|")
        -- perf's Pid:Command is "%7d:%s": no blank after the colon either side
        key = key:gsub("(%d+):%s*", "%1:")
        -- rows that print alike (perf cuts commands to the column's width:
        -- pyenv-version-file and pyenv-version-name) add up
        local had = rows[key]
        if had then
          for i = 1, #pcts do pcts[i] = pcts[i] + (had[i] or 0) end
        end
        rows[key] = pcts
      end
    end
  end
  return rows
end

-- Every row of one in the other, each percentage within 0.05 points;
-- skip(key), when given, leaves rows out of the comparison on both sides.
function M.same_report_rows(ours, theirs, skip)
  local a, b = M.report_rows(ours), M.report_rows(theirs)
  if skip then
    for k in pairs(a) do if skip(k) then a[k] = nil end end
    for k in pairs(b) do if skip(k) then b[k] = nil end end
  end
  local n = 0
  for k, v in pairs(b) do
    n = n + 1
    local w = a[k]
    assert(w, "perf's row '" .. k .. "' missing from ours:\n" .. ours)
    assert(#v == #w, k .. ": " .. #w .. " columns, perf has " .. #v)
    for i = 1, #v do
      assert(math.abs(v[i] - w[i]) <= 0.05, string.format("%s: %.2f%% vs perf's %.2f%%", k, w[i], v[i]))
    end
  end
  for k in pairs(a) do
    assert(b[k], "our row '" .. k .. "' is not perf's:\n" .. theirs)
  end
  return b, n
end

-- luaperf report and perf report of one file with the same arguments.
function M.report_both(data, args)
  local ours, ok = M.luaperf("report -i " .. data .. " --stdio " .. args)
  assert(ok, ours)
  local theirs, pok = M.perf("report -i " .. data .. " --stdio -g none " .. args .. " 2>/dev/null")
  assert(pok, theirs)
  return ours, theirs
end

-- Little-endian integers of perf.data bytes, for specs that build or patch
-- files: le(v, n) is v as n bytes; le_at(s, off, n) reads n bytes of s
-- from the 0-based offset off.
function M.le(v, n)
  local t = {}
  for i = 1, n do
    t[i] = string.char(v % 256)
    v = math.floor(v / 256)
  end
  return table.concat(t)
end

function M.le_at(s, off, n)
  local v = 0
  for i = n, 1, -1 do v = v * 256 + s:byte(off + i) end
  return v
end

-- A command line for a program that luaperf starts (record -- cmd): under
-- the sanitizer build the preloaded runtime stays with luaperf, not with
-- the program, so its samples are the program's own.
function M.target(cmdline)
  if M.preload then return "env -u LD_PRELOAD " .. cmdline end
  return cmdline
end

-- The same for an argv (perf.stat's run=, a session's cmd=): env -u
-- LD_PRELOAD execs the program under the same pid without the runtime.
function M.target_argv(argv)
  if not M.preload then return argv end
  local out = { "env", "-u", "LD_PRELOAD" }
  for i = 1, #argv do out[#out + 1] = argv[i] end
  return out
end

-- Faults `mib` MiB of fresh anonymous pages in this process: 256 minor
-- faults per MiB, whatever the allocator or the host does.  A big Lua
-- string is no such workload: glibc's malloc hands back heap blocks an
-- earlier test faulted in (CI: 8 faults for a 33 MB string.rep), and
-- with transparent huge pages on, one fault maps 2 MB.  The C function
-- takes no argument (so it needs no Lua headers): 1 MiB per call,
-- mapped, kept from huge pages, written page by page and unmapped.
local fault_1mib
function M.fresh_pages(mib)
  if not fault_1mib then
    local so = M.cc([[
#include <sys/mman.h>
#include <stddef.h>
int fault_1mib(void *L);
int fault_1mib(void *L)
{
  (void)L;
  size_t len = 1 << 20;
  volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 0;
  madvise((void *)p, len, MADV_NOHUGEPAGE);
  for (size_t off = 0; off < len; off += 4096) p[off] = 1;
  munmap((void *)p, len);
  return 0;
}
]], "-O1 -shared -fPIC", "fault.so")
    fault_1mib = assert(package.loadlib(so, "fault_1mib"))
  end
  for _ = 1, mib do fault_1mib() end
end

function M.read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

function M.write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

function M.tmpdir()
  local out = M.sh("mktemp -d /tmp/luaperf-spec.XXXXXX")
  return (out:gsub("%s+$", ""))
end

-- Builds a C program from source text; returns the binary's path.
function M.cc(src, flags, name)
  local dir = M.tmpdir()
  name = name or "prog"
  M.write(dir .. "/" .. name .. ".c", src)
  local out, ok = M.sh(string.format("cc %s -o %s/%s %s/%s.c -lpthread -lm",
    flags or "-O1 -g", dir, name, dir, name))
  assert(ok, out)
  return dir .. "/" .. name
end

-- Writes src to path and runs it in a child interpreter of the kind under
-- test (under make test-asan with the sanitizer runtime first, as for the
-- runner); returns its output, asserting success.
function M.run_lua(path, src)
  M.write(path, src)
  local pre = M.preload_env()
  local out, ok = M.sh(pre .. M.lua .. " " .. M.q(path))
  assert(ok, out)
  return out
end

-- key=value fields of a child's output (tab- or line-separated).
function M.fields(out)
  local t = {}
  for k, v in out:gmatch("([%w_%.]+)=([^\t\n]*)") do t[k] = tonumber(v) or v end
  return t
end

-- Builds a C program (a harness or a C benchmark) against the core objects
-- of the build under test (util.cpath_dir(): the sanitizer build in make
-- test-asan, whose objects then need the sanitizer runtimes); returns the
-- binary's path.
function M.build_with_core(src, name, cflags)
  local dir = M.tmpdir()
  local bin = dir .. "/" .. name
  local out, ok = M.sh(string.format(
    "ar rcs %s/core.a %s/obj/core/*/*.o && " ..
    "san=$(nm %s/core.a 2>/dev/null | grep -q __asan_ && echo -fsanitize=address,undefined); " ..
    "cc %s $san -D_GNU_SOURCE -I%s/csrc/core -o %s %s %s/core.a " ..
    "$(pkg-config --libs libelf libdw libzstd libtraceevent) -lz -liberty -lm",
    dir, M.cpath_dir(), dir, cflags or "-O1 -g", M.root, bin, M.q(src), dir))
  assert(ok, out)
  return bin
end

function M.is_root()
  local out = M.sh("id -u")
  return out:match("^0") ~= nil
end

-- Running as nobody.  The checkout may sit where nobody cannot enter (a
-- 0700 home, a fresh mktemp -d): a copy of the Lua modules, both builds
-- and bin/luaperf is made once per run under /tmp, readable by all.
local nobody_tree
function M.nobody_tree()
  if nobody_tree then return nobody_tree end
  local dir = M.tmpdir()
  local rel = M.cpath_dir():sub(1, #M.root + 1) == M.root .. "/" and M.cpath_dir():sub(#M.root + 2)
    or "build"
  local out, ok = M.sh(table.concat({
    "mkdir -p " .. M.q(dir .. "/" .. rel .. "/perf") .. " " .. M.q(dir .. "/bin"),
    "cp -r " .. M.q(M.root .. "/lua") .. " " .. M.q(dir .. "/"),
    "cp " .. M.q(M.cpath_dir() .. "/perf/core.so") .. " " .. M.q(dir .. "/" .. rel .. "/perf/"),
    "cp " .. M.q(M.root .. "/bin/luaperf") .. " " .. M.q(dir .. "/bin/"),
    "chmod -R a+rX " .. M.q(dir),
  }, " && "))
  assert(ok, out)
  nobody_tree = { dir = dir, cpath = dir .. "/" .. rel,
    env = string.format("HOME=%s LUAPERF_LUA=%s LUA_PATH='%s/lua/?.lua;%s/lua/?/init.lua;;' LUA_CPATH='%s/%s/?.so;;'",
      dir, M.lua, dir, dir, dir, rel) }
  return nobody_tree
end

-- The shell prefix that runs a command as nobody, in the nobody tree, with
-- its module paths (and the sanitizer runtime under make test-asan).
function M.as_nobody_prefix()
  local t = M.nobody_tree()
  return "cd " .. M.q(t.dir) .. " && setpriv --reuid=nobody --regid=nogroup --clear-groups env " ..
    t.env .. " " .. (M.preload and ("LD_PRELOAD=" .. M.q(M.preload) .. " ") or "")
end

-- stackcollapse-perf.pl's folding of `perf script` text, in Lua: the
-- command as the root frame, frames root first, "+0x.." offsets dropped,
-- an [unknown] symbol named after its object when the object is known.
function M.fold_perf_script(text)
  local counts = {}
  local comm, stack
  local function flush()
    if comm and stack and #stack > 0 then
      local parts = { (comm:gsub(" ", "_")) }
      for i = #stack, 1, -1 do parts[#parts + 1] = stack[i] end
      local k = table.concat(parts, ";")
      counts[k] = (counts[k] or 0) + 1
    end
    comm, stack = nil, nil
  end
  for line in (text .. "\n"):gmatch("(.-)\n") do
    if line:match("^%S") then
      flush()
      comm = line:match("^(.-)%s+%d+/?%d*%s+")
      stack = {}
    elseif not line:match("%S") then
      flush()
    elseif stack then
      local rest = line:match("^%s*%x+%s+(.+)$")
      if rest then
        local func, mod = rest:match("^(.-) %((%S*)%)$")
        if not func then func, mod = rest, "" end
        func = func:gsub("%+0x%x+$", "")
        if func == "[unknown]" and mod ~= "[unknown]" and mod ~= "" then
          func = "[" .. mod:match("([^/]*)$") .. "]"
        end
        stack[#stack + 1] = func
      end
    end
  end
  flush()
  return counts
end

-- Folded text (ours or stackcollapse's) as { [stack] = count }.
function M.parse_folded(text)
  local counts = {}
  for line in text:gmatch("[^\n]+") do
    local k, n = line:match("^(.*) (%d+)$")
    assert(k, "bad folded line: " .. line)
    counts[k] = (counts[k] or 0) + tonumber(n)
  end
  return counts
end

-- perf itself (Debian's linux-perf), the reference.
function M.perf(args)
  return M.sh("perf " .. args)
end

-- A perf recording (perf record -g) of a mixed workload: python3's json,
-- build/progs/shaped, ls over /usr/lib.  extra: more perf record options.
function M.record_mixed(path, extra)
  return M.perf("record -q -g " .. (extra or "") .. "-F 2999 -o " .. path .. " -- sh -c " .. M.q(
    "python3 -c 'import json; print(sum(len(json.dumps(list(range(i % 300)))) for i in range(20000)))'; " ..
    "build/progs/shaped 300; ls -lR /usr/lib > /dev/null") .. " > /dev/null 2>&1")
end

-- A recording (perf record -g) of a program that loads libfirst.so, spins
-- in it, unloads it and loads libsecond.so, which the loader puts at the
-- same address: the same addresses name one object, then the other.
-- Returns the file, or nil and why the second library went elsewhere.
function M.record_library_swap(dir)
  local spin = "volatile unsigned long sink; void spin(unsigned long n) { " ..
    "for (unsigned long i = 0; i < n; i++) sink += i * 3; }\n"
  M.write(dir .. "/first.c", spin)
  M.write(dir .. "/second.c", spin)
  M.write(dir .. "/main.c", [[
    #include <dlfcn.h>
    #include <stdio.h>
    #include <unistd.h>
    static void run(const char *lib) {
      void *h = dlopen(lib, RTLD_NOW);
      if (!h) { fprintf(stderr, "%s\n", dlerror()); _exit(2); }
      ((void (*)(unsigned long))dlsym(h, "spin"))(60000000UL);
      dlclose(h);
    }
    int main(int argc, char **argv) { (void)argc; run(argv[1]); run(argv[2]); return 0; }
  ]])
  local data = dir .. "/swap.data"
  local out, ok = M.sh(string.format("cd %s && cc -O1 -fPIC -shared -o libfirst.so first.c && " ..
    "cc -O1 -fPIC -shared -o libsecond.so second.c && cc -O1 -o main main.c -ldl && " ..
    "perf record -q -g -F 4999 -o %s ./main %s/libfirst.so %s/libsecond.so >/dev/null 2>&1",
    M.q(dir), M.q(data), dir, dir))
  assert(ok, out)
  local maps = M.sh("perf script -i " .. M.q(data) .. " --show-mmap-events 2>/dev/null")
  local a = maps:match("MMAP2? %d+/%d+: %[(0x%x+)%(0x%x+%)[^\n]*libfirst%.so")
  local b = maps:match("MMAP2? %d+/%d+: %[(0x%x+)%(0x%x+%)[^\n]*libsecond%.so")
  if not a or a ~= b then
    return nil, "the second library was not loaded where the first was (" .. tostring(a) ..
      ", " .. tostring(b) .. ")"
  end
  return data
end

-- { first, then the files of ../shared/perfdata-corpus named that are there }.
function M.with_corpus(first, names)
  local list = { first }
  for _, name in ipairs(names) do
    local path = "../shared/perfdata-corpus/" .. name
    local f = io.open(path, "rb")
    if f then f:close(); list[#list + 1] = path end
  end
  return list
end

return M
