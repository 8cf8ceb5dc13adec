-- luaperf trace (issue 19): -s against strace -c -f and perf trace -s on
-- programs whose system calls are known; --latency against the program's
-- own measure of each call; -e lines against the calls the program makes.
local util = require "util"

local KNOWN = util.root .. "/build/progs/known_calls"

-- A command line traced.  Under make test-asan the sanitizer runtime must
-- stay with luaperf (its calls and LSan's exit task are not the program's),
-- but util.target's env would load it too: a static program drops
-- LD_PRELOAD and execs the command, the same calls whatever its
-- environment, so strace and perf trace run the same line.
local clean
local function target(cmdline)
  if not util.preload then return cmdline end
  clean = clean or util.cc([[
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) { (void)argc; unsetenv("LD_PRELOAD"); execvp(argv[1], argv + 1); return 127; }
]], "-O1 -static", "unpreload")
  return clean .. " " .. cmdline
end

-- luaperf trace -s on a command line.
local function trace_s(cmd)
  return util.luaperf("trace -s -- " .. cmd)
end

-- strace -c's table: { [name] = { calls=, errors= } }
local function strace_counts(cmd)
  local dir = util.tmpdir()
  local out, ok = util.sh("strace -f -c -o " .. dir .. "/s.txt " .. cmd .. " >/dev/null")
  assert(ok, out)
  local t = {}
  for line in util.read(dir .. "/s.txt"):gmatch("[^\n]+") do
    local nums, name = line:match("^%s*[%d.]+%s+[%d.]+%s+%d+%s+([%d%s]+)%s([%w_]+)%s*$")
    if name and name ~= "total" then
      local calls, errors = nums:match("^(%d+)%s+(%d*)")
      t[name] = { calls = tonumber(calls), errors = tonumber(errors) or 0 }
    end
  end
  return t
end

-- perf trace -s's (and ours) rows, summed over threads by name.
local function summary_counts(text)
  local t = {}
  for name, calls, errors in text:gmatch("\n   ([%w_]+)%s+(%d+)%s+(%d+)%s+[%d.]+") do
    local r = t[name] or { calls = 0, errors = 0 }
    r.calls, r.errors = r.calls + tonumber(calls), r.errors + tonumber(errors)
    t[name] = r
  end
  return t
end

local FORKS = { fork = true, vfork = true, clone = true, clone3 = true }

