-- Reports over a stack list: group samples by a key, sum self and total
-- (children) weight, sort, cut.  p:top{...} and `luaperf report` use this.
--
--   report.top(list, {
--     by = "sym" | "dso" | "comm" | "pid" | "tid" | "cpu" | "frame"
--          | { "comm", "dso", "sym" } (several keys, as perf --sort)
--          | function(stack) -> key | nil,
--     depth = d,              -- by = "frame": the frame at depth d (1 = root)
--     n = 20,                 -- rows (all when nil)
--     children = true,        -- sort by total (self + callees), else self
--     weight = "samples" | "period",
--     comm = "name" | { names }, pid = n | { pids }, tid = n,
--     dso = "lua pattern", sym = "lua pattern",
--     tmin = t, tmax = t,     -- time window (stacks carrying times)
--     filter = function(stack) -> bool,
--     percentage = "relative" -- percentages of what passed the filters (default),
--                | "absolute" -- of every sample (perf report's default)
--   })
--   -> { { key=, self=, total=, self_pct=, total_pct=, sym=, dso=, comm=,
--          pid=, tid=, thread_comm=, cpu=, kind=, samples=, period=,
--          leaf_dso=, leaf_path=, leaf_sym= (the leaf of the row's first stack) }, ...,
--        total = weight of all samples that passed the filters,
--        all = weight of all samples }
-- comm is the name a stack's samples were taken under; "thread" groups by
-- thread (tid) as perf's "pid" sort key does, thread_comm is that thread's
-- last name (what perf prints in its Pid:Command column).
local stacks = require "perf.stacks"

local M = {}

local function set_of(v)
  if v == nil then return nil end
  local s = {}
  if type(v) == "table" then
    for _, x in ipairs(v) do s[x] = true end
  else
    s[v] = true
  end
  return s
end

-- The filter of opts as one predicate over a stack.
function M.filter(opts)
  local comms, pids, tids = set_of(opts.comm), set_of(opts.pid), set_of(opts.tid)
  local dso, sym, tmin, tmax, fn = opts.dso, opts.sym, opts.tmin, opts.tmax, opts.filter
  return function(s)
    if comms and not comms[s.comm] then return false end
    if pids and not pids[s.pid] then return false end
    if tids and not tids[s.tid] then return false end
    if tmin and (s.time or 0) < tmin then return false end
    if tmax and (s.time or 0) > tmax then return false end
    if dso or sym then
      local leaf = s.frames[#s.frames]
      if not leaf then return false end
      if dso and not (leaf.dso and leaf.dso:find(dso)) then return false end
      if sym and not stacks.label(leaf):find(sym) then return false end
    end
    if fn and not fn(s) then return false end
    return true
  end
end

-- A symbol as perf report prints it: the name, or the address (within its
-- object's mapping when known, as perf: one row for every run of a PIE).
local function sym_name(f)
  if f.name then return f.name end
  if f.rel then return stacks.hex(f.rel) end
  -- perf's "%#.16llx": no 0x before a zero
  if f.addr == 0 then return "0000000000000000" end
  if f.addr then return stacks.hex(f.addr) end
  return stacks.label(f)
end
M.sym_name = sym_name

-- perf's short name of an object: "[ath9k]" for a kernel module, "[JIT]
-- tid N" for a perf map, else the basename (the core's rule, which the C
-- engine's rows use too).
local dso_short
local function dso_name(f)
  if f.dso and f.dso ~= "" then
    dso_short = dso_short or require("perf.core").dso_name
    return dso_short(f.dso, f.kind == "kernel")
  end
  return "[unknown]"
end
M.dso_name = dso_name

-- Per-frame keys: what a frame contributes to a row.
local frame_keys = {
  -- perf's sort__sym_cmp: a named symbol of an object is its object and
  -- start there (two static functions of one name are two rows)
  sym = function(f)
    local k = sym_name(f) .. "\1" .. (f.kind == "kernel" and "k" or "u")
    if f.sym_start and f.offset then
      k = k .. "\1" .. dso_name(f) .. "\1" .. stacks.hex(f.sym_start)
    end
    return k
  end,
  dso = function(f) return dso_name(f) end,
}
-- Per-stack keys: the same for every frame of a stack.
local stack_keys = {
  comm = function(s) return s.comm or "[unknown]" end,
  pid = function(s) return s.pid or -1 end,
  tid = function(s) return s.tid or -1 end,
  thread = function(s) return s.tid or -1 end,
  cpu = function(s) return s.cpu or -1 end,
  -- perf's parent (lua/perf/query.lua sets it on the stacks it reports)
  parent = function(s) return s.parent or "[other]" end,
  -- LuaJIT's VM state of an in-process profile's stack (luaprofile.lua)
  vmstate = function(s) return s.vmstate or "-" end,
}

local function normalize_by(by)
  if by == nil then return { "sym" } end
  if type(by) == "string" then
    local t = {}
    for k in by:gmatch("[^,%s]+") do t[#t + 1] = k end
    return t
  end
  return by
end

-- The entries perf makes of each stack for the keys of by (not a
-- function, nor "frame"): walk(s, fn) calls fn(key, frame, own, at) once
-- per distinct row key of stack s, the sample's own entry (own, at = #s.frames)
-- first, then the call chain's, root first in children mode (at: the
-- frame's index, root first).
-- The frames of a stack's chain (root first, nf the leaf) perf walks with
-- --max-stack (opts.max_stack): lo..hi, the max_stack nearest the root
-- when it walks caller first (children unless callee, or caller graphs),
-- else nearest the leaf; the whole chain without a max (pvreport.c's
-- chain_window).
local function chain_window(opts, nf)
  local max = opts.max_stack
  if not max or max == 0 or nf <= max then return 1, nf end
  if not opts.callee and (opts.children or opts.caller) then return 1, max end
  return nf - max + 1, nf
end

local function entry_walker(by, opts)
  local children, callee = opts.children, opts.callee
  local keys = normalize_by(by)
  local fkeys, skeys = {}, {}
  for _, k in ipairs(keys) do
    if k == "symbol" then k = "sym" end
    if k == "shared_object" then k = "dso" end
    if frame_keys[k] then fkeys[#fkeys + 1] = frame_keys[k]
    elseif stack_keys[k] then skeys[#skeys + 1] = stack_keys[k]
    else error("report: unknown sort key '" .. tostring(k) .. "' (sym, dso, comm, pid, tid, thread, cpu, vmstate)", 4) end
  end
  -- A frame seen with one field changed: one table per frame and change.
  local views = {}
  local function view(f, k, v)
    local ck = k .. "=" .. tostring(v)
    local c = views[ck]
    if not c then c = {}; views[ck] = c end
    local x = c[f]
    if not x then
      x = setmetatable({ [k] = v }, { __index = f })
      c[f] = x
    end
    return x
  end
  -- an unnamed frame as a call chain entry shows it: by its raw address
  local function absolute(f) return view(f, "rel", false) end
  local function as_level(f, kind) return view(f, "kind", kind) end
  local fkcache = {}
  local function fkey(f)
    local k = fkcache[f]
    if not k then
      local parts = {}
      for i, fn in ipairs(fkeys) do parts[i] = fn(f) end
      k = table.concat(parts, "\2")
      fkcache[f] = k
    end
    return k
  end
  return function(s, fn)
    local sk = ""
    for _, kf in ipairs(skeys) do sk = sk .. "\3" .. tostring(kf(s)) end
    local nf = #s.frames
    if #fkeys == 0 then
      fn(sk, s.frames[nf], true, nf)
      return
    end
    if nf == 0 then return end
    -- self: the leaf; total: every distinct key on the stack, once
    local seen = {}
    local function count(f, key, own, at, depth)
      if seen[key] then return end
      seen[key] = true
      fn(key, f, own, at, depth)
    end
    local frames = s.frames
    if not children then
      for i = nf, 1, -1 do count(frames[i], fkey(frames[i]) .. sk, i == nf, i) end
      return
    end
    -- perf 6.1 walks the chain root first in children mode, and an
    -- entry without a map keeps the [k]/[.] of the one before it (the
    -- sample's own, by its cpumode, before the first); its row is
    -- keyed by the address alone and shows the level of the sample
    -- that made it
    -- (leaf first in perf's callee order)
    local lo, hi = chain_window(opts, nf)
    local level, lv = frames[nf].kind, nil
    for k = 1, hi - lo + 1 do
      local i = callee and hi + 1 - k or lo + k - 1
      local f = frames[i]
      if f.dso and f.dso ~= "[unknown]" then
        level = f.kind
      elseif f.kind ~= level and f.kind ~= "lua" and i < nf then
        if not lv then
          lv = {}
          for j = 1, nf do lv[j] = frames[j] end
        end
        lv[i] = as_level(f, level)
      end
    end
    frames = lv or frames
    -- the sample's own entry first, then the call chain's, root
    -- first (none for a chain perf discarded): a row keyed by an
    -- address alone shows the level of the entry that made it
    local n = hi - lo + 1
    for i = 0, s.discarded and 0 or n do
      local at = i == 0 and nf or callee and hi + 1 - i or lo + i - 1
      local f = frames[at]
      -- the chain perf appends to the entry (its max_depth): the whole
      -- of it for the sample's own, else from the entry on
      local depth = s.discarded and 0 or i == 0 and n or n + 1 - i
      if i > 0 and f.rel then
        -- perf 6.1 keys the sample's own entry of an unnamed frame by
        -- its address in the object, and the call chain's entries by
        -- the raw address: the leaf is counted under both
        local abs = absolute(f)
        count(abs, fkey(abs) .. sk, false, at, depth)
      elseif not (f.dso and f.dso ~= "[unknown]") and f.kind ~= "lua" then
        count(f, fkey(as_level(f, "user")) .. sk, i == 0, at, depth)
      else
        count(f, fkey(f) .. sk, i == 0, at, depth)
      end
    end
  end
end

-- Groups and sums.  Returns rows (unsorted) and the filtered total.
local function aggregate(list, opts)
  local keep = M.filter(opts)
  local by = opts.by
  local period = opts.weight == "period"
  local rows, order = {}, {}
  local total = 0
  local function row(key, s, f)
    local r = rows[key]
    if not r then
      r = { key = key, self = 0, total = 0, samples = 0, period = 0, depth = 0 }
      rows[key] = r
      order[#order + 1] = r
      if f then
        r.sym = sym_name(f); r.dso = dso_name(f); r.kind = f.kind; r.frame = f
        r.symkey = frame_keys.sym(f)
      end
      r.comm, r.pid, r.tid, r.cpu, r.vmstate = s.comm, s.pid, s.tid, s.cpu, s.vmstate
      r.thread_comm = s.thread_comm
      r.parent = s.parent or "[other]"
      -- the leaf of the stack that made the row (perf's filters read it)
      local leaf = s.frames[#s.frames]
      if leaf then
        r.leaf_dso, r.leaf_path = dso_name(leaf), leaf.dso
        r.leaf_sym = leaf.name and sym_name(leaf) or nil
      end
    end
    return r
  end

  if type(by) == "function" then
    for _, s in ipairs(list) do
      if keep(s) then
        local w = period and (s.period or 0) or (s.count or 1)
        total = total + w
        local key = by(s)
        if key ~= nil then
          local r = row(key, s, s.frames[#s.frames])
          r.self = r.self + w; r.total = r.total + w
          r.samples = r.samples + (s.count or 1)
          r.period = r.period + (s.period or s.count or 1)
        end
      end
    end
    return order, total
  end

  if by == "frame" then
    local depth = opts.depth or 1
    for _, s in ipairs(list) do
      if keep(s) then
        local w = period and (s.period or 0) or (s.count or 1)
        total = total + w
        local f = s.frames[depth]
        if f then
          local r = row(frame_keys.sym(f), s, f)
          r.total = r.total + w
          if depth == #s.frames then r.self = r.self + w end
          r.samples = r.samples + (s.count or 1)
          r.period = r.period + (s.period or s.count or 1)
        end
      end
    end
    return order, total
  end

  local walk = entry_walker(by, opts)
  for _, s in ipairs(list) do
    if keep(s) then
      local w = period and (s.period or 0) or (s.count or 1)
      total = total + w
      walk(s, function(key, f, own, _, depth)
        local r = row(key, s, f)
        r.total = r.total + w
        if depth and depth > r.depth then r.depth = depth end
        if own then
          r.self = r.self + w
          r.samples = r.samples + (s.count or 1)
          r.period = r.period + (s.period or s.count or 1)
        end
      end)
    end
  end
  return order, total
end

-- x with digits decimals, as C's printf (and so perf) prints it.
-- LuaJIT's string.format rounds a value exactly halfway away from zero
-- (0.625 -> "0.63"), C to the even digit ("0.62"): a tie is seen in the
-- exact expansion (20 decimals tell a percentage's double from a tie)
-- and rounded to even there.
function M.fixed(x, digits)
  local s = string.format("%." .. digits .. "f", x)
  if not jit then return s end
  local t, rest = string.format("%.20f", x):match("^(%-?%d+" ..
    (digits > 0 and "%." .. string.rep("%d", digits) or "") .. ")%.?(%d*)$")
  if t and rest:match("^50*$") and tonumber(t:match("(%d)$")) % 2 == 0 then
    return t
  end
  return s
end

-- perf's sample count in report and top headers: 2814 -> "2K" (integer
-- division by 1000s, as perf prints it).
-- perf's convert_unit: the count and its unit, a space for none ("38 ",
-- "3K"), as perf prints it before " of event".
function M.short_count(n)
  local units = { " ", "K", "M", "G" }
  local u = 1
  while n > 1000 and u < #units do
    n = math.floor(n / 1000)
    u = u + 1
  end
  return string.format("%d%s", n, units[u])
end

-- perf's order of entries whose sums tie (hists__output_resort, as
-- pvreport.c's sort_rows): each sort key in turn as perf's sort function
-- compares it (names A to Z, numbers up; an entry without an object,
-- symbol or parent after one with); then unnamed symbols by address, a
-- difference taken as signed (perf's _sort__addr_cmp: high addresses
-- first).  Returns cmp(a, b) -> -1, 0, 1, or nil when by is no key list.
local function signed_hex(s)
  local h = s:match("^0x(%x+)$") or s:match("^(%x+)$")
  if not h or #h > 16 then return "2" .. s end
  h = ("0"):rep(16 - #h) .. h:lower()
  return (h:find("^[89a-f]") and "0" or "1") .. h
end
local function cmp(x, y) if x == y then return 0 end return x < y and -1 or 1 end
-- collapse: the order of perf's collapse tree instead, a named symbol by
-- its object, then its start (sort__sym_cmp)
local function ties(by, collapse)
  if type(by) == "function" or by == "frame" then return nil end
  local keys = normalize_by(by)
  local function named(r) return r.frame ~= nil and r.frame.name ~= nil end
  local tests = {
    comm = function(a, b) return cmp(tostring(a.comm or ""), tostring(b.comm or "")) end,
    pid = function(a, b) return cmp(a.pid or -1, b.pid or -1) end,
    tid = function(a, b) return cmp(a.tid or -1, b.tid or -1) end,
    cpu = function(a, b) return cmp(a.cpu or -1, b.cpu or -1) end,
    vmstate = function(a, b) return cmp(tostring(a.vmstate or "-"), tostring(b.vmstate or "-")) end,
    parent = function(a, b)
      local x, y = a.parent ~= "[other]", b.parent ~= "[other]"
      if x ~= y then return x and -1 or 1 end
      return cmp(a.parent, b.parent)
    end,
    dso = function(a, b)
      local x, y = a.frame ~= nil and a.dso ~= "[unknown]", b.frame ~= nil and b.dso ~= "[unknown]"
      if x ~= y then return x and -1 or 1 end
      return x and cmp(a.dso, b.dso) or 0
    end,
    sym = function(a, b)
      local x, y = named(a), named(b)
      if x ~= y then return x and -1 or 1 end
      if x and collapse then
        local c = cmp(tostring(a.dso), tostring(b.dso))
        if c ~= 0 then return c end
        return cmp(a.frame.sym_start or a.frame.addr or 0, b.frame.sym_start or b.frame.addr or 0)
      end
      return x and cmp(a.sym, b.sym) or 0
    end,
  }
  tests.thread, tests.symbol, tests.shared_object = tests.tid, tests.sym, tests.dso
  local list, has_sym = {}, false
  for _, k in ipairs(keys) do
    if tests[k] then list[#list + 1] = tests[k] end
    if k == "sym" or k == "symbol" then has_sym = true end
  end
  return function(a, b)
    for _, t in ipairs(list) do
      local c = t(a, b)
      if c ~= 0 then return c end
    end
    if has_sym and not named(a) and not named(b) then
      return cmp(signed_hex(tostring(a.sym)), signed_hex(tostring(b.sym)))
    end
    return 0
  end
end

-- With call graphs shown in children mode perf breaks a tie of totals
-- between two entries of one thread by their chains' depth, caller first,
-- before self and the keys: no order, so rows go where perf's output tree
-- puts them (a red-black tree, ties to the right, filled in the collapse
-- tree's order), built here the same way (as pvreport.c's depth_ties).
-- kept: rows sorted without depths; by_keys: the same in collapse order.
local function depth_ties(kept, by_keys, callee)
  local pos = {}
  for i, r in ipairs(kept) do pos[r] = i end
  local function before(a, b)
    if a.total ~= b.total then return a.total > b.total end
    if a.tid == b.tid and a.depth ~= b.depth then
      if callee then return a.depth < b.depth end
      return a.depth > b.depth
    end
    return pos[a] < pos[b]
  end
  local left, right, up, red, root = {}, {}, {}, {}, nil
  local function rotate(x, to_left)
    local down, other = right, left
    if not to_left then down, other = left, right end
    local y, p = down[x], up[x]
    down[x] = other[y]
    if other[y] then up[other[y]] = x end
    up[y] = p
    if not p then root = y elseif left[p] == x then left[p] = y else right[p] = y end
    other[y] = x
    up[x] = y
  end
  for _, z in ipairs(by_keys) do
    local p, at, go_left = nil, root, false
    while at do
      p, go_left = at, before(z, at)
      if go_left then at = left[at] else at = right[at] end
    end
    up[z], red[z] = p, true
    if not p then root = z elseif go_left then left[p] = z else right[p] = z end
    local x = z
    while up[x] and red[up[x]] do
      p = up[x]
      local g = up[p]
      local on_left = left[g] == p
      local uncle, inner
      if on_left then uncle, inner = right[g], right[p] else uncle, inner = left[g], left[p] end
      if uncle and red[uncle] then
        red[p], red[uncle], red[g] = false, false, true
        x = g
      else
        if x == inner then
          rotate(p, on_left)
          x = p
          p = up[x]
        end
        red[p], red[g] = false, true
        rotate(g, not on_left)
      end
    end
    red[root] = false
  end
  local out, stack, n = {}, {}, root
  while n or #stack > 0 do
    if n then
      stack[#stack + 1] = n
      n = left[n]
    else
      n = table.remove(stack)
      out[#out + 1] = n
      n = right[n]
    end
  end
  for i = 1, #out do kept[i] = out[i] end
end

function M.top(list, opts)
  opts = opts or {}
  if (opts.tmin or opts.tmax) and list[1] and list[1].time == nil then
    error("report: a time window needs stacks with times (a per-sample list: " ..
      "perf.stacks.from_records(f, sym, {per_sample = true}))", 2)
  end
  local rows, total = aggregate(list, opts)
  local by_total = opts.children
  local all = 0
  local period = opts.weight == "period"
  for _, s in ipairs(list) do
    all = all + (period and (s.period or 0) or (s.count or 1))
  end
  local base = opts.percentage == "absolute" and all or total
  local kept = {}
  for _, r in ipairs(rows) do
    if by_total or r.self > 0 then
      r.self_pct = base > 0 and 100 * r.self / base or 0
      r.total_pct = base > 0 and 100 * r.total / base or 0
      kept[#kept + 1] = r
    end
  end
  -- order = "keys": as perf breaks a tie of sums, whatever the sums
  local function sorted(rows, by_value, collapse)
    local tie = ties(opts.by, collapse)
    table.sort(rows, function(a, b)
      local x, y
      if by_total then x, y = a.total, b.total else x, y = a.self, b.self end
      if by_value and x ~= y then return x > y end
      if by_value and a.self ~= b.self then return a.self > b.self end
      if tie then
        local c = tie(a, b)
        if c ~= 0 then return c < 0 end
      end
      return tostring(a.key) < tostring(b.key)
    end)
    return rows
  end
  sorted(kept, opts.order ~= "keys")
  if opts.graph_ties and by_total and opts.order ~= "keys" and #kept > 1 then
    local by_keys = {}
    for i, r in ipairs(kept) do by_keys[i] = r end
    depth_ties(kept, sorted(by_keys, false, true), opts.callee)
  end
  local n = opts.n
  if n and #kept > n then
    for i = #kept, n + 1, -1 do kept[i] = nil end
  end
  kept.total = total
  kept.all = all
  return kept
end

-- The call graph under one row, as perf report -g draws it: a tree whose
-- root (name = nil) holds the chains of the samples perf's entry of the
-- row holds (opts: the options of the report the row came from, by
-- included).  children mode: a sample whose own entry is the row gives
-- its whole chain, root first; one whose call chain entry is, the chain
-- from that frame to the leaf.  Otherwise (self): the samples whose own
-- entry is the row, the chain from the leaf up through its callers
-- (opts.caller: root first; opts.callee: from the row's frame to the
-- root in both modes).  Nodes: { name=, w=, kids = { sorted nodes } }.
function M.callgraph(list, row, opts)
  opts = opts or {}
  local keep = M.filter(opts)
  local period = opts.weight == "period"
  local walk = entry_walker(opts.by, opts)
  local root = { w = 0, kids = {}, index = {} }
  local function add(node, name, w)
    local c = node.index[name]
    if not c then
      c = { name = name, w = 0, kids = {}, index = {} }
      node.index[name] = c
      node.kids[#node.kids + 1] = c
    end
    c.w = c.w + w
    return c
  end
  local want = row.key
  for _, s in ipairs(list) do
    -- a chain perf discards adds no path (its own ip counts in the row)
    if keep(s) and not s.discarded then
      local w = period and (s.period or 0) or (s.count or 1)
      local fr = s.frames
      local nf = #fr
      -- (perf's cursor: the window --max-stack leaves)
      local lo, hi = chain_window(opts, nf)
      walk(s, function(key, _, own, at)
        if key ~= want or nf == 0 or not (own or opts.children) then return end
        root.w = root.w + w
        local node = root
        if opts.callee then
          -- the row's entry (the leaf for its own), then its callers
          for j = at, lo, -1 do node = add(node, sym_name(fr[j]), w) end
        elseif opts.children then
          for j = (at == nf) and lo or at, hi do node = add(node, sym_name(fr[j]), w) end
        elseif opts.caller then
          for j = lo, hi do node = add(node, sym_name(fr[j]), w) end
        else
          for j = nf, lo, -1 do node = add(node, sym_name(fr[j]), w) end
        end
      end)
    end
  end
  local function sortrec(n)
    table.sort(n.kids, function(a, b)
      if a.w ~= b.w then return a.w > b.w end
      return a.name < b.name
    end)
    for _, c in ipairs(n.kids) do sortrec(c) end
  end
  sortrec(root)
  return root
end

-- A symbolizer for a live profile: the session's own, else /proc/PID/maps
-- of each of its pids.
local function live_symbolizer(perf, p)
  if not perf.symbolizer then return nil end
  -- a session's profile comes with the symbolizer its records fed
  local fed = p.symbolizer and p:symbolizer()
  if fed then return fed end
  local sym = perf.symbolizer()
  local seen = {}
  for e in p:stacks() do
    if e.pid and e.pid > 0 and not seen[e.pid] then
      seen[e.pid] = true
      sym:load(e.pid)
    end
  end
  return sym
end

-- The Lua-side part (lua/perf/init.lua calls it): the report and export
-- modules as perf.report, perf.flame, ..., and methods on profiles:
--   p:stacklist{symbolizer=, inline=}   the symbolized stack list
--   p:top{...}  p:folded{...}  p:flamegraph{...}  p:pprof{...}  p:speedscope{...}
-- Each takes the options of its module plus symbolizer= (default: one that
-- reads /proc/PID/maps of the profile's processes, for live profiles).
setmetatable(M, { __call = function(_, perf)
  perf.stacks = stacks
  perf.report = M
  perf.folded = require "perf.folded"
  perf.flame = require "perf.flame"
  perf.pprof = require "perf.pprof"
  perf.speedscope = require "perf.speedscope"
  local P = perf.core and perf.core.Profile
  if type(P) ~= "table" then return end
  function P.stacklist(p, opts)
    opts = opts or {}
    local sym = opts.symbolizer
    if sym == nil then sym = live_symbolizer(perf, p) end
    local list = stacks.from_profile(p, sym or nil, opts)
    local ev
    for _, st in ipairs(list) do ev = ev or st.event end
    list.meta.event = list.meta.event or ev
    return list
  end
  local function lst(p, opts)
    if opts and opts.list then return opts.list end
    return P.stacklist(p, opts)
  end
  function P.top(p, opts) return M.top(lst(p, opts), opts) end
  function P.folded(p, opts) return perf.folded.format(lst(p, opts), opts) end
  function P.flamegraph(p, opts)
    opts = opts or {}
    local o = {}
    for k, v in pairs(opts) do o[k] = v end
    -- a base profile (userdata) becomes its stack list
    if o.diff and type(o.diff) ~= "table" then o.diff = P.stacklist(o.diff, opts) end
    return (perf.flame.render(lst(p, opts), o))
  end
  function P.pprof(p, opts) return perf.pprof.render(lst(p, opts), opts) end
  function P.speedscope(p, opts) return perf.speedscope.render(lst(p, opts), opts) end
end })

return M
