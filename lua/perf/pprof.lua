-- pprof export: a stack list as a gzipped profile.proto (the format of
-- github.com/google/pprof, loaded by `go tool pprof`), written by a small
-- protobuf encoder here (varints and length-delimited fields are all the
-- schema needs) and gzipped by perf.core.gzip (zlib).
--
-- Sample types: samples/count and the event's period in its unit
-- (nanoseconds for cpu-clock and task-clock, else count).  Each unique
-- frame is a location (with its dso as the mapping, build id included),
-- each unique (name, file) a function.  Samples carry pid, tid and comm
-- labels.
local stacks = require "perf.stacks"

local M = {}

local floor = math.floor
local char = string.char

-- Varint of a non-negative integer given as a number, a Lua 5.3+ integer
-- (negative ones are read as unsigned 64-bit, as addresses above 2^63 are),
-- or a "0x..." string (how 5.1/LuaJIT carry values above 2^53).
local function varint_hex(h)
  -- little-endian bits of the hex digits, then 7-bit groups
  local bits, nb = {}, 0
  for i = #h, 1, -1 do
    local d = tonumber(h:sub(i, i), 16)
    for _ = 1, 4 do
      nb = nb + 1
      bits[nb] = d % 2
      d = floor(d / 2)
    end
  end
  while nb > 1 and bits[nb] == 0 do nb = nb - 1 end
  local out = {}
  local i = 1
  repeat
    local v = 0
    for j = 6, 0, -1 do v = v * 2 + (bits[i + j] or 0) end
    i = i + 7
    if i <= nb then v = v + 128 end
    out[#out + 1] = char(v)
  until i > nb
  return table.concat(out)
end

local function varint(v)
  if type(v) == "string" then
    local h = v:match("^0[xX](%x+)$")
    if h then return varint_hex(h) end
    v = assert(tonumber(v), "pprof: not an integer: " .. v)
  end
  if v < 0 or v >= 9007199254740992 then
    if math.type and math.type(v) == "integer" then
      return varint_hex(string.format("%x", v))
    end
    error("pprof: value out of range: " .. tostring(v))
  end
  if v < 128 then return char(v) end
  local out = {}
  while v >= 128 do
    out[#out + 1] = char(v % 128 + 128)
    v = floor(v / 128)
  end
  out[#out + 1] = char(v)
  return table.concat(out)
end
M.varint = varint

local function key(field, wt) return varint(field * 8 + wt) end
local function int_field(field, v)
  if v == nil or v == 0 then return "" end
  return key(field, 0) .. varint(v)
end
local function bytes_field(field, s) return key(field, 2) .. varint(#s) .. s end
local function packed(field, vals)
  local parts = {}
  for i, v in ipairs(vals) do parts[i] = varint(v) end
  return bytes_field(field, table.concat(parts))
end

-- The unit of an event's period.
local function period_unit(event)
  event = event or ""
  local base = event:match("^([%w%-_]+)") or ""
  if base == "cpu-clock" or base == "task-clock" or base == "offcpu-time" then
    return "nanoseconds"
  end
  return "count"
end

-- The uncompressed profile.proto bytes.  opts.weight has no effect here:
-- both values are always written.
function M.encode(list, opts)
  opts = opts or {}
  local meta = list.meta or {}
  local strings, strindex = { "" }, { [""] = 0 }
  local function str(s)
    s = tostring(s or "")
    local i = strindex[s]
    if i then return i end
    i = #strings
    strings[i + 1] = s
    strindex[s] = i
    return i
  end
  local event = meta.event or "samples"
  local parts = {}
  local function put(s) parts[#parts + 1] = s end

  local function value_type(t, u)
    return int_field(1, str(t)) .. int_field(2, str(u))
  end
  put(bytes_field(1, value_type("samples", "count")))
  -- meta.unit: a weight other than the event's period (luaprofile's wait,
  -- alloc and live weights: nanoseconds, bytes)
  local unit = meta.unit or period_unit(event)
  put(bytes_field(1, value_type(event, unit)))

  local mappings, mapping_of = {}, {}
  local functions, function_of = {}, {}
  local locations, location_of = {}, {}

  local function mapping(f)
    local d = f.dso or "[unknown]"
    local m = mapping_of[d]
    if not m then
      m = { id = #mappings + 1, file = d, build_id = f.build_id or "", w = 0 }
      mappings[#mappings + 1] = m
      mapping_of[d] = m
    end
    return m
  end
  local function func(f)
    local name = stacks.label(f)
    local k = name .. "\1" .. (f.file or "")
    local fn = function_of[k]
    if not fn then
      fn = { id = #functions + 1, name = name, file = f.file or "" }
      functions[#functions + 1] = fn
      function_of[k] = fn
    end
    return fn
  end
  local function location(f)
    local l = location_of[f]
    if not l then
      l = { id = #locations + 1, frame = f, mapping = mapping(f), fn = func(f) }
      locations[#locations + 1] = l
      location_of[f] = l
    end
    return l.id
  end

  for _, s in ipairs(list) do
    local ids = {}
    local fr = s.frames
    for i = #fr, 1, -1 do ids[#ids + 1] = location(fr[i]) end
    if #fr > 0 then
      local m = mapping(fr[#fr])
      m.w = m.w + (s.count or 1)
    end
    local body = packed(1, ids) .. packed(2, { s.count or 1, s.period or s.count or 1 })
    -- (-1: not known, as perf writes it; no label rather than 2^64-1)
    if s.pid and s.pid >= 0 then body = body .. bytes_field(3, int_field(1, str("pid")) .. int_field(3, s.pid)) end
    if s.tid and s.tid >= 0 then body = body .. bytes_field(3, int_field(1, str("tid")) .. int_field(3, s.tid)) end
    if s.comm then body = body .. bytes_field(3, int_field(1, str("comm")) .. int_field(2, str(s.comm))) end
    put(bytes_field(2, body))
  end
  -- pprof takes the first mapping for the main binary: the one most
  -- samples are in
  table.sort(mappings, function(a, b)
    if a.w ~= b.w then return a.w > b.w end
    return a.id < b.id
  end)
  for i, m in ipairs(mappings) do m.id = i end
  for _, m in ipairs(mappings) do
    put(bytes_field(3, int_field(1, m.id) .. int_field(5, str(m.file)) ..
      int_field(6, str(m.build_id)) .. int_field(7, 1) .. int_field(8, 1) .. int_field(9, 1)))
  end
  for _, l in ipairs(locations) do
    local f = l.frame
    local line = int_field(1, l.fn.id) .. int_field(2, f.line or 0)
    local addr = f.addr
    local body = int_field(1, l.id) .. int_field(2, l.mapping.id)
    if addr ~= nil and addr ~= 0 then body = body .. key(3, 0) .. varint(addr) end
    put(bytes_field(4, body .. bytes_field(4, line)))
  end
  for _, fn in ipairs(functions) do
    put(bytes_field(5, int_field(1, fn.id) .. int_field(2, str(fn.name)) ..
      int_field(3, str(fn.name)) .. int_field(4, str(fn.file))))
  end
  -- period_type / period: the event and its sampling period when fixed
  local pt = bytes_field(11, value_type(event, unit))
  local tail = { pt }
  if meta.sample_period and meta.sample_period > 0 then
    tail[#tail + 1] = int_field(12, meta.sample_period)
  end
  if meta.time_nanos then tail[#tail + 1] = int_field(9, meta.time_nanos) end
  if meta.duration_nanos then tail[#tail + 1] = int_field(10, meta.duration_nanos) end
  -- string_table last: every str() call above has happened
  local st = {}
  for i, s in ipairs(strings) do st[i] = bytes_field(6, s) end
  return table.concat(parts) .. table.concat(tail) .. table.concat(st)
end

-- Gzipped profile.proto, as pprof reads it.
function M.render(list, opts)
  local core = require "perf.core"
  return core.gzip(M.encode(list, opts))
end

return M
