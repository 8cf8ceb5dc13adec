-- funclatency (bcc): a log2 histogram of one user function's latency, entry to
-- return.  Two dynamic probes, `uprobe:PATH:FUNC` and `uretprobe:PATH:FUNC`,
-- opened through the kernel's uprobe PMU (nothing written to tracefs, nothing
-- left behind), sample every call and return of a command; each thread's
-- entries are paired with its returns (a stack: recursion nests) and the
-- durations go into perf.hist.  Probes need root (CAP_SYS_ADMIN).
-- `luaperf trace -e uprobe:PATH:FUNC --latency -- cmd` is the same as a command.
--   lua5.4 examples/recipes/funclatency.lua [PROG FUNC [args...]]
--   (default: build/progs/known_calls probe_target, `known_calls calls 100`)
local perf, root = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
local prog, func = arg[1] or root .. "/build/progs/known_calls", arg[2] or "probe_target"
local cmd = { prog, (table.unpack or unpack)(arg, 3) }
if not arg[1] then cmd[2], cmd[3] = "calls", "100" end
local entry, ret = "uprobe:" .. prog .. ":" .. func, "uretprobe:" .. prog .. ":" .. func
local s = assert(perf.session{ events = { entry, ret }, cmd = cmd, pages = 256 })
assert(s:start())
local recs = {}
repeat local _, done = s:poll(20); for r in s:records{ type = "SAMPLE" } do recs[#recs + 1] = r end until done
for r in s:records{ type = "SAMPLE" } do recs[#recs + 1] = r end
s:close()
table.sort(recs, function(a, b) return a.time < b.time end)     -- the rings are per CPU
local open, h = {}, perf.hist()
for _, r in ipairs(recs) do
  local st = open[r.tid] or {}
  open[r.tid] = st
  if r.event == entry then st[#st + 1] = r.time
  elseif #st > 0 then h:add(r.time - table.remove(st)) end
end
print(("%s %s: %d calls, p50 %s ns, p99 %s ns"):format(prog, func, h:count(), h:percentile(50), h:percentile(99)))
io.write(h:text{ unit = "nsecs", summary = true })
