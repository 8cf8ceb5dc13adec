-- Top symbols of a perf.data file, by samples (like perf report --no-children).
--
--   luaperf record -g -- ./prog
--   luaperf script -i perf.data examples/top_symbols.lua [N]
local counts, total = {}, 0

function sample(rec)
  local s = rec.sym
  local key = s and (s.name .. "  " .. s.dso) or "[unknown]"
  counts[key] = (counts[key] or 0) + 1
  total = total + 1
end

function finish()
  local list = {}
  for k, n in pairs(counts) do list[#list + 1] = { k, n } end
  table.sort(list, function(a, b) return a[2] > b[2] or (a[2] == b[2] and a[1] < b[1]) end)
  local n = tonumber(argv[1]) or 20
  print(string.format("%8s %9s  %s", "samples", "percent", "symbol  dso"))
  for i = 1, math.min(n, #list) do
    print(string.format("%8d %8.2f%%  %s", list[i][2], 100 * list[i][2] / total, list[i][1]))
  end
end
