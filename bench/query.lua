-- One query of the query API on a perf.data file, its rows printed (the
-- work a user's script does): lua5.4 bench/query.lua FILE NAME
local perf = require "perf"
-- as luaperf report does: the tables' pages faulted in on a helper thread
-- (docs/reference.md, perf.prefault; LUAPERF_PREFAULT=0 leaves it off)
if os.getenv("LUAPERF_PREFAULT") ~= "0" then assert(perf.prefault(true)) end
local path, name = arg[1], arg[2]
local f = assert(perf.open(path))
local queries = {
  comm_dso = function() return f:report{ by = { "comm", "dso" } } end,
  comm = function() return f:report{ by = "comm" } end,
  sym_children = function() return f:report{ by = "sym", children = true } end,
  dso_of_gzip = function() return f:report{ by = "dso", where = { comm = "gzip" } } end,
  cpu = function() return f:report{ by = "cpu" } end,
  callers = function() return f:paths{ ending = "_PyObject_Malloc", top = 20 } end,
  timeline = function() return f:timeline{ bucket = 1, by = "comm" } end,
}
local q = assert(queries[name], "unknown query " .. tostring(name))
for _, r in ipairs(q()) do
  io.write(tostring(r.value), " ", tostring(r.pct), "\n")
end
f:close()
