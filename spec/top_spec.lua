-- luaperf top (issue 20): perf top's view of a live session.  --stdio (or
-- a pipe) prints a table per interval; on a terminal (tmux here) the table
-- is redrawn in place until q, which restores the terminal.  The hot
-- function of a running program (spec/progs/offcpu_work.c spin) is
-- compared with what perf record/report and perf top show of it.
local util = require "util"

local prog = util.root .. "/build/progs/offcpu_work"
local dir = util.tmpdir()
local sock = "luaperf-top-spec-" .. tostring(os.time()) .. "-" .. tostring(math.random(1e6))

local function spin(secs)
  local out = util.sh(prog .. " spin " .. secs .. " >/dev/null 2>&1 & echo $!")
  local pid = tonumber(out:match("(%d+)"))
  assert(pid, out)
  return pid
end

local function kill(pid) util.sh("kill " .. pid .. " 2>/dev/null; true") end

local function tmux(args) return util.sh("tmux -L " .. sock .. " " .. args) end

-- polls a tmux pane until pred(text) holds or secs pass; returns the text
local function wait_pane(pred, secs)
  local text = ""
  for _ = 1, math.floor(secs * 5) do
    text = tmux("capture-pane -p -t top")
    if pred(text) then return text, true end
    util.sh("sleep 0.2")
  end
  return text, false
end

