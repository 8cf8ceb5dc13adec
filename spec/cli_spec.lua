-- The command's conventions, tried as a new user would: help and version,
-- one message and one exit code for a mistake in the request, perf's
-- wording for inputs that are not perf.data, and nothing half-written
-- left behind.  perf is the reference where it answers the same question.
local util = require "util"
local perf = require "perf"

local dir
setup(function() dir = util.tmpdir() end)
teardown(function() util.sh("rm -rf " .. dir) end)

-- stdout and stderr apart, and the exit code.
local function run(args)
  local out, _, err, rc = util.luaperf_split(args)
  return out, err, rc
end

describe("luaperf --help and --version", function()
  it("prints each command's usage on stdout and exits 0", function()
    for _, cmd in ipairs({ "stat", "record", "report", "flame", "script", "list" }) do
      local out, err, rc = run(cmd .. " --help")
      assert.are.equal(0, rc, cmd .. ": " .. err)
      assert.truthy(out:find("usage: luaperf " .. cmd, 1, true) or out:find("luaperf " .. cmd, 1, true),
        cmd .. ": " .. out)
    end
    local out, _, rc = run("--help")
    assert.are.equal(0, rc)
    assert.truthy(out:find("usage: luaperf <command>", 1, true), out)
  end)

  it("names the version perf._VERSION names", function()
    local out, _, rc = run("--version")
    assert.are.equal(0, rc)
    assert.are.equal(perf._VERSION .. "\n", out)
    assert.truthy(perf._VERSION:match("^luaperf %d+%.%d+%.%d+$"), perf._VERSION)
  end)
end)

describe("a usage error", function()
  it("exits 129 with the command's name and usage in every command, as perf's", function()
    local _, perf_rc = select(2, util.sh("perf report --bogus-option"))
    for _, cmd in ipairs({ "stat", "record", "report", "flame", "script", "list" }) do
      local _, err, rc = run(cmd .. " --bogus-option")
      assert.are.equal(perf_rc, rc, cmd .. ": " .. err)
      assert.truthy(err:find("^luaperf " .. cmd .. ": "), err)
      assert.truthy(err:find("usage", 1, true), cmd .. ": " .. err)
    end
    util.write(dir .. "/a.folded", "main;work 3\n")
    local _, err, rc = run("report --sort nosuchkey -i " .. dir .. "/a.folded")
    assert.are.equal(129, rc, err)
    assert.truthy(err:find("nosuchkey", 1, true), err)
  end)
end)

describe("an unknown event", function()
  it("is refused by stat and record alike, with perf stat's exit code", function()
    local _, theirs_rc = select(2, util.sh("perf stat -e cyclez -- true"))
    local _, err, rc = run("stat -e cyclez -- true")
    assert.are.equal(theirs_rc, rc)
    assert.are.equal(129, rc)
    assert.are.equal("luaperf stat: unknown event 'cyclez' (did you mean 'cycles'?)\n", err)
    local _, rerr, rrc = run("record -e cyclez -o " .. dir .. "/x.data -- true")
    assert.are.equal(129, rrc)
    assert.truthy(rerr:find("^luaperf record: unknown event 'cyclez' %(did you mean 'cycles'%?%)\n"), rerr)
    assert.is_nil(util.read(dir .. "/x.data"))
    -- without a close name, the hint names the command that lists events
    _, err, rc = run("stat -e xyzzy -- true")
    assert.are.equal(129, rc)
    assert.truthy(err:find("luaperf list", 1, true), err)
    -- a tracepoint that does not exist is the same mistake
    _, err, rc = run("stat -e nosuch:tracepoint -- true")
    assert.are.equal(129, rc)
    assert.truthy(err:find("^luaperf stat: unknown tracepoint"), err)
  end)

  it("differs from an event this machine cannot count, which stays a row", function()
    local out, err, rc = run("stat -x, -e cycles,task-clock -- true")
    assert.are.equal(0, rc, err)
    assert.truthy((out .. err):find("task-clock", 1, true), out .. err)
  end)
end)

describe("a command that cannot run", function()
  it("is named, exits 255 as perf record does, and leaves no file", function()
    local data = dir .. "/never.data"
    local _, perf_rc = select(2, util.sh("perf record -o " .. dir .. "/perf.data -- /nonexistent/cmd"))
    local _, err, rc = run("record -o " .. data .. " -- /nonexistent/cmd")
    assert.are.equal(perf_rc, rc)
    assert.are.equal("luaperf record: cannot run '/nonexistent/cmd': No such file or directory\n", err)
    assert.is_nil(util.read(data))
  end)
end)

