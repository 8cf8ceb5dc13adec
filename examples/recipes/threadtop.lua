-- Top symbols per thread (profile -p PID, perf top --sort tid,sym): a process
-- (or a command) sampled at 999 Hz, each thread's hottest functions.  The
-- profile is aggregated in C and asked with the query API: one report by
-- thread, then one per thread (`where = { tid = ... }`) by symbol.
--   lua5.4 examples/recipes/threadtop.lua [PID SECONDS | -- command ...]   (default: build/progs/dwarf_threads 3000)
local perf, root = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
local pid = tonumber(arg[1])
local cmd = not pid and (arg[1] == "--" and { select(2, (table.unpack or unpack)(arg)) } or { root .. "/build/progs/dwarf_threads", "3000" }) or nil
local s = assert(perf.session{ events = { "cpu-clock" }, freq = 999, pid = pid, cmd = cmd })
assert(s:start())
local t0 = perf.clock()
repeat local _, done = s:poll(100); s:profile() until done or (pid and perf.clock() - t0 > (tonumber(arg[2]) or 2))
local p = s:profile()
for _, t in ipairs(p:report{ by = { "tid", "comm" }, weight = "samples" }) do
  print(("tid %d (%s): %d samples (%.1f%%)"):format(t.tid, t.comm or "?", t.value, t.pct))
  for _, r in ipairs(p:report{ by = "sym", where = { tid = t.tid }, weight = "samples", top = 3 }) do
    print(("  %6.2f%%  %s"):format(r.pct, r.sym))
  end
end
s:close()
