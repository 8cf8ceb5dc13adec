-- Off-CPU profiles (issue 20): luaperf record --off-cpu writes the samples
-- perf's --off-cpu writes (event offcpu-time, period = ns blocked) from
-- perf_events alone; perf reads them, luaperf report and flame weight by
-- them, flame --wall merges them with a clock event, and sessions give
-- the same weights.  Targets: spec/progs/offcpu_work.c (make progs).
local util = require "util"
local pu = require "perfdata_util"
local perf = require "perf"

local dir = util.tmpdir()
local prog = util.root .. "/build/progs/offcpu_work"

local function record(name, args)
  local path = dir .. "/" .. name
  local out, ok = util.luaperf("record -o " .. path .. " " .. args)
  assert(ok, out)
  return path, out
end

-- perf script's samples of one event, with each chain's symbols.
local function perf_script(path, event)
  local out = util.sh("perf script -i " .. path .. " -F event,pid,tid,time,period,ip,sym --ns 2>/dev/null")
  local list, cur = {}, nil
  for line in (out .. "\n"):gmatch("([^\n]*)\n") do
    local pid, tid, period, ev = line:match("^%s*(%d+)/(%d+)%s+%d+%.%d+:%s+(%d+)%s+(%S+):")
    if pid then
      cur = { pid = tonumber(pid), tid = tonumber(tid), period = tonumber(period),
              event = ev, syms = {} }
      if ev == event then list[#list + 1] = cur end
    elseif cur and line:match("^\t") then
      cur.syms[#cur.syms + 1] = line:match("^\t%s*%x+%s+(%S+)")
    end
  end
  return list
end

local function has(list, name)
  for _, v in ipairs(list) do if v == name then return true end end
  return false
end

-- the period perf script shows under a function, and in all
local function weight_under(samples, fn)
  local under, all = 0, 0
  for _, s in ipairs(samples) do
    all = all + s.period
    if has(s.syms, fn) then under = under + s.period end
  end
  return under, all
end

local function near(v, want, tol, what)
  assert(math.abs(v - want) <= want * tol, string.format("%s: %.3f s, want %.3f s within %d%%",
    what, v / 1e9, want / 1e9, tol * 100))
end

-- The targets run through util.target: under make test-asan the
-- sanitizer runtime stays with luaperf; in the target, LeakSanitizer's
-- exit scan blocks it about 50 ms more, off-CPU time of its own (and in
-- a shell and its sleeps, tasks and waits of their own).
describe("off-CPU profiles", function()
  local sleep_data, sleep_out
  setup(function()
    sleep_data, sleep_out = record("sleep.data", "--off-cpu -- " .. util.target(prog .. " sleep 5 100 300"))
  end)

  it("record --off-cpu: 5 x 100 ms naps are 0.5 s of offcpu-time, >= 90% under sleeper(), as perf reads it", function()
    local slept = tonumber(sleep_out:match("slept_ns=(%d+)"))
    assert(slept, sleep_out)
    local theirs = perf_script(sleep_data, "offcpu-time")
    assert.is_true(#theirs >= 5, sleep_out)
    local under, all = weight_under(theirs, "sleeper")
    -- the naps last at least what was asked; on a loaded host longer
    -- (waking is late), which the program's own clock sees too
    assert.is_true(all >= 0.95 * 5e8, string.format("all off-CPU time %.3f s", all / 1e9))
    near(all, slept, 0.10, "all off-CPU time (vs. the program's own clock)")
    near(under, slept, 0.10, "under sleeper (vs. the program's own clock)")
    assert.is_true(under >= 0.9 * all, string.format("%.3f of %.3f s under sleeper", under / 1e9, all / 1e9))
    -- no CPU time in it: the burner never blocks
    local burn = weight_under(theirs, "burner")
    assert.is_true(burn < 0.05 * all)
    -- the summary line agrees with the file
    local n, secs = sleep_out:match("%[ luaperf record: (%d+) off%-CPU samples, ([%d.]+) s blocked")
    assert.are.equal(#theirs, tonumber(n))
    assert.is_true(math.abs(tonumber(secs) - all / 1e9) < 0.002)
  end)

  it("perf reads the file cleanly, its event is offcpu-time as perf's --off-cpu declares it, samples equal ours", function()
    local rep = util.sh("perf report -i " .. sleep_data .. " --stdio 2>&1 >/dev/null")
    assert.is_nil(rep:lower():match("warn"), rep)
    assert.are.equal("", util.sh("perf script -i " .. sleep_data .. " 2>&1 >/dev/null"))
    local ev = util.sh("perf evlist -v -i " .. sleep_data)
    assert.matches("offcpu%-time: type: 1, .*config: 0xa,", ev)
    local theirs = pu.perf_samples(sleep_data, true)
    local ours = pu.our_samples(sleep_data, true)
    pu.discarded = 0
    assert.is_nil(pu.diff(ours, theirs))
    -- perf report's event count is the sum of the periods (ns)
    local count = tonumber(util.sh("perf report -i " .. sleep_data .. " --stdio 2>/dev/null")
      :match("Event count %(approx%.%): (%d+)"))
    local sum = 0
    for _, s in ipairs(theirs) do if s.event == "offcpu-time" then sum = sum + s.period end end
    assert.are.equal(sum, count)
  end)

  it("luaperf report weights rows by blocked time, as perf report", function()
    local ours, theirs = util.report_both(sleep_data, "--no-children --sort sym")
    util.same_report_rows(ours, theirs)
    assert.matches("of event 'offcpu%-time'", ours)
    local o2, t2 = util.report_both(sleep_data, "--children --sort comm,dso,sym")
    local rows = util.same_report_rows(o2, t2)
    local sleeper
    for k, v in pairs(rows) do if k:match("sleeper") then sleeper = v end end
    assert(sleeper, o2)
    assert.is_true(sleeper[1] >= 90, o2)
  end)

  it("luaperf flame weights off-CPU samples by time: folded totals are nanoseconds", function()
    local out, ok = util.luaperf("flame -i " .. sleep_data .. " --format folded")
    assert(ok, out)
    local stacks = util.parse_folded(out)
    local all, under = 0, 0
    for k, v in pairs(stacks) do
      all = all + v
      if (";" .. k .. ";"):find(";sleeper;", 1, true) then under = under + v end
    end
    local _, theirs = weight_under(perf_script(sleep_data, "offcpu-time"), "sleeper")
    assert.are.equal(theirs, all)
    assert.is_true(under >= 0.9 * all)
    -- asked for, the sample count
    local cnt = util.parse_folded((util.luaperf("flame -i " .. sleep_data .. " --format folded --weight samples")))
    local n = 0
    for _, v in pairs(cnt) do n = n + v end
    assert.are.equal(#perf_script(sleep_data, "offcpu-time"), n)
  end)

  it("--off-cpu with -e cpu-clock: both in one file; flame --wall merges them in nanoseconds", function()
    local p, out = record("wall.data", "--off-cpu -e cpu-clock -F 999 -g -- " .. util.target(prog .. " sleep 5 100 300"))
    local off = perf_script(p, "offcpu-time")
    local cpu = perf_script(p, "cpu-clock")
    assert.is_true(#off >= 5 and #cpu > 50, out)
    local off_ns = select(2, weight_under(off, "x"))
    local burn_ns, cpu_ns = weight_under(cpu, "burner")
    local slept = tonumber(out:match("slept_ns=(%d+)"))
    assert(slept, out)
    assert.is_true(off_ns >= 0.95 * 5e8, string.format("off-CPU %.3f s", off_ns / 1e9))
    near(off_ns, slept, 0.10, "off-CPU (vs. the program's own clock)")
    assert.is_true(burn_ns >= 0.2e9, "burner's CPU time: " .. burn_ns)
    local f, ok = util.luaperf("flame -i " .. p .. " --wall --format folded")
    assert(ok, f)
    local total, sleeper, burner = 0, 0, 0
    for k, v in pairs(util.parse_folded(f)) do
      total = total + v
      if (";" .. k .. ";"):find(";sleeper;", 1, true) then sleeper = sleeper + v end
      if (";" .. k .. ";"):find(";burner;", 1, true) then burner = burner + v end
    end
    assert.are.equal(off_ns + cpu_ns, total)
    assert.are.equal(burn_ns, burner)
    assert.is_true(sleeper >= 0.9 * off_ns)
    local svg, sok = util.luaperf("flame -i " .. p .. " --wall -o " .. dir .. "/wall.svg")
    assert(sok, svg)
    assert.matches("sleeper", util.read(dir .. "/wall.svg"))
    assert.matches("burner", util.read(dir .. "/wall.svg"))
    -- a file without off-CPU samples is refused with why
    local e, eok = util.luaperf("flame -i " .. sleep_data:gsub("sleep", "nooff") .. " --wall")
    assert.is_false(eok)
    local plain = record("plain.data", "-e cpu-clock -- " .. prog .. " sleep 1 10 10")
    e, eok = util.luaperf("flame -i " .. plain .. " --wall --format folded")
    assert.is_false(eok)
    assert.matches("no 'offcpu%-time' samples in this file: record with %-%-off%-cpu", e)
  end)

  it("a shell's children: every wait of every process, whatever ring each record came in", function()
    -- sh waits 0.2 s for one sleep, then 0.1 s for another, each sleeping
    -- as long: 0.6 s.  A child's switch-in and EXIT, drained from another
    -- CPU's ring before its FORK, once made the FORK forget them.
    for i = 1, 5 do
      local p, out = record("shell" .. i .. ".data", "--off-cpu -- " .. util.target("sh -c 'sleep 0.2; sleep 0.1'"))
      local total, per = 0, {}
      for _, s in ipairs(perf_script(p, "offcpu-time")) do
        total = total + s.period
        per[s.tid] = (per[s.tid] or 0) + s.period
      end
      local n = 0
      for _ in pairs(per) do n = n + 1 end
      assert.are.equal(3, n, out)
      assert.is_true(total >= 0.58e9 and total <= 0.8e9, string.format("run %d: %.3f s\n%s", i, total / 1e9, out))
    end
  end)

  it("--off-cpu-thresh (microseconds) drops shorter waits", function()
    local p, out = record("thresh.data", "--off-cpu --off-cpu-thresh 150000 -- " .. util.target(prog .. " sleep 3 100 10"))
    assert.are.equal(0, #perf_script(p, "offcpu-time"))
    assert.matches("%d+ shorter than the threshold", out)
    assert.is_true(tonumber(out:match("(%d+) shorter than the threshold")) >= 3)
    p = record("thresh2.data", "--off-cpu --off-cpu-thresh 50000 -- " .. util.target(prog .. " sleep 3 100 10"))
    local kept = perf_script(p, "offcpu-time")
    assert.are.equal(3, #kept)
    for _, s in ipairs(kept) do assert.is_true(s.period >= 50e6) end
    local e, ok = util.luaperf("record -o " .. dir .. "/x.data --off-cpu-thresh 5 -- true")
    assert.is_false(ok)
    assert.matches("%-%-off%-cpu%-thresh needs %-%-off%-cpu", e)
  end)

  it("threads waiting on a mutex: each waiting thread's stack, weighted by its wait", function()
    local p, out = record("mutex.data", "--off-cpu -- " .. util.target(prog .. " mutex 3 300"))
    local theirs = perf_script(p, "offcpu-time")
    local per_tid, main_pid = {}, nil
    for _, s in ipairs(theirs) do
      -- (take_lock calls into glibc, which keeps no frame pointer: the
      -- chain goes from the futex wait to take_lock's caller)
      if has(s.syms, "waiter") then
        assert.is_true(has(s.syms, "__GI___lll_lock_wait"))
        per_tid[s.tid] = (per_tid[s.tid] or 0) + s.period
      end
      if has(s.syms, "holder") then main_pid = s.pid end
    end
    local n = 0
    for tid, ns in pairs(per_tid) do
      n = n + 1
      assert.are_not.equal(main_pid, tid)
      -- each waited for most of the 300 ms the lock was held
      assert.is_true(ns >= 0.2e9 and ns <= 0.6e9, string.format("tid %d: %.3f s", tid, ns / 1e9))
    end
    assert.are.equal(3, n, out)
    -- luaperf report by thread shows the three waiters
    local rep, ok = util.luaperf("report -i " .. p .. " --stdio --sort tid --no-children --symbol schedule --comm offcpu_work")
    assert(ok, rep)
    local rows = 0
    for _ in rep:gmatch("\n%s+[%d.]+%%[^\n]*offcpu_work") do rows = rows + 1 end
    assert.is_true(rows >= 3, rep)
  end)

  it("perf.session{ offcpu = true }: s:profile() weighs blocked time; stats say what was kept", function()
    local s = assert(perf.session{ offcpu = true, cmd = util.target_argv{ prog, "sleep", "5", "100", "50" } })
    assert.are.same({ "offcpu-time" }, s:events())
    assert(s:start())
    repeat local _, done = s:poll(100); s:profile() until done
    s:wait()
    local p = s:profile()
    local n, ns = p:total()
    -- at least the naps asked for; a loaded host wakes the sleeper late
    assert.is_true(ns >= 0.95 * 5e8 and ns <= 1.25 * 5e8, string.format("s:profile() period %.3f s", ns / 1e9))
    local st = s:stats()
    assert.are.equal(n, st.offcpu.samples)
    assert.are.equal(ns, st.offcpu.ns)
    assert.is_true(st.offcpu.switch_outs >= n)
    local under = 0
    for _, row in ipairs(p:top{ by = "sym", children = true, weight = "period" }) do
      if row.sym == "sleeper" then under = row.total end
    end
    assert.is_true(under >= 0.9 * ns)
    s:close()
    -- with a CPU event: both events, each with its own weights
    s = assert(perf.session{ events = { "cpu-clock" }, freq = 999, offcpu = true,
      cmd = { prog, "sleep", "2", "50", "100" } })
    assert.are.same({ "cpu-clock", "offcpu-time" }, s:events())
    s:close()
    -- argument errors raise
    assert.has_error(function() perf.session{ offcpu = true, offcpu_thresh = -1, cmd = { prog } } end)
    assert.has_error(function() perf.session{ events = {}, cmd = { prog } } end)
    local ok, err = perf.session{ offcpu = true, overwrite = true, cmd = { prog } }
    assert.is_nil(ok)
    assert.matches("overwrite", err)
  end)

  it("errors: no permission, an exited pid", function()
    if not util.is_root() then return end
    local out, ok = util.sh(util.as_nobody_prefix() .. "bin/luaperf record --off-cpu -o /tmp/nobody-oc.data -- true")
    assert.is_false(ok)
    assert.matches("off%-CPU samples are taken in the kernel", out)
    assert.matches("CAP_PERFMON", out)
    assert.matches("perf_event_paranoid<=1", out)
    local dead = tonumber((util.sh("sh -c 'echo $$'")))
    local e, eok = util.luaperf("record --off-cpu -o " .. dir .. "/dead.data -p " .. dead)
    assert.is_false(eok)
    assert.matches("luaperf record: ", e)
    assert.matches("exited or never existed", e)
  end)
end)
