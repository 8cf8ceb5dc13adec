-- The report engine in the core (profile views: csrc/core/profile/profview,
-- pvreport, pvfolded, pvtext) against the Lua one it replaces on perf.data
-- files (lua/perf/stacks.lua, report.lua, folded.lua, cli/report.lua): the
-- same frames, rows, call graphs, folded stacks and report text, on a
-- recording made here by perf and on the foreign recordings of
-- ../shared/perfdata-corpus.  Agreement with perf itself is checked by the
-- report specs (fresh_spec, corpus specs), which now run the core engine.
local util = require "util"
local perf = require "perf"
local stacks = require "perf.stacks"
local report = require "perf.report"
local folded = require "perf.folded"

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
                          "perf.data.busy.1-3.8", "perf.data.armv7-3.4" })
end

-- the file's profile, its symbolizer, its view and the Lua stack list
local function load(path)
  local f = assert(perf.open(path, { unordered = true }))
  local sym = assert(stacks.file_symbolizer(f, {}))
  local p = assert(f:profile{ symbolizer = sym })
  f:close()
  local v = assert(p:view{ symbolizer = sym })
  local list = stacks.from_profile(p, sym, {})
  return p, v, list
end

-- Two reports' rows agree, field by field (what names the case).
local function same_rows(a, b, what, fields)
  assert.are.equal(#a, #b, what)
  assert.are.equal(a.total, b.total, what)
  for i, r in ipairs(a) do
    for _, k in ipairs(fields) do
      assert.are.equal(r[k], b[i][k], what .. " row " .. i .. " " .. k)
    end
  end
end

local frame_fields = { "addr", "kind", "name", "mangled", "dso", "file", "line", "build_id",
  "offset", "rel" }

describe("a profile view", function()
  it("holds the frames and stacks the Lua builder makes", function()
    for _, path in ipairs(files()) do
      local _, v, list = load(path)
      local vl = v:list()
      assert.are.equal(#list, #vl, path)
      assert.is_true(#list > 10, path .. ": " .. #list .. " stacks")
      for i, s in ipairs(list) do
        local t = vl[i]
        for _, k in ipairs({ "count", "period", "pid", "tid", "comm", "thread_comm", "event" }) do
          assert.are.equal(s[k], t[k], path .. " stack " .. i .. " " .. k)
        end
        assert.are.equal(#s.frames, #t.frames, path .. " stack " .. i)
        for j, fr in ipairs(s.frames) do
          for _, k in ipairs(frame_fields) do
            assert.are.equal(fr[k], t.frames[j][k], path .. " stack " .. i .. " frame " .. j .. " " .. k)
          end
        end
      end
    end
  end)

  it("writes its report table to a file as it makes it, and says when it cannot", function()
    local _, v = load(data)
    local opts = function(extra)
      local o = { by = { "comm", "dso", "sym" }, children = true, comm_cut = 15,
        columns = { "children", "self", "comm", "dso", "sym" } }
      for k, x in pairs(extra or {}) do o[k] = x end
      return o
    end
    local text, n, all = v:report_text(opts())
    assert.is_true(n > 10 and #text > 1000, tostring(n))
    local path = dir .. "/table.txt"
    local fh = assert(io.open(path, "w"))
    local w, n2, all2 = v:report_text(opts{ out = fh, head = "# head\n" })
    assert.are.equal(fh, w)
    assert.are.equal(n, n2)
    assert.are.equal(all, all2)
    fh:close()
    fh = assert(io.open(path, "rb"))
    local got = fh:read("a")
    fh:close()
    assert.are.equal("# head\n" .. text, got)
    -- a bad option: an error, and nothing written
    fh = assert(io.open(path, "w"))
    assert.has_error(function() v:report_text(opts{ out = fh, head = "x", columns = { "nosuch" } }) end)
    assert.are.equal(0, fh:seek("end"))
    fh:close()
    assert.has_error(function() v:report_text(opts{ out = fh }) end)
    -- a device with no room: nil, the message and errno (ENOSPC)
    local full = io.open("/dev/full", "w")
    if full then
      full:setvbuf("no")
      local r, msg, code = v:report_text(opts{ out = full })
      assert.is_nil(r)
      assert.are.equal(28, code, tostring(msg))
      full:close()
    end
  end)

  it("reports the rows report.top reports", function()
    local cases = {
      { by = { "comm", "dso", "sym" } },
      { by = { "comm", "dso", "sym" }, children = true, weight = "period", percentage = "absolute" },
      { by = { "sym" }, children = true },
      { by = { "dso" }, children = true },
      { by = { "comm", "thread" } },
      { by = { "thread", "sym" }, weight = "period" },
      { by = "sym", children = true, dso = "lib", percentage = "absolute" },
      { by = "comm,sym", sym = "^_" },
    }
    for _, path in ipairs(files()) do
      local _, v, list = load(path)
      for n, opts in ipairs(cases) do
        local a, b = report.top(list, opts), v:report(opts)
        local what = path .. " case " .. n
        same_rows(a, b, what, { "key", "self", "total", "samples", "sym", "dso", "kind", "comm",
                                "pid", "tid", "thread_comm" })
        assert.are.equal(a.all, b.all, what)
        for i, r in ipairs(a) do
          assert.is_true(math.abs(r.self_pct - b[i].self_pct) < 1e-9, what)
        end
      end
    end
  end)

  it("draws the call graphs report.callgraph draws", function()
    local function same(x, y, what)
      assert.are.equal(x.w, y.w, what)
      assert.are.equal(x.name, y.name, what)
      assert.are.equal(#x.kids, y.nkids, what)
      for i, k in ipairs(x.kids) do same(k, y.kids[i], what .. "/" .. tostring(k.name)) end
    end
    for _, path in ipairs(files()) do
      local _, v, list = load(path)
      for _, children in ipairs({ false, true }) do
        local opts = { by = { "comm", "dso", "sym" }, children = children, weight = "period" }
        local a, b = report.top(list, opts), v:report(opts)
        local shown = {}
        for i = 1, math.min(#b, 25) do shown[i] = b[i] end
        local trees = v:callgraph(shown, opts)
        for i = 1, #shown do
          same(report.callgraph(list, a[i], opts), trees[i], path .. " row " .. i)
        end
      end
    end
  end)

  it("folds the stacks folded.format folds", function()
    for _, path in ipairs(files()) do
      local _, v, list = load(path)
      for _, o in ipairs({ {}, { annotate = true }, { comm = false, weight = "period" } }) do
        local vo = { annotate = o.annotate, comm_frame = o.comm, weight = o.weight }
        local a, b = folded.format(list, o), v:folded(vo)
        assert.is_true(#a > 0, path)
        assert.are.equal(a, b, path)
      end
    end
  end)

  it("merges for flame graphs only what a flame graph draws alike", function()
    local flame = require "perf.flame"
    for _, path in ipairs(files()) do
      local _, v, list = load(path)
      local merged = v:list{ merge = true }
      assert.is_true(#merged <= #list)
      local a = flame.render(list, {})
      local b = flame.render(merged, {})
      assert.are.equal(a, b, path)
    end
  end)

  it("takes a junk word that looks like a named frame for an address", function()
    -- 0x4c50... is how the stack table marks its named frames (Lua
    -- functions); a frame-pointer walk can read any word
    if not math.type then return pending("an address above 2^53 needs Lua 5.3+ integers") end
    local p = perf.profile()
    local junk = 0x4c50000000123456
    p:add_stack({ 0x1000, junk }, { pid = 1, tid = 1, comm = "app" })
    p:add_stack({ "lua_fn", 0x1000 }, { pid = 1, tid = 1, comm = "app" })
    local list = p:view():list()
    assert.are.equal(2, #list)
    local root = list[1].frames[1]
    assert.is_nil(root.name)
    assert.are.equal("user", root.kind)
    assert.are.equal("lua_fn", list[2].frames[2].name)
    assert.are.equal("lua", list[2].frames[2].kind)
  end)

  it("keeps the leaves when a profile keeps one address per stack", function()
    local f = assert(perf.open(data, { unordered = true }))
    local sym = assert(stacks.file_symbolizer(f, {}))
    local p1 = assert(f:profile{ symbolizer = sym, max_stack = 1 })
    f:close()
    local _, v, list = load(data)
    local leaves = {}
    for _, s in ipairs(list) do
      local leaf = s.frames[#s.frames]
      local k = s.tid .. ":" .. s.comm .. ":" .. (leaf and leaf.addr or "")
      leaves[k] = (leaves[k] or 0) + s.count
    end
    local l1 = p1:view{ symbolizer = sym }:list()
    local ones, n = {}, 0
    for _, s in ipairs(l1) do
      assert.is_true(#s.frames <= 1)
      local k = s.tid .. ":" .. s.comm .. ":" .. (s.frames[1] and s.frames[1].addr or "")
      ones[k] = (ones[k] or 0) + s.count
    end
    for k, c in pairs(leaves) do
      assert.are.equal(c, ones[k], k)
      n = n + 1
    end
    for k in pairs(ones) do assert.truthy(leaves[k], k) end
    assert.is_true(n > 5)
    assert.are.equal(#v:report{ by = "comm,dso,sym" }, #p1:view{ symbolizer = sym }:report{ by = "comm,dso,sym" })
  end)
end)

describe("a profile of leaves keyed by symbol", function()
  -- f:profile{ symbols = true, threads = false }: each leaf becomes one
  -- place of its symbol and each stack is keyed by its command, not its
  -- thread (what luaperf report --no-children reads): the rows of every
  -- report without a thread key, the totals and perf's Command width are
  -- those of the profile keyed by thread and address
  local cases = {
    { by = { "comm", "dso", "sym" } },
    { by = { "sym" }, weight = "period" },
    { by = { "dso" } },
    { by = { "comm" } },
    { by = "comm,sym", sym = "^_", percentage = "absolute" },
    { by = "dso,sym", comm = "perf" },
  }
  it("reports the rows, totals and Command width of the profile keyed by thread", function()
    local folded_some = false
    for _, path in ipairs(files()) do
      local f = assert(perf.open(path, { unordered = true }))
      local sym = assert(stacks.file_symbolizer(f, {}))
      local p1 = assert(f:profile{ symbolizer = sym, max_stack = 1 })
      local p2 = assert(f:profile{ symbolizer = sym, max_stack = 1, symbols = true, threads = false })
      f:close()
      local v1, v2 = assert(p1:view{ symbolizer = sym }), assert(p2:view{ symbolizer = sym })
      local s1, s2 = v1:summary(), v2:summary()
      assert.are.equal(s1.samples, s2.samples, path)
      assert.are.equal(s1.period, s2.period, path)
      assert.are.equal(s1.comm_width, s2.comm_width, path)
      assert.is_true(s2.stacks <= s1.stacks, path)
      if s2.stacks < s1.stacks then folded_some = true end
      for n, opts in ipairs(cases) do
        same_rows(v1:report(opts), v2:report(opts), path .. " case " .. n,
                  { "key", "self", "samples", "sym", "dso", "kind", "comm" })
      end
      -- and every stack of one command: no thread left where all resolved
      for e in p2:stacks() do
        if e.comm and #e.addrs == 1 then assert.are.equal(-1, e.tid, path) end
      end
    end
    assert.is_true(folded_some)
  end)
end)

describe("a view by symbol", function()
  -- p:view{ by_symbol = true }: one frame per symbol as reports tell it
  -- apart (what luaperf report reads without srcline): every report has
  -- the rows, call graphs and paths of the view with a frame per address
  it("reports the rows of the view with a frame per address, in fewer frames", function()
    local cases = {
      { by = { "comm", "dso", "sym" } },
      { by = { "comm", "dso", "sym" }, children = true, weight = "period" },
      { by = { "sym" }, children = true },
      { by = { "dso" }, children = true },
      { by = { "thread", "sym" } },
      { by = "sym", children = true, dso = "lib", percentage = "absolute" },
      { by = "comm,sym", sym = "^_", children = true },
    }
    local fewer = false
    for _, path in ipairs(files()) do
      local p, v1 = load(path)
      local v2 = assert(p:view{ symbolizer = p:symbolizer(), by_symbol = true })
      local s1, s2 = v1:summary(), v2:summary()
      assert.is_true(s2.frames <= s1.frames, path)
      if s2.frames < s1.frames then fewer = true end
      for n, opts in ipairs(cases) do
        same_rows(v1:report(opts), v2:report(opts), path .. " case " .. n,
                  { "key", "self", "total", "samples", "sym", "dso", "kind", "comm", "tid" })
      end
    end
    assert.is_true(fewer)
  end)

  it("draws the call graphs and paths of the view with a frame per address", function()
    local function same(x, y, what)
      assert.are.equal(x.w, y.w, what)
      assert.are.equal(x.name, y.name, what)
      assert.are.equal(x.nkids, y.nkids, what)
      assert.are.equal(#x.kids, #y.kids, what)
      for i, k in ipairs(x.kids) do same(k, y.kids[i], what .. "/" .. tostring(k.name)) end
    end
    local drawn = 0
    for _, path in ipairs(files()) do
      local p, v1 = load(path)
      local v2 = assert(p:view{ symbolizer = p:symbolizer(), by_symbol = true })
      for _, children in ipairs({ false, true }) do
        for _, by in ipairs({ { "comm", "dso", "sym" }, { "sym" } }) do
          local opts = { by = by, children = children, weight = "period" }
          local r1, r2 = v1:report(opts), v2:report(opts)
          local s1, s2 = {}, {}
          for i = 1, math.min(#r1, 40) do s1[i], s2[i] = r1[i], r2[i] end
          local g = { by = by, children = children, weight = "period" }
          local t1, t2 = v1:callgraph(s1, g), v2:callgraph(s2, g)
          for i = 1, #s1 do
            same(t1[i], t2[i], path .. " row " .. i)
            drawn = drawn + t1[i].nkids
          end
        end
      end
      for _, o in ipairs({ { top = 30 }, { starting = "^_start", top = 10 },
                          { where = { dso = "^lib" }, top = 10, weight = "samples" } }) do
        local a, b = v1:paths(o), v2:paths(o)
        assert.are.equal(#a, #b, path)
        for i, r in ipairs(a) do
          assert.are.same(r.stack, b[i].stack, path .. " path " .. i)
          assert.are.equal(r.value, b[i].value, path .. " path " .. i)
        end
      end
    end
    assert.is_true(drawn > 0)
  end)
end)

describe("the order of report rows", function()
  -- rows are radix-sorted by their sums, then each run of equal sums by
  -- the first 24 bytes of a string in perf's order of its keys, the rest
  -- compared only when those agree: names that share more than 24 bytes,
  -- names that are prefixes of others, and many ties of total and self
  -- (spec/fresh_spec.lua checks the order against perf report's)
  it("is by total (children) or self, then self, then each key as perf compares it, then the key's bytes", function()
    local p = perf.profile()
    local long = "a_frame_whose_name_shares_more_than_24_bytes_with_others_"
    local names = {}
    for i = 1, 40 do names[i] = long .. string.char(97 + i % 26) .. (i > 26 and "x" or "") end
    names[41], names[42], names[43] = "short", "shor", long
    for i = 1, 300 do
      p:add_stack({ names[(i * 7) % #names + 1], names[(i * 13) % #names + 1], long .. "main" },
                  { count = 1 + i % 3, period = 10 * (1 + i % 2), pid = 1 + i % 3, tid = 1 + i % 3 })
    end
    local v = assert(p:view{})
    for _, children in ipairs({ true, false }) do
      for _, by in ipairs({ { "sym" }, { "comm", "sym" }, { "thread", "sym" } }) do
        for _, weight in ipairs({ "samples", "period" }) do
          local what = ("children %s, by %s, %s"):format(tostring(children),
                                                       table.concat(by, ","), weight)
          local rows = assert(v:report{ by = by, children = children, weight = weight })
          local long_ties = 0
          -- perf's sort functions: names A to Z, threads by number
          local function tie(a, b)
            for _, k in ipairs(by) do
              local x, y
              if k == "thread" then x, y = a.tid, b.tid else x, y = a[k], b[k] end
              if x ~= y then return x < y end
            end
            return a.key < b.key
          end
          for i = 2, #rows do
            local a, b = rows[i - 1], rows[i]
            local ma, mb = children and a.total or a.self, children and b.total or b.self
            local sa, sb = children and a.self or 0, children and b.self or 0
            local before = ma > mb or (ma == mb and (sa > sb or (sa == sb and tie(a, b))))
            assert.is_true(before, what .. ": row " .. i .. " " .. a.key .. " before " .. b.key)
            if ma == mb and sa == sb and a.key:sub(1, 24) == b.key:sub(1, 24) then
              long_ties = long_ties + 1
            end
          end
          assert.is_true(long_ties > 10, what .. ": too few ties to test")
        end
      end
    end
  end)
end)

describe("luaperf report and flame", function()
  -- the first line where two outputs part (TAP cuts a long string short)
  local function first_diff(a, b)
    local la, lb = {}, {}
    for l in (a .. "\n"):gmatch("(.-)\n") do la[#la + 1] = l end
    for l in (b .. "\n"):gmatch("(.-)\n") do lb[#lb + 1] = l end
    for i = 1, math.max(#la, #lb) do
      if la[i] ~= lb[i] then
        return string.format("line %d: core %q, Lua engine %q (%d and %d lines)", i,
          tostring(la[i]), tostring(lb[i]), #la, #lb)
      end
    end
    return "the same lines"
  end
  local function both(cmd)
    local a, aok, aerr = util.luaperf_split(cmd)
    local b, bok, berr = util.luaperf_split(cmd, "LUAPERF_ENGINE=lua ")
    -- both run, or both refuse alike what needs call chains the file has
    -- not (-g on a file recorded without -g, as perf report refuses it)
    assert.are.equal(aok, bok, tostring(aerr) .. "\n" .. tostring(berr))
    if not aok then
      assert.truthy(tostring(aerr):find("needs call chains", 1, true), aerr)
      assert.are.equal(aerr, berr)
    end
    return a, b
  end
  it("print what the Lua engine prints, with and without children and call graphs", function()
    -- an event group's table (perf's group view) too
    for _, path in ipairs(util.with_corpus(data, { "perf.data.piped.header_feautres_group_desc-6.8" })) do
      for _, args in ipairs({ "--no-children", "--children", "--sort dso,sym", "--no-group",
                              "--no-children -n --show-total-period" }) do
        local a, b = both("report -i " .. path .. " --stdio " .. args)
        assert.is_true(a == b, path .. " " .. args .. ": " .. first_diff(a, b))
      end
    end
    for _, path in ipairs(files()) do
      for _, args in ipairs({ "--no-children", "--children", "--no-children -g", "--children -g",
                              "--sort comm,pid", "--sort dso --children", "--sort sym --rows 10",
                              "-n --show-total-period -q --sort comm,dso",
                              "--no-children -g callee,2", "--children -g callee",
                              "--children -g --percent-limit 2 --sort comm,dso,sym",
                              "--weight samples --percentage relative --comm python3",
                              "--no-children --dso lib", "--symbol ^_ --children" }) do
        local a, b = both("report -i " .. path .. " --stdio " .. args)
        assert.is_true(a == b, path .. " " .. args .. ": " .. first_diff(a, b))
      end
      for _, args in ipairs({ "--format folded -o -", "--format folded --annotate --no-comm -o -",
                              "--format folded --weight period -o -",
                              "-o -" }) do
        local a, b = both("flame -i " .. path .. " " .. args)
        assert.is_true(a == b, path .. " " .. args .. ": " .. first_diff(a, b))
      end
    end
  end)

  -- perf.prefault's helper (on in these commands) faults in pages, and
  -- changes nothing they hold
  it("print the same with the prefault helper off", function()
    for _, cmd in ipairs({ "report --stdio --children -g", "report --stdio --no-children",
                           "flame --format folded -o -", "script" }) do
      local a, aok, aerr = util.luaperf_split(cmd .. " -i " .. data)
      local b, bok, berr = util.luaperf_split(cmd .. " -i " .. data, "LUAPERF_PREFAULT=0 ")
      assert.is_true(aok, aerr)
      assert.is_true(bok, berr)
      assert.is_true(a == b, cmd .. ": " .. first_diff(a, b))
      assert.is_true(#a > 1000, cmd)
    end
    local out = util.run_lua(dir .. "/prefault.lua", [[
      local perf = require "perf"
      print(perf.prefault(true), perf.prefault(true), perf.prefault(false), perf.prefault(true))
    ]])
    assert.are.equal("true\ttrue\ttrue\ttrue\n", out)
  end)
end)
