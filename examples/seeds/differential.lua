-- flame-graphs-and-stack-sampling.txt, "A measured differential": the shaped
-- program before and after a one-line regression (parse_row hashes the whole row,
-- `shaped ROUNDS 4`, instead of a quarter), both sampled the same way; profile 1
-- is normalised to profile 2's total (difffolded.pl -n), then delta = after -
-- normalised before: leaf_hash is red through do_query and blue through
-- server_loop (regressions live in call paths, not functions).  Also writes the
-- red/blue flame graph, build/seeds/diff.svg (widths from profile 2).
--   lua5.4 examples/seeds/differential.lua [rounds]
local perf, root = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
local bin = root .. "/build/seeds/shaped-fp"
assert(os.execute(("mkdir -p %s/build/seeds && cc -O2 -g -fno-omit-frame-pointer -o %s %s/spec/progs/shaped.c"):format(root, bin, root)))
local function profile(quarters)
  local s = assert(perf.session{ events = { "cpu-clock:u" }, freq = 9999, callchain = "fp", pages = 256, cmd = { bin, arg[1] or "150", quarters } })
  s:start(); repeat local _, done = s:poll(20); s:profile() until done
  local counts, p = {}, s:profile()
  for stack, n in p:folded{ comm = false }:gmatch("([^\n]*) (%d+)\n") do
    local key = stack:match("([^;]+;[^;]+)$") or stack           -- the leaf-most two frames
    if stack:find("server_loop", 1, true) then counts[key] = (counts[key] or 0) + tonumber(n) end
  end
  return counts, p:total(), p, s
end
local before, nb, p1, s1 = profile("1")
local after, na, p2, s2 = profile("4")
local scale, keys, max = na / nb, {}, 0
for k in pairs(before) do keys[#keys + 1] = k end
for k in pairs(after) do if not before[k] then keys[#keys + 1] = k end end
for _, k in ipairs(keys) do max = math.max(max, math.abs((after[k] or 0) - (before[k] or 0) * scale)) end
table.sort(keys, function(a, b) return (before[a] or 0) > (before[b] or 0) end)
print(("before %d samples, after %d: scale factor %d/%d = %.4f, delta = after - normalised before"):format(nb, na, na, nb, scale))
print(("%7s %7s %8s   %-22s %-7s %s"):format("before", "after", "norm.d", "share before -> after", "colour", "stack (leaf-most 2)"))
for _, k in ipairs(keys) do
  local b, a = before[k] or 0, after[k] or 0
  local d, colour = a - b * scale, a - b * scale > 0 and "red" or "blue"
  print(("%7d %7d %+8.1f   %5.1f%%  ->  %5.1f%%      %-7s %s"):format(b, a, d, 100 * b / nb, 100 * a / na, math.abs(d) >= 0.15 * max and colour:upper() or colour, k))
end
local f = assert(io.open(root .. "/build/seeds/diff.svg", "w"))
f:write(p2:flamegraph{ diff = p1, title = "shaped: whole-row hash vs quarter-row hash" }); f:close()
s1:close(); s2:close()
