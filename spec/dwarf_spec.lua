-- DWARF call graphs (issue 7): user stacks unwound from the registers and
-- stack bytes of each sample, compared with perf 6.1 on the same perf.data
-- files, sample by sample, and on live sessions.
local perf = require "perf"
local util = require "util"

local x86_64 = util.sh("uname -m"):match("x86_64") ~= nil

local function src(name)
  return assert(util.read(util.root .. "/spec/progs/" .. name .. ".c"))
end

-- The seed text's shaped program and a deep recursion, without frame
-- pointers: frame-pointer chains cannot walk them.
local NOFP = "-O1 -g -fomit-frame-pointer -fno-inline"
local shaped, deep, threads
local function progs()
  shaped = shaped or util.cc(src("shaped"), NOFP, "shaped_nofp")
  deep = deep or util.cc(src("dwarf_deep"), NOFP, "dwarf_deep")
  threads = threads or util.cc(src("dwarf_threads"), NOFP, "dwarf_threads")
end

local function record(args, out)
  local o, ok = util.perf("record -q -o " .. util.q(out) .. " " .. args .. " 2>&1")
  assert(ok, o)
end

-- perf script's samples: { {time=, user={ {off=, dso=, name=}, ... }, marker=bool } }
-- marker: perf ended the stack with its "ffffffffffffffff [unknown]" frame
-- (the unwind ran off the stack dump).
local function perf_samples(file)
  local out, ok = util.perf("script -i " .. util.q(file) ..
    " -F pid,tid,time,ip,sym,dso --no-inline 2>/dev/null")
  assert(ok, out)
  local samples, cur = {}, nil
  for line in (out .. "\n"):gmatch("([^\n]*)\n") do
    local t = line:match("^%s*%d+/%d+%s+(%d+%.%d+):")
    if t then
      cur = { time = t, user = {}, kernel = {}, marker = false }
      samples[#samples + 1] = cur
    elseif cur and line:match("^%s+%x+ ") then
      local addr, rest = line:match("^%s+(%x+) (.*)$")
      local name, dso = rest:match("^(.-)%s*%(([^()]*)%)$")
      if dso == "[kernel.kallsyms]" then
        cur.kernel[#cur.kernel + 1] = addr
      else
        if addr == "ffffffffffffffff" then
          cur.marker = true
        else
          cur.user[#cur.user + 1] = { off = tonumber(addr, 16), dso = dso, name = name }
        end
      end
    end
  end
  return samples
end

local function tonum(a)
  if type(a) == "string" then return tonumber(a:sub(3), 16) end
  return a
end

-- An address as lowercase hex, whatever its Lua shape (LuaJIT gives
-- kernel addresses as "0x..." strings).
local function hex(a)
  if type(a) == "string" then return (a:gsub("^0x", ""):lower()) end
  return string.format("%x", a)
end

local function clean(name)
  return name and (name:gsub("@@.*$", "")) or "[unknown]"
end

-- Our samples, unwound through the Lua API: the same shape as perf_samples,
-- addresses shown as perf shows them (dso-relative, callers at ret - 1).
local function our_samples(file, opts)
  local f = assert(perf.open(file))
  local sym = perf.symbolizer()
  local u = perf.unwinder(opts)
  local samples = {}
  for rec in f:records() do
    if rec.type == "SAMPLE" then
      local chain, info = u:unwind(rec, sym)
      local s = { time = string.format("%d.%06d", math.floor(rec.time / 1e9),
                                       math.floor((rec.time % 1e9) / 1000)),
                  user = {}, kernel = {}, info = info, pid = rec.pid }
      for i = 1, info.kernel do s.kernel[i] = hex(chain[i]) end
      for i = info.kernel + 1, #chain do
        local a = tonum(chain[i])
        if i > info.kernel + 1 then a = a - 1 end
        local m = sym:map(rec.pid, a)
        local r = sym:resolve(rec.pid, a)
        s.user[#s.user + 1] = { off = m and (a - tonum(m.start) + tonum(m.pgoff)) or a,
                                dso = m and m.path or "[unknown]",
                                name = r and r.name, mapped = m ~= nil }
      end
      samples[#samples + 1] = s
    else
      sym:feed(rec)
    end
  end
  local stats = u:stats()
  u:close()
  sym:close()
  f:close()
  return samples, stats
end

-- Compares sample by sample; returns mismatches (a list of messages).
local function compare(theirs, ours)
  local bad = {}
  assert.are.equal(#theirs, #ours)
  for i, p in ipairs(theirs) do
    local o = ours[i]
    assert.are.equal(p.time, o.time)
    if table.concat(p.kernel, ",") ~= table.concat(o.kernel, ",") then
      bad[#bad + 1] = "sample " .. i .. ": kernel part differs"
    end
    if #p.user == 0 and not p.marker then
      -- perf drops a lone ip it cannot unwind from (an exec in progress,
      -- the dynamic loader's first instructions); we keep that one ip.
      if #o.user > 1 then
        bad[#bad + 1] = "sample " .. i .. ": perf has no user frames"
      end
    else
      local same = #p.user == #o.user
      for j = 1, math.min(#p.user, #o.user) do
        if p.user[j].off ~= o.user[j].off or p.user[j].dso ~= o.user[j].dso then
          same = false
        end
      end
      if not same then
        bad[#bad + 1] = string.format("sample %d (%s): perf %d frames, ours %d", i, p.time,
                                      #p.user, #o.user)
      end
      if p.marker ~= o.info.truncated then
        bad[#bad + 1] = string.format("sample %d: perf marker %s, ours truncated %s", i,
                                      tostring(p.marker), tostring(o.info.truncated))
      end
    end
  end
  return bad
end

local function has(frames, name, from)
  for j = from or 1, #frames do
    if clean(frames[j].name) == name then return true end
  end
  return false
end

describe("dwarf call graphs", function()
  local dir
  setup(function() dir = util.tmpdir() end)
  teardown(function() if dir then util.sh("rm -rf " .. util.q(dir)) end end)

  it("publishes the capture parameters", function()
    local mask = perf.unwind_regs_mask()
    if x86_64 then
      -- bx, bp, sp, ip, r12-r15 (uapi/asm/perf_regs.h numbering)
      assert.are.equal(0xf001c2, mask)
    end
    assert.are.equal(8192, perf.unwind_stack_size())
    assert.are.equal(104, perf.unwind_stack_size(100))
    assert.are.equal(65528, perf.unwind_stack_size(65528))
    local v, msg, errno = perf.unwind_stack_size(65536)
    assert.is_nil(v)
    assert.truthy(msg:find("65528", 1, true))
    assert.are.equal(22, errno)
  end)

  it("checks its arguments and its state", function()
    local u = perf.unwinder()
    local sym = perf.symbolizer()
    assert.has_error(function() u:unwind({ type = "SAMPLE", pid = 1 }, sym) end,
      'the record has no regs_user (not recorded with callchain "dwarf")')
    assert.has_error(function() u:unwind({}, {}) end)
    assert.has_error(function() perf.unwinder("fast") end)
    assert.has_error(function()
      u:unwind({ regs_user = { 1, 2, 3 }, stack_user = "" }, sym)
    end)
    u:close()
    u:close()
    assert.has_error(function() u:stats() end, "attempt to use a closed unwinder")
    sym:close()
  end)

  it("recovers what frame pointers cannot, equal to perf script sample by sample", function()
    progs()
    local file = dir .. "/shaped.data"
    record("--call-graph dwarf -F 1999 -- " .. shaped .. " 600", file)
    local theirs, ours = perf_samples(file), nil
    local stats
    ours, stats = our_samples(file)
    assert.is_true(#ours > 100, "samples: " .. #ours)
    local bad = compare(theirs, ours)
    assert.are.same({}, bad)
    -- A sample taken in the loader's big startup frames can fill the window
    -- (compare() checked each against perf's own marker); the loop cannot.
    assert.is_true(tonumber(stats.truncated) <= #ours * 0.02, stats.truncated .. " truncated")

    -- The frames fp loses are there, in (almost) every sample.
    local full, via_parse, via_ingest = 0, 0, 0
    for _, s in ipairs(ours) do
      local u = s.user
      if #u > 0 and clean(u[#u].name) == "_start" and has(u, "__libc_start_main") then
        full = full + 1
      end
      if has(u, "parse_row", 2) then via_parse = via_parse + 1 end
      if has(u, "do_ingest", 2) then via_ingest = via_ingest + 1 end
    end
    assert.is_true(full >= #ours * 0.95, full .. " of " .. #ours .. " reach _start")
    assert.is_true(via_parse > 0 and via_ingest > 0)

    -- Frame pointers, on the same binary: the callers are gone.
    local fpfile = dir .. "/shaped-fp.data"
    record("-g -F 1999 -- " .. shaped .. " 600", fpfile)
    local fp = perf_samples(fpfile)
    local fp_full, fp_parse = 0, 0
    for _, s in ipairs(fp) do
      if has(s.user, "_start") then fp_full = fp_full + 1 end
      if has(s.user, "parse_row", 2) then fp_parse = fp_parse + 1 end
    end
    assert.is_true(fp_full <= #fp * 0.05, fp_full .. " fp stacks reach _start")
    assert.is_true(fp_parse <= #fp * 0.05, fp_parse .. " fp stacks show parse_row as a caller")
  end)

  it("reports a stack deeper than the window as truncated, as perf cuts it", function()
    progs()
    local file = dir .. "/deep.data"
    record("--call-graph dwarf -F 1999 -- " .. deep .. " 64 600", file)
    local theirs = perf_samples(file)
    local ours, stats = our_samples(file)
    assert.are.same({}, compare(theirs, ours))
    -- perf.unwound_records marks the same samples
    local f = assert(perf.open(file))
    local i, marked = 0, 0
    for rec in perf.unwound_records(f) do
      if rec.type == "SAMPLE" then
        i = i + 1
        assert.are.equal(ours[i].info.truncated, rec.unwind.truncated)
        if rec.unwind.truncated then marked = marked + 1 end
      end
    end
    f:close()
    assert.are.equal(#ours, i)
    assert.is_true(marked > 0)
    local truncated, reached_main = 0, 0
    for _, s in ipairs(ours) do
      if s.info.truncated then
        truncated = truncated + 1
        -- main is seen only when the window ran out just above it (a
        -- sample before or after the recursion); compare() matched perf
        if has(s.user, "main") then reached_main = reached_main + 1 end
        assert.truthy(s.info.error:find("window", 1, true))
      end
    end
    assert.is_true(truncated >= #ours * 0.8, truncated .. " of " .. #ours .. " truncated")
    assert.is_true(reached_main <= truncated * 0.02, reached_main .. " truncated samples reach main")
    assert.are.equal(truncated, tonumber(stats.truncated))

    -- A window big enough for the whole stack: nothing truncated, all of it.
    local big = dir .. "/deep32k.data"
    record("--call-graph dwarf,32768 -F 1999 -- " .. deep .. " 64 600", big)
    local theirs2 = perf_samples(big)
    local ours2, stats2 = our_samples(big)
    assert.are.same({}, compare(theirs2, ours2))
    -- libdwfl's own unwinder (no cached CFI rows) gives the same frames.
    local slow = our_samples(big, { cached = false })
    assert.are.same({}, compare(theirs2, slow))
    assert.are.equal(0, tonumber(stats2.truncated))
    local full = 0
    for _, s in ipairs(ours2) do
      if has(s.user, "descend") and clean(s.user[#s.user].name) == "_start" then
        full = full + 1
      end
    end
    assert.is_true(full >= #ours2 * 0.9, full .. " of " .. #ours2 .. " complete")
  end)

  it("builds a profile of unwound stacks equal to perf's folded stacks", function()
    progs()
    local file = dir .. "/profile.data"
    record("--call-graph dwarf -F 1999 -- " .. shaped .. " 300", file)
    -- Address-level folded stacks (dso+offset frames, root first), so the
    -- comparison is about unwinding, not about symbol tables.
    local function key(frames)
      local parts = {}
      for j = #frames, 1, -1 do
        parts[#parts + 1] = string.format("%s+%x", frames[j].dso, frames[j].off)
      end
      return table.concat(parts, ";")
    end
    -- Lone-ip stacks are left out on all sides: perf drops some of them
    -- (an exec in progress), see compare().
    local ref = {}
    for _, s in ipairs(perf_samples(file)) do
      if #s.user > 1 then
        local k = key(s.user)
        ref[k] = (ref[k] or 0) + 1
      end
    end
    local f = assert(perf.open(file))
    local sym = perf.symbolizer()
    local u = perf.unwinder()
    local p = perf.profile()
    for rec in f:records() do
      if rec.type == "SAMPLE" then
        local info = u:add(p, rec, sym)
        assert.is_false(info.truncated)
      else
        sym:feed(rec)
        p:add(rec)
      end
    end
    local function profile_keys(prof, syms)
      local keys, names = {}, {}
      for e in prof:stacks() do
        local frames = {}
        for i = e.kernel + 1, #e.addrs do
          -- callers are kept as call sites (return address - 1), as perf does
          local a = tonum(e.addrs[i])
          local m = syms:map(e.pid, a)
          if m then
            frames[#frames + 1] = { dso = m.path, off = a - tonum(m.start) + tonum(m.pgoff) }
            local r = syms:resolve(e.pid, a)
            names[clean(r and r.name)] = true
          end
        end
        if #frames > 1 then
          local k = key(frames)
          keys[k] = (keys[k] or 0) + e.count
        end
      end
      return keys, names
    end
    local got, names = profile_keys(p, sym)
    assert.are.same(ref, got)
    for _, n in ipairs({ "_start", "__libc_start_main", "main", "server_loop", "do_query",
                         "parse_row", "index_row", "do_ingest" }) do
      assert.is_true(names[n], n)
    end
    f:close()

    -- The C hook for profile builders (unwind__add_record into a stack
    -- table), through bench/unwind_bench -f, gives the same table.
    local harness = util.build_with_core(util.root .. "/bench/unwind_bench.c", "unwind_bench", "-O2 -g")
    local text, ok2 = util.sh(harness .. " -f " .. util.q(file) .. " 2>/dev/null")
    assert(ok2, text)
    local viac = {}
    for k, c in text:gmatch("([^\n]*) (%d+)\n") do
      if k:find(";", 1, true) then
        viac[k] = (viac[k] or 0) + tonumber(c)
      end
    end
    assert.are.same(ref, viac)

    -- The Lua helper (lua/perf/unwind.lua) does the same in one call.
    local sym2 = perf.symbolizer()
    local f2 = assert(perf.open(file))
    local p2, stats = perf.unwind_profile(f2, { symbolizer = sym2 })
    assert.are.same(ref, (profile_keys(p2, sym2)))
    assert.are.equal(#perf_samples(file), tonumber(stats.samples))
    f2:close()
  end)

  it("unwinds every thread of a process, through libc, as perf does", function()
    progs()
    local file = dir .. "/threads.data"
    record("--call-graph dwarf -F 1999 -- " .. threads .. " 4000", file)
    local theirs = perf_samples(file)
    local ours = our_samples(file)
    assert.are.same({}, compare(theirs, ours))
    local tids, in_thread, in_libc = {}, 0, 0
    for _, s in ipairs(ours) do
      local u = s.user
      if #u > 0 and clean(u[#u].name) == "clone3" and has(u, "worker") then
        in_thread = in_thread + 1
      end
      if #u > 1 and u[1].dso:match("libc%.so") and has(u, "fill_pages", 2) then
        in_libc = in_libc + 1
      end
    end
    assert.is_true(in_thread >= #ours * 0.5, in_thread .. " of " .. #ours .. " end in clone3")
    assert.is_true(in_libc > 0, "no stack through libc")
    -- and the same without the cached rows
    assert.are.same({}, compare(theirs, (our_samples(file, { cached = false }))))
  end)

  it("unwinds a live session like perf record --call-graph dwarf", function()
    progs()
    -- perf's folded stacks
    local file = dir .. "/live-ref.data"
    record("--call-graph dwarf -F 999 -- " .. shaped .. " 1500", file)
    local ref, nref = {}, 0
    for _, s in ipairs(perf_samples(file)) do
      if #s.user > 0 then
        local names = {}
        for j = #s.user, 1, -1 do names[#names + 1] = clean(s.user[j].name) end
        local k = table.concat(names, ";")
        ref[k] = (ref[k] or 0) + 1
        nref = nref + 1
      end
    end

    -- ours, live
    local s = assert(perf.session{ events = { "cpu-clock" }, freq = 999, callchain = "dwarf",
                                   cmd = util.target_argv{ shaped, "1500" } })
    local sym = perf.symbolizer()
    local u = perf.unwinder()
    local got, n, cut, cut_short = {}, 0, 0, 0
    local function drain()
      for rec in s:records() do
        if rec.type == "SAMPLE" then
          local chain, info = u:unwind(rec, sym)
          if info.truncated then
            cut = cut + 1
            -- truncation is only ever claimed for a full window
            if #rec.stack_user < tonumber(rec.stack_user_size) then cut_short = cut_short + 1 end
          end
          local names = {}
          for i = #chain, info.kernel + 1, -1 do
            local r = sym:resolve(rec.pid, chain[i])
            names[#names + 1] = clean(r and r.name)
          end
          if #names > 0 then
            local k = table.concat(names, ";")
            got[k] = (got[k] or 0) + 1
            n = n + 1
          end
        else
          sym:feed(rec)
        end
      end
    end
    s:start()
    for _ = 1, 200 do
      local _, done = s:poll(50)
      drain()
      if done then break end
    end
    drain()
    s:close()
    assert.is_true(n > 150 and nref > 150, n .. " and " .. nref .. " samples")
    -- The main paths of the reference are there, in similar shares.
    for k, c in pairs(ref) do
      if c / nref >= 0.08 then
        local share = (got[k] or 0) / n
        assert.is_true(math.abs(share - c / nref) < 0.12,
          string.format("%s: ours %.2f, perf %.2f", k, share, c / nref))
      end
    end
    local top, topc = nil, 0
    for k, c in pairs(got) do if c > topc then top, topc = k, c end end
    assert.truthy(top:match("^_start;__libc_start_main;__libc_start_call_main;main;server_loop;"), top)
    assert.are.equal(cut, tonumber(u:stats().truncated))
    assert.are.equal(0, cut_short)
    assert.is_true(cut <= n * 0.02, cut .. " of " .. n .. " truncated")
    u:close()
    sym:close()
  end)
end)

-- Hostile input (issue 12): CFI rows whose DWARF expressions divide
-- INT64_MIN by -1 (spec/progs/hostile_cfi.c).  The division has no defined
-- result and traps on x86-64, in our evaluator as in libdwfl's; the row is
-- rejected and the unwind ends at that frame.  The unwinding runs in a
-- child interpreter, so a SIGFPE fails an assertion instead of the runner.
describe("dwarf call graphs on hostile CFI", function()
  local dir
  setup(function() dir = util.tmpdir() end)

  local CHILD = [[
local perf = require "perf"
local f = assert(perf.open(arg[1]))
local sym = perf.symbolizer()
local u = perf.unwinder{ cached = arg[2] == "cached" }
for rec in f:records() do
  if rec.type == "SAMPLE" then
    local chain, info = u:unwind(rec, sym)
    local names = {}
    for i = info.kernel + 1, #chain do
      local a = chain[i]
      if i > info.kernel + 1 then a = a - 1 end
      local r = sym:resolve(rec.pid, a)
      names[#names + 1] = r and r.name or "?"
    end
    print((info.failed and "failed " or "ok ") .. table.concat(names, ";"))
  else
    sym:feed(rec)
  end
end
]]

  -- { [function] = { n = samples through it, main = of them reaching main,
  --   last = of them ending at it } }, the child's output and its success.
  local function unwind_in_child(file, mode)
    local script = dir .. "/unwind_child.lua"
    util.write(script, CHILD)
    local pre = util.preload_env()
    local out, ok = util.sh(pre .. util.lua .. " " .. util.q(script) .. " " .. util.q(file) ..
      " " .. mode)
    local by = {}
    for line in out:gmatch("[^\n]+") do
      local st, stack = line:match("^(%a+) (.*)$")
      if st then
        local frames = {}
        for fn in stack:gmatch("[^;]+") do frames[#frames + 1] = fn end
        for i, fn in ipairs(frames) do
          if fn:match("_div$") then
            local e = by[fn] or { n = 0, main = 0, last = 0, failed = 0 }
            by[fn] = e
            e.n = e.n + 1
            if stack:find(";main", 1, true) then e.main = e.main + 1 end
            if i == #frames then e.last = e.last + 1 end
            if st == "failed" then e.failed = e.failed + 1 end
          end
        end
      end
    end
    return by, out, ok
  end

  it("INT64_MIN / -1 in a row ends the unwind at that frame, cached or through libdwfl", function()
    if not x86_64 then pending("x86-64 only") return end
    local prog = util.cc(util.read(util.root .. "/spec/progs/hostile_cfi.c"), "-O0 -g", "hostile_cfi")
    local file = dir .. "/hostile.data"
    local o, ok = util.perf("record -q -e cpu-clock -F 999 --call-graph dwarf -o " .. util.q(file) ..
      " -- " .. util.target(prog) .. " 200 2>&1")
    assert(ok, o)
    for _, mode in ipairs({ "cached", "libdwfl" }) do
      local by, out, done = unwind_in_child(file, mode)
      assert(done, mode .. ": the unwinding process died:\n" .. out:sub(-600))
      for _, fn in ipairs({ "overflow_div", "skip_overflow_div" }) do
        local e = by[fn]
        assert.is_truthy(e, mode .. ": no sample in " .. fn)
        assert.is_true(e.n > 20, mode .. ": " .. e.n .. " samples in " .. fn)
        -- the rejected row is the last frame; nothing above it, no failure
        assert.are.equal(e.n, e.last, mode .. ": " .. fn)
        assert.are.equal(0, e.main, mode .. ": " .. fn)
        assert.are.equal(0, e.failed, mode .. ": " .. fn)
      end
      -- an ordinary division in a row: the cached rows evaluate it and
      -- go on to main (libdwfl is never given a dividing row at all)
      local b = by.benign_div
      assert.is_truthy(b, mode .. ": no sample in benign_div")
      if mode == "cached" then
        -- (a sample or two may land where the frame is half built, as in
        -- any unwind: the division rows are what is tested)
        assert.is_true(b.main >= b.n - 2 and b.n > 20, mode .. ": " .. b.main .. " of " .. b.n)
      end
    end
  end)
end)
