-- syscount (bcc; perf trace -s, strace -c): system calls by name with their
-- errors and time, for a command or, without one, every process for SECONDS.
-- raw_syscalls:sys_enter/sys_exit sampled at period 1; s:syscalls() drains the
-- rings and pairs each thread's enter and exit in C (luaperf trace -s's
-- machinery: no record reaches Lua); the rows are per thread, summed here by name.
--   lua5.4 examples/recipes/syscount.lua [SECONDS | -- command ...]
local perf = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
local cmd = arg[1] == "--" and { select(2, (table.unpack or unpack)(arg)) } or nil
local s = assert(perf.session{ events = { "raw_syscalls:sys_enter", "raw_syscalls:sys_exit" }, period = 1,
  clockid = "monotonic", cmd = cmd, pid = not cmd and -1 or nil, pages = 512 })
assert(s:start())
local t0, rows = perf.clock()
repeat local _, done = s:poll(100); rows = assert(s:syscalls()) until done or (not cmd and perf.clock() - t0 > (tonumber(arg[1]) or 1))
s:stop(); rows = assert(s:syscalls())
local by, list, total = {}, {}, 0
for _, r in ipairs(rows) do
  local c = by[r.name or r.nr]
  if not c then c = { name = r.name or tostring(r.nr), calls = 0, errors = 0, ns = 0 }; by[r.name or r.nr], list[#list + 1] = c, c end
  c.calls, c.errors, c.ns, total = c.calls + r.calls, c.errors + r.errors, c.ns + r.total, total + r.calls
end
table.sort(list, function(a, b) return a.calls > b.calls or (a.calls == b.calls and a.name < b.name) end)
print(("%-22s %10s %8s %12s   (%d system calls, %d lost)"):format("SYSCALL", "COUNT", "ERRORS", "TIME (us)", total, s:stats().lost or 0))
for i = 1, math.min(#list, 15) do local c = list[i]
  print(("%-22s %10d %8d %12.1f"):format(c.name, c.calls, c.errors, c.ns / 1000))
end
s:close()
