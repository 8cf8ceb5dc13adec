-- perf.hist(): buckets, percentiles and bcc's text layout.  References:
-- sort(1) and awk over the same values (nearest-rank percentiles, log2
-- slots as bcc's bpf_log2l counts them: floor(log2 v) + 1), and the widths
-- of bcc's print_log2_hist ("%10d -> %-10d : %-8d |%-40s|").
local perf = require "perf"
local util = require "util"

-- Values spread over many octaves, written to a file for the tools.
local function sample_values(n, seed)
  local t, x = {}, seed
  for i = 1, n do
    x = (x * 1103515245 + 12345) % 2147483648
    t[i] = math.floor(2 ^ (x % 2400 / 100)) + x % 7   -- 1 .. ~1.7e7
  end
  return t
end

local function to_file(vals)
  local path = util.tmpdir() .. "/vals"
  local f = assert(io.open(path, "w"))
  for _, v in ipairs(vals) do f:write(string.format("%d\n", v)) end
  f:close()
  return path
end

describe("perf.hist", function()
  local vals, path
  setup(function()
    vals = sample_values(5000, 7)
    path = to_file(vals)
  end)

  it("gives exact percentiles while it holds the values (sort -n, nearest rank)", function()
    local h = perf.hist()
    for _, v in ipairs(vals) do h:add(v) end
    assert.equal(#vals, h:count())
    for _, p in ipairs({ 1, 10, 50, 90, 99, 99.9, 100 }) do
      local ref = util.sh(string.format("sort -n %s | awk -v p=%s 'BEGIN{} {v[NR]=$1} END{k=p/100*NR; " ..
        "r=int(k); if (r<k) r++; if (r<1) r=1; print v[r]}'", path, p))
      assert.equal(tonumber(ref), h:percentile(p), "p" .. p)
    end
    local ref = util.sh("sort -n " .. path .. " | sed -n '1p;$p' | tr '\\n' ' '")
    local lo, hi = ref:match("(%d+) (%d+)")
    assert.equal(tonumber(lo), h:min())
    assert.equal(tonumber(hi), h:max())
    local sum = util.sh("awk '{s+=$1} END{printf \"%.0f\", s}' " .. path)
    assert.equal(tonumber(sum), h:sum())
  end)

  it("estimates percentiles inside the right log2 bucket past keep", function()
    local exact, est = perf.hist(), perf.hist{ keep = 10 }
    for _, v in ipairs(vals) do exact:add(v); est:add(v) end
    for _, p in ipairs({ 10, 50, 90, 99 }) do
      local e, x = exact:percentile(p), est:percentile(p)
      local low = 2 ^ math.floor(math.log(e, 2))
      assert.is_true(x >= low and x <= 2 * low, ("p%d: %s not in [%s, %s]"):format(p, x, low, 2 * low))
    end
  end)

  it("counts log2 buckets as bcc does, and prints them in its layout", function()
    local h = perf.hist()
    for _, v in ipairs(vals) do h:add(v) end
    -- awk's slot of each value: floor(log2 v) + 1
    local ref = {}
    local out = util.sh("awk '{s=0; v=$1; while (v>=1) {v=v/2; s++} c[s]++} END{for (k in c) print k, c[k]}' " .. path)
    for k, c in out:gmatch("(%d+) (%d+)") do ref[tonumber(k)] = tonumber(c) end
    local text = h:text{ unit = "nsecs" }
    local lines = util.lines(text)
    assert.equal("     nsecs               : count     distribution", lines[1])
    local vmax = 0
    for _, c in pairs(ref) do if c > vmax then vmax = c end end
    local slot = 0
    for i = 2, #lines do
      slot = slot + 1
      local low, high, count, bar = lines[i]:match("^ *(%d+) %-> (%d+) *: (%d+) *|([* ]*)|$")
      assert.truthy(low, lines[i])
      -- bcc's column widths
      assert.equal(10, #lines[i]:match("^( *%d+) %->"))
      assert.equal(40, #bar)
      assert.equal(slot == 1 and 0 or 2 ^ (slot - 1), tonumber(low))
      assert.equal(2 ^ slot - 1, tonumber(high))
      assert.equal(ref[slot] or 0, tonumber(count), lines[i])
      local _, stars = bar:gsub("%*", "")
      assert.equal(math.floor(40 * (ref[slot] or 0) / vmax), stars, lines[i])
    end
    assert.equal(#lines - 1, math.max(table.unpack((function()
      local k = {} for s in pairs(ref) do k[#k + 1] = s end return k end)())))
    -- funclatency's summary line
    local sum = h:text{ unit = "nsecs", summary = true }
    assert.truthy(sum:find(("\navg = %d nsecs, total: %d nsecs, count: %d\n"):format(
      math.floor(h:sum() / h:count()), h:sum(), h:count()), 1, true), sum)
  end)

  it("counts linear buckets (awk int((v - min) / step))", function()
    local h = perf.hist{ linear = true, step = 1000, min = 0 }
    local small = {}
    for i, v in ipairs(vals) do small[i] = v % 9000; h:add(small[i]) end
    local p = to_file(small)
    local ref = {}
    for k, c in util.sh("awk '{c[int($1/1000)]++} END{for (k in c) print k, c[k]}' " .. p):gmatch("(%d+) (%d+)") do
      ref[tonumber(k)] = tonumber(c)
    end
    for _, b in ipairs(h:buckets()) do
      assert.equal(ref[b.low / 1000], b.count)
      assert.equal(b.low + 1000, b.high)
    end
    local lines = util.lines(h:text{ unit = "usecs" })
    assert.equal("     usecs         : count     distribution", lines[1])
    assert.equal(10, #lines)
    assert.truthy(lines[2]:match("^        0          : %d+ +|[* ]+|$"), lines[2])
  end)

  it("refuses wrong arguments and handles the empty histogram", function()
    assert.has_error(function() perf.hist(5) end)
    assert.has_error(function() perf.hist{ step = 0 } end)
    assert.has_error(function() perf.hist():add("x") end)
    assert.has_error(function() perf.hist():percentile(101) end)
    local h = perf.hist()
    assert.is_nil(h:percentile(50))
    assert.equal("", h:text())
    assert.equal(0, h:count())
  end)
end)
