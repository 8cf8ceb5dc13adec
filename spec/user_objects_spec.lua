-- User objects of perf.data files, against perf 6.1 on the same files: an
-- object names its addresses only through an ELF with the build id the
-- file recorded (the object itself, perf's build-id cache, --symfs DIR),
-- otherwise its frames stay [unknown] (with a warning, said once); unnamed
-- addresses of a PIE program run many times make one report row, as
-- perf keys them by their place in the object; and the corpus recorded
-- elsewhere prints the user frames perf prints.
--
-- Each recording gets a HOME of its own, so perf record's build-id cache
-- (HOME/.debug) is the test's to fill and empty.
local util = require "util"

-- The lines of a perf script listing whose ip is in user space: the
-- address right before "sym (dso)", not a kernel one.
local function user_lines(text)
  local out = {}
  for line in text:gmatch("[^\n]+") do
    local ip = line:match("%s(%x+)%s+[^%s]+%s+%([^%)]*%)%s*$")
    if ip and not (#ip == 16 and ip:sub(1, 4) == "ffff") and not line:find("[kernel.kallsyms]", 1, true) then
      out[#out + 1] = line
    end
  end
  return out
end

-- The first differing line of two lists (for a message), or nil.
local function first_diff(a, b)
  for i = 1, math.max(#a, #b) do
    if a[i] ~= b[i] then
      return string.format("line %d:\n  perf:    %s\n  luaperf: %s", i, tostring(a[i]), tostring(b[i]))
    end
  end
  return nil
end

-- perf report --stdio rows (no children): { ["dso|sym"] = percent }
local function report_rows(text)
  local rows = {}
  for k, pcts in pairs(util.report_rows(text)) do rows[k] = pcts[1] end
  return rows
end

local V1 = [[
#include <stdio.h>
volatile unsigned long sink;
__attribute__((noinline)) void spin_alpha(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink += i * 3; }
__attribute__((noinline)) void spin_beta(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink ^= i + 7; }
int main(void) { for (int k = 0; k < 30; k++) { spin_alpha(2000000); spin_beta(2000000); } printf("%lu\n", sink); return 0; }
]]

-- The same program rebuilt with other code first: every address moves, so
-- names read from it would be wrong.
local V2 = [[
#include <stdio.h>
volatile unsigned long sink;
__attribute__((noinline)) void other_gamma(unsigned long n) { for (unsigned long i = 0; i < n; i++) { sink += i * 11; sink ^= sink >> 3; sink += i * 13; sink ^= sink << 2; } }
__attribute__((noinline)) void spin_alpha(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink += i * 5 + 1; }
__attribute__((noinline)) void spin_beta(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink ^= i + 9; }
int main(void) { other_gamma(10); for (int k = 0; k < 30; k++) { spin_alpha(2000000); spin_beta(2000000); } printf("%lu\n", sink); return 0; }
]]

describe("user objects of a recording", function()
  local dir, home, prog, data

  local function build(src)
    util.write(dir .. "/prog.c", src)
    local out, ok = util.sh(string.format("cc -O1 -fno-inline -o %s %s/prog.c", util.q(prog), util.q(dir)))
    assert(ok, out)
  end

  setup(function()
    dir = util.tmpdir()
    home = dir .. "/home"
    prog = dir .. "/prog"
    data = dir .. "/p.data"
    util.sh("mkdir -p " .. util.q(home))
    build(V1)
    local out, ok = util.sh(string.format("cd %s && HOME=%s perf record -q -e cpu-clock -F 4999 -o %s %s >/dev/null",
      util.q(dir), util.q(home), util.q(data), util.q(prog)))
    assert(ok, out)
    -- a copy of the recorded object for --symfs, before it is rebuilt
    out, ok = util.sh(string.format("mkdir -p %s/symfs%s && cp %s %s/symfs%s/prog",
      util.q(dir), util.q(dir), util.q(prog), util.q(dir), util.q(dir)))
    assert(ok, out)
    build(V2)
  end)
  teardown(function() util.sh("rm -rf " .. util.q(dir)) end)

  local function luaperf_home(args)
    return util.sh(string.format("HOME=%s %sLUAPERF_LUA=%s %s/bin/luaperf %s", util.q(home),
      util.preload_env(), util.lua, util.root, args))
  end

  local function compare(extra)
    extra = extra or ""
    local fields = " -F comm,tid,time,ip,sym,dso "
    local theirs, pok = util.sh(string.format("HOME=%s perf script -i %s%s%s 2>/dev/null",
      util.q(home), util.q(data), fields, extra))
    assert(pok, theirs)
    local ours, ok = luaperf_home(string.format("script -i %s%s%s 2>%s/err", util.q(data), fields,
      extra, util.q(dir)))
    assert(ok, ours)
    local a, b = user_lines(theirs), user_lines(ours)
    assert.is_true(#a >= 50, "too few user samples: " .. #a)
    assert.is_nil(first_diff(a, b))
    return a, util.read(dir .. "/err") or ""
  end

  it("names the rebuilt program from perf's build-id cache copy, as perf script", function()
    local cached = util.sh("ls " .. util.q(home) .. "/.debug/.build-id/*/ 2>/dev/null")
    assert.is_truthy(cached:find("%x"), "perf record kept no build-id cache copy")
    local lines = compare()
    local named = 0
    for _, l in ipairs(lines) do
      if l:find("spin_alpha (" .. prog .. ")", 1, true) or l:find("spin_beta (" .. prog .. ")", 1, true) then
        named = named + 1
      end
    end
    assert.is_true(named >= 20, "perf named " .. named .. " samples of the recorded program")
  end)

  it("leaves it [unknown] without the cache copy, as perf, and says why once", function()
    -- the cache as perf record left it, but for the program's copy
    local out, ok = util.sh(string.format(
      "cp -a %s/.debug %s/debug.saved && rm -rf %s/.debug/.build-id %s/.debug%s",
      util.q(home), util.q(dir), util.q(home), util.q(home), util.q(dir)))
    assert(ok, out)
    local lines, err = compare()
    util.sh(string.format("rm -rf %s/.debug && mv %s/debug.saved %s/.debug", util.q(home), util.q(dir), util.q(home)))
    local unknown = 0
    for _, l in ipairs(lines) do
      if l:find("[unknown] (" .. prog .. ")", 1, true) then unknown = unknown + 1 end
    end
    assert.is_true(unknown >= 20, "perf left " .. unknown .. " samples [unknown]")
    local _, nwarn = err:gsub((prog .. ": not symbolized"):gsub("%p", "%%%0"), "")
    assert.equal(1, nwarn, err)
    assert.is_truthy(err:find("build id", 1, true), err)
  end)

  it("puts the reason in meta.warnings for the Lua API", function()
    local out, ok = util.sh(string.format(
      "cp -a %s/.debug %s/debug.saved && rm -rf %s/.debug/.build-id %s/.debug%s",
      util.q(home), util.q(dir), util.q(home), util.q(home), util.q(dir)))
    assert(ok, out)
    util.write(dir .. "/w.lua", string.format([[
      local stacks = require "perf.stacks"
      local list = assert(stacks.from_perf_data(%q))
      for _, w in ipairs(list.meta.warnings or {}) do print("W " .. w) end
    ]], data))
    -- (under make test-asan the child interpreter takes the sanitizer runtime first)
    local pre = util.preload_env()
    out = util.sh(string.format("%sHOME=%s %s %s/w.lua", pre, util.q(home), util.lua, util.q(dir)))
    util.sh(string.format("rm -rf %s/.debug && mv %s/debug.saved %s/.debug", util.q(home), util.q(dir), util.q(home)))
    assert.is_truthy(out:find("W " .. prog .. ": not symbolized", 1, true), out)
  end)

  it("--symfs DIR reads the recorded objects under DIR, as perf --symfs", function()
    local out, ok = util.sh(string.format(
      "cp -a %s/.debug %s/debug.saved && rm -rf %s/.debug/.build-id %s/.debug%s && mv %s %s.away",
      util.q(home), util.q(dir), util.q(home), util.q(home), util.q(dir), util.q(prog), util.q(prog)))
    assert(ok, out)
    local symfs = " --symfs " .. util.q(dir .. "/symfs")
    local ok2, lines = pcall(compare, symfs)
    -- report: the program's rows
    local theirs = util.sh(string.format("HOME=%s perf report -i %s --stdio --sort dso,sym%s 2>/dev/null",
      util.q(home), util.q(data), symfs))
    local ours = luaperf_home(string.format("report -i %s --stdio --sort dso,sym%s 2>/dev/null", util.q(data), symfs))
    util.sh(string.format("rm -rf %s/.debug && mv %s/debug.saved %s/.debug && mv %s.away %s",
      util.q(home), util.q(dir), util.q(home), util.q(prog), util.q(prog)))
    assert(ok2, lines)
    local named = 0
    for _, l in ipairs(lines) do
      if l:find("spin_alpha (", 1, true) or l:find("spin_beta (", 1, true) then named = named + 1 end
    end
    assert.is_true(named >= 20, "perf named " .. named .. " samples through --symfs")
    local a, b = report_rows(theirs), report_rows(ours)
    local n = 0
    for k, v in pairs(a) do
      if k:match("^prog|") then
        n = n + 1
        assert.is_truthy(b[k], k .. " missing from luaperf report:\n" .. ours)
        assert.is_true(math.abs(v - b[k]) <= 0.05, k)
      end
    end
    assert.is_true(n >= 2, theirs)
  end)
end)

describe("a PIE program run six times", function()
  local dir, data
  setup(function()
    dir = util.tmpdir()
    util.write(dir .. "/pie.c", [[
volatile unsigned long sink;
__attribute__((noinline)) void work_a(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink += i * 3; }
__attribute__((noinline)) void work_b(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink ^= i + 7; }
int main(void) { for (int k = 0; k < 8; k++) { work_a(3000000); work_b(1500000); } return 0; }
]])
    local out, ok = util.sh(string.format("cd %s && cc -O1 -fPIE -pie -o pie pie.c && strip pie", util.q(dir)))
    assert(ok, out)
    data = dir .. "/pie.data"
    out, ok = util.sh(string.format(
      "cd %s && HOME=%s perf record -q -e cpu-clock -F 999 -o %s -- sh -c './pie; ./pie; ./pie; ./pie; ./pie; ./pie' 2>&1",
      util.q(dir), util.q(dir), util.q(data)))
    assert(ok, out)
  end)
  teardown(function() util.sh("rm -rf " .. util.q(dir)) end)

  it("gives luaperf report --sort dso,sym the rows perf report gives, within 0.05", function()
    local theirs = util.sh(string.format("HOME=%s perf report -i %s --sort dso,sym --stdio 2>/dev/null",
      util.q(dir), util.q(data)))
    local ours, ok = util.sh(string.format("HOME=%s %sLUAPERF_LUA=%s %s/bin/luaperf report -i %s --sort dso,sym --stdio 2>/dev/null",
      util.q(dir), util.preload_env(), util.lua, util.root, util.q(data)))
    assert(ok, ours)
    local a, b = report_rows(theirs), report_rows(ours)
    local n, sum = 0, 0
    for k, v in pairs(a) do
      if k:match("^pie|") then
        n = n + 1
        sum = sum + v
        assert.is_truthy(b[k], k .. " missing from luaperf report:\n" .. ours)
        assert.is_true(math.abs(v - b[k]) <= 0.05, k .. ": perf " .. v .. ", luaperf " .. b[k])
      end
    end
    for k in pairs(b) do
      if k:match("^pie|") then assert.is_truthy(a[k], k .. " is not a row of perf report:\n" .. theirs) end
    end
    assert.is_true(n >= 2 and sum >= 50, theirs)
  end)
end)

describe("the perf.data corpus", function()
  local corpus = util.root .. "/../shared/perfdata-corpus"
  -- busy.1, forkexit: objects of another machine (its bash, find, vdso);
  -- callgraph_and_branch, lost_samples: user-context chain entries and a
  -- kernel-mode sample's user address, which perf looks up in that
  -- context's maps only
  for _, name in ipairs({ "perf.data.busy.1-3.8", "perf.data.forkexit-3.8",
      "perf.data.callgraph_and_branch-3.8", "perf.data.lost_samples-4.4" }) do
    it(name .. ": user frames print as perf script prints them", function()
      local path = corpus .. "/" .. name
      if not util.read(path) then
        pending("no corpus at " .. corpus)
        return
      end
      local theirs = util.sh("perf script -i " .. util.q(path) .. " 2>/dev/null")
      local ours, ok = util.luaperf("script -i " .. util.q(path) .. " 2>/dev/null")
      assert(ok, ours)
      local a, b = user_lines(theirs), user_lines(ours)
      assert.is_true(#a >= 40, "too few user lines: " .. #a)
      assert.is_nil(first_diff(a, b))
    end)
  end

  -- the file's pids are another machine's: this one's /proc/PID/{root,
  -- map_files,mem} are not theirs (objects missing here used to be looked
  -- for there)
  for _, cmd in ipairs({ "script -i %s", "report -i %s --stdio", "flame -i %s -o /dev/null --flamechart" }) do
    it("luaperf " .. cmd:match("^%S+") .. " reads nothing under /proc/PID for a file's pids", function()
      local path = corpus .. "/perf.data.busy.1-3.8"
      if not util.read(path) then
        pending("no corpus at " .. corpus)
        return
      end
      local _, has = util.sh("command -v strace")
      if not has then
        pending("no strace")
        return
      end
      local dir = util.tmpdir()
      local out = util.sh(string.format("strace -f -qq -e trace=open,openat,stat,newfstatat,statx,readlink -o %s/trace " ..
        "env LUAPERF_LUA=%s %s/bin/luaperf %s >/dev/null 2>&1; grep -E '\"/proc/[0-9]+' %s/trace | head -5",
        util.q(dir), util.lua, util.root, string.format(cmd, util.q(path)), util.q(dir)))
      local traced = util.read(dir .. "/trace") or ""
      util.sh("rm -rf " .. util.q(dir))
      assert.is_true(#traced > 0, "strace wrote nothing")
      assert.equal("", out)
    end)
  end
end)
