-- The event catalog: perf.list and `luaperf list` against `perf list`.
local perf = require "perf"
local util = require "util"

local function ensure_tracefs()
  if not util.read("/sys/kernel/tracing/events/sched/sched_switch/id") and util.is_root() then
    util.sh("mount -t tracefs nodev /sys/kernel/tracing")
  end
  return util.read("/sys/kernel/tracing/events/sched/sched_switch/id") ~= nil
end

-- perf list's lines of one bracketed kind, as { "name OR alias", ... }.
local function perf_list(args, label)
  local out = util.perf("list " .. (args or ""))
  local r = {}
  for name, l in out:gmatch("\n  (%S.-)%s+%[([^%]]+)%]") do
    if l == label then r[#r + 1] = name end
  end
  local first_name, first_label = out:match("^  (%S.-)%s+%[([^%]]+)%]")
  if first_label == label then table.insert(r, 1, first_name) end
  return r
end

local function set(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

local function names(entries, kind)
  local r = {}
  for _, e in ipairs(entries) do
    if kind == nil or e.kind == kind then
      r[#r + 1] = e.alias and (e.name .. " OR " .. e.alias) or e.name
    end
  end
  return r
end

describe("perf.list", function()
  local have_tracefs = ensure_tracefs()
  local all = perf.list()

  it("has every software event perf lists, spelled the same", function()
    assert.are.same(perf_list("sw", "Software event"), names(all, "software"))
  end)

  it("has every kernel PMU event perf lists", function()
    local mine = set(names(all, "pmu"))
    for _, n in ipairs(perf_list("pmu", "Kernel PMU event")) do
      assert.is_true(mine[n] ~= nil, n)
    end
  end)

  it("has the tracepoints perf lists when tracefs is readable", function()
    if not have_tracefs then pending("tracefs not available") return end
    local theirs = perf_list("tracepoint", "Tracepoint event")
    assert.is_true(#theirs > 100)
    assert.are.same(theirs, names(all, "tracepoint"))
  end)

  it("marks hardware unavailable exactly when perf cannot count it", function()
    local out = util.perf("stat -x, -e cycles,instructions,branch-misses true")
    local supported = not out:find("<not supported>", 1, true)
    local hw = 0
    for _, e in ipairs(all) do
      if e.kind == "hardware" or e.kind == "cache" then
        assert.is_boolean(e.available)
        if e.name == "cpu-cycles" or e.name == "instructions" or e.name == "branch-misses" then
          assert.are.equal(supported, e.available, e.name)
        end
        hw = hw + 1
      end
    end
    -- 10 symbolic hardware events and perf's valid cache combinations.
    assert.are.equal(10 + 32, hw)
    assert.are.equal(supported, perf.caps().hardware)
  end)

  it("gives every entry its fields", function()
    local kinds = set{ "software", "hardware", "cache", "tracepoint", "pmu", "raw", "breakpoint" }
    for _, e in ipairs(all) do
      assert.is_string(e.name)
      assert.is_true(kinds[e.kind] ~= nil, e.kind)
      assert.is_string(e.desc)
      assert.is_boolean(e.available)
    end
  end)

  it("lists only names perf.parse accepts", function()
    local bad = {}
    for _, e in ipairs(all) do
      if e.kind ~= "raw" and not e.name:find("[<%[]") then
        local t, err = perf.parse(e.name)
        if not t then bad[#bad + 1] = err
        elseif e.alias and not perf.parse(e.alias) then bad[#bad + 1] = e.alias end
      end
    end
    assert.are.same({}, bad)
  end)

  it("filters by a pattern anywhere in the name, as perf list does", function()
    local mine = set(names(perf.list("cs")))
    assert.is_true(mine["context-switches OR cs"])
    local theirs = {}
    for _, l in ipairs{ "Software event", "Kernel PMU event", "Tracepoint event" } do
      for _, n in ipairs(perf_list("cs", l)) do theirs[#theirs + 1] = n end
    end
    for _, n in ipairs(theirs) do assert.is_true(mine[n] ~= nil, n) end
    for n in pairs(mine) do
      assert.truthy(n:find("cs", 1, true), n)
    end
    local tp = perf.list("sched:sched_switch")
    if have_tracefs then
      assert.are.same({ "sched:sched_switch" }, names(tp))
    end
    for _, e in ipairs(perf.list("sw")) do assert.are.equal("software", e.kind) end
    assert.are.same({}, perf.list("no-such-event-anywhere"))
  end)

  it("rejects an overlong pattern and raises on a wrong type", function()
    local t, err = perf.list(string.rep("x", 400))
    assert.is_nil(t)
    assert.is_string(err)
    assert.has_error(function() perf.list({}) end)
  end)
end)

describe("luaperf list", function()
  it("prints software events exactly as perf list does", function()
    local out, ok = util.luaperf("list sw")
    assert.is_true(ok, out)
    local theirs = util.perf("list sw")
    local want = {}
    for line in theirs:gmatch("[^\n]+") do
      if line:find("[Software event]", 1, true) then want[#want + 1] = line end
    end
    local got = {}
    for line in out:gmatch("[^\n]+") do got[#got + 1] = line end
    assert.are.same(want, got)
  end)

  it("marks hardware events that do not open here", function()
    local out, ok = util.luaperf("list hw")
    assert.is_true(ok, out)
    local line = out:match("  cpu%-cycles OR cycles[^\n]*")
    assert.truthy(line, out)
    if perf.caps().hardware then
      assert.truthy(line:find("[Hardware event]", 1, true), line)
    else
      assert.truthy(line:find("[Hardware event, not supported]", 1, true), line)
    end
  end)

  it("takes several patterns and rejects unknown options", function()
    local out, ok = util.luaperf("list cpu-clock task-clock")
    assert.is_true(ok, out)
    assert.truthy(out:find("  cpu-clock ", 1, true))
    assert.truthy(out:find("  task-clock ", 1, true))
    local err, ok2 = util.luaperf("list --bogus")
    assert.is_false(ok2)
    assert.truthy(err:find("unknown option '--bogus'", 1, true))
  end)
end)
