-- perf-profiling-tool.txt, "Multiplexing, measured": open N identical events and
-- watch the worst time_running/time_enabled; the last N at 100% is the number of
-- usable counters.  The text's 'cycles' probe found five on Zen 5.  Here 'cycles'
-- fails ENOENT (no PMU), software events never rotate (no counter limit), and
-- the one limited resource is the breakpoint PMU's debug registers: the kernel
-- refuses the fifth mem: event at open (ENOSPC) instead of multiplexing it.
--   lua5.4 examples/seeds/multiplex.lua [max N]
local perf = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
local specs = { "cycles", "cpu-clock", "mem:0x1000:rw" }
local open, ceiling, E = {}, {}, { [2] = "ENOENT", [28] = "ENOSPC" }
local unpack = table.unpack or unpack
for i = 1, #specs do open[i] = {} end
print(("%-31s %22s %22s %22s"):format("identical events", unpack(specs)))
for n = 1, tonumber(arg[1]) or 10 do
  local cells = {}
  for i, spec in ipairs(specs) do
    local c, err, errno = perf.counter(spec, { pid = 0 })
    if c then open[i][n] = c end
    local x = 0
    for k = 1, 2e5 do x = x + k end
    local worst = 1
    for _, cc in ipairs(open[i]) do
      local r = cc:read()
      worst = math.min(worst, r.enabled > 0 and r.running / r.enabled or 1)
    end
    if c and worst >= 1 then ceiling[i] = n end
    cells[i] = c and ("%.2f%%"):format(100 * worst) or (E[errno] or errno) .. " at open"
  end
  print(("%2d asked: worst time-scheduled %22s %22s %22s"):format(n, unpack(cells)))
end
for i, spec in ipairs(specs) do print(("ceiling %-14s %s"):format(spec, ceiling[i] or "none: never opens")) end