describe("luaperf trace -s", function()
  it("counts each system call and its errors as strace -c -f does", function()
    local cmd = target(KNOWN .. " syscalls 40")
    local out, ok = trace_s(cmd)
    assert(ok, out)
    local ours, ref = summary_counts(out), strace_counts(cmd)
    -- the known ones first: 40 each, openat and close failing 40 times
    assert.equal(40, ours.getppid.calls)
    assert.equal(40, ours.openat.errors)
    assert.equal(40, ours.close.errors)
    for name, r in pairs(ref) do
      if not util.signal_setup_calls[name] then assert.same(r, ours[name], name .. "\n" .. out) end
    end
    for name in pairs(ours) do assert.truthy(ref[name], name) end
  end)

  it("follows a shell's children; a fork returns in the child too, as perf trace counts", function()
    local cmd = target("sh -c " .. util.q(KNOWN .. " syscalls 12; " .. KNOWN .. " syscalls 7"))
    local out, ok = trace_s(cmd)
    assert(ok, out)
    local ours, ref = summary_counts(out), strace_counts(cmd)
    local forks = 0
    for name, r in pairs(ref) do
      if util.signal_setup_calls[name] then
        -- depends on how the command was started (util.signal_setup_calls)
      elseif FORKS[name] then
        forks = forks + r.calls
        -- strace counts the parent's call; the kernel's sys_exit fires in both
        assert.same({ calls = 2 * r.calls, errors = r.errors }, ours[name], name)
      else
        assert.same(r, ours[name], name .. "\n" .. out)
      end
    end
    assert.equal(2, forks)
    -- three processes, each with its comm and pid
    local _, procs = out:gsub("\n [%w_.-]+ %(%d+%), %d+ events, [%d.]+%%\n", "")
    assert.equal(3, procs, out)
  end)

  it("lays the table out as perf trace -s, and agrees with its counts", function()
    local cmd = target(KNOWN .. " syscalls 25")
    local ref, pok = util.sh("perf trace -s -- " .. cmd .. " 2>&1 >/dev/null")
    if not pok or not ref:find("Summary of events", 1, true) then
      return pending("perf trace -s does not run here: " .. ref:sub(1, 200))
    end
    local out, ok = trace_s(cmd)
    assert(ok, out)
    -- the same header lines, character for character
    local function header(text)
      local h = {}
      for line in text:gmatch("[^\n]+") do
        if line:match("^   syscall") or line:match("^%s+%(msec%)") or line:match("^   %-%-%-") or
           line:match("^ Summary of events") then
          h[#h + 1] = line
        end
      end
      return h
    end
    assert.same(header(ref), header(out))
    -- (the differing rows alone first: a whole table is cut in CI's log)
    local theirs, ours, diff = summary_counts(ref), summary_counts(out), {}
    for name in pairs(theirs) do ours[name] = ours[name] or { calls = 0, errors = 0 } end
    for name, r in pairs(ours) do
      local t = theirs[name] or { calls = 0, errors = 0 }
      if t.calls ~= r.calls or t.errors ~= r.errors then
        diff[#diff + 1] = string.format("%s: ours %d/%d, perf's %d/%d", name, r.calls, r.errors,
          t.calls, t.errors)
      end
    end
    table.sort(diff)
    if #diff > 0 then
      -- perf trace drops an event now and then (seen in CI: write 24 of the
      -- program's 25): where it differs, strace -c -f is the arbiter
      local st = strace_counts(cmd)
      for name, r in pairs(ours) do
        local t = theirs[name] or { calls = 0, errors = 0 }
        if t.calls ~= r.calls or t.errors ~= r.errors then
          -- (the signal setup calls depend on the tracer: perf's alone is right for them)
          assert.same(util.signal_setup_calls[name] and t or st[name], r, name .. ": " .. table.concat(diff, "; ") .. "\nperf trace -s:\n" ..
            ref .. "\nours:\n" .. out)
        end
      end
      print("# perf trace -s differs from strace -c -f here, ours agrees with strace: " ..
        table.concat(diff, "; "))
    end
    -- each row: min <= avg <= max, total = calls x avg (to the printed msec)
    for name, calls, _, total, min, avg, max, pct in out:gmatch(
        "\n   ([%w_]+)%s+(%d+)%s+(%d+)%s+([%d.]+)%s+([%d.]+)%s+([%d.]+)%s+([%d.]+)%s+([%d.]+)%%") do
      min, avg, max, total = tonumber(min), tonumber(avg), tonumber(max), tonumber(total)
      assert.is_true(min <= avg + 0.0005 and avg <= max + 0.0005, name)
      assert.is_true(math.abs(total - tonumber(calls) * avg) <= 0.0005 * tonumber(calls) + 0.001, name)
      if tonumber(calls) == 1 then assert.equal(0, tonumber(pct)) end
      -- the row's layout: perf's printf widths
      local row = out:match("\n(   " .. name .. " [^\n]*)")
      assert.equal(3 + 15 + 9 + 7 + 5 * 10 + 1, #row, row)
    end
  end)

  it("refuses what it cannot do, with the reason", function()
    local out, ok = util.luaperf("trace -- true")
    assert.is_false(ok)
    assert.truthy(out:find("give -s, or events with -e", 1, true), out)
    out, ok = util.luaperf("trace -s")
    assert.is_false(ok)
    assert.truthy(out:find("nothing to trace", 1, true), out)
    out, ok = util.luaperf("trace -e uprobe:" .. KNOWN .. ":napp --latency -- true")
    assert.is_false(ok)
    assert.truthy(out:find("did you mean 'nap'", 1, true), out)
    out, ok = util.luaperf("trace -e sched:sched_switch --latency -- true")
    assert.is_false(ok)
    assert.truthy(out:find("give uprobe:PATH:FUNC", 1, true), out)
    out, ok = util.luaperf("trace -s --bogus -- true")
    assert.is_false(ok)
    assert.truthy(out:find("unknown option '--bogus'", 1, true), out)
    out, ok = util.luaperf("trace -s -- /nonexistent/prog")
    assert.is_false(ok)
    assert.truthy(out:find("/nonexistent/prog", 1, true), out)
  end)
end)

describe("luaperf trace -e", function()
  -- bcc's log2 slot of a value: 0 for 0, else floor(log2 v) + 1
  local function slot(v)
    local s = 0
    while v >= 1 do v = v / 2; s = s + 1 end
    return s
  end

  -- The histogram rows of a funclatency text: { [slot] = count }, low bounds checked.
  local function hist_rows(text)
    local t, n = {}, 0
    for low, high, count in text:gmatch("\n%s*(%d+) %-> (%d+)%s*: (%d+)") do
      n = n + 1
      t[n] = tonumber(count)
      assert.equal(2 ^ n - 1, tonumber(high))
    end
    return t
  end

  it("--latency puts 1, 2 and 4 ms calls in their log2 buckets (msecs, usecs)", function()
    for _, unit in ipairs({ { "msecs", 1e6 }, { "usecs", 1e3 } }) do
      local dir = util.tmpdir()
      local k = 6
      local out, ok = util.luaperf("trace -e uprobe:" .. KNOWN .. ":nap --latency --unit " .. unit[1] ..
        " -- " .. KNOWN .. " sleeps " .. k .. " " .. dir .. "/naps")
      assert(ok, out)
      -- Each nap as the probes time it (on the same monotonic clock) is at
      -- least the nap asked for (nanosleep never returns early) and at most
      -- the program's own measure around the call, which a loaded machine
      -- can stretch well past the return: the nap's slot is in that range.
      local naps = {}
      for ms, ns in util.read(dir .. "/naps"):gmatch("(%d+) (%d+)") do
        naps[#naps + 1] = { lo = slot(math.floor(tonumber(ms) * 1e6 / unit[2])),
          hi = slot(math.floor(tonumber(ns) / unit[2])) }
      end
      assert.equal(3 * k, #naps)
      local got = hist_rows(out)
      local total, slots = 0, {}
      for s, c in pairs(got) do total = total + c; slots[#slots + 1] = s end
      for _, n in ipairs(naps) do slots[#slots + 1] = n.lo; slots[#slots + 1] = n.hi end
      table.sort(slots)
      -- The counts fit the ranges (Hall's condition, which for ranges on a
      -- line is enough): every run of slots a..b holds at least the naps
      -- whose range lies in it and at most those whose range meets it.
      for _, a in ipairs(slots) do
        for _, b in ipairs(slots) do
          if a <= b then
            local c, inside, meets = 0, 0, 0
            for s = a, b do c = c + (got[s] or 0) end
            for _, n in ipairs(naps) do
              if n.lo >= a and n.hi <= b then inside = inside + 1 end
              if n.lo <= b and n.hi >= a then meets = meets + 1 end
            end
            assert.is_true(inside <= c and c <= meets,
              ("%s slots %d..%d: %d naps, want %d to %d\n%s"):format(unit[1], a, b, c, inside, meets, out))
          end
        end
      end
      assert.equal(3 * k, total)
      assert.truthy(out:find("     " .. unit[1] .. string.rep(" ", 19 - #unit[1]) .. " : count     distribution", 1, true), out)
      assert.truthy(out:find("\navg = %d+ " .. unit[1] .. ", total: %d+ " .. unit[1] .. ", count: " .. 3 * k .. "\n"), out)
    end
  end)

  it("--latency prints one histogram per function, each under its name", function()
    local out, ok = util.luaperf("trace -e uprobe:" .. KNOWN .. ":nap,uprobe:libc:nanosleep --latency " ..
      "--unit msecs -- " .. KNOWN .. " sleeps 4")
    assert(ok, out)
    local a = out:find("\nFunction = nap\n", 1, true)
    local b = out:find("\nFunction = nanosleep\n", 1, true)
    assert.truthy(a and b and a < b, out)
    local _, counts = out:gsub("count: 12\n", "")
    assert.equal(2, counts, out)
  end)

  it("prints each probe hit with its arguments and return value, and tracepoint fields", function()
    local n = 9
    local out, ok = util.luaperf("trace -e uprobe:" .. KNOWN .. ":probe_target,uretprobe:" .. KNOWN ..
      ":probe_target,syscalls:sys_enter_write -- " .. KNOWN .. " calls " .. n)
    assert(ok, out)
    local args, rets, sum = {}, {}, 0
    for a in out:gmatch("uprobe:[^\n]*probe_target: %((0x%x+),") do args[#args + 1] = tonumber(a) end
    for r in out:gmatch("uretprobe:[^\n]*probe_target: = (0x%x+)") do rets[#rets + 1] = tonumber(r) end
    assert.equal(n, #args, out)
    assert.equal(n, #rets, out)
    for i = 1, n do
      sum = sum + i
      assert.equal(i, args[i])
      assert.equal(sum, rets[i])           -- probe_target returns the running sum
    end
    local _, writes = out:gsub("known_calls/%d+ syscalls:sys_enter_write: [^\n]*fd=3 [^\n]*count=1\n", "")
    assert.equal(n, writes, out)
    -- times go forward
    local last = -1
    for t in out:gmatch("\n?%s*([%d.]+) known_calls/") do
      assert.is_true(tonumber(t) >= last)
      last = tonumber(t)
    end
  end)
end)
