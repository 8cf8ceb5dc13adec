-- perf script's -F/--fields: which fields a sample line shows, per event
-- type, and the line itself laid out as perf script 6.1 prints it.
--
--   fields.parse(text)                 -> request | nil, msg
--   fields.setup(request, events, use_callchain, warn)
--                                      -> layout | nil, msg
--     request nil gives perf's defaults; events are f:header().events;
--     warn(msg) receives perf's "not valid ... Ignoring" warnings.
--   fields.print(out, ctx, layout, rec, ev)  one sample (see ctx below)
--
-- The model follows perf: a default set per event type; "a,b" replaces
-- the set of every type (or of one with "hw:", "sw:", "trace:", "raw:",
-- "break:"), "+a,-b" edits it; a field the first event of a type cannot
-- provide (sample_type lacks the bit) is an error when asked for by name
-- and silently dropped from a default; tracepoints also print their call
-- chain (ip,sym,symoff,dso) when the file has one and their set is the
-- default.
local M = {}

M.NAMES = { "comm", "tid", "pid", "time", "cpu", "event", "period", "ip", "sym",
            "symoff", "dso", "addr", "trace" }
local KNOWN = {}
for _, n in ipairs(M.NAMES) do KNOWN[n] = true end

-- perf's output types: the attr type below PERF_TYPE_MAX, else "other".
local TP, OTHER = 2, 7
local TYPE_NAMES = { [0] = "hardware", "software", "tracepoint", "hardware-cache", "raw",
                     "breakpoint", [OTHER] = "unknown" }
local PREFIX = { hw = 0, sw = 1, trace = TP, raw = 4, ["break"] = 5 }
local ALL_TYPES = { 0, 1, 2, 3, 4, 5, OTHER }
-- fields a type refuses, as perf 6.1 (which lets raw and breakpoint
-- events name trace)
local INVALID = { [0] = { trace = true }, { trace = true }, {}, { trace = true }, {}, {},
                  [OTHER] = { trace = true } }

local function set(list)
  local t = {}
  for _, n in ipairs(list) do t[n] = true end
  return t
end
local DEFAULT = { "comm", "tid", "cpu", "time", "event", "ip", "sym", "symoff", "dso", "period" }
local TP_DEFAULT = { "comm", "tid", "cpu", "time", "event", "trace" }

local function output_type(ev)
  local t = ev.type or OTHER
  if t >= 0 and t < 6 then return t end
  return OTHER
end

-- PERF_SAMPLE_* bits a field needs
local S_IP, S_TID, S_TIME, S_ADDR, S_CALLCHAIN, S_CPU = 1, 2, 4, 8, 32, 128
local function has_bit(v, bit) return math.floor((v or 0) / bit) % 2 == 1 end

function M.supported()
  return table.concat(M.NAMES, ",")
end