describe("inputs that are not perf.data", function()
  it("are refused by report, flame and script in perf's words, exit 1", function()
    local empty = dir .. "/empty.data"
    util.write(empty, "")
    local theirs = util.sh("perf report --stdio -i " .. empty .. " 2>&1")
    assert.truthy(theirs:find("zero-sized data (" .. empty .. "), nothing to do!", 1, true), theirs)
    for _, cmd in ipairs({ "report", "flame -o " .. dir .. "/f.svg" }) do
      local name = cmd:match("^%S+")
      local _, err, rc = run(cmd .. " -i " .. empty)
      assert.are.equal(1, rc)
      assert.are.equal("luaperf " .. name .. ": zero-sized data (" .. empty .. "), nothing to do!\n", err)
      _, err, rc = run(cmd .. " -i " .. dir)
      assert.are.equal(1, rc)
      assert.are.equal("luaperf " .. name .. ": " .. dir .. ": is a directory, not a perf.data file\n", err)
    end
    assert.is_nil(util.read(dir .. "/f.svg"))
    -- luaperf script says it the same way
    local _, serr, src = run("script -i " .. empty)
    assert.are.equal(1, src)
    assert.are.equal("luaperf script: zero-sized data (" .. empty .. "), nothing to do!\n", serr)
    _, serr = run("script -i " .. dir)
    assert.truthy(serr:find("^luaperf script: " .. dir:gsub("%p", "%%%0") .. ": is a directory, not a perf.data file"), serr)
    local junk = dir .. "/junk.data"
    util.sh("head -c 4096 /dev/urandom > " .. junk)
    local _, err, rc = run("report -i " .. junk)
    assert.are.equal(1, rc)
    assert.are.equal("luaperf report: " .. junk ..
      ": incompatible file format (neither perf.data nor folded stacks)\n", err)
  end)
end)

describe("the file luaperf record writes", function()
  it("names luaperf in its cmdline header, as perf's names perf", function()
    local data = dir .. "/rec.data"
    local _, err, rc = run("record -e cpu-clock -o " .. data .. " -- true")
    assert.are.equal(0, rc, err)
    local hdr = util.sh("perf report --header-only -i " .. data .. " 2>/dev/null")
    local cmdline = hdr:match("# cmdline : ([^\n]*)")
    assert.truthy(cmdline, hdr)
    assert.are.equal(util.root .. "/bin/luaperf record -e cpu-clock -o " .. data .. " -- true ", cmdline)
  end)
end)

describe("progress on a long read", function()
  it("f:profile{progress=} reports the bytes read of the total as it goes", function()
    local data = dir .. "/faults.data"
    local out, ok = util.perf("record -q -e page-faults -c 1 -o " .. data .. " -- " ..
      util.root .. "/build/progs/touch_pages 140000 2>&1")
    assert.is_true(ok, out)
    local f = assert(perf.open(data))
    local calls, last, total = 0, 0, nil
    local p = assert(f:profile{ progress = function(done, all)
      calls = calls + 1
      assert(done >= last and done <= all, done .. " of " .. all)
      last, total = done, all
    end })
    assert.is_true(calls >= 2, calls .. " calls")
    assert.is_true(last > total / 4, last .. " of " .. total)
    assert.is_true(p:total() >= 140000)
    -- an error in the callback ends the pass with an error, not a crash
    local p2, err = f:profile{ progress = function() error("stop") end }
    assert.is_nil(p2)
    assert.is_string(err)
    f:close()
    -- the command shows none where stderr is not a terminal
    local _, rerr, rc = run("report -i " .. data .. " --sort comm")
    assert.are.equal(0, rc, rerr)
    assert.are.equal("", rerr)
  end)
end)

describe("the heap tuning bin/luaperf runs with", function()
  -- bin/luaperf runs its interpreter with glibc's heap in huge pages
  -- (GLIBC_TUNABLES=glibc.malloc.hugetlb=1); what it starts must not
  -- inherit that: a profiled program runs with the caller's tunables.
  local probe = [[-- sh -c 'echo "child=[${GLIBC_TUNABLES-unset}]"; ]] ..
    [[tr "\0" "\n" < /proc/$PPID/environ | grep "^GLIBC_TUNABLES="']]
  it("is the interpreter's, not the commands' it starts", function()
    -- (whatever the environment the specs run in holds)
    local out, _, err, rc = util.luaperf_split("stat -e task-clock -x, " .. probe,
      "env -u GLIBC_TUNABLES -u LUAPERF_GLIBC_TUNABLES ")
    assert.are.equal(0, rc, err)
    assert.truthy(out:find("child=[unset]", 1, true), out)
    -- the interpreter itself (the sh's parent) started with it
    assert.truthy(out:find("GLIBC_TUNABLES=glibc.malloc.hugetlb=1\n", 1, true), out)
  end)
  it("leaves the caller's GLIBC_TUNABLES to the commands, set or empty", function()
    local out, ok = util.luaperf("stat -e task-clock -x, " .. probe .. " 2>/dev/null",
      "env -u LUAPERF_GLIBC_TUNABLES GLIBC_TUNABLES=glibc.malloc.arena_max=2 ")
    assert.is_true(ok, out)
    assert.truthy(out:find("child=[glibc.malloc.arena_max=2]", 1, true), out)
    -- (the caller's words come after ours, so theirs win: glibc takes
    -- the last; /proc/PID/environ shows only the first, as glibc's parser
    -- leaves the string it read)
    assert.truthy(out:find("GLIBC_TUNABLES=glibc.malloc.hugetlb=1", 1, true), out)
    out, ok = util.luaperf("stat -e task-clock -x, " .. probe .. " 2>/dev/null",
      "env -u LUAPERF_GLIBC_TUNABLES GLIBC_TUNABLES= ")
    assert.is_true(ok, out)
    assert.truthy(out:find("child=[]", 1, true), out)
  end)
end)
