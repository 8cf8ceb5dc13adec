-- perf.caps() against the files it summarises and against perf itself.
local perf = require "perf"
local util = require "util"

-- The interpreter under test, with the sanitizer runtime when make test-asan
-- preloads one (child processes load our module too).
local function interp()
  return (util.preload and ("env LD_PRELOAD=" .. util.q(util.preload) .. " ") or "") .. util.lua
end

local function sysctl(name)
  local s = util.read("/proc/sys/kernel/" .. name)
  return s and tonumber(s:match("%-?%d+"))
end

describe("perf.caps", function()
  local caps = perf.caps()

  it("reports the perf_event sysctls", function()
    assert.are.equal(sysctl("perf_event_paranoid"), caps.paranoid)
    assert.are.equal(sysctl("perf_event_max_sample_rate"), caps.max_sample_rate)
    assert.are.equal(sysctl("perf_event_mlock_kb"), caps.mlock_kb)
    assert.are.equal(sysctl("perf_event_max_stack"), caps.max_stack)
    assert.are.equal(sysctl("nmi_watchdog"), caps.nmi_watchdog)
    assert.are.equal(sysctl("kptr_restrict"), caps.kptr_restrict)
  end)

  it("lists the PMUs with their types", function()
    local out = util.sh("cd /sys/bus/event_source/devices && for p in *; do echo $p $(cat $p/type); done")
    local want = {}
    for name, t in out:gmatch("(%S+) (%d+)") do want[name] = tonumber(t) end
    assert.are.same(want, caps.pmus)
    -- The kernel's fixed types.
    assert.are.equal(1, caps.pmus.software)
    assert.are.equal(2, caps.pmus.tracepoint)
    assert.are.equal(5, caps.pmus.breakpoint)
    assert.is_table(caps.max_precise)
    assert.is_table(caps.branches)
  end)

  it("says whether hardware events open, as perf stat finds", function()
    local out = util.perf("stat -x, -e cycles:u true")
    assert.are.equal(not out:find("<not supported>", 1, true), caps.hardware)
  end)

  it("finds tracefs where it is mounted", function()
    local mounts = util.read("/proc/mounts")
    local where
    for dir in mounts:gmatch("%S+ (%S+) tracefs ") do
      if dir == "/sys/kernel/tracing" or dir == "/sys/kernel/debug/tracing" then
        where = where or dir
      end
    end
    if where then
      assert.is_string(caps.tracefs)
      assert.truthy(util.read(caps.tracefs .. "/events/sched/sched_switch/id") or
                    not caps.tracefs_readable)
    else
      assert.is_nil(caps.tracefs)
    end
  end)

  it("reads caps/max_precise and caps/branches", function()
    local dir = util.tmpdir()
    util.sh("mkdir -p " .. dir .. "/cpu/caps " .. dir .. "/msr")
    util.write(dir .. "/cpu/type", "4\n")
    util.write(dir .. "/cpu/caps/max_precise", "3\n")
    util.write(dir .. "/cpu/caps/branches", "32\n")
    util.write(dir .. "/msr/type", "9\n")
    local code = [[local c = require("perf").caps()
      print(c.pmus.cpu, c.pmus.msr, c.max_precise.cpu, c.branches.cpu, c.max_precise.msr)]]
    local out, ok = util.sh("LUAPERF_PMU_ROOT=" .. dir .. " " .. interp() .. " -e " .. util.q(code))
    util.sh("rm -rf " .. dir)
    assert.is_true(ok, out)
    assert.are.equal("4\t9\t3\t32\tnil\n", out)
  end)

  it("works unprivileged", function()
    if not util.is_root() then pending("needs root to drop to nobody") return end
    local code = [[local c = require("perf").caps(); print(c.paranoid, c.hardware)]]
    local out, ok = util.sh(util.as_nobody_prefix() .. util.lua .. " -e " .. util.q(code))
    assert.is_true(ok, out)
    assert.are.equal(tostring(caps.paranoid) .. "\t" .. tostring(caps.hardware) .. "\n", out)
  end)
end)