-- the percentage rows of a table: { {pct=, dso=, sym=}, ... } in order
local function rows(text)
  local t = {}
  for pct, dso, sym in text:gmatch("\n%s+([%d.]+)%%%s+(%S+)%s+%[[.k]%]%s+(%S+)") do
    t[#t + 1] = { pct = tonumber(pct), dso = dso, sym = sym }
  end
  return t
end

local function share(rs, sym)
  for i, r in ipairs(rs) do if r.sym == sym then return r.pct, i end end
  return 0, nil
end

describe("luaperf top", function()
  teardown(function() tmux("kill-server 2>/dev/null") end)

  it("--stdio -p PID: a table per interval; the hot function's share as perf record+report measure it", function()
    local pid = spin(20)
    local out, ok = util.luaperf("top -p " .. pid .. " --stdio -e cpu-clock -d 0.5 --duration 1.7")
    -- perf's measure of the same process, right after
    local data = dir .. "/ref.data"
    util.perf("record -q -e cpu-clock -p " .. pid .. " -o " .. data .. " -- sleep 1 2>&1")
    kill(pid)
    assert(ok, out)
    local n = 0
    for _ in out:gmatch("PerfTop:%s+%d+ irqs/sec") do n = n + 1 end
    assert.is_true(n >= 3, out)
    assert.matches("%[4000Hz cpu%-clock%],  %(pid " .. pid .. "%)", out)
    assert.is_nil(out:find("\27", 1, true))   -- no terminal codes in a pipe
    local last = out:match(".*(PerfTop:.*)$")
    local ours, at = share(rows(last), "hot_loop")
    assert.are.equal(1, at, last)
    local rep = util.perf("report -i " .. data .. " --stdio --sort dso,sym 2>/dev/null")
    local theirs = share(rows(rep), "hot_loop")
    assert.is_true(theirs > 50, rep)
    assert.is_true(math.abs(ours - theirs) <= 10, string.format("ours %.2f%%, perf's %.2f%%", ours, theirs))
  end)

  it("-g: the call graph under the rows; a pipe without --stdio gets plain tables too", function()
    local pid = spin(20)
    local out, ok = util.luaperf("top -p " .. pid .. " -e cpu-clock -g -d 0.5 --duration 1.2 | cat")
    kill(pid)
    assert(ok, out)
    assert.is_nil(out:find("\27", 1, true))
    assert.matches("Children%s+Self%s+Shared Object%s+Symbol", out)
    -- hot_loop's callers, under its row: branches (" --" before the last,
    -- "|--" before others), or one straight line when every sample of the
    -- window had the same chain
    assert.is_truthy(
      out:find("%[%.%] hot_loop%s*\n%s+|[^\n]*\n%s+|?%-%-[%d.]+%%%-%-__libc_start_call_main\n%s+|?%s+main\n") or
      out:find("%[%.%] hot_loop%s*\n%s+|%s*\n%s+%-%-%-__libc_start_call_main\n%s+main\n"), out)
  end)

  it("in a terminal (tmux): the hot function shows within seconds; q quits and restores the terminal", function()
    local pid = spin(30)
    tmux("kill-server 2>/dev/null")
    local _, ok = tmux(string.format("new-session -d -s top -x 140 -y 32 %s", util.q(string.format(
      "cd %s && %sLUAPERF_LUA=%s bin/luaperf top -p %d -e cpu-clock -d 0.5; echo EXITED rc=$?; " ..
      "stty -a | tr ' ;' '\\n\\n' | grep -E '^-?(icanon|echo)$' | tr '\\n' ' '; echo STTY-DONE; sleep 60",
      util.root, util.preload_env(), util.lua, pid))))
    assert.is_true(ok)
    local text, seen = wait_pane(function(t) return t:find("hot_loop", 1, true) ~= nil end, 8)
    assert(seen, text)
    local rs = rows(text)
    assert.are.equal("hot_loop", rs[1] and rs[1].sym, text)
    assert.matches("PerfTop:", text)
    assert.matches("cpu%-clock", text)
    assert.matches("q quit", text)
    tmux("send-keys -t top q")
    -- the shell's line after top's exit, stty's, is whole at STTY-DONE
    local after, done = wait_pane(function(t) return t:find("STTY-DONE", 1, true) ~= nil end, 10)
    kill(pid)
    assert(done, after)
    assert.matches("EXITED rc=0", after)
    -- the alternate screen is gone and the line discipline is back
    assert.is_nil(after:find("PerfTop", 1, true), after)
    assert.matches("icanon echo", after)
    tmux("kill-session -t top")
  end)

  it("-a: every process; the hot program among the top rows, as in perf top's own view (tmux)", function()
    local pid = spin(30)
    local out, ok = util.luaperf("top -a --stdio -e cpu-clock -d 1 --duration 2.5 -n 10")
    assert(ok, out)
    assert.matches("%(all, %d+ CPUs%)", out)
    local mine, at = share(rows(out:match(".*(PerfTop:.*)$")), "hot_loop")
    tmux("kill-server 2>/dev/null")
    tmux(string.format("new-session -d -s top -x 160 -y 40 %s",
      util.q("perf top --stdio -d 1 -e cpu-clock 2>/dev/null; sleep 60")))
    local text = wait_pane(function(t) return t:find("hot_loop", 1, true) ~= nil end, 8)
    tmux("send-keys -t top q")
    tmux("kill-session -t top")
    kill(pid)
    local theirs, pat = share(rows(text), "hot_loop")
    assert(pat and pat <= 5, "perf top:\n" .. text)
    assert(at and at <= 5, out)
    -- one CPU of the two spins: both see a large share, of like size
    assert.is_true(mine >= 5 and theirs >= 5, string.format("ours %.2f%%, perf top's %.2f%%", mine, theirs))
  end)

  it("errors: an exited pid, a target that exits, bad options, no permission", function()
    local dead = tonumber((util.sh("sh -c 'echo $$'")))
    local e, ok = util.luaperf("top -p " .. dead .. " --stdio")
    assert.is_false(ok)
    assert.matches("luaperf top: .*exited or never existed", e)
    local pid = spin(0.8)
    local out, ok2 = util.luaperf("top -p " .. pid .. " --stdio -e cpu-clock -d 0.3")
    assert(ok2, out)
    assert.matches("luaperf top: process " .. pid .. " exited", out)
    local u, _, code = util.luaperf("top --sort bogus")
    assert.are.equal(129, code)
    assert.matches("unknown key 'bogus'", u)
    if util.is_root() then
      local n, nok = util.sh(util.as_nobody_prefix() .. "bin/luaperf top -a --stdio -e cpu-clock --duration 1")
      assert.is_false(nok)
      assert.matches("luaperf top: .*perf_event_paranoid", n)
    end
  end)
end)
