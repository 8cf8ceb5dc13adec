-- Page faults by stack (bpftrace's `software:page-faults:1 { @[ustack] = count() }`,
-- Gregg's page fault flame graphs): every fault of a command sampled with its
-- call chain (period 1), aggregated in C; the functions and the top stacks
-- (p:report, p:paths: the query API) as folded lines for flamegraph.pl or `luaperf flame`.
--   lua5.4 examples/recipes/pagefaults.lua [command ...]   (default: build/progs/touch_pages 2000)
local perf, root = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
local cmd = arg[1] and { (table.unpack or unpack)(arg) } or { root .. "/build/progs/touch_pages", "2000" }
local s = assert(perf.session{ events = { "page-faults" }, period = 1, callchain = true, cmd = cmd, pages = 256 })
assert(s:start())
repeat local _, done = s:poll(50); s:profile() until done
local p = s:profile()
print(("%d page faults, %d stacks; by function (self, and with callees):"):format(p:total(), p:count()))
for _, row in ipairs(p:report{ by = "sym", children = true, weight = "samples", top = 8 }) do
  print(("  %7d %6.2f%%  self %6.2f%%  %s"):format(row.value, row.pct, row.self_pct, row.sym))
end
print("top stacks (root first, as folded lines):")
for _, path in ipairs(p:paths{ weight = "samples", top = 5 }) do print(("  %7d  %s"):format(path.value, table.concat(path.stack, ";"))) end
s:close()
