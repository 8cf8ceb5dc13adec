-- luaperf script's listing formatted in C (f:script_text) against perf
-- script and against the Lua listing (LUAPERF_ENGINE=lua), byte for byte,
-- on recordings perf makes here: a shell that forks and execs programs
-- (-g), and a system-wide capture (kernel frames, every process).
local util = require "util"

local dir
setup(function() dir = util.tmpdir() end)
teardown(function() util.sh("rm -rf " .. util.q(dir)) end)

-- luaperf script ARGS: stdout, stderr (lua: LUAPERF_ENGINE=lua, the Lua listing)
local function ours(args, lua)
  local errf = dir .. "/stderr"
  local pre = util.preload_env()
  -- Under the sanitizers (make test-asan), in the whole suite only, LSan's
  -- own tracer dies at these processes' exit ("Tracer caught signal 11"; the
  -- spec alone passes): memory errors are still checked, leaks are not here
  if util.preload then pre = pre .. "ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:exitcode=23 " end
  local out, ok = util.sh(pre .. (lua and "LUAPERF_ENGINE=lua " or "") .. "LUAPERF_LUA=" .. util.lua ..
    " " .. util.root .. "/bin/luaperf script " .. args .. " 2>" .. errf)
  local err = util.read(errf) or ""
  assert.is_true(ok, err)
  return out, err
end

