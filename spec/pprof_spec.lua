-- Exports: pprof (checked by `go tool pprof -top`, Debian's golang-go),
-- speedscope JSON, and the gzip binding under them.
local util = require "util"
local perf = require "perf"
local stacks = require "perf.stacks"
local report = require "perf.report"
local folded = require "perf.folded"
local pprof = require "perf.pprof"

-- go tool pprof -top rows: { name = flat } in order, and the unit line.
local function pprof_top(path, extra)
  local out, ok = util.sh("HOME=" .. util.q(path:match("^(.*)/")) .. " GOFLAGS=-mod=mod go tool pprof -top " ..
    (extra or "") .. " " .. util.q(path) .. " 2>&1")
  assert(ok, out)
  local rows = {}
  local started = false
  for line in out:gmatch("[^\n]+") do
    if line:match("^%s+flat%s+flat%%") then
      started = true
    elseif started then
      local flat, flatpct, name = line:match("^%s*(%S+)%s+([%d%.]+)%%%s+%S+%s+%S+%s+%S+%s+(.-)%s*$")
      if flat then rows[#rows + 1] = { flat = flat, pct = tonumber(flatpct), name = name } end
    end
  end
  return rows, out
end

describe("pprof export", function()
  local dir, data, list
  setup(function()
    dir = util.tmpdir()
    local prog = util.cc(util.read(util.root .. "/spec/progs/shaped.c"),
      "-O1 -g -fno-omit-frame-pointer -fno-inline", "shaped")
    data = dir .. "/shaped.data"
    local out, ok = util.perf("record -q -e cpu-clock -F 999 -g -o " .. data .. " " .. prog .. " 1000 2>&1")
    assert(ok, out)
    list = assert(stacks.load(data))
  end)
  teardown(function() util.sh("rm -rf " .. util.q(dir)) end)

  it("loads in go tool pprof with the same top functions and counts as our report", function()
    local pb = dir .. "/profile.pb.gz"
    local out, ok = util.luaperf("flame -i " .. data .. " --format pprof -o " .. pb)
    assert.is_true(ok, out)
    local rows, raw = pprof_top(pb, "-sample_index=samples")
    assert.truthy(raw:find("Type: samples", 1, true), raw)
    local ours = report.top(list, { by = "sym", weight = "samples" })
    assert.is_true(#rows >= 3, raw)
    for i = 1, 3 do
      assert.equal(ours[i].sym, rows[i].name, raw)
      assert.equal(tostring(ours[i].self), rows[i].flat, raw)
    end
    -- the event's period, in nanoseconds for cpu-clock: flat% as perf report's self%
    local prow, praw = pprof_top(pb)
    assert.truthy(praw:find("Type: cpu%-clock"), praw)
    local rep = util.sh("perf report -i " .. data .. " --stdio --no-children --sort sym -g none 2>/dev/null")
    for i = 1, 3 do
      local want = tonumber(rep:match("\n%s*([%d%.]+)%%%s+%[%.%] " .. prow[i].name:gsub("%p", "%%%0") .. "\n"))
      assert.is_not_nil(want, prow[i].name)
      assert.is_true(math.abs(want - prow[i].pct) < 0.011, prow[i].name .. " " .. want .. " vs " .. prow[i].pct)
    end
  end)

  it("speedscope of a perf.data: one sample per time-ordered run, weights adding up", function()
    local path = dir .. "/p.speedscope.json"
    local out, ok = util.luaperf("flame -i " .. data .. " --format speedscope -o " .. path)
    assert.is_true(ok, out)
    local py, pok = util.sh("python3 -c " .. util.q([[
import json, sys
d = json.load(open(sys.argv[1]))
p = d["profiles"][0]
print(int(sum(p["weights"])), len(p["samples"]))
]]) .. " " .. path)
    assert.is_true(pok, py)
    local total, n = py:match("^(%d+) (%d+)")
    assert.equal(list.meta.samples, tonumber(total))
    assert.is_true(tonumber(n) > 1)
  end)

  it("exports a profile of named frames with an unknown thread (tid -1), as pprof reads it", function()
    local perf = require "perf"
    local p = perf.profile()
    p:add_stack({ "leaf", "mid", "main" }, { count = 3, pid = 1 })
    p:add_stack({ "other", "main" }, { count = 1, pid = 1 })
    local pb = dir .. "/named.pb.gz"
    util.write(pb, assert(p:pprof{}))
    local rows, raw = pprof_top(pb, "-sample_index=samples")
    assert.are.equal("leaf", rows[1].name, raw)
    assert.are.equal("3", rows[1].flat, raw)
    assert.are.equal("other", rows[2].name, raw)
    assert.are.equal("1", rows[2].flat, raw)
  end)

  it("encodes varints of 64-bit addresses without losing bits", function()
    assert.equal("\172\2", pprof.varint(300))
    assert.equal("\128\128\128\136\248\255\255\255\255\1", pprof.varint("0xffffffff81000000"))
    if math.type then
      assert.equal(pprof.varint("0xffffffff81000000"), pprof.varint(-2130706432))
    end
  end)

  it("gzip and gunzip round-trip, and bad input is an error, not a crash", function()
    local s = string.rep("luaperf ", 50000)
    local gz = perf.core.gzip(s)
    assert.is_true(#gz < #s / 10)
    assert.equal(s, perf.core.gunzip(gz))
    local r, err = perf.core.gunzip("not gzip at all")
    assert.is_nil(r)
    assert.truthy(err:find("bad data", 1, true))
    r, err = perf.core.gunzip(gz:sub(1, #gz - 20))
    assert.is_nil(r)
    assert.truthy(err:find("truncated", 1, true))
    r, err = perf.core.gunzip(gz, 1000)
    assert.is_nil(r)
    assert.truthy(err:find("limit", 1, true))
    assert.has_error(function() perf.core.gzip({}) end)
    -- zcat agrees
    util.write(dir .. "/x.gz", gz)
    assert.equal(#s, #util.sh("zcat " .. dir .. "/x.gz"))
  end)
end)

describe("speedscope export", function()
  it("is JSON whose samples and weights add up to the profile", function()
    local dir = util.tmpdir()
    local list = assert(folded.parse("main;a;b 3\nmain;a 2\nmain;\"q\\\\ 1\n"))
    local path = dir .. "/p.json"
    util.write(path, require("perf.speedscope").render(list))
    local out, ok = util.sh("python3 -c " .. util.q([[
import json, sys
d = json.load(open(sys.argv[1]))
p = d["profiles"][0]
fr = d["shared"]["frames"]
assert p["type"] == "sampled"
assert len(p["samples"]) == len(p["weights"])
assert all(0 <= i < len(fr) for s in p["samples"] for i in s)
print(sum(p["weights"]), p["endValue"], "|".join(fr[i]["name"] for i in p["samples"][0]))
]]) .. " " .. path)
    assert.is_true(ok, out)
    assert.equal("6 6 main|a|b", (out:gsub("%s+$", "")))
    util.sh("rm -rf " .. util.q(dir))
  end)
end)
