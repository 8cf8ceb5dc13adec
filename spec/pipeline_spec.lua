-- The core's pipelines from C, without Lua (issue 13): perfdata__profile
-- (perf.data -> stack table) and session__record (session -> perf.data),
-- driven by spec/harness/pipeline.c linked against the core objects.
-- References: perf record's own files, and f:profile() (the same core
-- function through the binding) on them.
local perf = require "perf"
local util = require "util"

local SHAPED = util.root .. "/build/progs/shaped"
local bin

local function harness()
  if bin then return bin end
  bin = util.build_with_core(util.root .. "/spec/harness/pipeline.c", "pipeline",
    "-O1 -g -Wall -Wextra -Werror")
  return bin
end

-- "key=value ..." of the harness's first line, as numbers.
local function fields(text)
  local t = {}
  for k, v in text:match("^[^\n]*"):gmatch("(%w+)=(%d+)") do t[k] = tonumber(v) end
  return t
end

local function run(...)
  local args = {}
  for i, a in ipairs({ ... }) do args[i] = util.q(a) end
  local text, ok = util.sh(util.q(harness()) .. " " .. table.concat(args, " "))
  assert(ok, text)
  return text
end

local function perf_record(args, out)
  local _, ok = util.sh("perf record -q " .. args .. " -o " .. out .. " " .. SHAPED .. " 300 >/dev/null 2>&1")
  assert(ok, "perf record " .. args)
end

describe("pipeline: perfdata__profile from C", function()
  it("counts what f:profile counts, in either read order", function()
    local dir = util.tmpdir()
    local file = dir .. "/fp.data"
    perf_record("-g -e cpu-clock", file)
    local text = run("profile", file)
    local c = fields(text)
    local u = fields(run("profile", file, "unordered"))
    assert.is_true(c.samples > 0, text)
    assert.equal(c.samples, u.samples)
    assert.equal(c.stacks, u.stacks)
    assert.is_true(c.comms >= 1, text)
    assert.equal(0, c.unwound)
    local f = assert(perf.open(file))
    local p = assert(f:profile{ symbolizer = perf.symbolizer() })
    local samples, period = p:total()
    assert.equal(c.samples, tonumber(samples))
    assert.equal(c.period, tonumber(period))
    assert.equal(c.stacks, p:count())
    f:close()
    -- the leaf symbols resolve (the symbolizer was fed the maps)
    assert.truthy(text:find("\n%d+ %d+ %d+ [%a_]"), text)
  end)

  it("unwinds DWARF samples, in time order even from a file opened unordered", function()
    local dir = util.tmpdir()
    local file = dir .. "/dwarf.data"
    perf_record("--call-graph dwarf,4096 -e cpu-clock", file)
    local ordered = run("profile", file)
    local unordered = run("profile", file, "unordered")
    local c = fields(ordered)
    assert.is_true(c.unwound > 0, ordered)
    assert.equal(c.samples, c.unwound)
    -- the same table, stack for stack, leaf names included
    assert.equal(ordered, unordered)
    local off = fields(run("profile", file, "nounwind"))
    assert.equal(0, off.unwound)
    assert.equal(c.samples, off.samples)
    assert.is_true(off.stacks < c.stacks)
  end)
end)

describe("pipeline: session__record from C", function()
  it("records a command into a perf.data that perf reads, then profiles it", function()
    local dir = util.tmpdir()
    local out = dir .. "/rec.data"
    local text = run("record", out, "--", SHAPED, "300")
    local r = fields(text)
    assert.equal(1, r.done)
    assert.equal(0, r.stopped)
    assert.is_true(r.recorded > 0 and r.written > 0, text)
    local p = fields(text:match("\n(records=[^\n]*)"))
    assert.equal(r.written, p.samples)
    local n = util.sh("perf report -i " .. out .. " --stats 2>/dev/null | awk '/SAMPLE events/ {print $3; exit}'")
    assert.equal(r.written, tonumber(n))
  end)
end)

-- base/bigmem.h: the big tables' blocks (a stack table, a view's frames,
-- hash slots) get mappings of their own from 2 MiB, advised for huge
-- pages; a sanitizer build keeps them in malloc, where it sees overflows.
describe("pipeline: big blocks", function()
  -- the harness, built once, and its output without the helper
  local bin, plain
  local function harness()
    if not bin then
      bin = util.build_with_core(util.root .. "/spec/harness/bigmem_check.c", "bigmem_check",
        "-O1 -g -Wall -Wextra -Werror")
      local ok
      plain, ok = util.sh(util.q(bin))
      assert(ok, plain)
    end
    return bin, plain
  end
  it("keep their contents through every growth, and big ones carry the huge-page advice; indexes grown in place find every slot", function()
    local _, text = harness()
    local t = {}
    for k, v in text:gmatch("([%w_]+)=(%-?%d+)") do t[k] = tonumber(v) end
    assert.are.same({ 1, 1, 3000, 1000000 }, { text:find("calloc=ok", 1, true) and 1,
      text:find("u64map=ok", 1, true) and 1, t.trials, t.count }, text)
    if util.preload then
      assert.are.equal(0, t.mapped, text)
    else
      assert.are.equal(2 * 1024 * 1024, t.mapped_at, text)
      assert.are.equal(1, t.mapped, text)
      if util.read("/sys/kernel/mm/transparent_hugepage/enabled") then
        assert.are.equal(1, t.advised, text)
      end
    end
  end)

  -- perf.prefault: a helper thread faults in the pages of new blocks
  it("are faulted in ahead by the prefault helper, which never changes a word the caller wrote", function()
    local bin, plain = harness()
    local text, ok2 = util.sh(util.q(bin) .. " prefault")
    assert(ok2, text)
    for _, k in ipairs({ "grow=ok", "calloc=ok", "u64map=ok", "slots=ok", "keytab=ok", "child=0" }) do
      assert.truthy(text:find(k, 1, true), k .. " in:\n" .. text)
    end
    if not util.preload then
      -- untouched pages stay out without the helper, come in with it
      assert.truthy(plain:find("faulted_in=0", 1, true), plain)
      assert.truthy(text:find("faulted_in=1", 1, true), text)
    end
  end)
end)
