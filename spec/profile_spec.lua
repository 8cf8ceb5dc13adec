-- Profiles (stacktab.c): whole stacks interned in C, counts and periods
-- per (event, pid, tid, stack), merged, iterated; a live session feeds one
-- without a Lua object per sample.
local perf = require "perf"
local util = require "util"

local function num(v) return tonumber(v) end

local DEEP = [[
#include <stdlib.h>
#include <time.h>
volatile unsigned long sink;
static double cpu(void) {
  struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
__attribute__((noinline)) void leaf(double end) {
  while (cpu() < end) for (int i = 0; i < 20000; i++) sink += i;
}
__attribute__((noinline)) void rec(int d, double end) {
  if (d == 0) leaf(end); else rec(d - 1, end);
  sink++;
}
int main(int argc, char **argv) {
  rec(argc > 2 ? atoi(argv[2]) : 20, cpu() + (argc > 1 ? atof(argv[1]) : 0.3));
  return 0;
}
]]

describe("perf.profile", function()
  it("interns identical stacks and keeps them apart by pid, tid and event", function()
    local p = perf.profile()
    assert.same({ 0, 0 }, { num(select(1, p:total())), num(select(2, p:total())) })
    p:add_stack({ 0x401000, 0x402000, 0x403000 }, { pid = 1, tid = 1, event = "cpu-clock", period = 10 })
    p:add_stack({ 0x401000, 0x402000, 0x403000 }, { pid = 1, tid = 1, event = "cpu-clock", period = 30 })
    p:add_stack({ 0x401000, 0x402000, 0x403000 }, { pid = 2, tid = 2, event = "cpu-clock" })
    p:add_stack({ 0x401000, 0x402000, 0x403000 }, { pid = 1, tid = 1, event = "page-faults" })
    p:add_stack({ 0x401000, 0x402000 }, { pid = 1, tid = 1, event = "cpu-clock", count = 5, period = 50 })
    assert.equal(4, p:count())
    local samples, period = p:total()
    assert.equal(9, num(samples))
    assert.equal(10 + 30 + 1 + 1 + 50, num(period))
    local first = p:stacks()()
    assert.same({ 0x401000, 0x402000, 0x403000 }, first.addrs)
    assert.equal(2, num(first.count))
    assert.equal(40, num(first.period))
    assert.equal("cpu-clock", first.event)
    assert.equal(1, first.pid)
  end)

  it("adds record tables, keeps COMMs, merges, and raises when closed", function()
    local p = perf.profile()
    p:add{ type = "COMM", pid = 7, tid = 7, comm = "worker" }
    p:add{ type = "SAMPLE", pid = 7, tid = 7, ip = 0x10, callchain = { 0x10, 0x20 }, period = 3, event = "e" }
    p:add{ type = "SAMPLE", pid = 7, tid = 8, ip = 0x10, cpumode = "kernel", period = 4, event = "e" }
    p:add{ type = "MMAP2", pid = 7 }
    assert.equal("worker", p:comm(7))
    local seen = {}
    for e in p:stacks() do seen[#seen + 1] = e end
    assert.equal(2, #seen)
    assert.equal("worker", seen[1].comm)
    assert.equal(0, seen[1].kernel)
    assert.same({ 0x10 }, seen[2].addrs)
    assert.equal(1, seen[2].kernel)
    local q = perf.profile()
    q:add_stack({ 0x10, 0x20 }, { pid = 7, tid = 7, event = "e", period = 5 })
    q:merge(p)
    assert.equal(2, q:count())
    local s, per = q:total()
    assert.equal(3, num(s))
    assert.equal(12, num(per))
    assert.equal("worker", q:comm(7))
    q:close()
    q:close()
    assert.has_error(function() q:total() end, "attempt to use a closed perf.Profile")
    assert.has_error(function() p:merge(q) end, "attempt to use a closed perf.Profile")
  end)

  it("holds named frames beside addresses, and weights, through merges", function()
    local a = perf.profile()
    a:add_stack({ "leaf", 0x401000, "[Lua] f x.lua:3" }, { count = 2, period = 20, pid = 7, weights = { bytes = 100 } })
    a:add_stack({ "leaf", 0x401000, "[Lua] f x.lua:3" }, { count = 1, period = 10, pid = 7, weights = { bytes = 5 } })
    a:add_stack({ "0x401000" }, { count = 1, pid = 7 })   -- a string address is an address
    local b = perf.profile()
    -- another table interns other names first: a merge goes by name
    b:add_stack({ "other" }, { count = 3, pid = 7, weights = { waits = 9 } })
    b:add_stack({ "[Lua] f x.lua:3", "leaf" }, { count = 4, pid = 7, weights = { bytes = 1 } })
    b:add_stack({ "leaf", 0x401000, "[Lua] f x.lua:3" }, { count = 5, period = 50, pid = 7, weights = { bytes = 2 } })
    assert(a:merge(b))
    local got = {}
    for e in a:stacks() do
      local t = {}
      for i, x in ipairs(e.addrs) do t[i] = type(x) == "string" and x or string.format("%#x", x) end
      got[table.concat(t, ";")] = { e.count, e.period, e.weights and e.weights.bytes or 0,
        e.weights and e.weights.waits or 0 }
    end
    assert.same({
      ["leaf;0x401000;[Lua] f x.lua:3"] = { 8, 80, 107, 0 },
      ["0x401000"] = { 1, 1, 0, 0 },
      ["other"] = { 3, 3, 0, 9 },
      ["[Lua] f x.lua:3;leaf"] = { 4, 4, 1, 0 },
    }, got)
    -- reports name the named frames as they are, root first
    local folded = a:folded()
    assert.truthy(folded:find("[Lua] f x.lua:3;[unknown];leaf 8\n", 1, true), folded)
    assert.truthy(folded:find("\nother 3\n", 1, true) or folded:find("^other 3\n"), folded)
  end)

  it("publishes its methods as perf.core.Profile", function()
    perf.core.Profile.spec_samples = function(self) return (self:total()) end
    local p = perf.profile()
    p:add_stack({ 1 }, {})
    assert.equal(1, num(p:spec_samples()))
    perf.core.Profile.spec_samples = nil
  end)

  it("aggregates a live session in C without a Lua object per sample", function()
    local path = util.cc(DEEP, "-O1 -g -fno-omit-frame-pointer -fno-inline -no-pie", "deep")
    local s = assert(perf.session{ events = { "cpu-clock:u" }, period = 50000, callchain = "fp",
      inherit = false, cmd = { path, "0.5", "30" } })
    collectgarbage()
    collectgarbage()
    local before = collectgarbage("count")
    assert(s:start())
    local p
    repeat
      local _, done = s:poll(50)
      p = s:profile()
    until done
    assert.equal(0, s:wait())
    p = s:profile()
    local kb = collectgarbage("count") - before
    local st = s:stats()
    local samples, period = p:total()
    assert.equal(num(st.samples), num(samples))
    assert.equal(num(samples) * 50000, num(period))
    -- (0.5 s at 50 us gives 10,000 on a fast machine; 4,836 under ASan on a
    -- VM whose timer costs 49 us a sample)
    assert.is_true(num(samples) > 2000, "samples " .. num(samples))
    -- thousands of samples, a handful of unique stacks, no garbage per sample
    assert.is_true(p:count() < num(samples) / 10, p:count() .. " stacks")
    assert.is_true(kb < 64, kb .. " KB of Lua memory for " .. num(samples) .. " samples")
    -- the deepest stacks are the recursion: leaf + 31 rec frames + main
    local deepest = 0
    for e in p:stacks() do
      if #e.addrs > deepest then deepest = #e.addrs end
      assert.equal("deep", e.comm)
    end
    assert.is_true(deepest >= 33, "deepest " .. deepest)
    s:close()
  end)
end)
