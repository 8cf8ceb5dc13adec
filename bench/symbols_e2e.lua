-- End-to-end symbolization of a perf.data file, as a report does it:
-- open, feed the address-space records to a symbolizer, aggregate the
-- samples' stacks in C (f:profile), resolve each unique address once
-- (p:stacklist), print the top entries.  bench/symbols.sh times it against
-- perf report --stdio on the same file.
--   lua5.4 bench/symbols_e2e.lua perf.data [kallsyms file]
local perf = require "perf"
local f = assert(perf.open(arg[1]))
local sym = assert(perf.symbolizer{ kallsyms = arg[2] })
sym:feed(f)
local p = f:profile()
local list = p:stacklist{ symbolizer = sym }
local top = p:top{ list = list }
io.write(string.format("samples %d, unique stacks %d, top entries %d\n",
  list.meta.samples, #list, #top))
f:close()