local function same(args, want_lines)
  local theirs, pok = util.perf_stdout("script " .. args)
  assert.is_true(pok, theirs)
  local c = ours(args)
  local l = ours(args, true)
  assert.is_true(#util.lines(theirs) >= (want_lines or 100),
    "perf script printed " .. #util.lines(theirs) .. " lines")
  -- the first differing line, if any, says more than two big strings
  local a, b, d = util.lines(c), util.lines(theirs), util.lines(l)
  for i = 1, math.max(#a, #b) do
    if not util.same_line_as_perf(a[i], b[i]) then assert.are.equal(b[i], a[i], "C vs perf, line " .. i) end
  end
  for i = 1, math.max(#a, #d) do assert.are.equal(d[i], a[i], "C vs Lua, line " .. i) end
  assert.are.equal(l, c)
  return c
end

describe("luaperf script's listing in C", function()
  local forks, sys
  setup(function()
    util.sh("seq 50000 | sort -R > " .. dir .. "/nums.txt")
    forks = dir .. "/forks.data"
    local out, ok = util.perf("record -q -g -F 2999 -o " .. forks .. " -- sh -c " .. util.q(
      "for i in 1 2 3; do sort -n " .. dir .. "/nums.txt > /dev/null; " ..
      "python3 -c 'print(sum(i * i for i in range(300000)))' > /dev/null; done"))
    assert(ok, out)
    sys = dir .. "/sys.data"
    out, ok = util.perf("record -q -a -g -F 999 -o " .. sys .. " -- sh -c " .. util.q(
      "sort -n " .. dir .. "/nums.txt > /dev/null; sleep 1") .. " > /dev/null 2>&1")
    assert(ok, out)
  end)

  it("a forking, exec'ing workload: perf script's text, byte for byte", function()
    same("-i " .. forks)
  end)

  it("-G, --ns, -g on a file without call chains", function()
    same("-G -i " .. forks)
    same("--ns -i " .. forks)
    local flat = dir .. "/flat.data"
    local out, ok = util.perf("record -q -e cpu-clock -c 200000 -o " .. flat .. " -- sort -n " ..
      dir .. "/nums.txt > /dev/null 2>&1")
    assert(ok, out)
    -- (perf script's -g generates a script: the Lua listing is the reference)
    local c, l = ours("-g -i " .. flat), ours("-g -i " .. flat, true)
    assert.is_true(#util.lines(c) > 20)
    assert.are.equal(l, c)
  end)

  it("a system-wide capture (the idle task, kernel frames, every process)", function()
    local text = same("-i " .. sys)
    assert.matches("%(%[kernel%.kallsyms%]%)\n", text)
  end)

  it("filters and -F fields it formats: the samples and text perf prints", function()
    same("--comm sort,sh -i " .. forks, 10)
    same("-C 0 -i " .. sys)
    same("-F comm,pid,tid,time,ip,sym -i " .. forks)
    same("-F +pid,-period -G -i " .. sys)
  end)

  it("tracepoints: their payload printed by its format, their call chains", function()
    util.sh("mount | grep -q tracefs || mount -t tracefs nodev /sys/kernel/tracing")
    if not util.read("/sys/kernel/tracing/events/sched/sched_switch/id") then
      pending("no tracefs")
      return
    end
    local tp = dir .. "/tp.data"
    local out, ok = util.perf("record -q -a -g -e sched:sched_switch -e cpu-clock -o " .. tp ..
      " -- sh -c " .. util.q("sort -n " .. dir .. "/nums.txt > /dev/null; sleep 0.2") ..
      " > /dev/null 2>&1")
    assert(ok, out)
    assert.matches("sched:sched_switch: prev_comm=", same("-i " .. tp))
    same("-G -F comm,tid,event,trace -i " .. tp, 10)
  end)

  it("DWARF call chains (unwound as read, inlines, truncated stacks): the Lua listing's text", function()
    local dw = dir .. "/dwarf.data"
    local out, ok = util.perf("record -q --call-graph dwarf,2048 -F 999 -o " .. dw .. " -- sh -c " ..
      util.q("sort -n " .. dir .. "/nums.txt > /dev/null; python3 -c 'print(sum(range(2000000)))'") ..
      " > /dev/null 2>&1")
    assert(ok, out)
    for _, args in ipairs({ "", "--no-inline ", "-G ", "--ns -F +pid " }) do
      local c, cerr = ours(args .. "-i " .. dw)
      local l, lerr = ours(args .. "-i " .. dw, true)
      assert.is_true(#util.lines(c) > 100, args)
      assert.are.equal(l, c, args)
      assert.are.equal(lerr, cerr, args)
    end
    -- the stacks that ran off the 2 KB captured end as perf ends them
    local text = ours("-i " .. dw)
    assert.matches("\n\tffffffffffffffff %[unknown%] %(%[unknown%]%)\n", text)
    -- in process (the sanitizer build's core), into a file
    local perf = require "perf"
    local stacks = require "perf.stacks"
    local f = assert(perf.open(dw))
    local sym = assert(stacks.file_symbolizer(f))
    local fields = {}
    for t = 0, 7 do fields[t] = { comm = true, tid = true, cpu = true, time = true, event = true,
                                  period = true, ip = true, sym = true, symoff = true, dso = true } end
    local res = assert(f:script_text{ symbolizer = sym, fields = fields, callchain = true,
                                      unwind = true, path = dir .. "/dw.txt" })
    f:close()
    sym:close()
    assert.is_true(res.resolves > 0)
    assert.are.equal(text, util.read(dir .. "/dw.txt"))
  end)

  it("f:script_text refuses fields it does not format, and reports what it read", function()
    local perf = require "perf"
    local stacks = require "perf.stacks"
    local f = assert(perf.open(forks))
    local sym = assert(stacks.file_symbolizer(f))
    assert.has_error(function() f:script_text{ symbolizer = sym, fields = { [1] = { addr = true } } } end)
    assert.has_error(function() f:script_text{ fields = {} } end)
    -- no fields: every sample read, none printed
    local res = assert(f:script_text{ symbolizer = sym, fields = {} })
    assert.is_true(res.samples > 100)
    assert.are.equal(res.samples, res.printed)
    assert.are.equal(0, res.resolves)
    f:close()
  end)

  it("in process over the corpus: the Lua listing's text, in a file", function()
    local perf = require "perf"
    local stacks = require "perf.stacks"
    local corpus = util.root .. "/../shared/perfdata-corpus"
    local names = util.lines(util.sh("ls " .. util.q(corpus) .. " | grep '^perf.data' || true"))
    if #names == 0 then pending("no perf.data corpus beside the checkout") return end
    local n = 0
    for _, name in ipairs(names) do
      local path = corpus .. "/" .. name
      local f = perf.open(path)
      if f then
        local sym = assert(stacks.file_symbolizer(f))
        local fields = {}
        for t = 0, 7 do fields[t] = { comm = true, tid = true, cpu = true, time = true, event = true,
                                      period = true, ip = true, sym = true, symoff = true, dso = true } end
        local res = f:script_text{ symbolizer = sym, fields = fields, callchain = true,
                                   path = dir .. "/inproc.txt" }
        f:close()
        sym:close()
        -- the CLI's Lua listing, where it takes the default fields
        local cli = util.sh("perf script -i " .. util.q(path) .. " 2>/dev/null | head -1")
        if res and name ~= "perf.data.weight_struct" and not cli:match("^%s*$") then
          local l = ours("-g -i " .. util.q(path), true)
          assert.are.equal(l, util.read(dir .. "/inproc.txt"), name)
          n = n + 1
        end
      end
    end
    assert.is_true(n >= 10, n .. " files compared")
  end)

  it("a file cut short: the C listing is the Lua listing, up to the cut", function()
    local data = util.read(forks)
    for _, frac in ipairs({ 0.3, 0.77 }) do
      local cut = dir .. "/cut.data"
      util.write(cut, data:sub(1, math.floor(#data * frac)))
      local c, cerr = ours("-i " .. cut)
      local l, lerr = ours("-i " .. cut, true)
      assert.are.equal(l, c)
      assert.are.equal(lerr, cerr)
    end
  end)
end)
