-- Folded stacks: one line per unique stack, root first, frames joined by
-- ';', a space, the count (the format of stackcollapse-perf.pl and
-- flamegraph.pl).  format() writes a stack list as folded text; parse()
-- reads folded text back into a stack list, so every report and renderer
-- also works on folded input.
--
-- Escaping: a ';' inside a name is written "\;", a newline "\n", a
-- backslash "\\" (a plain folded file never needs them, so plain files
-- read back unchanged).  --annotate adds flamegraph.pl's kind suffixes:
-- _[k] kernel, _[j] JIT, _[i] inlined.
local stacks = require "perf.stacks"

local M = {}

local suffix_of = { kernel = "_[k]", jit = "_[j]", inline = "_[i]" }
local kind_of = { k = "kernel", j = "jit", i = "inline" }

local function escape(s)
  if s:find("[;\n\\]") then
    s = s:gsub("\\", "\\\\"):gsub(";", "\\;"):gsub("\n", "\\n")
  end
  return s
end
M.escape = escape

-- The folded token of a frame: its label, escaped, with the kind suffix
-- when annotating.
function M.token(frame, annotate)
  local t = escape(stacks.label(frame))
  if annotate then
    local suf = suffix_of[frame.kind]
    if suf then t = t .. suf end
  end
  return t
end

-- Folded text of a stack list.  opts: annotate (kind suffixes), comm (the
-- command as the root frame, as stackcollapse-perf.pl does; default true
-- when the stacks carry one), weight ("samples" | "period").
-- Lines are sorted, as flamegraph.pl expects and diff tools like.
function M.format(list, opts)
  opts = opts or {}
  local annotate = opts.annotate
  local with_comm = opts.comm ~= false
  local by_period = opts.weight == "period"
  local tokcache = {}
  local counts, order = {}, {}
  for _, s in ipairs(list) do
    local parts = {}
    local n = 0
    if with_comm and s.comm then
      n = 1
      parts[1] = escape((s.comm:gsub(" ", "_")))
    end
    -- a discarded chain: no frames, as perf script prints it
    for _, f in ipairs(s.discarded and {} or s.frames) do
      local t = tokcache[f]
      if not t then
        t = M.token(f, annotate)
        tokcache[f] = t
      end
      n = n + 1
      parts[n] = t
    end
    if n > 0 then
      local key = table.concat(parts, ";")
      local w = by_period and (s.period or 0) or (s.count or 1)
      if counts[key] then
        counts[key] = counts[key] + w
      else
        counts[key] = w
        order[#order + 1] = key
      end
    end
  end
  table.sort(order)
  local out = {}
  for i, key in ipairs(order) do
    out[i] = key .. " " .. string.format("%.0f", counts[key])
  end
  if #out == 0 then return "" end
  return table.concat(out, "\n") .. "\n"
end

-- Splits a folded stack on the ';' that are not escaped.
local function split_escaped(stack)
  local out, buf, i, n = {}, {}, 1, #stack
  while i <= n do
    local c = stack:sub(i, i)
    if c == "\\" and i < n then
      local d = stack:sub(i + 1, i + 1)
      buf[#buf + 1] = (d == "n") and "\n" or d
      i = i + 2
    elseif c == ";" then
      out[#out + 1] = table.concat(buf)
      buf = {}
      i = i + 1
    else
      buf[#buf + 1] = c
      i = i + 1
    end
  end
  out[#out + 1] = table.concat(buf)
  return out
end

-- Parses folded text into a stack list.  Frames with the same token are
-- one shared table.  opts.event names the event for titles.  Returns the
-- list, or nil and a message naming the first bad line.
function M.parse(text, opts)
  opts = opts or {}
  if type(text) ~= "string" then
    error("folded.parse: expected a string, got " .. type(text), 2)
  end
  local interned = {}
  local function frame(tok)
    local f = interned[tok]
    if f then return f end
    local name, k = tok:match("^(.*)_%[([kji])%]$")
    if name and name ~= "" then
      f = { name = name, kind = kind_of[k] }
    else
      f = { name = tok, kind = "user" }
    end
    interned[tok] = f
    return f
  end
  local list = {}
  local total = 0
  local lineno = 0
  local pos, len = 1, #text
  while pos <= len do
    local e = text:find("\n", pos, true) or (len + 1)
    local line = text:sub(pos, e - 1):gsub("\r$", "")
    pos = e + 1
    lineno = lineno + 1
    if line:find("%S") then
      local stack, count = line:match("^(.-)%s+(%d+%.?%d*)%s*$")
      if not stack or stack == "" then
        return nil, string.format("folded input line %d: expected 'frame;frame;... count', got %q",
          lineno, line:sub(1, 80))
      end
      count = tonumber(count)
      local toks
      if stack:find("\\", 1, true) then
        toks = split_escaped(stack)
      else
        toks = {}
        for t in (stack .. ";"):gmatch("([^;]*);") do toks[#toks + 1] = t end
      end
      local frames = {}
      for i, t in ipairs(toks) do frames[i] = frame(t) end
      list[#list + 1] = { frames = frames, count = count, period = count }
      total = total + count
    end
  end
  list.meta = { event = opts.event, samples = total, period = total, lost = 0, throttled = 0 }
  return list
end

return M
