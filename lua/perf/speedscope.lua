-- speedscope export: a stack list as speedscope's JSON file format (one
-- "sampled" profile; frames shared; each sample a list of frame indices,
-- root first, with its weight).  Samples stay in the list's order (time
-- order for per-sample lists), so speedscope's time-order view works.
local stacks = require "perf.stacks"

local M = {}

local escapes = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f",
  ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }
local function json_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return escapes[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end
M.json_string = json_string

local function num(v) return string.format("%.17g", v) end

-- JSON text.  opts: weight ("samples" | "period"), name, comm (a root
-- frame with the command; default true when stacks carry one).
function M.render(list, opts)
  opts = opts or {}
  local meta = list.meta or {}
  local by_period = opts.weight == "period"
  local frames, index = {}, {}
  local function frame_index(key, name, file, line)
    local i = index[key]
    if i then return i end
    local parts = { '{"name":', json_string(name) }
    if file then parts[#parts + 1] = ',"file":' .. json_string(file) end
    if line and line > 0 then parts[#parts + 1] = ',"line":' .. num(line) end
    parts[#parts + 1] = "}"
    frames[#frames + 1] = table.concat(parts)
    i = #frames - 1
    index[key] = i
    return i
  end
  local samples, weights = {}, {}
  local total = 0
  local fcache = {}
  for _, s in ipairs(list) do
    local ids = {}
    if opts.comm ~= false and s.comm then
      ids[1] = frame_index("\2" .. s.comm, s.comm)
    end
    for _, f in ipairs(s.frames) do
      local i = fcache[f]
      if not i then
        local name = stacks.label(f)
        i = frame_index(name .. "\1" .. (f.file or "") .. "\1" .. tostring(f.line or ""),
          name, f.file, f.line)
        fcache[f] = i
      end
      ids[#ids + 1] = i
    end
    local w = by_period and (s.period or 0) or (s.count or 1)
    if w > 0 then
      samples[#samples + 1] = "[" .. table.concat(ids, ",") .. "]"
      weights[#weights + 1] = num(w)
      total = total + w
    end
  end
  local unit = "none"
  if by_period and meta.event and (meta.event:match("^cpu%-clock") or meta.event:match("^task%-clock")) then
    unit = "nanoseconds"
  end
  local name = opts.name or meta.event or "luaperf"
  return table.concat({
    '{"$schema":"https://www.speedscope.app/file-format-schema.json",',
    '"exporter":"luaperf",',
    '"name":', json_string(name), ',',
    '"activeProfileIndex":0,',
    '"shared":{"frames":[', table.concat(frames, ","), ']},',
    '"profiles":[{"type":"sampled","name":', json_string(name), ',',
    '"unit":"', unit, '","startValue":0,"endValue":', num(total), ',',
    '"samples":[', table.concat(samples, ","), '],',
    '"weights":[', table.concat(weights, ","), ']}]}\n',
  })
end

return M
