-- perf.hist(): log2 and linear histograms with percentiles and a text
-- rendering in bcc's layout (funclatency's print_log2_hist, and
-- print_linear_hist), so a script builds a latency histogram in a few lines:
--
--   local h = perf.hist()                       -- log2 buckets
--   h:add(ns) ...
--   io.write(h:text{ unit = "nsecs" })
--   print(h:percentile(99))
--
--   perf.hist{ linear = true, step = 10, min = 0 }   -- [0,10), [10,20), ...
return function(perf)
  local floor = math.floor
  local Hist = {}
  Hist.__index = Hist

  -- Slot of a log2 histogram as bcc's bpf_log2l counts them: 0 for 0, else
  -- floor(log2(v)) + 1, so slot i holds [2^(i-1), 2^i - 1].
  local function log2_slot(v)
    if v < 1 then return 0 end
    local s = 0
    while v >= 1 do
      v = v / 2
      s = s + 1
    end
    return s
  end

  local function check_number(v, what)
    if type(v) ~= "number" or v ~= v then
      error("perf.hist: " .. what .. " must be a number", 3)
    end
  end

  function perf.hist(opts)
    if opts ~= nil and type(opts) ~= "table" then
      error("perf.hist: options must be a table", 2)
    end
    opts = opts or {}
    local keep = opts.keep or 100000
    check_number(keep, "keep")
    local h = setmetatable({ counts = {}, n = 0, total = 0, lo = nil, hi = nil,
      unit = opts.unit, keep = keep, values = {} }, Hist)
    if opts.linear or opts.step then
      local step = opts.step or 1
      check_number(step, "step")
      if step <= 0 then error("perf.hist: step must be positive", 2) end
      if opts.min ~= nil then check_number(opts.min, "min") end
      h.linear, h.step, h.base = true, step, opts.min or 0
    end
    return h
  end

  -- The bucket of a value, and the bounds [low, high] of a bucket.
  function Hist:slot(v)
    if self.linear then
      local i = floor((v - self.base) / self.step)
      return i < 0 and -1 or i
    end
    return log2_slot(v)
  end

  function Hist:bounds(i)
    if self.linear then
      if i < 0 then return -math.huge, self.base end
      return self.base + i * self.step, self.base + (i + 1) * self.step
    end
    if i == 0 then return 0, 1 end
    return 2 ^ (i - 1), 2 ^ i
  end

  -- Adds a value (count times, default once).
  function Hist:add(v, count)
    check_number(v, "value")
    count = count or 1
    check_number(count, "count")
    local i = self:slot(v)
    self.counts[i] = (self.counts[i] or 0) + count
    -- the values themselves while there are few: exact percentiles
    local vals = self.values
    if vals then
      if self.n + count > self.keep or count ~= floor(count) then
        self.values = nil
      else
        for _ = 1, count do vals[#vals + 1] = v end
        self.sorted = false
      end
    end
    self.n = self.n + count
    self.total = self.total + v * count
    if self.lo == nil or v < self.lo then self.lo = v end
    if self.hi == nil or v > self.hi then self.hi = v end
    return self
  end

  function Hist:count() return self.n end
  function Hist:sum() return self.total end
  function Hist:min() return self.lo end
  function Hist:max() return self.hi end
  function Hist:mean() return self.n > 0 and self.total / self.n or nil end

  local function sorted_slots(self)
    local t = {}
    for i in pairs(self.counts) do t[#t + 1] = i end
    table.sort(t)
    return t
  end

  -- { {low=, high=, count=}, ... } for the non-empty buckets, low first
  -- (high is exclusive).
  function Hist:buckets()
    local out = {}
    for _, i in ipairs(sorted_slots(self)) do
      local low, high = self:bounds(i)
      out[#out + 1] = { low = low, high = high, count = self.counts[i] }
    end
    return out
  end

  -- The p-th percentile (0..100).  Exact (nearest rank) while the
  -- histogram holds at most `keep` values (opts.keep, default 100000);
  -- past that, the bucket that holds it, interpolated linearly inside it
  -- and kept within the smallest and largest values seen: off by less
  -- than a bucket's width.
  function Hist:percentile(p)
    check_number(p, "percentile")
    if p < 0 or p > 100 then error("perf.hist: percentile must be in 0..100", 2) end
    if self.n == 0 then return nil end
    local vals = self.values
    if vals then
      if not self.sorted then table.sort(vals); self.sorted = true end
      local k = math.ceil(p / 100 * #vals)
      return vals[k < 1 and 1 or k]
    end
    local rank = p / 100 * self.n
    local seen = 0
    for _, i in ipairs(sorted_slots(self)) do
      local c = self.counts[i]
      if seen + c >= rank then
        local low, high = self:bounds(i)
        if low < self.lo then low = self.lo end
        if high > self.hi then high = self.hi end
        local v = low + (high - low) * (c > 0 and (rank - seen) / c or 0)
        return math.max(self.lo, math.min(self.hi, v))
      end
      seen = seen + c
    end
    return self.hi
  end

  -- bcc's stars: width * count / max of them, '+' when over the maximum.
  local function stars(v, vmax, width)
    local n = 0
    while not (n > (width * v / vmax) - 1 or n > width - 1) do n = n + 1 end
    return string.rep("*", n)
  end

  local function int(v) return string.format("%d", floor(v)) end

  -- The text as bcc's tools print it; opts: unit (the column's label,
  -- "usecs", "nsecs", ...), title (a line before it, "Function = f"),
  -- summary (true: funclatency's "avg = ..., total: ..., count: ..." line).
  function Hist:text(opts)
    opts = opts or {}
    local unit = opts.unit or self.unit or "value"
    local out = {}
    if opts.title then out[#out + 1] = "\n" .. opts.title .. "\n" end
    local slots = sorted_slots(self)
    local top = slots[#slots]
    local vmax = 0
    for _, c in pairs(self.counts) do if c > vmax then vmax = c end end
    if self.linear then
      if top ~= nil then
        out[#out + 1] = string.format("     %-13s : count     distribution\n", unit)
        for i = math.max(slots[1], 0), top do
          local c = self.counts[i] or 0
          out[#out + 1] = string.format("        %-10s : %-8d |%-40s|\n",
            int(self.base + i * self.step), c, stars(c, vmax, 40))
        end
      end
    elseif top ~= nil then
      -- slot 0 (the value 0) prints with slot 1, under bcc's "0 -> 1"
      local wide = top > 32
      local width = wide and 20 or 40
      local head = wide and "               %-29s : count     distribution\n"
        or "     %-19s : count     distribution\n"
      local body = wide and "%20s -> %-20s : %-8d |%-" .. width .. "s|\n"
        or "%10s -> %-10s : %-8d |%-" .. width .. "s|\n"
      local function cnt(i)
        return (self.counts[i] or 0) + (i == 1 and (self.counts[0] or 0) or 0)
      end
      vmax = 0
      for i = 1, math.max(top, 1) do if cnt(i) > vmax then vmax = cnt(i) end end
      out[#out + 1] = string.format(head, unit)
      for i = 1, math.max(top, 1) do
        local low, high = 2 ^ (i - 1), 2 ^ i - 1
        if low == high then low = low - 1 end
        out[#out + 1] = string.format(body, int(low), int(high), cnt(i), stars(cnt(i), vmax, width))
      end
    end
    if opts.summary and self.n > 0 then
      out[#out + 1] = string.format("\navg = %s %s, total: %s %s, count: %s\n",
        int(self.total / self.n), unit, int(self.total), unit, int(self.n))
    end
    return table.concat(out)
  end
  Hist.__tostring = Hist.text
end
