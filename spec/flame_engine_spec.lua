-- Flame graphs laid out in the core (csrc/core/profile/pvflame: the merged
-- tree and the boxes drawn, v:flame{}) against the Lua layout of the
-- merged stack list (lua/perf/flame.lua): the same SVG, byte for byte, on a
-- recording made here by perf and on the foreign recordings of
-- ../shared/perfdata-corpus, through the command (LUAPERF_ENGINE=lua reads
-- the file in Lua) and through the API (flame.render_view against
-- flame.render of v:list{merge=true}), the cap on boxes included.
local util = require "util"
local perf = require "perf"
local stacks = require "perf.stacks"
local flame = require "perf.flame"

local dir, data
setup(function()
  dir = util.tmpdir()
  data = dir .. "/mixed.data"
  local out, ok = util.record_mixed(data)
  assert(ok, out)
end)
teardown(function() util.sh("rm -rf " .. util.q(dir)) end)

local function files()
  return util.with_corpus(data, { "perf.data.callgraph-3.4", "perf.data.systemwide.5-3.8",
                          "perf.data.systemwide.0-3.8", "perf.data.busy.1-3.8",
                          "perf.data.armv7-3.4", "perf.data.singleprocess-3.8" })
end

describe("luaperf flame's SVG", function()
  it("is the Lua engine's, byte for byte", function()
    local n = 0
    for _, path in ipairs(files()) do
      for _, args in ipairs({ "", "--inverted", "--no-comm", "--weight period",
                              "--minwidth 0", "--minwidth 3 --width 700", "--comm python3",
                              "--title 'a <b> & c'" }) do
        local cmd = "flame -i " .. path .. " -o - " .. args
        local a, aok, aerr = util.luaperf_split(cmd)
        local b, bok, berr = util.luaperf_split(cmd, "LUAPERF_ENGINE=lua ")
        assert.is_true(aok, aerr)
        assert.is_true(bok, berr)
        assert.are.equal(berr, aerr, cmd)
        assert.is_true(a == b, cmd .. ": the SVGs differ")
        n = n + 1
      end
    end
    assert.is_true(n >= 8)
  end)
end)

describe("flame.render_view", function()
  local function view_of(path)
    local v, meta = assert(stacks.open_view(path, {}))
    local list = v:list{ event = meta.view_event, merge = true }
    list.meta = meta
    return v, meta, list
  end

  it("draws what flame.render draws from the merged stack list, capped or not", function()
    for _, path in ipairs(files()) do
      local v, meta, list = view_of(path)
      for _, o in ipairs({ {}, { layout = "inverted" }, { comm = false, minwidth = 0 },
                           { weight = "period", width = 500 },
                           { minwidth = 0, maxboxes = 40 }, { maxboxes = 7, comm = false },
                           { minwidth = 2, maxboxes = 1 } }) do
        local vopts = { event = meta.view_event }
        local a, ai = flame.render_view(v, vopts, meta, o)
        local b, bi = flame.render(list, o)
        assert.is_true(a == b, path .. ": the SVGs differ")
        for _, k in ipairs({ "boxes", "omitted", "omitted_weight", "total" }) do
          assert.are.equal(bi[k], ai[k], path .. " " .. k)
        end
      end
      v:close()
    end
  end)

  it("keeps a capped graph's widest boxes, each with its parent", function()
    local v, meta = view_of(data)
    local r = v:flame{ event = meta.view_event, minwidth = 0, maxboxes = 25 }
    assert.is_true(r.capped)
    assert.are.equal(25, #r.names)
    assert.are.equal("all", r.names[1])
    assert.are.equal("root", r.kinds[1])
    assert.are.equal(r.total, r.values[1])
    -- preorder: each box lies within the last shallower one
    local open = {}
    for i = 1, #r.names do
      local d = r.depths[i]
      if d > 0 then
        local p = open[d - 1]
        assert.truthy(p, "box " .. i .. " has no parent drawn")
        assert.is_true(r.starts[i] >= r.starts[p] and
          r.starts[i] + r.values[i] <= r.starts[p] + r.values[p])
      end
      open[d] = i
    end
    assert.is_true(r.omitted > 0)
    assert.are.equal(r.nodes, #r.names + r.omitted)
    v:close()
  end)

  it("checks its arguments", function()
    local v = view_of(data)
    assert.has_error(function() v:flame{ maxboxes = 0 } end)
    assert.has_error(function() v:flame{ weight = "bytes" } end)
    assert.has_error(function() flame.render_view(v, {}, {}, { layout = "flamechart" }) end)
    v:close()
    assert.error_matches(function() v:flame{} end, "closed perf.ProfileView")
  end)
end)

describe("a view made by_label", function()
  -- a frame per label and kind instead of one per address of each
  -- process: folded stacks and flame graphs are the per-address view's,
  -- byte for byte, in less memory; reports are refused, not wrong
  it("folds and draws as the per-address view, in fewer bytes, and makes no reports", function()
    local smaller = 0
    for _, path in ipairs(files()) do
      local v, meta = assert(stacks.open_view(path, {}))
      local w = assert(stacks.open_view(path, { by_label = true }))
      for _, o in ipairs({ {}, { annotate = true }, { comm_frame = false },
                           { weight = "period" }, { comm = "perf" } }) do
        o.event = meta.view_event
        assert.are.equal(v:folded(o), w:folded(o), path)
      end
      local a = flame.render_view(v, { event = meta.view_event }, meta, {})
      local b = flame.render_view(w, { event = meta.view_event }, meta, {})
      assert.is_true(a == b, path .. ": the SVGs differ")
      local vb, wb = v:summary().bytes, w:summary().bytes
      assert.is_true(wb <= vb, path .. ": " .. wb .. " > " .. vb .. " bytes")
      if wb < vb then smaller = smaller + 1 end
      local rows, err = w:report{ by = "sym" }
      assert.is_nil(rows)
      assert.matches("made by_label", err)
      assert.error_matches(function() w:report{ by = "sym", where = { sym = "main" } } end,
        "by_label")
      v:close()
      w:close()
    end
    -- the system-wide recordings hold many processes of the same programs
    assert.is_true(smaller >= 3, smaller .. " files smaller")
  end)
end)
