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
            "symoff", "dso", "addr", "trace", "data_src", "weight", "ins_lat", "phys_addr",
            "data_page_size", "code_page_size" }
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
-- raw PMU events (memory sampling, mostly) also show what the sample
-- carries of the memory access: kept when the first raw event has it
local RAW_DEFAULT = { "comm", "tid", "cpu", "time", "event", "ip", "sym", "symoff", "dso", "period",
                      "addr", "data_src", "weight", "phys_addr", "data_page_size",
                      "code_page_size", "ins_lat" }
local RAW = 4

local function output_type(ev)
  local t = ev.type or OTHER
  if t >= 0 and t < 6 then return t end
  return OTHER
end

-- PERF_SAMPLE_* bits a field needs
local S_IP, S_TID, S_TIME, S_ADDR, S_CALLCHAIN, S_CPU = 1, 2, 4, 8, 32, 128
local S_WEIGHT, S_DATA_SRC, S_PHYS_ADDR = 2^14, 2^15, 2^19
local S_DATA_PAGE_SIZE, S_CODE_PAGE_SIZE, S_WEIGHT_STRUCT = 2^22, 2^23, 2^24
-- perf's --max-stack default: frames printed per call chain
local MAX_STACK = 127
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
    st[t] = { fields = set(t == TP and TP_DEFAULT or t == RAW and RAW_DEFAULT or DEFAULT),
              user_set = false, named = {} }
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
  if F.data_src then
    ok, err = need(S_DATA_SRC, "DATA_SRC", { "data_src" }); if not ok then return nil, err end
  end
  if F.weight and not has_bit(stype, S_WEIGHT_STRUCT) then
    ok, err = need(S_WEIGHT, "WEIGHT", { "weight" }); if not ok then return nil, err end
  end
  if F.ins_lat then
    ok, err = need(S_WEIGHT_STRUCT, "WEIGHT_STRUCT", { "ins_lat" }); if not ok then return nil, err end
  end
  if F.phys_addr then
    ok, err = need(S_PHYS_ADDR, "PHYS_ADDR", { "phys_addr" }); if not ok then return nil, err end
  end
  if F.data_page_size then
    ok, err = need(S_DATA_PAGE_SIZE, "DATA_PAGE_SIZE", { "data_page_size" })
    if not ok then return nil, err end
  end
  if F.code_page_size then
    ok, err = need(S_CODE_PAGE_SIZE, "CODE_PAGE_SIZE", { "code_page_size" })
    if not ok then return nil, err end
  end
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

-- The fields f:script_text formats in C (csrc/core/perfdata/script_text.c).
local C_FIELDS = set({ "comm", "tid", "pid", "time", "cpu", "event", "period", "ip", "sym",
                       "symoff", "dso", "trace" })

-- The layout's field sets as f:script_text takes them ({ [type] = set }),
-- when every type a sample of these events can have (theirs, and "other"
-- for samples of no known event) has only fields formatted in C; else nil.
function M.c_fields(layout, events)
  local types = { [OTHER] = true }
  for _, ev in ipairs(events) do types[output_type(ev)] = true end
  local out = {}
  for t in pairs(types) do
    local F = layout.by_type[t]
    for name, on in pairs(F) do
      if on and not C_FIELDS[name] then return nil end
    end
    out[t] = F
  end
  return out
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

-- perf's data source text (perf_script__meminfo_scnprintf, perf 6.1):
-- |OP ..|LVL ..|SNP ..|TLB ..|LCK ..|BLK .. from union perf_mem_data_src.
local function bits(v, shift, n)
  return math.floor(math.floor(v / 2^shift) % 2^n)
end

