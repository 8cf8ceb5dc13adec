-- Queries: custom reports in a line or three, over perf.data files
-- (perf.open), profiles (s:profile(), f:profile()) and in-process profiles
-- (prof:stop()), as plain Lua tables.
--
--   f:report{ by = {"comm", "dso"} }     --> { {comm=, dso=, value=, pct=, samples=}, ... }
--   f:report{ by = "sym", children = true, where = { comm = "nginx" }, top = 20 }
--   f:report{ by = "srcline" }, f:report{ by = "parent", parent = "^lua_" }
--   f:paths{ ending = "malloc", top = 10 }    --> { {stack = {root, ..., leaf}, value=, pct=}, ... }
--   f:timeline{ bucket = 0.1, by = "comm" }   --> { {t=, value=, comm=}, ... }
--
-- Files and profiles run in the core's report engine (a profile view,
-- csrc/core/profile): one pass over the file, each distinct address
-- symbolized once, rows made in C.  `where` as a function, and in-process
-- profiles, take the Lua engine over a stack list (perf.report).
local stacks = require "perf.stacks"
local report = require "perf.report"

local M = {}

local STACK_KEYS = { comm = true, pid = true, tid = true, thread = true, cpu = true,
  event = true, time = true, parent = true }
local FRAME_KEYS = { sym = true, dso = true, symbol = true, shared_object = true,
  srcline = true }
local KEY_LIST = "comm, pid, tid, dso, sym, srcline, event, cpu, parent"
local WHERE_KEYS = { comm = true, pid = true, tid = true, event = true, cpu = true,
  time = true, sym = true, dso = true, srcline = true }

local function has_key(by, key)
  for _, k in ipairs(by or {}) do if k == key then return true end end
  return false
end

