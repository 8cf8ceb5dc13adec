-- Faults (issue 9): targets that exit, exec and fork under a session, a
-- reused pid, poll interrupted by a signal, sessions closed or collected
-- while records() runs, Lua errors inside record loops.  Each must end
-- without a crash or a leak, and the ring tail must keep moving.
-- References: the target's own account of its forks (the pids fork()
-- returned), the kernel's FORK/EXIT/COMM records, /proc/self/fd.
local perf = require "perf"
local util = require "util"

local FORKER = util.root .. "/build/progs/forker"

-- A target's argv.  Under the sanitizers the runtime is preloaded into this
-- interpreter and would be inherited: LeakSanitizer's at-exit tracer is a
-- process of its own, an extra FORK the target never made.  env -u keeps
-- the target clean and execs it under the same pid.
local function target(...)
  return util.target_argv({ ... })
end

-- This process's pid (Lua has no getpid).
local function mypid()
  local f = assert(io.open("/proc/self/stat"))
  local pid = tonumber(f:read("*l"):match("^(%d+)"))
  f:close()
  return pid
end

-- This process's open fds as "fd -> target" lines, sorted (the ls pipe's
-- own fd shows in every listing alike, so listings compare).
local function fds()
  local p = assert(io.popen("unset LD_PRELOAD; ls -l /proc/" .. mypid() .. "/fd"))
  local list, perf_fds = {}, 0
  for line in p:lines() do
    local fd, target = line:match("(%d+) %-> (.*)$")
    if fd and not target:find("^pipe:") then
      list[#list + 1] = fd .. " -> " .. target
      if target:find("perf_event", 1, true) then perf_fds = perf_fds + 1 end
    end
  end
  p:close()
  table.sort(list)
  return table.concat(list, "\n"), perf_fds
end

local function collect()
  collectgarbage()
  collectgarbage()
end

-- Polls until the target is gone, handing every record to fn (if any).
local function drain_to_end(s, fn, limit_s)
  local deadline = os.time() + (limit_s or 20)
  local done
  repeat
    local _, d = assert(s:poll(20))
    done = d
    for rec in s:records() do
      if fn then fn(rec) end
    end
  until done or os.time() > deadline
  for rec in s:records() do
    if fn then fn(rec) end
  end
  return done
end

local function count_types(list)
  local n = {}
  for _, r in ipairs(list) do n[r.type] = (n[r.type] or 0) + 1 end
  return n
end

describe("faults: targets that change under a session", function()
  local dir
  setup(function() dir = util.tmpdir() end)
  teardown(function() util.sh("rm -rf " .. dir) end)

  it("a target forking 200 children: every fork and exit is recorded, pids as fork() returned them", function()
    local out = dir .. "/forks"
    local recs = {}
    local s = assert(perf.session{ events = { "cpu-clock" }, freq = 999, pages = 64,
      cmd = target(FORKER, "fork", "200", out) })
    local parent = s:pid()
    assert(s:start())
    assert.is_true(drain_to_end(s, function(r) recs[#recs + 1] = r end))
    assert.equal(0, s:wait())
    local st = s:stats()
    assert.equal(0, st.lost, "records were lost")
    assert.equal(#recs, st.records)
    local ref = {}
    for p in util.read(out):gmatch("%d+") do ref[#ref + 1] = tonumber(p) end
    assert.equal(200, table.remove(ref, 1))
    local forked, exited = {}, {}
    for _, r in ipairs(recs) do
      if r.type == "FORK" and r.ppid == parent and r.pid ~= parent then forked[#forked + 1] = r.pid end
      if r.type == "EXIT" then exited[r.pid] = true end
    end
    table.sort(ref)
    table.sort(forked)
    assert.same(ref, forked)
    for _, p in ipairs(ref) do assert.is_true(exited[p], "no EXIT for " .. p) end
    assert.is_true(exited[parent], "no EXIT for the parent")
    s:close()
  end)

  it("children that exec: one COMM per exec'd child, and the session ends when the target exits", function()
    local comms = {}
    local s = assert(perf.session{ events = { "cpu-clock" }, freq = 999, pages = 64,
      cmd = target(FORKER, "exec", "50") })
    assert(s:start())
    assert.is_true(drain_to_end(s, function(r)
      if r.type == "COMM" then comms[r.comm] = (comms[r.comm] or 0) + 1 end
    end))
    assert.equal(0, s:wait())
    assert.equal(50, comms["true"])
    -- The target is gone: poll must not wait out its timeout any more.
    local t0 = perf.core.clock()
    local ready, done = s:poll(2000)
    assert.is_true(done)
    assert.equal(0, ready)
    assert.is_true(perf.core.clock() - t0 < 0.5, "poll waited for a target that is gone")
    s:close()
  end)

  it("a target that execs itself: the new COMM and image, samples on both sides of the exec", function()
    local recs = {}
    local s = assert(perf.session{ events = { "cpu-clock" }, freq = 999, inherit = false,
      cmd = target(FORKER, "execself", "0.15") })
    local pid = s:pid()
    assert(s:start())
    assert.is_true(drain_to_end(s, function(r) recs[#recs + 1] = r end))
    assert.equal(0, s:wait())
    local exec_time
    for _, r in ipairs(recs) do
      if r.type == "COMM" and r.pid == pid and r.comm == "exe" then exec_time = r.time end
    end
    assert.truthy(exec_time, "no COMM 'exe' after the exec")
    local before, after, remapped = 0, 0, false
    for _, r in ipairs(recs) do
      if r.type == "SAMPLE" and r.pid == pid then
        if r.time < exec_time then before = before + 1 else after = after + 1 end
      end
      if r.type == "MMAP2" and r.pid == pid and r.time > exec_time and
         tostring(r.filename):find("forker", 1, true) then
        remapped = true
      end
    end
    assert.is_true(before >= 50, "samples before exec: " .. before)
    assert.is_true(after >= 50, "samples after exec: " .. after)
    assert.is_true(remapped, "no MMAP2 of the new image")
    s:close()
  end)

  it("a session on a pid that exited fails with ESRCH; a reused pid is a new target", function()
    if not util.is_root() then return pending("needs root to set ns_last_pid") end
    -- The first process, followed by pid until it exits.
    local w = assert(perf.workload(target(FORKER, "burn", "0.1")))
    local pid = w:pid()
    local s = assert(perf.session{ events = { "cpu-clock" }, freq = 999, pid = pid, inherit = false })
    assert(s:start())
    assert(w:start())
    local first = 0
    assert.is_true(drain_to_end(s, function(r)
      if r.type == "SAMPLE" and r.pid == pid then first = first + 1 end
    end))
    assert.equal(0, (w:wait()))
    w:close()
    assert.is_true(first > 20, "samples of the first process: " .. first)
    -- Gone and reaped: nothing to open.
    local none, msg, errno = perf.session{ events = { "cpu-clock" }, pid = pid, inherit = false }
    assert.is_nil(none)
    assert.equal(3, errno, msg)
    -- Make the kernel hand the same pid to a new process.
    local w2
    for _ = 1, 20 do
      util.write("/proc/sys/kernel/ns_last_pid", tostring(pid - 1))
      w2 = assert(perf.workload(target(FORKER, "burn", "0.15")))
      if w2:pid() == pid then break end
      w2:close()
      w2 = nil
    end
    if not w2 then s:close() return pending("could not get pid " .. pid .. " again") end
    local s2 = assert(perf.session{ events = { "cpu-clock" }, freq = 999, pid = pid, inherit = false })
    assert(s2:start())
    assert(w2:start())
    local second = 0
    assert.is_true(drain_to_end(s2, function(r)
      if r.type == "SAMPLE" and r.pid == pid then second = second + 1 end
    end))
    assert.equal(0, (w2:wait()))
    w2:close()
    assert.is_true(second > 30, "samples of the second process: " .. second)
    -- The old session followed a task, not a number: nothing of the new one.
    local late = 0
    local ready, done = s:poll(0)
    for r in s:records() do
      if r.type == "SAMPLE" then late = late + 1 end
    end
    assert.is_true(done)
    assert.equal(0, ready)
    assert.equal(0, late)
    s:close()
    s2:close()
  end)
end)

describe("faults: signals, closes and errors around records()", function()
  it("poll interrupted by a real-time signal (luaprofile's handler) keeps waiting, no error", function()
    -- The real-time signal ignores what fasync did not send; a foreign
    -- SIGTRAP would go on to its default action (see luaprofile_spec).
    local prof = assert(perf.luaprofile{ freq = 499, signal = "realtime" })
    assert(prof:start())
    local signo = prof:stats().signo
    assert.is_true(signo and signo > 0, "luaprofile installed no signal handler")
    -- A sleeping target writes nothing: poll waits its whole timeout.
    local s = assert(perf.session{ events = { "cpu-clock" }, inherit = false, cmd = target("sleep", "3") })
    assert(s:start())
    local mark = util.tmpdir() .. "/sent"
    -- Sent from outside while poll waits; the handler ignores it (not from
    -- the kernel's fasync), so only poll's EINTR handling is tested.
    os.execute(string.format("unset LD_PRELOAD; (sleep 0.1; kill -s %d %d && touch %s) >/dev/null 2>&1 &",
      signo, mypid(), mark))
    local t0 = perf.core.clock()
    local ready, done = s:poll(1500)
    local waited = perf.core.clock() - t0
    local sent_in_time = util.read(mark) ~= nil
    -- The handler must outlive a late signal (the default action would
    -- end this process): wait for the sender before closing the profile.
    for _ = 1, 100 do
      if util.read(mark) then break end
      perf.core.sleep(50)
    end
    prof:stop()
    prof:close()
    assert.is_true(sent_in_time, "the signal was not sent while poll waited")
    assert.equal(0, ready, tostring(done))
    assert.is_false(done)
    assert.is_true(waited >= 1.45, "poll returned early: " .. waited)
    assert.is_true(waited < 3.5, "poll overslept: " .. waited)
    util.sh("kill " .. s:pid())
    s:wait()
    s:close()
  end)

  it("a session closed inside its records() loop raises 'closed' at the next step, and leaks nothing", function()
    collect()
    local base = fds()
    local s = assert(perf.session{ events = { "cpu-clock" }, freq = 999, inherit = false,
      cmd = target(FORKER, "burn", "0.1") })
    assert(s:start())
    repeat local _, d = s:poll(20) until d
    local n = 0
    local ok, err = pcall(function()
      for _ in s:records() do
        n = n + 1
        if n == 3 then s:close() end
      end
    end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("attempt to use a closed perf.session", 1, true), err)
    assert.equal(3, n)
    assert.has_error(function() s:poll(0) end, nil)
    s:close()
    collect()
    assert.equal(base, (fds()))
  end)

  it("a session dropped during its records() loop lives until the loop ends, then is collected", function()
    collect()
    local base, base_perf = fds()
    local weak = setmetatable({}, { __mode = "v" })
    -- In a function of its own, so no dead stack slot (LuaJIT keeps the
    -- for loop's hidden state in registers) holds the session afterwards.
    local function loop()
      local s = assert(perf.session{ events = { "cpu-clock" }, freq = 999, inherit = false,
        cmd = target(FORKER, "burn", "0.1") })
      assert(s:start())
      repeat local _, d = s:poll(20) until d
      s:wait()
      weak[1] = s
      local n = 0
      for _ in s:records() do
        if n == 0 then
          s = nil
          collect()
          assert.truthy(weak[1], "collected while its iterator runs")
        end
        n = n + 1
      end
      assert.equal(weak[1]:stats().records, n)
    end
    loop()
    -- LuaJIT traces hold what they specialised on: drop them first.
    if jit then jit.flush() end
    collect()
    assert.is_nil(weak[1])
    local now, now_perf = fds()
    assert.equal(base_perf, now_perf)
    assert.equal(base, now)
  end)

  it("a Lua error in a records() loop body: that record is consumed, the next arrive, none twice", function()
    local s = assert(perf.session{ events = { "cpu-clock" }, freq = 999, inherit = false, pages = 8,
      cmd = target(FORKER, "burn", "0.4") })
    assert(s:start())
    local seen, errors, last_time, dup = 0, 0, nil, 0
    local samples_after_error = 0
    local done
    repeat
      local _, d = assert(s:poll(20))
      done = d
      -- Every other pass raises on its second record.
      local raise = errors < 10
      local k = 0
      local ok, err = pcall(function()
        for rec in s:records() do
          k = k + 1
          seen = seen + 1
          if rec.time and last_time and rec.time < last_time then dup = dup + 1 end
          if rec.time then last_time = rec.time end
          if errors > 0 and rec.type == "SAMPLE" then samples_after_error = samples_after_error + 1 end
          if raise and k == 2 then error("boom in the loop body") end
        end
      end)
      if not ok then
        assert.truthy(tostring(err):find("boom in the loop body", 1, true), err)
        errors = errors + 1
      end
    until done
    for _ in s:records() do seen = seen + 1 end
    local st = s:stats()
    assert.is_true(errors >= 3, "errors raised: " .. errors)
    assert.equal(st.records, seen)
    assert.equal(0, dup, "records came back after an error")
    assert.equal(0, st.lost)
    assert.is_true(samples_after_error > 100, "samples after the first error: " .. samples_after_error)
    s:wait()
    s:close()
  end)

  it("a Lua error in a perf.data records() loop: a new loop starts over and sees every record", function()
    local dir = util.tmpdir()
    local data = dir .. "/perf.data"
    local out, ok = util.perf("record -q -F 999 -o " .. util.q(data) .. " " .. FORKER .. " burn 0.1")
    assert.is_true(ok, out)
    local f = assert(perf.open(data))
    local ref = 0
    for _ in f:records() do ref = ref + 1 end
    for _ = 1, 20 do
      local okp = pcall(function()
        local k = 0
        for _ in f:records() do
          k = k + 1
          if k == 5 then error("stop") end
        end
      end)
      assert.is_false(okp)
    end
    local n = 0
    for _ in f:records() do n = n + 1 end
    assert.equal(ref, n)
    assert.is_true(ref > 20)
    f:close()
    util.sh("rm -rf " .. dir)
  end)
end)

-- /proc/self/maps: anonymous lines, file-backed lines, and the perf ring
-- mappings.  The core maps files (perf.data, kallsyms, ELF through libelf)
-- and rings, never anonymous memory: anonymous lines are the allocators'.
local function maps()
  local anon, files, rings = 0, 0, 0
  for line in io.lines("/proc/self/maps") do
    local path = line:match("^%S+%s+%S+%s+%S+%s+%S+%s+%S+%s+(.*)$") or ""
    if line:find("perf_event", 1, true) then rings = rings + 1
    elseif path:sub(1, 1) == "/" then files = files + 1
    else anon = anon + 1 end
  end
  return anon, files, rings
end

describe("faults: 10,000 open/close cycles", function()
  -- Half closed explicitly, half left to the collector; one warm-up round
  -- first, so the allocators' own growth is part of the baseline.
  local function cycles(n, open, gc_every)
    for i = 1, n do
      local o = open(i)
      if i % 2 == 0 then o:close() end
      if gc_every and i % gc_every == 0 then collect() end
    end
    collect()
  end

  local function check(open, gc_every)
    cycles(500, open, gc_every)
    local base_fds, base_perf = fds()
    local base_anon, base_files, base_rings = maps()
    local t0 = perf.core.clock()
    cycles(10000, open, gc_every)
    local dt = perf.core.clock() - t0
    local now_fds, now_perf = fds()
    local now_anon, now_files, now_rings = maps()
    assert.equal(0, base_perf)
    assert.equal(0, base_rings)
    assert.equal(0, now_perf, "perf fds left open")
    assert.equal(0, now_rings, "ring mappings left")
    assert.equal(base_fds, now_fds)
    -- A file left mapped per cycle would be thousands of lines; a few may
    -- come from a library the C library loads on first use.
    assert.is_true(now_files <= base_files + 4, "file mappings: " .. base_files .. " -> " .. now_files)
    -- Anonymous lines are the allocators' fragments.  glibc's malloc adds
    -- a few; LuaJIT's own allocator maps 128 KB chunks, and after 10,000
    -- sessions' garbage in a large heap (the whole suite's) they leave
    -- thousands of holes (2,042 seen in CI), so it is not bounded here:
    -- heap leaks are LeakSanitizer's to find (make test-asan runs this).
    if not jit then
      assert.is_true(now_anon <= base_anon + 32, "anonymous mappings: " .. base_anon .. " -> " .. now_anon)
    end
    return dt
  end

  it("counters and per-CPU groups", function()
    check(function(i)
      if i % 3 == 0 then
        return assert(perf.group({ "task-clock", "page-faults", "context-switches" },
          { cpu = "all", pid = 0 }))
      end
      return assert(perf.counter("task-clock"))
    end)
  end)

  it("sessions: per-thread and per-CPU rings, started and read", function()
    check(function(i)
      local s
      if i % 4 == 0 then
        s = assert(perf.session{ events = { "cpu-clock", "page-faults" }, pages = 1, inherit = true })
      else
        s = assert(perf.session{ events = { "cpu-clock" }, pages = 1, inherit = false })
      end
      if i % 8 == 0 then
        s:start()
        s:poll(0)
        for _ in s:records() do end
        s:stop()
      end
      return s
    end)
  end)

  it("luaprofiles: opened, some started and stopped; the signal goes back to its default", function()
    local signos = {}
    check(function(i)
      -- both deliveries: SIGTRAP from the event, a real-time signal by fasync
      local p = assert(perf.luaprofile{ freq = 999, signal = i % 8 == 0 and "realtime" or "auto" })
      if i % 4 == 0 then
        assert(p:start())
        signos[p:stats().signo] = true
        p:stop()
      end
      return p
    end, 32)   -- at most 64 luaprofiles may be open at once (sigsample.c)
    -- SigCgt: the caught-signal mask; nothing may be left caught.
    local cgt
    for line in io.lines("/proc/self/status") do
      cgt = cgt or line:match("^SigCgt:%s*(%x+)")
    end
    local n = 0
    for signo in pairs(signos) do
      n = n + 1
      local digit = #cgt - math.floor((signo - 1) / 4)   -- signal 1 is bit 0 of the last digit
      local v = tonumber(cgt:sub(digit, digit), 16)
      assert.equal(0, math.floor(v / 2 ^ ((signo - 1) % 4)) % 2, "signal " .. signo .. " is still caught: " .. cgt)
    end
    assert.is_true(n >= 1)
  end)
end)

-- Runs Lua code in a child interpreter under sh (ulimit, setpriv), with the
-- module under test (and the sanitizer runtime when there is one).
local function child_lua(prefix, code, dir)
  dir = dir or util.tmpdir()
  -- Unbuffered, so what was printed survives a crash (LuaJIT's print does not flush).
  util.write(dir .. "/t.lua", 'io.stdout:setvbuf("no")\n' .. code)
  util.sh("chmod 755 " .. dir .. " && chmod 644 " .. dir .. "/t.lua")
  local pre = util.preload_env()
  return util.sh(prefix .. " env " .. pre .. util.lua .. " " .. dir .. "/t.lua")
end

-- Shared by the child scripts: fd and ring-mapping counts of the process.
local COUNT_FDS = [[
  local perf = require "perf"
  local function fds()
    local n, ev = 0, 0
    local pid = io.open("/proc/self/stat"):read("*l"):match("^(%d+)")
    local p = io.popen("ls -l /proc/" .. pid .. "/fd")
    for line in p:lines() do
      local target = line:match("%-> (.*)$")
      if target and not target:find("^pipe:") then
        n = n + 1
        if target:find("perf_event", 1, true) then ev = ev + 1 end
      end
    end
    p:close()
    collectgarbage() collectgarbage()
    return n, ev
  end
  local function rings()
    local n = 0
    for line in io.lines("/proc/self/maps") do
      if line:find("perf_event", 1, true) then n = n + 1 end
    end
    return n
  end
]]

-- A binary rebuilt in place (cc -o truncates it) after the symbolizer
-- read its line tables: the next lookup must not die of SIGBUS.
-- (dwarfline.c and dso.c read ELF files, not map them.)  Run in a child.
describe("faults: an ELF file truncated under the symbolizer", function()
  it("a later line lookup fails or resolves, without killing the process", function()
    local dir = util.tmpdir()
    local srcs = {}
    for i = 1, 40 do
      util.write(dir .. "/f" .. i .. ".c", ("int f%d(int x) { int s = 0; for (int k = 0; k < x; k++) s += k * %d; return s; }\n"):format(i, i))
      srcs[#srcs + 1] = dir .. "/f" .. i .. ".c"
    end
    util.write(dir .. "/main.c", "int f1(int); int main(int c, char **v) { (void)v; return f1(c); }\n")
    local out, ok = util.sh("cc -g -O0 -no-pie -o " .. dir .. "/prog " .. dir .. "/main.c " .. table.concat(srcs, " "))
    assert.is_true(ok, out)
    local addr = {}
    for line in util.sh("nm " .. dir .. "/prog"):gmatch("[^\n]+") do
      local a, name = line:match("^(%x+) T (%S+)$")
      if a then addr[name] = tonumber(a, 16) end
    end
    local text = util.sh("readelf -lW " .. dir .. "/prog")
    local off, va, fsz = text:match("LOAD%s+0x(%x+)%s+0x(%x+)%s+0x%x+%s+0x(%x+)%s+0x%x+%s+R E")
    assert.truthy(off, text)
    local rc
    out, ok, rc = child_lua("", ([[
      local perf = require "perf"
      local sym = perf.symbolizer()
      sym:feed{ type = "MMAP2", pid = 4242, start = %d, len = %d, pgoff = %d, filename = %q }
      local r = assert(sym:resolve(4242, %d, { lines = true }))
      print("FIRST", r.name, r.line)
      os.execute("truncate -s 4096 %s")
      local r2, err = sym:resolve(4242, %d, { lines = true })
      print("SURVIVED", r2 and r2.name, err)
    ]]):format(tonumber(va, 16), tonumber(fsz, 16), tonumber(off, 16), dir .. "/prog",
      addr.f1, dir .. "/prog", addr.f40), dir)
    util.sh("rm -rf " .. dir)
    assert.truthy(out:find("FIRST\tf1\t1", 1, true), out)
    assert.truthy(out:find("SURVIVED", 1, true), "the symbolizer died (exit status " .. tostring(rc) ..
      ", 135 = SIGBUS): " .. out)
    assert.is_true(ok, out)
  end)
end)

describe("faults: a small fd limit", function()
  local ncpu = 0
  setup(function()
    local out = util.sh("getconf _NPROCESSORS_ONLN")
    ncpu = tonumber(out:match("%d+")) or 1
  end)

  it("a per-CPU group and a per-CPU session fail with the EMFILE message and release what they opened", function()
    if ncpu < 2 then return pending("needs 2 CPUs for per-CPU fds to run out") end
    -- 16 events on every CPU need 16 * ncpu fds; the limit leaves ~10 free.
    local events = {}
    for i = 1, 16 do events[i] = i % 2 == 0 and "task-clock" or "page-faults" end
    local list = "{" .. ("%q,"):rep(#events):format((table.unpack or unpack)(events)) .. "}"
    local out = child_lua("ulimit -n 24;", COUNT_FDS .. [[
      collectgarbage("stop")   -- nothing may be released by the collector
      local base, base_ev = fds()
      local g, msg, errno = perf.group(]] .. list .. [[, { cpu = "all", pid = 0 })
      print("GROUP", tostring(g), errno, msg)
      local n, ev = fds()
      print("GROUP_FDS", base, n, base_ev, ev)
      local s, smsg, serrno = perf.session{ events = ]] .. list .. [[, pages = 1, inherit = true }
      print("SESSION", tostring(s), serrno, smsg)
      n, ev = fds()
      print("SESSION_FDS", base, n, base_ev, ev, rings())
      -- What was released is usable again: a small group opens.
      local ok = perf.group({ "task-clock", "page-faults" }, { cpu = "all", pid = 0 })
      print("AFTER", ok and "opened" or "failed")
    ]])
    assert.truthy(out:find("GROUP\tnil\t24\t", 1, true), out)
    assert.truthy(out:find("ran out of file descriptors", 1, true), out)
    assert.truthy(out:find("ulimit -n", 1, true), out)
    local b, n, be, e = out:match("GROUP_FDS\t(%d+)\t(%d+)\t(%d+)\t(%d+)")
    assert.truthy(b, out)
    assert.equal(b, n)
    assert.equal("0", be)
    assert.equal("0", e)
    assert.truthy(out:find("SESSION\tnil\t24\t[^\n]*ran out of file descriptors"), out)
    b, n, be, e = out:match("SESSION_FDS\t(%d+)\t(%d+)\t(%d+)\t(%d+)\t0")
    assert.truthy(b, out)
    assert.equal(b, n)
    assert.equal("0", e)
    assert.truthy(out:find("AFTER\topened", 1, true), out)
  end)
end)

-- Sessions and perf.luaprofile as nobody (counters: spec/unprivileged_spec.lua).
-- The module and the Lua files go to a world-readable directory, since the
-- checkout may not be readable by nobody.
describe("faults: unprivileged sampling (nobody, perf_event_paranoid 2)", function()
  local dir, can
  local function paranoid()
    return tonumber((util.read("/proc/sys/kernel/perf_event_paranoid") or "2"):match("-?%d+"))
  end

  setup(function()
    can = util.is_root() and util.sh("command -v setpriv") ~= "" and select(2, util.sh("id nobody"))
      and paranoid() == 2
    if not can then return end
    dir = util.nobody_tree().dir
  end)

  local function as_nobody(code)
    return child_lua(util.as_nobody_prefix(), code, dir)
  end

  it("a :u self-session samples; kernel and CPU-wide sessions fail with the paranoid explanation", function()
    if not can then return pending("needs root, setpriv, nobody and perf_event_paranoid 2") end
    local out = as_nobody([[
      local perf = require "perf"
      local function burn() local x = 0 for i = 1, 3e7 do x = x + i end return x end
      for _, inherit in ipairs({ false, true }) do
        local s = assert(perf.session{ events = { "task-clock:u" }, freq = 999, pid = 0, inherit = inherit })
        assert(s:start())
        burn()
        s:stop()
        local n = 0
        for r in s:records{ type = "SAMPLE" } do n = n + 1 end
        print("SELF", inherit, n > 20 and "sampled" or "few", n)
        s:close()
      end
      local u = assert(perf.session{ events = { "cpu-clock" }, user_only = true, pid = 0, inherit = false })
      print("USER_ONLY", tostring(u ~= nil))
      u:close()
      local k, kmsg, kerr = perf.session{ events = { "cpu-clock" }, pid = 0, inherit = false }
      print("KERNEL", tostring(k), kerr, kmsg)
      local a, amsg, aerr = perf.session{ events = { "cpu-clock:u" }, pid = -1 }
      print("CPUWIDE", tostring(a), aerr, amsg)
    ]])
    assert.truthy(out:find("SELF\tfalse\tsampled", 1, true), out)
    assert.truthy(out:find("SELF\ttrue\tsampled", 1, true), out)
    assert.truthy(out:find("USER_ONLY\ttrue", 1, true), out)
    assert.truthy(out:find("KERNEL\tnil\t13\t[^\n]*perf_event_paranoid is 2: kernel profiling needs"), out)
    assert.truthy(out:find("KERNEL[^\n]*add :u", 1), out)
    assert.truthy(out:find("CPUWIDE\tnil\t13\t[^\n]*perf_event_paranoid is 2: CPU%-wide"), out)
  end)

  it("perf.luaprofile profiles its own Lua code; kernel=true fails with the paranoid explanation", function()
    if not can then return pending("needs root, setpriv, nobody and perf_event_paranoid 2") end
    local out = as_nobody([[
      local perf = require "perf"
      local function hot_loop() local x = 0 for i = 1, 4e7 do x = x + i % 7 end return x end
      local prof = assert(perf.luaprofile{ freq = 999 })
      assert(prof:start())
      hot_loop()
      local p = prof:stop()
      prof:close()
      local folded = p:folded()
      print("PROFILE", folded:find("hot_loop", 1, true) and "hot_loop" or "missing", #folded)
      local k, kmsg, kerr = perf.luaprofile{ kernel = true }
      print("KERNEL", tostring(k), kerr, kmsg)
    ]])
    assert.truthy(out:find("PROFILE\thot_loop", 1, true), out)
    assert.truthy(out:find("KERNEL\tnil\t13\t[^\n]*perf_event_paranoid is 2: kernel profiling needs"), out)
    -- luaprofile has no :u modifier: its way to user space only is kernel=false
    assert.truthy(out:find("KERNEL[^\n]*drop kernel=true to profile user space only", 1), out)
    assert.is_nil(out:find("KERNEL[^\n]*add :u", 1), out)
  end)
end)

-- Targets run from an argv with execvp, never through a shell: a program
-- named 'echo $HOME' does not exist, and must not become an echo.
describe("faults: commands are an argv, never a shell line", function()
  local MARK = "/tmp/luaperf-home-marker"
  local function luaperf(args)
    local pre = util.preload_env()
    return util.sh("export HOME=" .. MARK .. "; " .. pre .. "LUAPERF_LUA=" .. util.lua .. " " ..
      util.root .. "/bin/luaperf " .. args)
  end
  local dir
  setup(function() dir = util.tmpdir() end)
  teardown(function() util.sh("rm -rf " .. dir) end)

  it("luaperf stat -- 'echo $HOME' fails to find that program, as perf stat does", function()
    local ref, rok, rrc = util.sh("export HOME=" .. MARK .. "; perf stat -- 'echo $HOME'")
    assert.is_false(rok)
    local out, ok, rc = luaperf("stat -- 'echo $HOME'")
    assert.is_false(ok, out)
    assert.equal(rrc, rc, out .. ref)
    assert.is_nil(out:find(MARK, 1, true), out)
    assert.truthy(out:find("echo $HOME", 1, true), out)
    assert.truthy(out:find("No such file or directory", 1, true), out)
    -- Shell syntax in later arguments is data too.
    out, ok = luaperf("stat -x, -e task-clock -- true ';' touch " .. dir .. "/injected")
    assert.is_true(ok, out)
    assert.is_nil(util.read(dir .. "/injected"), "a ';' argument ran a second command")
  end)

  it("luaperf record -- 'echo $HOME' fails to find that program, as perf record does", function()
    local ref, rok = util.sh("export HOME=" .. MARK .. "; perf record -q -o " .. dir .. "/ref.data -- 'echo $HOME'")
    assert.is_false(rok, ref)
    local out, ok = luaperf("record -o " .. dir .. "/x.data -- 'echo $HOME'")
    assert.is_false(ok, out)
    assert.is_nil(out:find(MARK, 1, true), out)
  end)

  -- -a/-C with a command: the command is a perf.workload too (these failed
  -- while record.lua started it with io.popen("exec ... >/proc/$PPID/fd/1")).
  it("luaperf record -a -- 'echo $HOME' fails like perf record -a", function()
    local ref, rok = util.sh("export HOME=" .. MARK .. "; perf record -q -a -o " .. dir .. "/ref.data -- 'echo $HOME'")
    assert.is_false(rok, ref)
    local out, ok = luaperf("record -a -o " .. dir .. "/x.data -- 'echo $HOME'")
    assert.is_nil(out:find(MARK, 1, true), out)
    assert.is_false(ok, "a command that cannot run was recorded as a success: " .. out)
  end)

  it("luaperf record -a -- cmd: the command inherits stdout (a file is not reopened and truncated)", function()
    local pre = util.preload_env()
    local pout, lout = dir .. "/perf.out", dir .. "/luaperf.out"
    util.sh("{ echo before; perf record -q -a -o " .. dir .. "/ref.data -- echo child; } > " .. pout .. " 2>/dev/null")
    assert.equal("before\nchild\n", util.read(pout))
    util.sh("{ echo before; " .. pre .. "LUAPERF_LUA=" .. util.lua .. " " .. util.root ..
      "/bin/luaperf record -a -o " .. dir .. "/x.data -- echo child; } > " .. lout .. " 2>/dev/null")
    assert.equal(util.read(pout), util.read(lout))
  end)
end)

-- Hostile input (issue 12): a ring holding a record of a bad size used to
-- keep its tail for good (every drain failed on it), and a drain callback
-- out of memory was reported as success.  The kernel writes only good
-- records, so spec/harness/session_ring.c damages a live ring by hand,
-- against the core objects.
describe("faults: a damaged ring in a live session", function()
  it("the bad record is dropped and counted, the ring goes on; -ENOMEM from a callback is the drain's", function()
    local bin = util.build_with_core(util.root .. "/spec/harness/session_ring.c", "session_ring")
    local text, ok2 = util.sh(bin)
    assert(ok2, text)
    assert.truthy(text:find("ok the next %d+ records drain"), text)
  end)
end)