local function or_list(m, names, skip)
  local out = {}
  for i = 0, #names - 1 do
    if not (skip and skip[i]) and math.floor(m / 2^i) % 2 == 1 then out[#out + 1] = names[i + 1] end
  end
  return out
end

local MEM_LVL = { "N/A", "HIT", "MISS", "L1", "LFB/MAB", "L2", "L3", "Local RAM",
                  "Remote RAM (1 hop)", "Remote RAM (2 hops)", "Remote Cache (1 hop)",
                  "Remote Cache (2 hops)", "I/O", "Uncached" }
local MEM_LVLNUM = { [9] = "CXL", [10] = "I/O", [11] = "Any cache", [12] = "LFB/MAB",
                     [13] = "RAM", [14] = "PMEM", [15] = "N/A" }
local MEM_HOPS = { [0] = "N/A", "core, same node", "node, same socket", "socket, same board", "board" }
local SNOOP = { "N/A", "None", "Hit", "Miss", "HitM" }
local TLB = { "N/A", "HIT", "MISS", "L1", "L2", "Walker", "Fault" }

local function mem_text(ds)
  local op, lvl, snoop = bits(ds, 0, 5), bits(ds, 5, 14), bits(ds, 19, 5)
  local lock, dtlb, lvlnum = bits(ds, 24, 2), bits(ds, 26, 7), bits(ds, 33, 4)
  local remote, snoopx, blk, hops = bits(ds, 37, 1), bits(ds, 38, 2), bits(ds, 40, 3), bits(ds, 43, 3)
  local t = {}
  local function has(v, b) return math.floor(v / 2^b) % 2 == 1 end
  t[#t + 1] = "|OP "
  t[#t + 1] = has(op, 0) and "N/A" or has(op, 1) and "LOAD" or has(op, 2) and "STORE"
              or has(op, 3) and "PFETCH" or has(op, 4) and "EXEC" or "No"
  -- LVL: the PERF_MEM_LVL bits (or the hops), then the level number
  local l = {}
  if remote == 1 then l[#l + 1] = "Remote " end
  local names = {}
  if hops ~= 0 then
    l[#l + 1] = (MEM_HOPS[hops] or "") .. " "
  else
    names = or_list(lvl, MEM_LVL, { [1] = true, [2] = true })
  end
  if lvlnum ~= 0 then names[#names + 1] = MEM_LVLNUM[lvlnum] or string.format("L%d", lvlnum) end
  l[#l + 1] = table.concat(names, " or ")
  local ltext = table.concat(l)
  if ltext == "" then ltext = "N/A" end
  if has(lvl, 1) then ltext = ltext .. " hit" end
  if has(lvl, 2) then ltext = ltext .. " miss" end
  t[#t + 1] = "|LVL " .. ltext
  local sn = or_list(snoop, SNOOP)
  if has(snoopx, 0) then sn[#sn + 1] = "Fwd" end
  t[#t + 1] = "|SNP " .. (#sn > 0 and table.concat(sn, " or ") or "N/A")
  local tl = table.concat(or_list(dtlb, TLB, { [1] = true, [2] = true }), " or ")
  if tl == "" then tl = "N/A" end
  if has(dtlb, 1) then tl = tl .. " hit" end
  if has(dtlb, 2) then tl = tl .. " miss" end
  t[#t + 1] = "|TLB " .. tl
  t[#t + 1] = "|LCK " .. (has(lock, 0) and "N/A" or has(lock, 1) and "Yes" or "No")
  local b = ""
  if blk == 0 or has(blk, 0) then b = " N/A"
  else
    if has(blk, 1) then b = b .. " Data" end
    if has(blk, 2) then b = b .. " Addr" end
  end
  t[#t + 1] = "|BLK " .. b
  -- perf formats into 100-byte buffers
  return (table.concat(t):sub(1, 99))
end
M.mem_text = mem_text

-- A page size as perf names it: 4K, 2M, 1G ("N/A" when unknown).
local function page_size(n)
  if not n or n == 0 then return "N/A" end
  local units, i = { "B", "K", "M", "G" }, 1
  while math.floor(n / 1024) > 1 and i < 4 do n = math.floor(n / 1024); i = i + 1 end
  return string.format("%d%s", n, units[i])
end

local function u64hex(ctx, v)
  return ctx.hex(v)
end

-- What perf prints after the ip (or after the call chain, on the blank
-- line that ends it): the physical address and the page sizes.
local function tail(rec, F)
  if not (F.phys_addr or F.data_page_size or F.code_page_size) then return "" end
  local t = {}
  if F.phys_addr then t[#t + 1] = string.format("%16s", rec.phys_addr and
    (type(rec.phys_addr) == "string" and rec.phys_addr:gsub("^0x", "") or string.format("%x", rec.phys_addr)) or "0") end
  if F.data_page_size then t[#t + 1] = " " .. page_size(rec.data_page_size) end
  if F.code_page_size then t[#t + 1] = " " .. page_size(rec.code_page_size) end
  return table.concat(t)
end

-- One sample as perf script prints it.  ctx: comm(rec), hex(v),
-- timestr(t), trace_text(rec), period(rec), resolve(pid, addr, kernel,
-- inlines) -> r (inlines: r.inl and r.func, the frames perf adds)
-- ({ name=, offset=, dso= }), resolve_addr(pid, addr) (the same for a data
-- address), chain_addr(r, addr), name_width, ip_is_kernel(rec),
-- chain_is_kernel(rec, i) (kernel or user: the cpumode, the chain's marks).
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
  if F.data_src then
    local ds = rec.data_src or 0
    local text = (string.format("%16s", u64hex(ctx, ds)) .. " " .. mem_text(ds)):sub(1, 99)
    -- perf pads to the widest printed so far
    if #text > (layout.data_src_width or 0) then layout.data_src_width = #text end
    parts[#parts + 1] = text .. string.rep(" ", layout.data_src_width - #text)
  end
  if F.weight then parts[#parts + 1] = string.format("%16s", tostring(rec.weight or 0)) end
  if F.ins_lat then parts[#parts + 1] = string.format("%16d", rec.weight_var2 or 0) end
  if chain then
    out:write(table.concat(parts), "\n")
    -- a frame's line is a function of (pid, addr) and the fields: made once
    local key = "printed_" .. (F.sym and "s" or "") .. (F.symoff and "o" or "") .. (F.dso and "d" or "")
    -- perf expands the user frames of a DWARF unwind (not a frame-pointer
    -- chain) into the functions inlined there, each "(inlined)"
    local dwarf = rec.unwind ~= nil and ctx.inlines ~= false
    for i, a in ipairs(chain) do
      if i > MAX_STACK then break end
      local kernel = ctx.chain_is_kernel(rec, i)
      local expand = dwarf and not kernel
      local r = ctx.resolve(rec.pid, a, kernel, expand)
      local line = r[key]
      if not line then
        local addr = string.format("\t%16s", ctx.chain_addr(r, a))
        local lines = {}
        local function one(name)
          local l = { addr }
          if F.sym then
            l[#l + 1] = " " .. (name and symname({ name = name, offset = r.offset }, F) or symname(r, F))
          end
          if F.dso and not name then l[#l + 1] = " (" .. r.dso .. ")" end
          if name then l[#l + 1] = " (inlined)" end
          lines[#lines + 1] = table.concat(l) .. "\n"
        end
        if expand then
          for _, n in ipairs(r.inl or {}) do one(n) end
        end
        if expand and r.func and r.func ~= r.name then one(r.func) else one(nil) end
        line = table.concat(lines)
        r[key] = line
      end
      out:write(line)
    end
    -- an unwind that ran off the captured stack: perf ends it with -1
    if rec.unwind and rec.unwind.truncated and #chain <= MAX_STACK then
      out:write(string.format("\t%16s", "ffffffffffffffff"), F.sym and " [unknown]" or "",
        F.dso and " ([unknown])" or "", "\n")
    end
    out:write(tail(rec, F), "\n")
    return
  end
  if F.ip and rec.ip then
    parts[#parts + 1] = string.format(" %16s", ctx.hex(rec.ip))
    if F.sym or F.dso then
      local r = ctx.resolve(rec.pid, rec.ip, ctx.ip_is_kernel(rec))
      if F.sym then parts[#parts + 1] = " " .. symname(r, F) end
      if F.dso then parts[#parts + 1] = " (" .. r.dso .. ")" end
    end
  end
  parts[#parts + 1] = tail(rec, F)
  parts[#parts + 1] = "\n"
  out:write(table.concat(parts))
end

return M
