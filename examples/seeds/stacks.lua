-- flame-graphs-and-stack-sampling.txt, "The Frame-Pointer Problem, Measured":
-- the shaped program (spec/progs/shaped.c) built twice, -O2 -g with and without
-- -fomit-frame-pointer, sampled at 9,999 Hz with call chains: frame pointers give
-- the paths (minus parse_row: its callees are frameless leaves, so the %rbp walk
-- skips it), omitted ones give bare leaves, and DWARF unwinding of the very same
-- omitted build recovers parse_row (glibc's CFI even takes it past main to _start).
--   lua5.4 examples/seeds/stacks.lua [rounds]
local perf, root = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
local bin = root .. "/build/seeds/shaped"
for _, v in ipairs{ "fp", "nofp" } do
  assert(os.execute(("mkdir -p %s/build/seeds && cc -O2 -g -f%somit-frame-pointer -o %s-%s %s/spec/progs/shaped.c"):format(
    root, v == "fp" and "no-" or "", bin, v, root)))
end
local runs = { { "fp build, --call-graph fp", "fp", "fp" }, { "omitted, --call-graph fp", "nofp", "fp" }, { "omitted, --call-graph dwarf", "nofp", "dwarf" } }
local rows, folded = { {}, {}, {}, {}, {}, {}, {}, {} }, {}
for i, r in ipairs(runs) do
  local s = assert(perf.session{ events = { "cpu-clock:u" }, freq = 9999, callchain = r[3], pages = 512, cmd = { bin .. "-" .. r[2], arg[1] or "150" } })
  s:start(); repeat local _, done = s:poll(10); s:profile() until done
  local p, st = s:profile(), s:stats()
  folded[i] = p:folded{ comm = false }
  local paths, deepest, shallow, main = 0, 0, 0, 0
  for stack, n in folded[i]:gmatch("([^\n]*) (%d+)\n") do
    local depth = select(2, stack:gsub(";", "")) + 1
    paths, deepest, shallow = paths + 1, math.max(deepest, depth), shallow + (depth <= 2 and n or 0)
    main = main + (stack:find("main;server_loop", 1, true) and n or 0)
  end
  local values = { p:total(), p:count(), paths, deepest, ("%d (%.0f%%)"):format(shallow, 100 * shallow / p:total()), ("%d (%.0f%%)"):format(main, 100 * main / p:total()), st.lost .. " / " .. st.throttled, folded[i]:find("parse_row;", 1, true) and "yes" or "no" }
  for k = 1, 8 do rows[k][i] = values[k] end
  s:close()
end
local names = { "Samples collected", "Unique address-level stacks", "Stacks after symbolization", "Deepest stack (frames)", "Samples with depth <= 2", "Samples reaching main", "Records lost / throttled", "parse_row as a caller" }
print(("%-30s %-28s %-28s %-28s"):format("", runs[1][1], runs[2][1], runs[3][1]))
for k = 1, 8 do print(("%-30s %-28s %-28s %-28s"):format(names[k], rows[k][1], rows[k][2], rows[k][3])) end
for i = 1, 3 do print("\n -- " .. runs[i][1] .. " (folded)"); io.write(folded[i]) end
