-- End-to-end symbolization of a perf.data file, as `luaperf report` does
-- it (perf.stacks.load): open, feed the address-space records (only those
-- cross into Lua) to a symbolizer, aggregate the samples' stacks in C
-- (f:profile), resolve each unique address once, rank the top entries.
-- bench/symbols.sh times it against perf report --stdio on the same file.
--   lua5.4 bench/symbols_e2e.lua perf.data [kallsyms file]
local perf = require "perf"
local list = assert(perf.stacks.load(arg[1], { kallsyms = arg[2] }))
local top = perf.report.top(list, { by = "sym", n = 20 })
io.write(string.format("samples %d, unique stacks %d, top entries %d\n",
  list.meta.samples, #list, #top))
