-- The workload of the luaprofile benchmarks (bench/luaprofile.lua,
-- bench/luaprofile_perf.lua): calls, tables, strings and closures.
--   local work = dofile("bench/luaprofile_work.lua")   -- work(scale)
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local function tables(n)
  local t = {}
  for i = 1, n do t[i] = { id = i, name = "n" .. (i % 100) } end
  local s = 0
  for _, v in ipairs(t) do s = s + v.id + #v.name end
  return s
end
local function strings(n)
  local parts = {}
  for i = 1, n do parts[#parts + 1] = ("%05d"):format(i) end
  return #table.concat(parts, ",")
end
return function(scale)
  local r = 0
  for _ = 1, scale do
    r = r + fib(22) + tables(20000) + strings(20000)
  end
  return r
end