function M.parse(text)
  local req = { ops = {} }
  local prefix, rest = text:match("^([%w%-]+):(.*)$")
  if prefix then
    req.type = PREFIX[prefix]
    if not req.type then
      return nil, "invalid event type '" .. prefix .. "' in field string (hw, sw, trace, raw, break)"
    end
    text = rest
  elseif text == "" then
    return nil, "cannot set fields to 'none' for all event types"
  end
  req.edit = text:find("[%+%-]") ~= nil
  local change
  for tok in text:gmatch("[^,]+") do
    local sign = tok:sub(1, 1)
    local op
    if sign == "+" or sign == "-" then
      if change == "set" then return nil, "cannot mix +-field with overridden fields" end
      op, tok = sign, tok:sub(2)
      change = "edit"
    else
      if change == "edit" then return nil, "cannot mix +-field with overridden fields" end
      op, change = "+", "set"
    end
    if not KNOWN[tok] then
      return nil, "invalid field '" .. tok .. "' requested; supported fields: " .. M.supported()
    end
    req.ops[#req.ops + 1] = { name = tok, op = op }
  end
  return req
end

-- The per-type state perf keeps: fields, whether the user set them, and
-- which fields were named for all types (those may not be dropped).
local function defaults()
  local st = {}
  for _, t in ipairs(ALL_TYPES) do
    st[t] = { fields = set(t == TP and TP_DEFAULT or DEFAULT), user_set = false, named = {} }
  end
  return st
end

local function apply(st, req, warn)
  if req.type then
    local o = st[req.type]
    if not req.edit then o.fields = {} end
    o.user_set = true
    for _, e in ipairs(req.ops) do
      if INVALID[req.type][e.name] then
        return nil, "'" .. e.name .. "' not valid for " .. TYPE_NAMES[req.type] .. " events"
      end
      o.fields[e.name] = e.op == "+" or nil
    end
    return true
  end
  if not req.edit then
    for _, t in ipairs(ALL_TYPES) do st[t].fields, st[t].user_set = {}, true end
  end
  for _, e in ipairs(req.ops) do
    for _, t in ipairs(ALL_TYPES) do
      local o = st[t]
      if INVALID[t][e.name] then
        warn("'" .. e.name .. "' not valid for " .. TYPE_NAMES[t] .. " events. Ignoring.")
      else
        o.fields[e.name] = e.op == "+" or nil
        o.named[e.name] = e.op == "+" or nil
        o.user_set = true
      end
    end
  end
  return true
end

-- perf's evsel__check_attr on the first event of a type: a missing
-- sample_type bit is an error for a named field, else the field goes.
local function check(o, ev)
  if ev.type == 1 and ev.config == 9 then return true end   -- the dummy event
  local F, stype = o.fields, ev.sample_type or 0
  local function need(bit, what, names)
    if has_bit(stype, bit) then return true end
    for _, n in ipairs(names) do
      if F[n] and o.named[n] then
        return nil, string.format("Samples for '%s' event do not have %s attribute set. " ..
          "Cannot print '%s' field.", ev.name, what, n)
      end
    end
    for _, n in ipairs(names) do F[n] = nil end
    return true
  end
  local ok, err
  if F.ip then ok, err = need(S_IP, "IP", { "ip" }); if not ok then return nil, err end end
  if F.addr then ok, err = need(S_ADDR, "ADDR", { "addr" }); if not ok then return nil, err end end
  local addressed = has_bit(stype, S_IP) or has_bit(stype, S_ADDR)
  if F.sym and not addressed then
    return nil, "Display of symbols requested but neither sample IP nor sample address " ..
      "available. Hence, no addresses to convert to symbols."
  end
  if F.symoff and not F.sym then
    return nil, "Display of offsets requested but symbol is not selected."
  end
  if F.dso and not addressed then
    return nil, "Display of DSO requested but no address to convert."
  end
  if F.pid or F.tid then
    ok, err = need(S_TID, "TID", { "tid", "pid" }); if not ok then return nil, err end
  end
  if F.time then ok, err = need(S_TIME, "TIME", { "time" }); if not ok then return nil, err end end
  if F.cpu then ok, err = need(S_CPU, "CPU", { "cpu" }); if not ok then return nil, err end end
  return true
end

function M.setup(req, events, use_callchain, warn)
  local st = defaults()
  if req then
    local ok, err = apply(st, req, warn or function() end)
    if not ok then return nil, err end
  end
  local first = {}
  for _, ev in ipairs(events) do
    local t = output_type(ev)
    if not first[t] then first[t] = ev end
  end
  -- an emptied set for one type must name a type the file has
  if req and req.type and #req.ops == 0 and not first[req.type] then
    return nil, TYPE_NAMES[req.type] .. " events do not exist. Remove corresponding -F option to proceed."
  end
  for _, t in ipairs(ALL_TYPES) do
    if first[t] and next(st[t].fields) then
      local ok, err = check(st[t], first[t])
      if not ok then return nil, err end
    end
  end
  -- tracepoints with call chains show them unless their fields were set
  if use_callchain and not st[TP].user_set then
    for _, ev in ipairs(events) do
      if output_type(ev) == TP and has_bit(ev.sample_type, S_CALLCHAIN) then
        for _, n in ipairs({ "ip", "sym", "symoff", "dso" }) do st[TP].fields[n] = true end
        break
      end
    end
  end
  local layout = { by_type = {}, use_callchain = use_callchain }
  for _, t in ipairs(ALL_TYPES) do
    layout.by_type[t] = st[t].fields
    if st[t].fields.addr then layout.any_addr = true end
  end
  return layout
end

-- Page fault addresses are code or data addresses: perf names their symbol.
local function addr_has_sym(ev)
  return ev.type == 1 and (ev.config == 2 or ev.config == 5 or ev.config == 6)
end

local function symname(r, F)
  if F.symoff and r.offset and r.name ~= "[unknown]" then
    return string.format("%s+0x%x", r.name, r.offset)
  end
  return r.name
end

-- One sample as perf script prints it.  ctx: comm(rec), hex(v),
-- timestr(t), trace_text(rec), period(rec), resolve(pid, addr) -> r
-- ({ name=, offset=, dso= }), resolve_addr(pid, addr) (the same for a data
-- address), chain_addr(r, addr), name_width.
function M.print(out, ctx, layout, rec, ev)
  local t = output_type(ev)
  local F = layout.by_type[t]
  if not next(F) then return end
  local has_chain = layout.use_callchain and has_bit(ev.sample_type, S_CALLCHAIN)
  local chain = F.ip and layout.use_callchain and rec.callchain
  local parts = {}
  if F.comm then
    if F.ip and has_chain then
      parts[#parts + 1] = ctx.comm(rec) .. " "
    else
      parts[#parts + 1] = string.format("%16s ", ctx.comm(rec))
    end
  end
  if F.pid and F.tid then
    parts[#parts + 1] = string.format("%5d/%-5d ", rec.pid or -1, rec.tid or -1)
  elseif F.pid then
    parts[#parts + 1] = string.format("%5d ", rec.pid or -1)
  elseif F.tid then
    parts[#parts + 1] = string.format("%5d ", rec.tid or -1)
  end
  if F.cpu and rec.cpu then parts[#parts + 1] = string.format("[%03d] ", rec.cpu) end
  if F.time and rec.time then parts[#parts + 1] = ctx.timestr(rec.time) .. ": " end
  if F.period then
    local p = ctx.period(rec)
    if p then parts[#parts + 1] = string.format("%10d ", p) end
  end
  if F.event then
    parts[#parts + 1] = string.format("%" .. ctx.name_width .. "s: ", rec.event or "[unknown]")
  end
  if F.trace and rec.raw then parts[#parts + 1] = ctx.trace_text(rec) or "" end
  if F.addr and rec.addr then
    parts[#parts + 1] = string.format("%16s", ctx.hex(rec.addr))
    if addr_has_sym(ev) then
      local r = ctx.resolve_addr(rec.pid, rec.addr)
      if F.sym then parts[#parts + 1] = " " .. symname(r, F) end
      if F.dso then parts[#parts + 1] = " (" .. r.dso .. ")" end
    end
  end
  if chain then
    out:write(table.concat(parts), "\n")
    -- a frame's line is a function of (pid, addr) and the fields: made once
    local key = "printed_" .. (F.sym and "s" or "") .. (F.symoff and "o" or "") .. (F.dso and "d" or "")
    for _, a in ipairs(chain) do
      local r = ctx.resolve(rec.pid, a)
      local line = r[key]
      if not line then
        local l = { string.format("\t%16s", ctx.chain_addr(r, a)) }
        if F.sym then l[#l + 1] = " " .. symname(r, F) end
        if F.dso then l[#l + 1] = " (" .. r.dso .. ")" end
        l[#l + 1] = "\n"
        line = table.concat(l)
        r[key] = line
      end
      out:write(line)
    end
    -- an unwind that ran off the captured stack: perf ends it with -1
    if rec.unwind and rec.unwind.truncated then
      out:write(string.format("\t%16s", "ffffffffffffffff"), F.sym and " [unknown]" or "",
        F.dso and " ([unknown])" or "", "\n")
    end
    out:write("\n")
    return
  end
  if F.ip and rec.ip then
    parts[#parts + 1] = string.format(" %16s", ctx.hex(rec.ip))
    if F.sym or F.dso then
      local r = ctx.resolve(rec.pid, rec.ip)
      if F.sym then parts[#parts + 1] = " " .. symname(r, F) end
      if F.dso then parts[#parts + 1] = " (" .. r.dso .. ")" end
    end
  end
  parts[#parts + 1] = "\n"
  out:write(table.concat(parts))
end

return M
