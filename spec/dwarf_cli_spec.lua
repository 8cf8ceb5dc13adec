-- DWARF call graphs in the commands (issue 7): perf.data files recorded
-- with `perf record --call-graph dwarf` and `luaperf record --call-graph
-- dwarf`, read by `luaperf flame/report/script` and f:profile(), compared
-- with perf 6.1's `perf script` on the same files.
local perf = require "perf"
local util = require "util"

local NOFP = "-O1 -g -fomit-frame-pointer -fno-inline"

local function src(name)
  return assert(util.read(util.root .. "/spec/progs/" .. name .. ".c"))
end

local fold_perf_script, parse_folded = util.fold_perf_script, util.parse_folded

-- Samples of perf script's default listing: { head=, user={ "addr sym (dso)" } },
-- kernel frames left out; perf's truncation line (ffffffffffffffff) kept.
local function script_samples(text)
  local samples, cur = {}, nil
  for line in (text .. "\n"):gmatch("(.-)\n") do
    if line:match("^%S") then
      cur = { head = line:gsub("%s+$", ""), user = {} }
      samples[#samples + 1] = cur
    elseif cur and line:match("^%s+%x+ ") then
      local fr = line:gsub("^%s+", "")
      if not fr:find("%[kernel%.kallsyms%]%)$") then cur.user[#cur.user + 1] = fr end
    end
  end
  return samples
end

-- perf script without inline frames (flame folds none by default), or
-- with perf's default (with = true: "(inlined)" frames of DWARF chains)
local function perf_script(file, with)
  local out, ok = util.perf("script " .. (with and "" or "--no-inline ") .. "-i " .. util.q(file) .. " 2>/dev/null")
  assert(ok, out)
  return out
end

local function folded_of(file)
  local out, ok = util.luaperf("flame -i " .. util.q(file) .. " --format folded -o - 2>/dev/null")
  assert(ok, out)
  return parse_folded(out)
end

-- Every stack of ours against perf's; returns how many samples differ,
-- the total, and the differing stacks (printed).
local function diff_counts(want, got)
  local total, want_total, off = 0, 0, 0
  for _, n in pairs(got) do total = total + n end
  for _, n in pairs(want) do want_total = want_total + n end
  assert.are.equal(want_total, total)
  for k, n in pairs(want) do
    if got[k] ~= n then
      off = off + math.abs(n - (got[k] or 0))
      io.stderr:write("\nperf only: ", k, " ", n - (got[k] or 0), "\n")
    end
  end
  for k, n in pairs(got) do
    if (want[k] or 0) < n then
      io.stderr:write("ours only: ", k, " ", n - (want[k] or 0), "\n")
    end
  end
  return off, total
end

local function has_path(counts, pattern)
  for k in pairs(counts) do
    if k:find(pattern) then return true end
  end
  return false
end

describe("luaperf commands on --call-graph dwarf files", function()
  local dir, prog, files = nil, nil, {}

  setup(function()
    dir = util.tmpdir()
    prog = util.cc(src("shaped"), NOFP, "shaped_nofp")
    files.perf = dir .. "/perf.data"
    local out, ok = util.perf("record -q -e cpu-clock --call-graph dwarf -F 999 -o " ..
      files.perf .. " " .. prog .. " 600 2>&1")
    assert(ok, out)
    files.luaperf = dir .. "/luaperf.data"
    out, ok = util.luaperf("record -e cpu-clock --call-graph dwarf -F 999 -o " ..
      files.luaperf .. " -- " .. prog .. " 600 2>&1")
    assert(ok, out)
    files.fp = dir .. "/fp.data"
    out, ok = util.perf("record -q -e cpu-clock -g -F 999 -o " .. files.fp .. " " ..
      prog .. " 300 2>&1")
    assert(ok, out)
  end)
  teardown(function() util.sh("rm -rf " .. util.q(dir)) end)

  -- Under the sanitizer build (make test-asan) the program luaperf record
  -- starts inherits the preloaded ASan runtime, whose C++ frames perf names
  -- differently: the luaperf-recorded comparisons need a plain build.
  local function skip_sanitized(who)
    if who == "luaperf" and util.preload then
      pending("luaperf record under the sanitizer build records the ASan runtime too")
      return true
    end
  end

  for _, who in ipairs({ "perf", "luaperf" }) do
    it("flame --format folded equals perf script's folded stacks (" .. who .. " record)", function()
      if skip_sanitized(who) then return end
      local file = files[who]
      local want = fold_perf_script(perf_script(file))
      local got = folded_of(file)
      local off, total = diff_counts(want, got)
      assert.is_true(total > 150, "samples: " .. total)
      -- perf drops a lone ip it cannot unwind (an exec in progress); we
      -- keep it: a few samples at most
      assert.is_true(off <= math.max(2, total / 50), "samples differing from perf: " .. off)
      for _, fn in ipairs({ "parse_row;leaf_alloc", "do_ingest;leaf_io",
                            "__libc_start_main[^;]*;__libc_start_call_main;main;server_loop" }) do
        assert.is_true(has_path(got, fn), fn)
      end
    end)

    it("script -g prints perf script's user frames, sample by sample (" .. who .. " record)", function()
      if skip_sanitized(who) then return end
      local file = files[who]
      -- perf's default: the functions inlined at each frame, "(inlined)"
      local theirs = script_samples(perf_script(file, true))
      local out, ok = util.luaperf("script -g -i " .. util.q(file) .. " 2>/dev/null")
      assert(ok, out)
      local ours = script_samples(out)
      assert.are.equal(#theirs, #ours)
      local off, deep = 0, 0
      for i, p in ipairs(theirs) do
        local o = ours[i]
        assert.are.equal(p.head, o.head)
        if table.concat(p.user, "\n") ~= table.concat(o.user, "\n") then
          off = off + 1
          if off <= 3 then
            io.stderr:write("\nsample ", i, ": perf\n  ", table.concat(p.user, "\n  "),
              "\nours\n  ", table.concat(o.user, "\n  "), "\n")
          end
        elseif #p.user >= 6 then
          deep = deep + 1
        end
      end
      assert.is_true(off <= math.max(2, #theirs / 50), "samples differing: " .. off)
      assert.is_true(deep > #theirs / 2, "deep samples: " .. deep)
    end)
  end

  it("report shows the call paths frame pointers cannot", function()
    local out, ok = util.luaperf("report -i " .. util.q(files.perf) .. " --stdio 2>/dev/null")
    assert(ok, out)
    local fp = util.luaperf("report -i " .. util.q(files.fp) .. " --stdio 2>/dev/null")
    local function children(text, name)
      for line in text:gmatch("[^\n]+") do
        local c, s = line:match("^%s*([%d.]+)%%%s+([%d.]+)%%.*%[%.%] " .. name .. "%s*$")
        if c then return tonumber(c), tonumber(s) end
      end
      return 0, 0
    end
    -- every sample of the program runs under main and __libc_start_main
    for _, name in ipairs({ "main", "__libc_start_main@@GLIBC_2%.34", "server_loop" }) do
      assert.is_true(children(out, name) > 90, name .. "\n" .. out)
    end
    assert.is_true(children(out, "parse_row") > 20, out)
    assert.is_true(children(out, "do_ingest") > 2, out)
    -- frame pointers lose parse_row (leaf frames) and stop in libc: nothing
    -- is counted under them, only a sample taken in them (its own ip)
    local c, s = children(fp, "parse_row")
    assert.are.equal(s, c, fp)
    c, s = children(fp, "__libc_start_main@@GLIBC_2%.34")
    assert.are.equal(s, c, fp)
  end)

  it("f:profile() unwinds in C, feeds a symbolizer and names the threads", function()
    local f = assert(perf.open(files.perf, { unordered = true }))
    local sym = perf.symbolizer()
    local comms = {}
    local p, info = f:profile{ symbolizer = sym, comms = comms }
    local samples = tonumber(f:scan().samples)
    assert.is_true(info.dwarf)
    assert.are.equal(samples, tonumber(info.unwound))
    assert.are.equal(samples, tonumber(p:meta().samples))
    local named = false
    for _, c in pairs(comms) do named = named or c == "shaped_nofp" end
    assert.is_true(named)
    -- the symbolizer knows the program's maps: its stacks resolve
    local stacks = require "perf.stacks"
    local list = stacks.from_profile(p, sym)
    local deep = 0
    for _, s in ipairs(list) do
      local names = {}
      for i, fr in ipairs(s.frames) do names[i] = fr.name or "?" end
      if table.concat(names, ";"):find("main;server_loop;do_query;parse_row", 1, true) then
        deep = deep + s.count
      end
    end
    assert.is_true(deep > samples / 4, "parse_row under main: " .. deep .. " of " .. samples)
    -- a file without DWARF events profiles as before
    local g = assert(perf.open(files.fp))
    local _, ginfo = g:profile()
    assert.is_false(ginfo.dwarf)
    g:close()
    assert.has_error(function() f:profile{ symbolizer = 42 } end)
    f:close()
    assert.has_error(function() f:profile() end, "attempt to use a closed perf.File")
  end)

  it("f:records{unwind = true} unwinds in C as perf.unwound_records does in Lua", function()
    local f = assert(perf.open(files.luaperf))
    local lua_side = {}
    for rec in perf.unwound_records(f, { call_sites = true }) do
      if rec.type == "SAMPLE" then
        lua_side[#lua_side + 1] = { chain = table.concat(rec.callchain, ","),
          truncated = rec.unwind and rec.unwind.truncated, kernel = rec.callchain_kernel }
      end
    end
    local i, users = 0, 0
    -- a filter that drops the maps records: the unwinder still gets them
    for rec in f:records{ unwind = true, type = "SAMPLE" } do
      i = i + 1
      local want = lua_side[i]
      assert.are.equal(want.chain, table.concat(rec.callchain, ","))
      assert.are.equal(want.kernel, rec.callchain_kernel)
      assert.are.equal(want.truncated, rec.unwind.truncated)
      assert.is_nil(rec.stack_user)
      users = users + rec.unwind.user
    end
    assert.are.equal(#lua_side, i)
    assert.is_true(users > 5 * i, "user frames: " .. users)
    assert.has_error(function() f:records{ unwind = true, symbolizer = "x" } end,
      "f:records: symbolizer must be an open perf.symbolizer")
    f:close()
    local u = assert(perf.open(files.luaperf, { unordered = true }))
    assert.has_error(function() u:records{ unwind = true } end)
    u:close()
  end)

  it("gives the same stacks per sample (flame charts, speedscope) as aggregated", function()
    local stacks = require "perf.stacks"
    local folded = require "perf.folded"
    for _, who in ipairs({ "perf", "luaperf" }) do
      local agg = assert(stacks.load(files[who], {}))
      local per = assert(stacks.load(files[who], { per_sample = true }))
      assert.is_true(#per >= #agg)
      local text = folded.format(stacks.merge(per, { "comm" }))
      assert.are.equal(folded.format(stacks.merge(agg, { "comm" })), text)
      assert.truthy(text:find("main;server_loop;do_query;parse_row;leaf_alloc", 1, true))
    end
  end)

  it("marks a stack deeper than the window [truncated], where perf script ends with -1", function()
    local deep = util.cc(src("dwarf_deep"), NOFP, "dwarf_deep")
    local file = dir .. "/deep.data"
    local out, ok = util.perf("record -q -e cpu-clock --call-graph dwarf -F 999 -o " ..
      file .. " " .. deep .. " 64 300 2>&1")
    assert(ok, out)
    local text = perf_script(file)
    local marked = select(2, text:gsub("ffffffffffffffff %[unknown%]", ""))
    assert.is_true(marked > 0)
    local got = folded_of(file)
    local truncated, total = 0, 0
    for k, n in pairs(got) do
      total = total + n
      if k:find("^[^;]*;%[truncated%];") then truncated = truncated + n end
    end
    assert.are.equal(marked, truncated)
    -- luaperf script prints perf's line for it, and the same frames
    local sout = util.luaperf("script -g --no-inline -i " .. util.q(file) .. " 2>/dev/null")
    assert.are.equal(marked, select(2, sout:gsub("ffffffffffffffff %[unknown%]", "")))
    -- Frame by frame the same addresses, objects and names as perf's
    -- (among aliases at one address, perf's choice: __GI___qsort_r).
    local theirs, ours = script_samples(text), script_samples(sout)
    assert.are.equal(#theirs, #ours)
    local skipped = 0
    for i, p in ipairs(theirs) do
      -- perf drops a lone ip it cannot unwind from (no stack was copied:
      -- a sample in a page fault); we keep it
      if #p.user == 0 and #ours[i].user <= 1 then skipped = skipped + 1 end
      if #p.user > 0 then assert.are.equal(#p.user, #ours[i].user) end
      for j, fr in ipairs(p.user) do
        local a1, n1, d1 = fr:match("^(%x+) (.-)%+0x%x+ (%(.*%))$")
        local a2, n2, d2 = ours[i].user[j]:match("^(%x+) (.-)%+0x%x+ (%(.*%))$")
        assert.are.equal(a1, a2)
        assert.are.equal(d1, d2)
        assert.are.equal(n1, n2)
      end
    end
    assert.is_true(skipped <= math.max(2, #theirs / 50))
    -- perf's -1 frame folds as [unknown]: the same stacks otherwise
    local want = {}
    for k, n in pairs(fold_perf_script(text)) do
      k = k:gsub("^([^;]*);%[unknown%];", "%1;[truncated];")
      want[k] = (want[k] or 0) + n
    end
    local off = diff_counts(want, got)
    assert.is_true(off <= math.max(2, total / 50), "samples differing from perf: " .. off)
  end)
end)