-- The sort keys of a query: by (a key, "a,b" or a list), and "parent"
-- added when a parent regex is given without it (perf's -p does so).
local function keys_of(by, default, parent)
  if by == nil then by = default end
  if type(by) == "string" then
    local t = {}
    for k in by:gmatch("[^,%s]+") do t[#t + 1] = k end
    by = t
  end
  if type(by) ~= "table" or #by == 0 then
    error("report: by must be a key or a list of keys", 3)
  end
  for _, k in ipairs(by) do
    if not (STACK_KEYS[k] or FRAME_KEYS[k]) then
      error(string.format("report: unknown key '%s' (%s)", tostring(k), KEY_LIST), 3)
    end
  end
  if parent ~= nil then
    if type(parent) ~= "string" then
      error("parent: expected a regular expression (a string), got " .. type(parent), 3)
    end
    if not has_key(by, "parent") then
      local t = {}
      for i, k in ipairs(by) do t[i] = k end
      t[#t + 1] = "parent"
      by = t
    end
  end
  return by
end

local function check_weight(w)
  if w ~= nil and w ~= "samples" and w ~= "period" then
    error("weight: expected 'samples' or 'period', got '" .. tostring(w) .. "'", 3)
  end
  return w or "period"
end

local function check_where(where)
  if where == nil or type(where) == "function" then return end
  if type(where) ~= "table" then
    error("where: expected a table or a function, got " .. type(where), 3)
  end
  for k in pairs(where) do
    if not WHERE_KEYS[k] then
      error(string.format("where: unknown key '%s' (comm, pid, tid, event, cpu, time, " ..
        "sym, dso, srcline)", tostring(k)), 3)
    end
  end
end

-- Whether any key of a where table or a by list is a frame key.
local function wants_frames(by, where)
  for _, k in ipairs(by or {}) do if FRAME_KEYS[k] then return true end end
  if type(where) == "table" then
    if where.sym or where.dso or where.srcline then return true end
  end
  return false
end

-- ------------------------------------------------------------ matching
-- A where value: exact, a list (any of), or a string beginning with '^'
-- (a Lua pattern).  The same rules as the core's (csrc/lua/l_pvwhere.c).
local function matches(want, v)
  if v == nil then return false end
  if type(want) == "table" then
    for _, w in ipairs(want) do if matches(w, v) then return true end end
    return false
  end
  local s = type(v) == "number" and string.format("%.17g", v) or tostring(v)
  if type(want) == "number" then return s == string.format("%.17g", want) end
  if want:sub(1, 1) == "^" then return s:find(want) ~= nil end
  return s == want
end
M.matches = matches

-- The names a where comm value matches exactly (a name or a list of
-- names, no pattern), sorted; nil when it may match others.
local function exact_names(want)
  local list = type(want) == "table" and want or { want }
  local out = {}
  for i, w in ipairs(list) do
    if type(w) ~= "string" or w:sub(1, 1) == "^" then return nil end
    out[i] = w
  end
  if #out == 0 or (type(want) == "table" and #out ~= #want) then return nil end
  table.sort(out)
  return out
end

-- A where table as a predicate over a stack of a stack list.
local function list_filter(where)
  if where == nil then return nil end
  return function(s)
    local leaf = s.frames[#s.frames]
    for k, want in pairs(where) do
      local v
      if k == "comm" then v = s.comm or "[unknown]"
      elseif k == "pid" then v = s.pid
      elseif k == "tid" then v = s.tid
      elseif k == "event" then v = s.event
      elseif k == "cpu" then v = s.cpu
      elseif k == "time" then v = s.time
      elseif not leaf then return false
      elseif k == "sym" then v = report.sym_name(leaf)
      elseif k == "dso" then v = report.dso_name(leaf)
      elseif k == "srcline" then v = leaf.file and (leaf.file .. ":" .. tostring(leaf.line))
      end
      if not matches(want, v) then return false end
    end
    return true
  end
end

-- ------------------------------------------------------------ rows
-- A row of the engines as the query returns it: the keys asked for, value
-- (the weight it sorts by: total with children, else self), pct of the
-- selected total, samples; with children also self and self_pct.
local function shape(r, by, children, total)
  local out = {}
  for _, k in ipairs(by) do
    if k == "symbol" then k = "sym" elseif k == "shared_object" then k = "dso" end
    if k == "thread" then out.tid = r.tid; out.comm = out.comm or r.thread_comm
    elseif k == "sym" then out.sym = r.sym; out.kind = r.kind
    elseif k == "srcline" then out.srcline = r.srcline
    else out[k] = r[k] end
  end
  local v = children and r.total or r.self
  out.value = tonumber(v)
  out.pct = total > 0 and 100 * tonumber(v) / total or 0
  out.samples = tonumber(r.samples)
  if children then
    out.self = tonumber(r.self)
    out.self_pct = total > 0 and 100 * tonumber(r.self) / total or 0
  end
  return out
end

local function cut(rows, top)
  if top then
    if type(top) ~= "number" or top < 0 then error("top: expected a count", 3) end
    for i = #rows, top + 1, -1 do rows[i] = nil end
  end
  return rows
end

-- ------------------------------------------------------------ views
-- A file's profile views, cached per file: what a query needs decides the
-- pass (full stacks or leaves only, split by CPU or time) and the view
-- (frames, lines).  Kept while the file is.
local cache = setmetatable({}, { __mode = "k" })

local function file_view(f, need)
  local perf = require "perf"
  local c = cache[f]
  if not c then c = { profiles = {}, views = {} }; cache[f] = c end
  local split = need.split or "none"
  -- leaves: the sampled ip alone; and without frame keys not even that
  local depth = need.leaves and (need.frames and (need.objects and "obj" or "1") or "0") or "all"
  local pkey = table.concat({ split, tostring(need.bucket or ""), depth,
    need.fold and "fold" or "", need.comms and table.concat(need.comms, "\0") or "" }, "|")
  local pe = c.profiles[pkey]
  if not pe then
    local dwarf = stacks.is_dwarf(f)
    if c.sym == nil then
      local sym, err = stacks.file_symbolizer(f, {})
      if not sym then error(err, 3) end
      c.sym = sym
    end
    local p, info = f:profile{ symbolizer = c.sym, mark_truncated = dwarf or nil,
      max_stack = need.leaves and 1 or nil, frames = depth ~= "0", objects = need.objects,
      symbols = need.fold and not need.objects or nil, threads = not need.fold,
      split = need.split, bucket = need.bucket,
      -- where comm names exact names: the pass leaves the others out (a
      -- hint: the view's where still decides, so the rows are the same)
      keep_comms = need.comms }
    if not p then error(info, 3) end
    pe = { p = p, info = info, dwarf = dwarf }
    c.profiles[pkey] = pe
  end
  local vkey = pkey .. (need.frames and "|f" or "|-") .. (need.lines and "l" or "") ..
    (need.by_symbol and "s" or "")
  local v = c.views[vkey]
  if not v then
    local err
    v, err = pe.p:view{ symbolizer = c.sym, truncated_marks = pe.dwarf,
      frames = need.frames, lines = need.lines, by_symbol = need.by_symbol }
    if not v then error(err, 3) end
    c.views[vkey] = v
  end
  return v, pe.info
end

-- The stack list of the samples a Lua predicate keeps (the slow path):
-- the file's records in time order, non-samples untouched.  The predicate
-- sees each sample with rec.comm, its thread's name then (perf's rules).
local function file_list(f, pred, per_sample)
  local perf = require "perf"
  local sym = assert(stacks.file_symbolizer(f, {}))
  local src = {}
  function src.records(_, o)
    local it = f:records(o)
    local threads = stacks.threads()
    return function()
      while true do
        local rec = it()
        if rec == nil then return nil end
        local t = rec.type
        if t == "COMM" or t == "FORK" then threads.feed(rec) end
        if t ~= "SAMPLE" then return rec end
        if rec.comm == nil and rec.tid then rec.comm = threads.sample(rec.pid, rec.tid).name end
        if pred(rec) then return rec end
      end
    end
  end
  local list = stacks.from_records(src, sym, { per_sample = per_sample })
  if perf.symbolizer and sym.close then sym:close() end
  return list
end

-- ------------------------------------------------------------ report
local function view_report(v, opts, by)
  local rows = v:report{ by = by, children = opts.children and true or false,
    weight = check_weight(opts.weight), query = true, top = opts.top, parent = opts.parent,
    where = type(opts.where) == "table" and opts.where or nil }
  local thread = has_key(by, "thread")
  for _, r in ipairs(rows) do
    r.value, r.samples = tonumber(r.value), tonumber(r.samples)
    if r.self then r.self = tonumber(r.self) end
    if thread then r.comm = r.comm or r.thread_comm end
    r.thread_comm = nil
  end
  rows.total = tonumber(rows.total) or 0
  rows.all = nil
  return rows
end

-- The stacks with their parent (perf's: the first frame whose name the
-- regex matches, from the leaf up, root first with children; else
-- "[other]"), the regex run once per distinct name, in C.
local function with_parents(list, regex, children)
  local core = require("perf").core
  local names, seen = {}, {}
  for _, s in ipairs(list) do
    for _, fr in ipairs(s.frames) do
      local n = fr.name
      if n and not seen[n] then seen[n] = true; names[#names + 1] = n end
    end
  end
  local match = core.parent_match(regex or core.default_parent, names)
  local out = {}
  for i, s in ipairs(list) do
    local fr, n, parent = s.frames, #s.frames, nil
    for j = 1, n do
      local f = fr[children and j or n + 1 - j]
      if f.name and f.kind ~= "inline" and match[f.name] then parent = f.name; break end
    end
    out[i] = setmetatable({ parent = parent or "[other]" }, { __index = s })
  end
  return out
end

local function list_report(list, opts, by)
  local children = opts.children and true or false
  if has_key(by, "parent") then list = with_parents(list, opts.parent, children) end
  local rows = report.top(list, { by = by, children = children,
    weight = check_weight(opts.weight),
    filter = type(opts.where) == "table" and list_filter(opts.where) or nil })
  local total = tonumber(rows.total) or 0
  local out = {}
  for i, r in ipairs(rows) do out[i] = shape(r, by, children, total) end
  out.total = total
  return cut(out, opts.top)
end

local function needs(by, opts, paths)
  local split
  for _, k in ipairs(by or {}) do
    if k == "cpu" then split = "cpu" end
  end
  if type(opts.where) == "table" and opts.where.cpu ~= nil then split = "cpu" end
  -- a parent is looked for along the whole chain
  local parent = has_key(by, "parent")
  local frames = paths or parent or wants_frames(by, opts.where)
  local leaves = not paths and not opts.children and not parent
  -- keyed by object alone: each leaf is its object, no symbol read
  local symbols = false
  for _, k in ipairs(by or {}) do
    if FRAME_KEYS[k] and k ~= "dso" and k ~= "shared_object" then symbols = true end
  end
  if type(opts.where) == "table" and (opts.where.sym ~= nil or opts.where.srcline ~= nil) then
    symbols = true
  end
  local lines = has_key(by, "srcline") or
    type(opts.where) == "table" and opts.where.srcline ~= nil
  -- leaves keyed by symbol or object: each thread's stacks fold into its
  -- command's unless a key or filter names the thread
  local threads = has_key(by, "pid") or has_key(by, "tid") or has_key(by, "thread") or
    type(opts.where) == "table" and (opts.where.pid ~= nil or opts.where.tid ~= nil)
  local comms = type(opts.where) == "table" and opts.where.comm ~= nil and
    exact_names(opts.where.comm) or nil
  return { split = split, frames = frames, objects = leaves and frames and not symbols or nil,
    leaves = leaves, lines = lines, comms = comms,
    fold = leaves and frames and not lines and not threads or nil,
    -- rows, their call graphs and paths read a frame per symbol (paths
    -- are labels; lines are an address's)
    by_symbol = frames and not lines or nil }
end

function M.file_report(f, opts)
  opts = opts or {}
  check_where(opts.where)
  local by = keys_of(opts.by, "sym", opts.parent)
  if type(opts.where) == "function" then
    if has_key(by, "srcline") then
      error("report: by srcline takes a where table, not a function", 2)
    end
    return list_report(file_list(f, opts.where), opts, by)
  end
  return view_report(file_view(f, needs(by, opts)), opts, by)
end

-- ------------------------------------------------------------ paths
local function check_paths(opts)
  for _, k in ipairs({ "ending", "starting", "through" }) do
    local v = opts[k]
    if v ~= nil and type(v) ~= "string" and type(v) ~= "table" then
      error("paths: " .. k .. " must be a name, a '^' pattern or a list", 3)
    end
  end
end

local function view_paths(v, opts)
  local rows = v:paths{ ending = opts.ending, starting = opts.starting, through = opts.through,
    weight = check_weight(opts.weight), top = opts.top,
    where = type(opts.where) == "table" and opts.where or nil }
  local out = {}
  for i, r in ipairs(rows) do
    out[i] = { stack = r.stack, value = tonumber(r.value), pct = r.pct,
      samples = tonumber(r.samples) }
  end
  out.total = tonumber(rows.total)
  return out
end

-- The same over a stack list (frames root first, labelled as folded
-- stacks label them).
local function list_paths(list, opts)
  local keep = type(opts.where) == "table" and list_filter(opts.where) or nil
  local period = check_weight(opts.weight) == "period"
  local groups, order, total = {}, {}, 0
  for _, s in ipairs(list) do
    local n = #s.frames
    if n > 0 and (not keep or keep(s)) then
      local names = {}
      for i, fr in ipairs(s.frames) do names[i] = stacks.label(fr) end
      local ok = (opts.ending == nil or matches(opts.ending, names[n])) and
                 (opts.starting == nil or matches(opts.starting, names[1]))
      if ok and opts.through ~= nil then
        ok = false
        for _, nm in ipairs(names) do if matches(opts.through, nm) then ok = true; break end end
      end
      if ok then
        local key = table.concat(names, "\1")
        local g = groups[key]
        if not g then
          g = { stack = names, value = 0, samples = 0, seq = #order + 1 }
          groups[key] = g
          order[#order + 1] = g
        end
        local w = period and (s.period or 0) or (s.count or 1)
        g.value = g.value + w
        g.samples = g.samples + (s.count or 1)
        total = total + w
      end
    end
  end
  table.sort(order, function(a, b)
    if a.value ~= b.value then return a.value > b.value end
    if a.samples ~= b.samples then return a.samples > b.samples end
    return a.seq < b.seq
  end)
  for _, g in ipairs(order) do
    g.pct = total > 0 and 100 * g.value / total or 0
    g.seq = nil
  end
  order.total = total
  return cut(order, opts.top)
end

function M.file_paths(f, opts)
  opts = opts or {}
  check_where(opts.where)
  check_paths(opts)
  if type(opts.where) == "function" then
    return list_paths(file_list(f, opts.where), opts)
  end
  return view_paths(file_view(f, needs(nil, opts, true)), opts)
end

-- ------------------------------------------------------------ timeline
-- Rows { t = seconds from the first sample, value = weight, [by] = key }
-- sorted by t then value; without by, one row per bucket, empty ones too.
local function timeline_rows(rows, bucket, by, total)
  local out = {}
  for i, r in ipairs(rows) do
    local o = { t = r.bucket * bucket, value = r.value, samples = r.samples }
    if by then o[by] = r.key end
    out[i] = o
  end
  table.sort(out, function(a, b)
    if a.t ~= b.t then return a.t < b.t end
    if a.value ~= b.value then return a.value > b.value end
    return tostring(by and a[by]) < tostring(by and b[by])
  end)
  if not by and #out > 0 then
    -- every bucket from the first to the last, empty ones as 0
    local full, j = {}, 1
    local last = math.floor(out[#out].t / bucket + 0.5)
    for b = 0, last do
      local r = out[j]
      if r and math.floor(r.t / bucket + 0.5) == b then
        full[#full + 1] = r; j = j + 1
      else
        full[#full + 1] = { t = b * bucket, value = 0, samples = 0 }
      end
    end
    out = full
  end
  out.total = total
  out.bucket = bucket
  return out
end

local function check_bucket(opts)
  local bucket = opts.bucket or 1
  if type(bucket) ~= "number" or not (bucket > 0) then
    error("timeline: bucket must be a positive number of seconds", 3)
  end
  local by = opts.by
  if by ~= nil and (type(by) ~= "string" or not (STACK_KEYS[by] or FRAME_KEYS[by])) or by == "time" then
    error("timeline: by must be one key (comm, pid, tid, cpu, event, sym, dso, srcline, " ..
      "parent)", 3)
  end
  if by == "symbol" then by = "sym" elseif by == "shared_object" then by = "dso" end
  return bucket, by
end

function M.file_timeline(f, opts)
  opts = opts or {}
  check_where(opts.where)
  local bucket, by = check_bucket(opts)
  local weight = check_weight(opts.weight)
  local rows, total = {}, 0
  if type(opts.where) == "function" then
    if by == "srcline" or by == "parent" then
      error("timeline: by " .. by .. " takes a where table, not a function", 2)
    end
    local list = file_list(f, opts.where, true)
    local t0
    for _, s in ipairs(list) do
      if s.time and (not t0 or s.time < t0) then t0 = s.time end
    end
    local idx = {}
    for _, s in ipairs(list) do
      local b = s.time and t0 and math.floor((s.time - t0) / (bucket * 1e9)) or 0
      local key = by and (by == "sym" and s.frames[#s.frames] and report.sym_name(s.frames[#s.frames])
        or by == "dso" and s.frames[#s.frames] and report.dso_name(s.frames[#s.frames])
        or s[by == "thread" and "tid" or by]) or nil
      local id = b .. "\1" .. tostring(key)
      local r = idx[id]
      if not r then
        r = { bucket = b, key = key, value = 0, samples = 0 }
        idx[id] = r
        rows[#rows + 1] = r
      end
      local w = weight == "period" and (s.period or 0) or (s.count or 1)
      r.value = r.value + w
      r.samples = r.samples + (s.count or 1)
      total = total + w
    end
    return timeline_rows(rows, bucket, by, total)
  end
  local keys = { "time" }
  if by then keys[2] = by end
  local need = needs(keys, opts)
  need.split, need.bucket = "time", bucket
  if by == "cpu" or (type(opts.where) == "table" and opts.where.cpu ~= nil) then
    error("timeline: by or where cpu is not available over time (split by one at a time)", 2)
  end
  local v = file_view(f, need)
  local res = v:report{ by = keys, weight = weight, query = true,
    where = type(opts.where) == "table" and opts.where or nil }
  for i, r in ipairs(res) do
    local key
    if by == "thread" then key = r.tid elseif by then key = r[by] end
    rows[i] = { bucket = r.time, key = key, value = tonumber(r.value),
      samples = tonumber(r.samples) }
  end
  return timeline_rows(rows, bucket, by, tonumber(res.total) or 0)
end

-- ------------------------------------------------------------ profiles
-- A profile (s:profile(), f:profile(), perf.profile()): its view made once.
local pviews = setmetatable({}, { __mode = "k" })

local function profile_view(p, need)
  local c = pviews[p]
  if not c then c = {}; pviews[p] = c end
  local key = (need.frames and "f" or "-") .. (need.lines and "l" or "")
  local v = c[key]
  if not v then
    local sym = p.symbolizer and p:symbolizer() or nil
    local err
    v, err = p:view{ symbolizer = sym, frames = need.frames, lines = need.lines }
    if not v then error(err, 3) end
    c[key] = v
  end
  return v
end

local function no_time(what, opts)
  if type(opts.where) == "table" and opts.where.time ~= nil then
    error(what .. ": where.time: this profile keeps no times", 3)
  end
end

function M.profile_report(p, opts)
  opts = opts or {}
  check_where(opts.where)
  no_time("report", opts)
  local by = keys_of(opts.by, "sym", opts.parent)
  if type(opts.where) == "function" then
    error("report: where as a function needs the records (a perf.data file: perf.open); " ..
      "a profile keeps aggregated stacks (use a where table)", 2)
  end
  local need = needs(by, opts)
  need.split = nil
  return view_report(profile_view(p, need), opts, by)
end

function M.profile_paths(p, opts)
  opts = opts or {}
  check_where(opts.where)
  check_paths(opts)
  no_time("paths", opts)
  if type(opts.where) == "function" then
    error("paths: where as a function needs the records (a perf.data file: perf.open)", 2)
  end
  return view_paths(profile_view(p, { frames = true,
    lines = type(opts.where) == "table" and opts.where.srcline ~= nil }), opts)
end

function M.profile_timeline()
  error("timeline: a profile keeps no sample times; query the perf.data file " ..
    "(perf.open(path):timeline{...})", 2)
end

-- ------------------------------------------------------------ stack lists
-- In-process profiles (prof:stop()) hold a stack list.
-- A where function over a stack list: the stacks it keeps, and the
-- options without it.
local function apply_predicate(list, opts)
  if type(opts.where) ~= "function" then return list, opts end
  local o = {}
  for k, v in pairs(opts) do o[k] = v end
  o.where = nil
  local sub = {}
  for _, s in ipairs(list) do if opts.where(s) then sub[#sub + 1] = s end end
  return sub, o
end

function M.list_report(list, opts)
  opts = opts or {}
  check_where(opts.where)
  local by = keys_of(opts.by, "sym", opts.parent)
  for _, k in ipairs(by) do
    if k == "cpu" or k == "event" then
      error("report: an in-process profile keeps no " .. k .. " per sample", 2)
    end
    if k == "srcline" then
      error("report: an in-process profile has no srcline (its Lua frames name " ..
        "their source and line already: by = \"sym\")", 2)
    end
  end
  local sub, o = apply_predicate(list, opts)
  return list_report(sub, o, by)
end

function M.list_paths(list, opts)
  opts = opts or {}
  check_where(opts.where)
  check_paths(opts)
  return list_paths(apply_predicate(list, opts))
end

-- Installs the methods: f:report/paths/timeline on perf.File,
-- p:report/paths/timeline on perf.Profile, lp:report/paths on an
-- in-process profile (perf.LuaProfileResult).
function M.install(perf)
  local core = perf.core
  if core.File then
    core.File.report = M.file_report
    core.File.paths = M.file_paths
    core.File.timeline = M.file_timeline
  end
  if core.Profile then
    core.Profile.report = M.profile_report
    core.Profile.paths = M.profile_paths
    core.Profile.timeline = M.profile_timeline
  end
  local LP = perf.LuaProfileResult
  if LP then
    function LP:report(opts) return M.list_report(self.list, opts) end
    function LP:paths(opts) return M.list_paths(self.list, opts) end
    function LP.timeline()
      error("timeline: an in-process profile keeps no sample times", 2)
    end
  end
end

return M
