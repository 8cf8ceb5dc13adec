-- A custom report in a few lines: the query API (f:report, f:paths,
-- f:timeline) on a recording, perf's or luaperf's.  Rows are plain tables
-- made in C (one pass over the file, each address symbolized once), so a
-- report perf has no --sort for is a loop over them.  Without a file this
-- records build/progs/shaped (fp call chains, 999 Hz) and reports on that.
-- The function rows weigh by period, as perf report does, and agree with it.
--   lua5.4 examples/recipes/report.lua [perf.data]
local perf, root = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
local path = arg[1] or os.tmpname()
if not arg[1] then
  local s = assert(perf.session{ events = { "cpu-clock" }, freq = 999, callchain = "fp", cmd = { root .. "/build/progs/shaped", "400" } })
  local w = assert(perf.writer(path))
  w:add_session(s); assert(s:start()); w:synthesize(); assert(w:record(s)); assert(w:close()); s:close()
end
local f = assert(perf.open(path))
local by = f:report{ by = { "comm", "dso" }, weight = "samples" }
print(("%d samples; by command and object:"):format(by.total))
for _, r in ipairs(by) do print(("  %6.2f%%  %6d  %-16s %s"):format(r.pct, r.samples, r.comm, r.dso)) end
print("by function, with callees and self (perf report --children --sort sym):")
local top = f:report{ by = "sym", children = true, top = 6 }
for _, r in ipairs(top) do print(("  %6.2f%%  self %6.2f%%  %s"):format(r.pct, r.self_pct, r.sym)) end
local leaf = f:report{ by = "sym", top = 1 }[1].sym
print(("the paths into %s, the hottest function (self):"):format(leaf))
for _, p in ipairs(f:paths{ ending = leaf, top = 4 }) do print(("  %6.2f%%  %s"):format(p.pct, table.concat(p.stack, " > "))) end
print("samples per 50 ms, by command:")
for _, b in ipairs(f:timeline{ bucket = 0.05, by = "comm" }) do print(("  %5.2f s  %-16s %5d"):format(b.t, b.comm, b.samples)) end
f:close()
if not arg[1] then os.remove(path) end
