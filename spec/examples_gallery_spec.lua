-- examples/seeds/*.lua (the reference texts' experiments) and
-- examples/recipes/*.lua (the classic tools): each runs as a user runs it,
-- `INTERP examples/.../NAME.lua`, under the interpreter under test, and its
-- output has the shape the text shows; each is at most 30 lines of Lua
-- (comments and blank lines aside) and has its line in examples/README.md.
local util = require "util"

local function run(rel, args)
  local out, ok = util.sh("cd " .. util.q(util.root) .. " && env -u LUA_PATH -u LUA_CPATH " .. util.lua .. " " .. rel .. " " .. (args or ""))
  assert(ok, rel .. " failed:\n" .. out)
  return out
end

local function lua_lines(path)
  local n, block = 0, false
  for line in io.lines(path) do
    if block then block = not line:find("]]", 1, true)
    elseif line:match("^%s*%-%-%[=*%[") then block = not line:find("]]", 1, true)
    elseif line:match("%S") and not line:match("^%s*%-%-") then n = n + 1 end
  end
  return n
end

local function scripts(dir)
  local list = {}
  for name in util.sh("ls " .. util.q(util.root .. "/examples/" .. dir)):gmatch("(%S+)%.lua") do list[#list + 1] = name end
  return list
end

local function sysctl(name) return tonumber(util.read("/proc/sys/kernel/" .. name)) end

describe("examples gallery", function()
  it("has seeds and recipes of at most 30 lines of Lua each, each listed in examples/README.md", function()
    local readme = assert(util.read(util.root .. "/examples/README.md"))
    local seeds, recipes = scripts("seeds"), scripts("recipes")
    assert.is_true(#seeds >= 9, #seeds .. " seeds")
    assert.is_true(#recipes >= 9, #recipes .. " recipes")
    for _, d in ipairs{ { "seeds", seeds }, { "recipes", recipes } } do
      for _, name in ipairs(d[2]) do
        local rel = "examples/" .. d[1] .. "/" .. name .. ".lua"
        local n = lua_lines(util.root .. "/" .. rel)
        assert.is_true(n <= 30, rel .. ": " .. n .. " lines of Lua")
        assert.truthy(readme:find("(" .. d[1] .. "/" .. name .. ".lua)", 1, true), rel .. " is not in examples/README.md")
      end
    end
    assert.truthy(util.read(util.root .. "/examples/seeds/README.md"))
  end)

  it("the line count leaves comments and blank lines out", function()
    local dir = util.tmpdir()
    util.write(dir .. "/x.lua", "-- a\n\n  -- b\n--[[ c\nd ]]\nlocal x = 1 -- e\nprint(x)\n")
    assert.equal(2, lua_lines(dir .. "/x.lua"))
  end)
end)

describe("examples/seeds", function()
  it("counting: the text's hardware events are <not supported> (ENOENT), software ones counted with enabled = running", function()
    local out = run("examples/seeds/counting.lua", "2000000")
    for _, ev in ipairs{ "cycles", "instructions", "branches", "branch-misses", "cache-misses" } do
      assert.truthy(out:find("<not supported>%s+" .. ev:gsub("%-", "%%-") .. "%s+errno=2"), ev .. ":\n" .. out)
    end
    local rows = 0
    for count, ev, en, run_ns in out:gmatch("\n%s*(%d+)%s+(%S+)%s+enabled=(%d+) ns running=(%d+) ns") do
      rows = rows + 1
      assert.equal(en, run_ns, ev)
      if ev == "task-clock" then assert.is_true(tonumber(count) > 1e6, out) end
    end
    assert.equal(7, rows, out)
  end)

  it("multiplex: software events never rotate; four breakpoint slots, the fifth refused (ENOSPC)", function()
    local out = run("examples/seeds/multiplex.lua", "6")
    assert.truthy(out:find("ceiling cycles%s+none"), out)
    assert.truthy(out:find("ceiling cpu%-clock%s+6\n"), out)
    assert.truthy(out:find("ceiling mem:0x1000:rw%s+4\n"), out)
    assert.truthy(out:find(" 5 asked:.-ENOSPC at open"), out)
  end)

  it("max_freq: the bisection finds the kernel's maximum, the sysctl", function()
    local out, before
    for _ = 1, 3 do          -- another run may lower the sysctl for a moment: measure again then
      before = sysctl("perf_event_max_sample_rate")
      out = run("examples/seeds/max_freq.lua")
      if before == sysctl("perf_event_max_sample_rate") then break end
    end
    assert.equal(before, tonumber(out:match("max accepted sample_freq = (%d+) Hz")), out)
    assert.equal(before + 1, tonumber(out:match("EINVAL at (%d+)")), out)
    assert.truthy(out:find("perf_event_max_sample_rate = " .. before, 1, true), out)
    assert.truthy(out:find("max_samples_per_tick = %d+"), out)
  end)

  it("ring_drain: the samples fit in the bytes drained; samples x period within 15% of the counter", function()
    local out = run("examples/seeds/ring_drain.lua")
    assert.truthy(out:find("mmap: 9 pages = 36864 bytes", 1, true), out)
    local bytes, stats, n = out:match("drained: (%d+) bytes = data_head %- data_tail %(stats.bytes (%d+)%): (%d+) PERF_RECORD_SAMPLE, 0 PERF_RECORD_LOST")
    assert.truthy(bytes, out)
    assert.equal(bytes, stats)
    assert.is_true(tonumber(n) >= 20, out)
    local size = tonumber(out:match("PERF_RECORD_SAMPLE size=(%d+)"))
    assert.is_true(tonumber(bytes) >= size * tonumber(n), out)      -- + MMAP records (LuaJIT's code)
    local pct = tonumber(out:match("%((%d+%.%d)%%%)\n"))
    assert.is_true(pct > 85 and pct < 115, out)
    local none = tonumber(out:match("callchain none%s+record size%s+(%d+)"))
    local fp = tonumber(out:match("callchain fp%s+record size%s+(%d+)"))
    local d4 = tonumber(out:match("callchain dwarf,4096 record size%s+(%d+)"))
    local d8 = tonumber(out:match("callchain dwarf%s+record size%s+(%d+)"))
    assert.is_true(none < fp and fp < none + 8 * 128 and d4 > 4096 and d8 > 8192, out)
  end)

  it("throttle: THROTTLE records at a lowered rate (put back after), LOST without THROTTLE for a small ring", function()
    local rate = sysctl("perf_event_max_sample_rate")
    local out = run("examples/seeds/throttle.lua")
    assert.equal(rate, sysctl("perf_event_max_sample_rate"))
    local function row(pat)
      local r = { out:match(pat .. "[^\n]-%s(%d+)%s+(%d+)%s+(%d+)%s+(%d+)%s+%d+\n") }
      assert.equal(4, #r, pat .. ":\n" .. out)
      return tonumber(r[1]), tonumber(r[2]), tonumber(r[3]), tonumber(r[4])
    end
    if util.is_root() then
      local samples, th, unth, lost = row("max_sample_rate %d+ %(%d+/tick%)")
      assert.is_true(th > 0 and unth > 0 and samples > 0, out)
      assert.equal(0, lost)
    end
    local _, th, _, lost = row("1 page, drained")
    assert.equal(0, th)
    assert.is_true(lost > 0, out)
  end)

  it("stacks: the fp stack lacks parse_row, the omitted one reaches no main, DWARF has parse_row", function()
    local out = run("examples/seeds/stacks.lua", "100")
    assert.truthy(out:find("parse_row as a caller%s+no%s+no%s+yes"), out)
    local fp, nofp, dwarf = out:match("Samples reaching main%s+%d+ %((%d+)%%%)%s+%d+ %((%d+)%%%)%s+%d+ %((%d+)%%%)")
    assert.is_true(tonumber(fp) >= 95 and tonumber(nofp) <= 5 and tonumber(dwarf) >= 90, out)
    local fp_part = out:match("%-%- fp build.-\n\n")
    assert.truthy(fp_part:find("server_loop;do_query;leaf_alloc", 1, true), out)
    assert.falsy(fp_part:find("parse_row;", 1, true), out)
    assert.truthy(out:match("omitted, %-%-call%-graph dwarf %(folded%)(.*)$"):find("do_query;parse_row;leaf_alloc", 1, true), out)
  end)

  it("differential: normalised to profile 2, leaf_hash red through do_query and blue through server_loop", function()
    local out = run("examples/seeds/differential.lua", "100")
    -- Totals are not compared: leaf_alloc's time swings with the machine's
    -- load as much as the regression adds; the share of leaf_hash is what grows.
    local nb, na = out:match("before (%d+) samples, after (%d+)")
    assert.is_true(tonumber(nb) > 0 and tonumber(na) > 0, out)
    local share_b, share_a = out:match("([%d.]+)%%%s+%->%s+([%d.]+)%%%s+RED%s+do_query;leaf_hash")
    assert.is_true(tonumber(share_a) > tonumber(share_b), out)
    assert.truthy(out:find("[Bb][Ll][Uu][Ee]%s+server_loop;leaf_hash"), out)
    assert.truthy(out:find("BLUE%s+do_query;leaf_alloc"), out)
    assert.truthy((util.read(util.root .. "/build/seeds/diff.svg") or ""):find("<svg", 1, true))
  end)

  it("paranoid: the table is what nobody is refused (perf stat as nobody agrees)", function()
    if not util.is_root() then pending("needs root to drop to nobody") return end
    local out = run("examples/seeds/paranoid.lua")
    local level, cells = out:match("\n%s*(%-?%d)%s+(.-)\n")
    assert.equal(sysctl("perf_event_paranoid"), tonumber(level), out)
    local c = {}
    for w in cells:gmatch("%S+") do c[#c + 1] = w end
    assert.equal(6, #c, out)
    local as_nobody = "cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups perf stat "
    local function perf_ok(args)
      local o, ok = util.sh(as_nobody .. args .. " -- true 2>&1")
      return ok and not o:find("Error:", 1, true) and not o:find("<not supported>", 1, true)
    end
    assert.equal(perf_ok("-e cpu-clock:u") and "ok" or "refused", c[1] == "ok" and "ok" or "refused")
    assert.equal(perf_ok("-e cpu-clock:k") and "ok" or "refused", c[2] == "ok" and "ok" or "refused")
    assert.equal(perf_ok("-a -e cpu-clock:u") and "ok" or "refused", c[3] == "ok" and "ok" or "refused")
    assert.equal("EINVAL", c[6])
    if tonumber(level) == 2 then
      assert.same({ "ok", "EACCES", "EACCES", "EPERM", "EPERM", "EINVAL" }, c)
    end
  end)

  it("jitmap: traces named in the perf map and in the samples (LuaJIT; plain Lua runs it under luajit)", function()
    if util.sh("command -v luajit"):find("luajit") == nil then pending("no luajit") return end
    if not jit then
      -- plain Lua re-runs it under luajit, which needs the LuaJIT module
      -- (make test-asan builds only Lua 5.4's, in build/asan)
      local dir = os.getenv("LUAPERF_BUILDJIT") or "build/luajit"
      if dir:sub(1, 1) ~= "/" then dir = util.root .. "/" .. dir end
      if not util.read(dir .. "/perf/core.so") then
        pending("the LuaJIT module is not built (" .. dir .. "/perf/core.so): make LUA=luajit")
        return
      end
    end
    local out = run("examples/seeds/jitmap.lua")
    assert.truthy(out:find("/tmp/perf%-%d+%.map: %d+ lines"), out)
    assert.truthy(out:find("\n  %x+ %x+ TRACE_%d+ examples/seeds/jitmap%.lua:%d+ checksum"), out)
    assert.truthy(out:find("%d+%.%d+%%  TRACE_%d+ [^\n]*checksum"), out)
  end)
end)

describe("examples/recipes", function()
  local kc = "build/progs/known_calls"

  it("syscount: a command's system calls, errors included, are strace -c -f's", function()
    local cmd = "sh -c 'exec ls -l /usr/share/doc >/dev/null'"
    local out = run("examples/recipes/syscount.lua", "-- " .. cmd)
    local total = tonumber(out:match("^SYSCALL%s+COUNT%s+ERRORS%s+TIME %(us%)%s+%((%d+) system calls, 0 lost%)"))
    assert.is_true(total > 1000, out)
    local ours, rows = {}, 0
    for name, n, e, us in out:gmatch("\n([%w_]+)%s+(%d+)%s+(%d+)%s+([%d%.]+)") do
      ours[name], rows = { tonumber(n), tonumber(e) }, rows + 1
      assert.is_true(tonumber(us) >= 0)
    end
    assert.equal(15, rows, out)
    local dir = util.tmpdir()
    local _, ok = util.sh("strace -f -c -o " .. dir .. "/st " .. cmd)
    if not ok then pending("strace failed") return end
    local checked = 0
    for line in util.read(dir .. "/st"):gmatch("[^\n]+") do
      local calls, errs, name = line:match("^%s*[%d%.]+%s+[%d%.]+%s+%d+%s+(%d+)%s+(%d*)%s*([%w_]+)$")
      if name and ours[name] and not util.signal_setup_calls[name] then
        assert.same({ tonumber(calls), tonumber(errs) or 0 }, ours[name], name .. ":\n" .. out)
        checked = checked + 1
      end
    end
    assert.is_true(checked >= 10, checked .. " rows compared:\n" .. out)
  end)

  it("syscount: known_calls' known calls and errors; every process for a moment", function()
    local out = run("examples/recipes/syscount.lua", "-- " .. kc .. " syscalls 300")
    local function row(name)
      local n, e = out:match("\n" .. name .. "%s+(%d+)%s+(%d+)")
      return { tonumber(n), tonumber(e) }
    end
    assert.same({ 300, 0 }, row("getppid"), out)
    assert.same({ 300, 0 }, row("write"), out)
    assert.equal(300, row("openat")[2], out)      -- the missing file; the loader's opens succeed
    assert.equal(300, row("close")[2], out)       -- close(-1)
    assert.is_true(row("openat")[1] >= 300 and row("close")[1] >= 300, out)
    out = run("examples/recipes/syscount.lua", "0.3")
    assert.is_true(tonumber(out:match("%((%d+) system calls")) > 0, out)
  end)

  it("funccount: uprobe counters count each call: 1000 probe_target, 1000 write; a glob", function()
    if not util.is_root() then pending("uprobes need root") return end
    local out = run("examples/recipes/funccount.lua")
    assert.truthy(out:find("^FUNC%s+COUNT%s+%(2 probes"), out)
    assert.equal("1000", out:match("\nprobe_target%s+(%d+)"), out)
    assert.equal("1000", out:match("\nwrite%s+(%d+)"), out)
    out = run("examples/recipes/funccount.lua", "'" .. kc .. ":probe_t*' -- " .. kc .. " loop 777")
    assert.truthy(out:find("%(1 probes"), out)
    assert.equal("777", out:match("\nprobe_target%s+(%d+)"), out)
  end)

  it("funclatency: uprobe:/uretprobe: specs time every call into perf.hist; nothing written to tracefs", function()
    if not util.is_root() then pending("uprobes need root") return end
    local src = assert(util.read(util.root .. "/examples/recipes/funclatency.lua"))
    assert.falsy(src:find("uprobe_events", 1, true))
    local events = "/sys/kernel/tracing/uprobe_events"
    local before = util.read(events)
    local out = run("examples/recipes/funclatency.lua")
    assert.truthy(out:find("known_calls probe_target: 100 calls, p50 %d+ ns, p99 %d+ ns"), out)
    assert.truthy(out:find("\n%s+nsecs%s+: count%s+distribution\n"), out)
    local function sum(text)
      local n = 0
      for c in text:gmatch("%d+ %-> %d+%s+: (%d+)%s+|") do n = n + tonumber(c) end
      return n
    end
    assert.equal(100, sum(out), out)
    assert.truthy(out:find("avg = %d+ nsecs, total: %d+ nsecs, count: 100\n"), out)
    assert.equal(before, util.read(events))
    -- nap(1), nap(2), nap(4) four times each: the program's own measure is the reference
    local ref = util.tmpdir() .. "/naps"
    out = run("examples/recipes/funclatency.lua", kc .. " nap sleeps 4 " .. ref)
    assert.truthy(out:find("known_calls nap: 12 calls", 1, true), out)
    assert.equal(12, sum(out), out)
    local want = 0
    for ns in util.read(ref):gmatch("%d+ (%d+)") do want = want + tonumber(ns) end
    local total = tonumber(out:match("total: (%d+) nsecs, count: 12"))
    assert.is_true(math.abs(total - want) < 0.05 * want, total .. " vs " .. want .. "\n" .. out)
    local low = tonumber(out:match("\n%s+(%d+) %-> %d+%s+: [1-9]"))
    assert.equal(1048576, low, out)                    -- nothing shorter than 1 ms
  end)

  it("offcputime: offcpu_work's sleeper() has the time blocked, as the program measured it", function()
    if not util.is_root() then pending("off-CPU samples need kernel sampling rights") return end
    local out = run("examples/recipes/offcputime.lua")
    local slept = tonumber(out:match("slept_ns=(%d+)")) / 1e6
    local ms, n = out:match("\n([%d%.]+) ms off CPU in (%d+) waits")
    ms, n = tonumber(ms), tonumber(n)
    assert.is_true(n >= 4 and math.abs(ms - slept) < 0.1 * slept, out)
    local sleeper = tonumber(out:match("\n%s+([%d%.]+)%s+[%d%.]+%%%s+offcpu_work%s+sleeper\n"))
    assert.is_true(sleeper >= 0.95 * ms, out)
    local funcs = out:match("user function %(ms%):\n(.-)the heaviest")
    assert.falsy(funcs:find("schedule", 1, true), out)                 -- kernel frames left out
    local top = out:match("the heaviest stacks %(ms, root first%):\n%s+[%d%.]+%s+(%S+)")
    assert.truthy(top:find("main;sleeper;", 1, true) and top:find(";schedule$"), out)
  end)

  it("runqlat and wakeuplat: wakeups seen system-wide while a shell sleeps and wakes", function()
    local out = run("examples/recipes/runqlat.lua", "0.6 & sleep 0.2; for i in 1 2 3 4 5 6 7 8; do sleep 0.02; done; wait")
    assert.truthy(out:find("usecs%s+: count%s+distribution"), out)
    local n, p50, p99, max = out:match("(%d+) wakeups, p50 (%d+) us, p99 (%d+) us, max (%d+) us")
    n, p50, p99, max = tonumber(n), tonumber(p50), tonumber(p99), tonumber(max)
    assert.is_true(n >= 6 and p50 <= p99 and p99 <= max, out)
    local sum, high = 0, 0
    for hi, c in out:gmatch("%d+ %-> (%d+)%s+: (%d+)") do
      sum = sum + tonumber(c)
      if tonumber(c) > 0 then high = tonumber(hi) end
    end
    assert.equal(n, sum, out)
    assert.is_true(max <= high and (max >= (high + 1) / 2 or high == 1), out)   -- the max is in the last bucket
    out = run("examples/recipes/wakeuplat.lua", "0.6 & sleep 0.2; for i in 1 2 3 4 5 6 7 8; do sleep 0.02; done; wait")
    assert.truthy(out:find("TASK%s+WAKEUPS%s+AVG us%s+MAX us"), out)
    assert.truthy(out:find("\nsh%s+%d+%s+[%d%.]+%s+[%d%.]+") or out:find("\nsleep%s+%d+"), out)
  end)

  it("pagefaults: touch_pages' 2000 faults come from main", function()
    local out = run("examples/recipes/pagefaults.lua")
    local n = tonumber(out:match("(%d+) page faults"))
    assert.is_true(n >= 2000, out)
    local main = tonumber(out:match("\n%s+(%d+)%s+[%d%.]+%%%s+self%s+[%d%.]+%%%s+main\n"))
    assert.is_true(main >= 1990, out)
    local path = tonumber(out:match("\n%s+(%d+)%s+__libc_start_call_main;main\n"))
    assert.is_true(path >= 1990, out)
  end)

  it("threadtop: four threads of dwarf_threads, memset or fill_pages among the top of each", function()
    local out = run("examples/recipes/threadtop.lua")
    local threads, pct = 0, 0
    -- (each thread's page faults, its malloc arena growing again after a
    -- trim, can weigh more than its memset on a loaded VM: pvm_irq_enable)
    local blocks = {}
    for line in out:gmatch("[^\n]+") do
      local p = line:match("^tid %d+ %(dwarf_threads%): %d+ samples %(([%d%.]+)%%%)")
      if p then
        blocks[#blocks + 1] = { pct = tonumber(p), names = {} }
      elseif line:match("^tid ") then
        blocks[#blocks + 1] = { other = true, names = {} }
      elseif #blocks > 0 then
        local name = line:match("^%s+[%d%.]+%%%s+(%S+)")
        if name then table.insert(blocks[#blocks].names, name) end
      end
    end
    for _, b in ipairs(blocks) do
      if not b.other then
        threads, pct = threads + 1, pct + b.pct
        local found = false
        for _, name in ipairs(b.names) do
          if name:find("memset", 1, true) or name == "fill_pages" then found = true end
        end
        assert.is_true(found, out)
      end
    end
    assert.is_true(threads >= 4, out)
    assert.is_true(pct > 90 and pct < 100.5, out)
  end)

  it("report: the query API's function rows are perf report --children's on perf's own recording", function()
    local dir = util.tmpdir()
    local _, ok = util.perf("record -q -F 999 -g -o " .. dir .. "/p.data build/progs/shaped 300 >/dev/null")
    if not ok then pending("perf record failed") return end
    local out = run("examples/recipes/report.lua", dir .. "/p.data")
    local n, by = out:match("^(%d+) samples; by command and object:\n(.-)by function")
    n = tonumber(n)
    assert.is_true(n > 50, out)
    local sum = 0
    for c in by:gmatch("%%%s+(%d+)%s+shaped%s") do sum = sum + tonumber(c) end
    assert.equal(n, sum, out)                                      -- shaped's user space, and its kernel time
    assert.is_true(tonumber(by:match("([%d%.]+)%%%s+%d+%s+shaped%s+shaped\n")) >= 90, out)
    local theirs = {}
    for c, s, sym in util.perf_stdout("report -i " .. dir .. "/p.data --children --sort sym --stdio -g none"):gmatch("\n%s+([%d%.]+)%%%s+([%d%.]+)%%%s+%[.%] (%S+)") do
      theirs[sym] = { tonumber(c), tonumber(s) }
    end
    local rows = 0
    for c, s, sym in out:gmatch("\n%s+([%d%.]+)%%%s+self%s+([%d%.]+)%%%s+(%S+)") do
      rows = rows + 1
      assert.truthy(theirs[sym], sym .. " is not in perf report")
      assert.is_true(math.abs(theirs[sym][1] - tonumber(c)) < 0.011 and math.abs(theirs[sym][2] - tonumber(s)) < 0.011, sym .. "\n" .. out)
    end
    assert.equal(6, rows, out)
    local leaf, paths = out:match("the paths into (%S+), the hottest function %(self%):\n(.-)samples per")
    assert.truthy(leaf == "leaf_alloc" or leaf == "leaf_hash", out)
    local pct = 0
    for p, stack in paths:gmatch("%s+([%d%.]+)%%%s+([^\n]+)") do
      pct = pct + tonumber(p)
      assert.truthy(stack:find("^__libc_start_call_main > main > server_loop > ") and stack:find(" > " .. leaf .. "$"), out)
    end
    assert.is_true(pct > 99 and pct < 100.5, out)
    local samples = 0
    for c in out:match("samples per 50 ms.*$"):gmatch("shaped%s+(%d+)") do samples = samples + tonumber(c) end
    assert.equal(n, samples, out)
  end)
end)
