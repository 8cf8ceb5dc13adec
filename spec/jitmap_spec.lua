-- perf.jitmap: LuaJIT's traces named in /tmp/perf-PID.map.  The reference
-- is perf itself: a program recorded from outside by perf record, its
-- samples in JIT code named by perf report from the map the program wrote.
local util = require "util"

-- perf report --sort dso,sym: the samples in JIT code ("[JIT] tid N"), and
-- those whose symbol has `want` in its name.
local function jit_share(report, want)
  local all, jitted, named = 0, 0, 0
  for key, pcts in pairs(util.report_rows(report)) do
    local p = pcts[1]
    all = all + p
    if key:find("[JIT] tid", 1, true) then
      jitted = jitted + p
      if key:find(want, 1, true) then named = named + p end
    end
  end
  return all, jitted, named
end

local function both_reports(data)
  local theirs = util.perf_stdout("report -i " .. data .. " --sort dso,sym --stdio")
  local ours, ok = util.luaperf("report -i " .. data .. " --sort dso,sym")
  assert(ok, ours)
  return theirs, ours
end

describe("perf.jitmap", function()
  if util.lua ~= "luajit" then
    it("returns nil and a message on plain Lua", function()
      local perf = require "perf"
      local jm, err = perf.jitmap()
      assert.is_nil(jm)
      assert.truthy(err:find("needs LuaJIT", 1, true), err)
    end)
    return
  end

  local perf = require "perf"

  it("raises on a wrong argument and says why a write failed", function()
    assert.has_error(function() perf.jitmap(5) end,
      "bad argument #1 to 'jitmap' (table expected, got number)")
    local jm, err = perf.jitmap{ dir = "/nonexistent-luaperf" }
    assert.is_nil(jm)
    assert.truthy(err:find("cannot create /nonexistent-luaperf/perf-", 1, true), err)
    assert.truthy(err:find("No such file or directory", 1, true), err)
  end)

  it("perf report and luaperf report name the hot function for most JIT samples", function()
    local dir = util.tmpdir()
    util.write(dir .. "/prog.lua", [[
local perf = require "perf"
local jm = assert(perf.jitmap())
local f = io.open(arg[1] .. "/pid", "w") f:write(jm:info().pid, "\n") f:close()
local function checksum(n)
  local h = 0
  for i = 1, n do h = (h * 31 + i) % 1000000007 end
  return h
end
local t0 = os.clock()
while os.clock() - t0 < 1.2 do checksum(1e6) end
]])
    local out, ok = util.sh("perf record -q -e cpu-clock -F 999 -o " .. dir .. "/perf.data -- " ..
      util.lua .. " " .. dir .. "/prog.lua " .. dir)
    assert(ok, out)
    local pid = assert(tonumber(util.read(dir .. "/pid")))
    local map = util.read("/tmp/perf-" .. pid .. ".map") or ""
    local theirs, ours = both_reports(dir .. "/perf.data")
    os.remove("/tmp/perf-" .. pid .. ".map")
    -- the map: perf's format, the trace named after the function and the
    -- loop's line
    assert.truthy(map:find("\n?%x+ %x+ TRACE_%d+ " .. dir:gsub("%p", "%%%0") ..
      "/prog%.lua:6 checksum\n"), map)
    for _, report in ipairs{ theirs, ours } do
      local all, jitted, named = jit_share(report, "prog.lua:6 checksum")
      local msg = map .. "\n" .. report
      assert.is_true(all > 90, msg)
      assert.is_true(jitted > 50, msg)          -- the loop runs compiled
      assert.is_true(named > 0.9 * jitted, msg) -- and perf names it
    end
    util.same_report_rows(ours, theirs)
  end)

  it("names follow the new code after jit.flush() (recorded with perf record -p)", function()
    local dir = util.tmpdir()
    util.write(dir .. "/prog.lua", [[
local perf = require "perf"
local dir = arg[1]
local function exists(p) local f = io.open(p) if f then f:close() return true end end
local function touch(p) io.open(p, "w"):close() end
local jm = assert(perf.jitmap())
local f = io.open(dir .. "/pid", "w") f:write(jm:info().pid, "\n") f:close()
local function checksum(n)
  local h = 0
  for i = 1, n do h = (h * 31 + i) % 1000000007 end
  return h
end
local function render(n)
  local s = 0
  for i = 1, n do s = s + (i * 7) % 13 end
  return s
end
local t0 = os.time()
checksum(1e5); touch(dir .. "/ready")
while not exists(dir .. "/go2") and os.time() - t0 < 20 do checksum(3e6) end
jit.flush()
render(1e5); touch(dir .. "/flushed")
while not exists(dir .. "/done") and os.time() - t0 < 30 do render(3e6) end
local info = jm:info()
f = io.open(dir .. "/info", "w") f:write(info.flushes, " ", info.traces, " ", info.entries, "\n") f:close()
]])
    local function wait_for(name)
      return "for i in $(seq 1 200); do [ -e " .. dir .. "/" .. name ..
        " ] && break; sleep 0.05; done; "
    end
    local rec = "perf record -q -e cpu-clock -F 999 -p $pid -o " .. dir
    local out, ok = util.sh(util.lua .. " " .. dir .. "/prog.lua " .. dir .. " & pid=$!; " ..
      wait_for("ready") .. rec .. "/before.data -- sleep 0.8; touch " .. dir .. "/go2; " ..
      wait_for("flushed") .. rec .. "/after.data -- sleep 0.8; touch " .. dir .. "/done; wait $pid")
    assert(ok, out)
    local pid = assert(tonumber(util.read(dir .. "/pid")))
    local map = util.read("/tmp/perf-" .. pid .. ".map") or ""
    local before = util.perf_stdout("report -i " .. dir .. "/before.data --sort dso,sym --stdio")
    local after, after_ours = both_reports(dir .. "/after.data")
    os.remove("/tmp/perf-" .. pid .. ".map")
    local flushes = util.read(dir .. "/info") or ""
    assert.truthy(flushes:match("^1 "), flushes)
    -- no two lines of the map cover the same byte: perf would pick one by
    -- its own rules, not the later one
    local ranges = {}
    for s, n in map:gmatch("(%x+) (%x+) [^\n]*\n") do
      ranges[#ranges + 1] = { tonumber(s, 16), tonumber(s, 16) + tonumber(n, 16) }
    end
    table.sort(ranges, function(a, b) return a[1] < b[1] end)
    for i = 2, #ranges do assert.is_true(ranges[i][1] >= ranges[i - 1][2], map) end
    -- before the flush: the old code, named after checksum
    local _, jitted, named = jit_share(before, "checksum")
    assert.is_true(jitted > 50 and named > 0.9 * jitted, map .. "\n" .. before)
    -- after: the new code, named after render, in perf and in luaperf
    for _, report in ipairs{ after, after_ours } do
      local _, j2, n2 = jit_share(report, "prog.lua:14 render")
      local _, _, old = jit_share(report, "checksum")
      assert.is_true(j2 > 50 and n2 > 0.9 * j2, map .. "\n" .. report)
      assert.is_true(old < 2, map .. "\n" .. report)
    end
  end)

  it("rewrites the map when code is reused: the later name wins", function()
    -- The writer perf.jitmap uses; LuaJIT picks new machine code addresses
    -- at random after a flush, so the reuse is made here.
    local perfmap = require "perf.perfmap"
    local dir = util.tmpdir()
    local w = perfmap.new(dir)
    assert(w:add{ start = 0x10000, size = 0x100, name = "TRACE_1 old.lua:1 old" })
    assert(w:open())
    assert(w:add{ start = 0x20000, size = 0x80, name = "TRACE_2 keep.lua:2 keep" })
    local appended = util.read(w.path)
    assert(w:add{ start = 0x10080, size = 0x100, name = "TRACE_1 new.lua:3 new" })
    local text = util.read(w.path)
    w:close()
    assert.equal("10000 100 TRACE_1 old.lua:1 old\n20000 80 TRACE_2 keep.lua:2 keep\n", appended)
    assert.equal("20000 80 TRACE_2 keep.lua:2 keep\n10080 100 TRACE_1 new.lua:3 new\n", text)
    assert.equal(2, w.rewrites)
  end)

  it("replaces a symlink at the map's path without following it", function()
    local dir = util.tmpdir()
    util.write(dir .. "/victim", "precious\n")
    local out = util.run_lua(dir .. "/prog.lua", [[
local perf = require "perf"
local ffi = require "ffi"
pcall(ffi.cdef, "int getpid(void);")
local dir = ]] .. string.format("%q", dir) .. [[

local path = dir .. "/perf-" .. ffi.C.getpid() .. ".map"
os.execute("ln -s " .. dir .. "/victim " .. path)
local function f(n) local s = 0 for i = 1, n do s = s + i end return s end
local jm = assert(perf.jitmap{ dir = dir })
f(1e5)
print(jm:info().path == path, jm:info().traces)
jm:close()
]])
    local path = util.sh("ls " .. dir .. "/perf-*.map"):gsub("%s+$", "")
    assert.equal("precious\n", util.read(dir .. "/victim"))
    local kind = util.sh("stat -c '%F %u' " .. path)
    assert.equal("regular file " .. util.sh("id -u"):gsub("%s+$", ""), (kind:gsub("%s+$", "")))
    assert.truthy(out:find("^true\t[1-9]"), out)
    assert.truthy(util.read(path):find(" TRACE_%d+ [^\n]*prog%.lua:7 f\n"), util.read(path))
  end)

  it("close restores the trace handler it replaced and stops writing", function()
    local dir = util.tmpdir()
    local out = util.run_lua(dir .. "/prog.lua", [[
local perf = require "perf"
local seen = 0
local function mine() seen = seen + 1 end
jit.attach(mine, "trace")
local jm = assert(perf.jitmap{ dir = ]] .. string.format("%q", dir) .. [[ })
assert(perf.jitmap() == jm, "one map a process")
local function f(n) local s = 0 for i = 1, n do s = s + i end return s end
f(1e5)
local during = seen
local path, entries = jm:info().path, jm:info().entries
jm:close()
local size = #io.open(path):read("*a")
local g = loadstring("local s = 0 for i = 1, 1e5 do s = s + i * 2 end return s")
g()
local slots = 0
for _, h in pairs(debug.getregistry()._VMEVENTS) do if h == mine then slots = slots + 1 end end
print(during > 0, seen > during, slots, entries > 0, #io.open(path):read("*a") == size,
      jm:info().on)
]])
    assert.equal("true\ttrue\t1\ttrue\ttrue\tfalse\n", out)
  end)
end)
