-- Counting as an unprivileged user (nobody), at the machine's
-- perf_event_paranoid: kernel counting is refused with the paranoid
-- message, user-space self-counting (:u) works; luaperf stat falls back
-- to :u as perf stat does.  The module, the Lua files and a test program
-- are copied to a world-readable directory, since the checkout may not be.
local util = require "util"

local TOUCH = util.read(util.root .. "/spec/progs/touch_pages.c")

local function paranoid()
  return tonumber((util.read("/proc/sys/kernel/perf_event_paranoid") or "2"):match("-?%d+"))
end

describe("unprivileged counting", function()
  local dir, can
  local function as_nobody(cmd)
    return util.sh(util.as_nobody_prefix() .. cmd)
  end
  local function lua_as_nobody(code)
    util.write(dir .. "/t.lua", code)
    util.sh("chmod 644 " .. dir .. "/t.lua")
    return as_nobody(util.lua .. " t.lua")
  end

  setup(function()
    can = util.is_root() and util.sh("command -v setpriv") ~= "" and select(2, util.sh("id nobody"))
    if not can then return end
    dir = util.nobody_tree().dir
    local prog = util.cc(TOUCH, "-O1", "touch")
    assert(select(2, util.sh("cp " .. prog .. " " .. dir .. "/touch && chmod a+rx " .. dir .. "/touch")))
  end)

  it("refuses kernel counting with the paranoid message; :u self-counting works", function()
    if not can then return pending("needs root, setpriv and the nobody user") end
    if paranoid() < 2 then return pending("perf_event_paranoid is below 2 here") end
    local out = lua_as_nobody([[
      local perf = require "perf"
      local c, msg, errno = perf.counter("context-switches")
      print("KERNEL", tostring(c), errno, msg)
      local u = assert(perf.counter("task-clock:u"))
      local x = 0
      for i = 1, 1000000 do x = x + i end
      local r = u:read()
      print("USER", r.value > 0 and "counted" or "zero", r.value)
      local a, amsg, aerrno = perf.counter("task-clock:u", { cpu = "all" })
      print("ALL", tostring(a), aerrno, amsg)
    ]])
    local p = paranoid()
    assert.truthy(out:find("KERNEL\tnil\t13\tcannot open 'context-switches' (Permission denied): " ..
      "perf_event_paranoid is " .. p .. ": kernel profiling needs CAP_PERFMON (or root) or " ..
      "kernel.perf_event_paranoid<=1; add :u to count user space only", 1, true), out)
    assert.truthy(out:find("USER\tcounted", 1, true), out)
    assert.truthy(out:find("ALL\tnil\t13\t", 1, true), out)
    assert.truthy(out:find("CPU-wide counting", 1, true), out)
  end)

  it("luaperf stat falls back to :u like perf stat, and counts the same page faults", function()
    if not can then return pending("needs root, setpriv and the nobody user") end
    if paranoid() < 2 then return pending("perf_event_paranoid is below 2 here") end
    local ref = as_nobody("perf stat -x, -e page-faults ./touch 2000")
    local out, ok = as_nobody("./bin/luaperf stat -x, -e page-faults ./touch 2000")
    assert.is_true(ok, out)
    local rv = tonumber(ref:match("(%d+),,page%-faults:u,"))
    local v = tonumber(out:match("(%d+),,page%-faults:u,"))
    assert.truthy(rv, ref)
    assert.truthy(v, out)
    assert.is_true(math.abs(v - rv) <= 0.02 * rv, out .. ref)
    -- System-wide is refused outright, with the reason.
    local aout, aok = as_nobody("./bin/luaperf stat -a -e task-clock:u -- true")
    assert.is_false(aok)
    assert.truthy(aout:find("perf_event_paranoid is", 1, true), aout)
  end)
end)
