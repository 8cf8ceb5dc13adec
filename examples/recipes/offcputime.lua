-- offcputime (bcc): time blocked, by stack.  An off-CPU session
-- (perf.session{ offcpu = true }, `luaperf record --off-cpu`'s machinery)
-- samples each switch-out of a blocked thread with its call chain and passes
-- it on at the switch-in as an `offcpu-time` sample whose period is the
-- nanoseconds off the CPU; the profile sums them in C.  Then the functions
-- of the command with the most blocked time beneath them (the kernel's
-- frames left out: every wait ends in schedule()), and the heaviest stacks.
--   lua5.4 examples/recipes/offcputime.lua [command ...]
--   (default: build/progs/offcpu_work sleep 4 50 100: sleeper() naps 4 x 50 ms, burner() spins 100 ms)
local perf, root = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
local cmd = arg[1] and { (table.unpack or unpack)(arg) } or { root .. "/build/progs/offcpu_work", "sleep", "4", "50", "100" }
local s = assert(perf.session{ offcpu = true, callchain = true, cmd = cmd })
assert(s:start())
repeat local _, done = s:poll(100); s:profile() until done
s:stop()
local p = s:profile()                 -- after the stop: the last waits are paired too
local n, ns = p:total()
print(("%.1f ms off CPU in %d waits; blocked time beneath each user function (ms):"):format(ns / 1e6, n))
local shown = 0
for _, r in ipairs(p:report{ by = { "comm", "sym" }, children = true, weight = "period" }) do
  if r.kind ~= "kernel" and shown < 8 then
    shown = shown + 1; print(("%10.1f %6.2f%%  %-12s %s"):format(r.value / 1e6, r.pct, r.comm, r.sym))
  end
end
print("the heaviest stacks (ms, root first):")
for _, path in ipairs(p:paths{ weight = "period", top = 5 }) do
  print(("%10.1f  %s"):format(path.value / 1e6, table.concat(path.stack, ";")))
end
s:close()
