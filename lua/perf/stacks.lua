-- Stack lists: the one place where a profile (unique address stacks and
-- their counts) meets a symbolizer.  Everything downstream (reports, flame
-- graphs, folded, pprof, speedscope) reads the plain Lua shape built here:
--
--   list = { meta = { event=, samples=, period=, lost=, throttled= },
--            { frames = { frame, ... root first }, count=, period=,
--              comm=, pid=, tid=, cpu=, time=, thread_comm= }, ... }
--   comm: the command name the samples were taken under (perf's rules:
--   csrc/core/profile/threads.h); thread_comm: the thread's last name, which
--   perf's Pid:Command column prints.
--   frame = { name=, dso=, kind="user"|"kernel"|"jit"|"inline"|"lua",
--             file=, line=, addr=, build_id=, rel= (unnamed user frames: the
--             address within its object's mapping, what perf keys them by),
--             mangled= (C++ and Rust: the
--             symbol as the binary has it; name is demangled as perf prints
--             it, perf.demangle(mangled, true) adds the parameters) }
--
-- Each unique (address space, address) is resolved once and its frame table
-- is shared by every stack that holds it, so renderers can key on frames.
local M = {}

local function basename(path)
  return (path:gsub("/+$", ""):match("([^/]*)$"))
end
M.basename = basename

-- What a frame is called in folded stacks and flame graphs: its symbol,
-- else the object it is in as "[libfoo.so]" (as stackcollapse-perf.pl
-- does for perf script's [unknown]), else "[unknown]".
function M.label(f)
  if f.name then return f.name end
  if f.dso and f.dso ~= "" and f.dso ~= "[unknown]" then
    local b = basename(f.dso)
    if b:sub(1, 1) == "[" then return b end
    return "[" .. b .. "]"
  end
  return "[unknown]"
end

-- An address as perf prints it (0x and 16 hex digits).  Addresses are Lua
-- integers on 5.3+, numbers or "0x..." strings on 5.1/LuaJIT (see compat.h).
function M.hex(addr)
  if type(addr) == "string" then
    local h = addr:match("^0[xX](%x+)$")
    if h then return "0x" .. string.rep("0", 16 - #h) .. h:lower() end
    return addr
  end
  if addr == nil then return "0x0000000000000000" end
  if math.type and math.type(addr) == "integer" then
    return string.format("0x%016x", addr)
  end
  -- A double below 2^53: split it so %x never sees more than 32 bits.
  local hi = math.floor(addr / 4294967296)
  local lo = addr - hi * 4294967296
  return string.format("0x%08x%08x", hi, lo)
end

-- Kernel text lives in the top half of the address space (x86-64, arm64).
function M.is_kernel_addr(addr)
  if type(addr) == "string" then
    local h = addr:match("^0[xX](%x+)$")
    return h ~= nil and #h >= 16 and h:sub(1, 1):find("[89a-fA-F]") ~= nil
  end
  return addr < 0 or addr >= 9223372036854775808
end

-- The root address a DWARF profile gives a stack whose unwind ran off the
-- captured stack bytes (perf.core.UNWIND_TRUNCATED_ADDR, l_file.c): below
-- mmap_min_addr, never real code; shown as the frame "[truncated]".
M.TRUNCATED_ADDR = 1
M.TRUNCATED_NAME = "[truncated]"

local kind_names = { user = "user", kernel = "kernel", jit = "jit", vdso = "user",
  inline = "inline", lua = "lua" }

local function is_anon(dso)
  return dso ~= nil and (dso == "//anon" or dso:sub(1, 9) == "/dev/zero" or
    dso:sub(1, 14) == "/anon_hugepage")
end

-- The address perf keys an unnamed frame by (map->map_ip): relative to its
-- object's mapping, so runs of one program at other bases (PIE, ASLR)
-- share it.  nil when it cannot be told.  An address past 2^53 on LuaJIT
-- is a hex string (lperf_pushu64): taken as two 32-bit halves, for a
-- difference that fits a double.
local function halves(v)
  if type(v) == "number" then return math.floor(v / 4294967296), v % 4294967296 end
  local h = type(v) == "string" and v:match("^0[xX](%x+)$")
  if not h or #h > 16 then return nil end
  h = string.rep("0", 16 - #h) .. h
  return tonumber(h:sub(1, 8), 16), tonumber(h:sub(9), 16)
end

local function map_rel(m, a)
  local s, o = m.start, m.pgoff
  if type(o) ~= "number" then return nil end
  if type(a) == "number" and type(s) == "number" then
    if a < s then return nil end
    return a - s + o
  end
  local ah, al = halves(a)
  local sh, sl = halves(s)
  if not ah or not sh then return nil end
  local d = (ah - sh) * 4294967296 + (al - sl)
  if d < 0 or d >= 2 ^ 53 then return nil end
  return d + o
end

-- The frame of one address: r is what sym:resolve returned, or nil.
local function make_frame(r, addr, is_kernel)
  local kind = is_kernel and "kernel" or "user"
  if r and r.kind then kind = kind_names[r.kind] or kind end
  local f = { addr = addr, kind = kind }
  if r then
    f.name = r.name
    if type(r.mangled) == "string" then f.mangled = r.mangled end
    f.dso = r.dso
    f.file = r.file
    f.line = r.line
    f.build_id = r.build_id
    f.offset = r.offset
    if r.name then f.sym_start = r.sym_start end
  end
  return f
end

-- A named frame of a profile (a string in addrs: a Lua function "[Lua] name
-- file:line", a C function reached from Lua, a VM state "[vm:...]"); not
-- an address that came as a string ("0x..." above 2^53 on LuaJIT, or
-- decimal digits), which is an address as everywhere else.
local function is_name(a)
  return type(a) == "string" and not a:find("^0[xX]%x+$") and not a:find("^%d+$")
end

local named_cache = setmetatable({}, { __mode = "v" })
local function named_frame(name)
  local f = named_cache[name]
  if f then return f end
  f = { name = name, kind = "lua" }
  local src, line = name:match("^%[Lua%] .- (.*):(%d+)$")
  if src then f.file, f.line = src, tonumber(line) end
  named_cache[name] = f
  return f
end

-- Builds a stack list from entries: an iterator returning tables
-- { addrs = { leaf first }, count=, period=, pid=, tid=, comm=, cpu=, time=,
--   event=, kernel = n (optional: how many of addrs, from the leaf, are
--   kernel), weights = { name = value } (optional) }, and a resolver
-- (M.resolver) or nil (unsymbolized).  A string in addrs is a named frame.
-- Every unique address of an address space is resolved once, in one
-- batch per space.  opts.inline: expand inline chains into frames.
-- opts.truncated_marks: a root at M.TRUNCATED_ADDR marks a DWARF unwind
-- that ran off the captured stack (elsewhere 0x1 is an address: a junk
-- word of a frame-pointer walk, as perf prints it).
function M.build(entries, resolver, opts)
  opts = opts or {}
  local ents = {}
  for e in entries do ents[#ents + 1] = e end

  -- unique addresses per space ("k" for the kernel, else the pid, and the
  -- generation of its mappings the samples were taken in when known)
  local spaces, order = {}, {}
  local function user_space(pid, gen) return gen and (pid .. ":" .. gen) or pid end
  local function space(key, pid, is_k, gen)
    local sp = { pid = pid, kernel = is_k, gen = gen, seen = {}, addrs = {}, frames = {} }
    spaces[key] = sp
    order[#order + 1] = sp
    return sp
  end
  local function add_unique(sp, addrs, from, to)
    local seen, list = sp.seen, sp.addrs
    for i = from, to do
      local a = addrs[i]
      if not seen[a] and not is_name(a) then
        seen[a] = true
        list[#list + 1] = a
      end
    end
  end
  for _, e in ipairs(ents) do
    local pid = e.pid or -1
    local addrs, nk = e.addrs, e.kernel
    local n = #addrs
    local ukey = user_space(pid, e.gen)
    if e.own then
      -- a discarded chain's own ip (reports count it)
      local sp = e.own_kernel and (spaces.k or space("k", -1, true)) or
        spaces[ukey] or space(ukey, pid, false, e.gen)
      add_unique(sp, { e.own }, 1, 1)
    end
    if nk then
      -- the kernel's addresses lead (leaf first), the user's follow
      if nk > n then nk = n end
      if nk > 0 then add_unique(spaces.k or space("k", -1, true), addrs, 1, nk) end
      if n > nk then add_unique(spaces[ukey] or space(ukey, pid, false, e.gen), addrs, nk + 1, n) end
    else
      for i = 1, n do
        local a = addrs[i]
        if not is_name(a) then
          local is_k = M.is_kernel_addr(a)
          local key = is_k and "k" or ukey
          add_unique(spaces[key] or space(key, is_k and -1 or pid, is_k, not is_k and e.gen or nil),
            addrs, i, i)
        end
      end
    end
  end
  for _, sp in ipairs(order) do
    local results = resolver and resolver.many(sp.pid, sp.addrs, sp.kernel, sp.gen) or {}
    for i, a in ipairs(sp.addrs) do
      local r = results[i] or nil
      local f = make_frame(r, a, sp.kernel)
      if not sp.kernel and a == M.TRUNCATED_ADDR and opts.truncated_marks then
        f.name = M.TRUNCATED_NAME
      elseif not r and resolver and (resolver.map or resolver.dso) then
        local m = resolver.map and resolver.map(sp.pid, a, sp.kernel, sp.gen)
        if m then f.dso = m.path else f.dso = resolver.dso and resolver.dso(sp.pid, a, sp.kernel, sp.gen) end
        -- anonymous executable memory is JIT code: perf names it after the
        -- map file it would read (/tmp/perf-PID.map), even when there is none
        if not sp.kernel and is_anon(f.dso) then
          f.dso = "/tmp/perf-" .. tostring(sp.pid) .. ".map"
          f.kind = "jit"
        elseif m and (not sp.kernel or m.start) then
          -- (a module the recording mapped: perf prints its addresses
          -- within the module)
          f.rel = map_rel(m, a)
        end
      end
      local fr = { f }
      if opts.inline and r and r.inlined and #r.inlined > 0 then
        -- innermost first, as addr2line -i: the last entry is the function
        -- that holds the code (this frame); the others go above it,
        -- innermost deepest
        local n = #r.inlined
        if r.inlined[n].name == f.name then n = n - 1 end
        for j = n, 1, -1 do
          local inl = r.inlined[j]
          fr[#fr + 1] = { name = inl.name, file = inl.file, line = inl.line,
            dso = f.dso, kind = "inline", addr = a }
        end
      end
      sp.frames[a] = fr
    end
    sp.seen = nil
  end

  local list = {}
  local samples, period = 0, 0
  for _, e in ipairs(ents) do
    local pid = e.pid or -1
    local addrs, nk = e.addrs, e.kernel
    local frames, nf = {}, 0
    local ukey = user_space(pid, e.gen)
    local uframes = spaces[ukey] and spaces[ukey].frames
    local kframes = spaces.k and spaces.k.frames
    local n = #addrs
    -- root first; the kernel's addresses are the first nk from the leaf
    -- when the entry says so, else told by address.  An address is one
    -- frame unless its inline chain was expanded.
    if nk and nk > n then nk = n end
    for i = n, 1, -1 do
      local a = addrs[i]
      local kernel, fr
      if is_name(a) then
        fr = { named_frame(a) }
      else
        if nk then kernel = i <= nk else kernel = M.is_kernel_addr(a) end
        fr = (kernel and kframes or uframes)[a]
      end
      if fr[2] == nil then
        nf = nf + 1
        frames[nf] = fr[1]
      else
        for j = 1, #fr do
          nf = nf + 1
          frames[nf] = fr[j]
        end
      end
    end
    local discarded
    if e.own and nf == 0 then
      -- no frames, as perf script shows it; reports count the own ip
      frames[1] = ((e.own_kernel and kframes or uframes)[e.own])[1]
      discarded = true
    end
    local count = e.count or 1
    local st = { frames = frames, discarded = discarded, count = count, period = e.period or count,
      comm = e.comm, pid = e.pid, tid = e.tid, cpu = e.cpu, time = e.time,
      event = e.event, weights = e.weights, thread_comm = e.thread_comm }
    list[#list + 1] = st
    samples = samples + count
    period = period + st.period
  end
  list.meta = { samples = samples, period = period, lost = 0, throttled = 0 }
  return list
end

-- A resolver over a perf.symbolizer(): many(pid, addrs, is_kernel) ->
-- { result | false, ... }; map(pid, addr) is the mapping of an address
-- that has no symbol ({path=, start=, pgoff=}: folded stacks say
-- "[libfoo.so]", reports key it by its place in the object), dso(pid,
-- addr) its path.
function M.resolver(sym, opts)
  -- lines: file and line of each frame (pprof, speedscope want them)
  local ropts = nil
  if opts and (opts.inline or opts.lines) then
    ropts = { inlines = opts.inline and true or nil, lines = opts.lines and true or nil }
  end
  -- kernel: the addresses are the kernel's (the stack's own marks say so)
  local kopts = { [true] = { kernel = true }, [false] = { kernel = false } }
  for k, o in pairs(kopts) do
    if ropts then for f, v in pairs(ropts) do o[f] = v end end
    kopts[k] = o
  end
  -- the options of a space: kernel or user, the generation of its maps
  local function options(is_kernel, gen)
    local o = kopts[is_kernel and true or false]
    if gen == nil then return o end
    local g = {}
    for k, v in pairs(o) do g[k] = v end
    g.gen = gen
    return g
  end
  local r = {}
  function r.many(pid, addrs, is_kernel, gen)
    local o = options(is_kernel, gen)
    if sym.resolve_all then
      local res = sym:resolve_all(pid, addrs, o)
      return res
    end
    local res = {}
    for i, a in ipairs(addrs) do res[i] = sym:resolve(pid, a, o) or false end
    return res
  end
  function r.map(pid, addr, is_kernel, gen)
    if not sym.map then return nil end
    return (sym:map(pid, addr, options(is_kernel, gen)))
  end
  function r.dso(pid, addr, is_kernel, gen)
    local m = r.map(pid, addr, is_kernel, gen)
    return m and m.path or nil
  end
  return r
end

-- Stack list of a profile (perf.core Profile userdata: p:stacks() yields
-- the unique stacks with their counts) and a symbolizer (optional).
-- opts.frames = false: no frames at all (frames = {}, depth = the stack's
-- length), for reports keyed by comm, pid, tid or cpu alone.
function M.from_profile(p, sym, opts)
  opts = opts or {}
  local list
  if opts.frames == false then
    list = { meta = { samples = 0, period = 0, lost = 0, throttled = 0 } }
    local empty = {}
    for e in p:stacks() do
      local count = e.count or 1
      list[#list + 1] = { frames = empty, depth = #e.addrs, count = count,
        period = e.period or count, comm = e.comm, pid = e.pid, tid = e.tid,
        event = e.event, weights = e.weights, thread_comm = e.thread_comm }
      list.meta.samples = list.meta.samples + count
      list.meta.period = list.meta.period + (e.period or count)
    end
  else
    list = M.build(p:stacks(), sym and M.resolver(sym, opts) or nil, opts)
  end
  local meta = list.meta
  if p.meta then
    local pm = p:meta()
    meta.lost = tonumber(pm.lost) or 0
    meta.throttled = tonumber(pm.throttled) or 0
  end
  for k, v in pairs(opts.meta or {}) do meta[k] = v end
  return list
end

-- The events of src's header (a perf.File), or nil when it has none to
-- give (another kind of source, a closed file).
local function header_of(src)
  if type(src) ~= "userdata" and type(src) ~= "table" then return nil end
  local ok, hdr = pcall(function() return src:header() end)
  if not ok or type(hdr) ~= "table" or type(hdr.events) ~= "table" then return nil end
  return hdr
end

-- The file's groups of more than one event (perf record -e '{a,b}'), from
-- its group_desc: { { name = "anon group" or the group's, events = { names,
-- the leader first } }, ... }, or nil when it has none.  force: a file of
-- several events and no group has them all in one, led by the first
-- (perf report --group or --no-group: its forced leader; forced = true).
local function event_groups(f, force)
  local hdr = header_of(f)
  local ok, ft = pcall(function() return f:features() end)
  if not hdr then return nil end
  if not (ok and type(ft) == "table" and ft.group_desc and ft.group_desc[1]) then
    if not force or #hdr.events < 2 then return nil end
    local evs = {}
    for i, e in ipairs(hdr.events) do evs[i] = e.name end
    return { { forced = true, events = evs } }
  end
  local groups = {}
  for _, g in ipairs(ft.group_desc) do
    local evs = {}
    for i = g.leader, g.leader + g.members - 1 do
      local e = hdr.events[i]
      if not e then evs = {}; break end
      evs[#evs + 1] = e.name
    end
    if #evs > 1 then
      groups[#groups + 1] = { name = g.name ~= "{anon_group}" and g.name or "anon group",
        events = evs }
    end
  end
  return groups[1] and groups or nil
end

-- Whether an event of the file samples call chains (PERF_SAMPLE_CALLCHAIN,
-- 1 << 5).
local function has_callchains(f)
  for _, ev in ipairs((header_of(f) or {}).events or {}) do
    if math.floor((tonumber(ev.sample_type) or 0) / 32) % 2 == 1 then return true end
  end
  return false
end

-- Whether samples of src (a perf.File, or any source with :records()) carry
-- user registers and stack bytes to unwind (perf record --call-graph dwarf):
-- a file says so in its header (a pipe's events come in the stream: maybe);
-- other sources when opts.dwarf says so.
function M.is_dwarf(src, opts)
  if opts and opts.dwarf ~= nil then return opts.dwarf end
  local hdr = header_of(src)
  if not hdr then return false end
  if hdr.mode == "pipe" and #hdr.events == 0 then return true end
  for _, ev in ipairs(hdr.events) do
    -- PERF_SAMPLE_REGS_USER (1 << 12) and PERF_SAMPLE_STACK_USER (1 << 13)
    local t = tonumber(ev.sample_type) or 0
    if math.floor(t / 4096) % 4 == 3 and (tonumber(ev.sample_regs_user) or 0) ~= 0 then
      return true
    end
  end
  return false
end

-- Threads and their names, by perf's rules (csrc/core/profile/threads.h,
-- which the C profiles use): records in time order; a sample takes its
-- thread's current name, a comm object { name=, id= } that the thread's
-- first COMM renames in place (":TID" until then); FORK gives a new thread
-- its parent's name; tid 0 is "swapper".
function M.threads()
  local T = { by_tid = {} }
  local nid = 0
  local function cobj(name) nid = nid + 1; return { name = name, id = nid } end
  local function findnew(pid, tid)
    local t = T.by_tid[tid]
    if not t then
      t = { pid = pid, tid = tid }
      T.by_tid[tid] = t
    elseif t.pid == -1 then
      t.pid = pid
    end
    return t
  end
  local function set_comm(t, name)
    if not t.named and t.comm then t.comm.name = name else t.comm = cobj(name) end
    t.named = true
  end
  set_comm(findnew(0, 0), "swapper")
  function T.feed(rec)
    if rec.type == "COMM" then
      set_comm(findnew(rec.pid, rec.tid), rec.comm or "")
    elseif rec.type == "FORK" and rec.tid then
      local parent = findnew(rec.ppid, rec.ptid)
      if parent.pid ~= rec.ppid then parent = { pid = rec.ppid, tid = rec.ptid }; T.by_tid[rec.ptid] = parent end
      local t = { pid = rec.pid, tid = rec.tid }
      T.by_tid[rec.tid] = t
      if parent.named then set_comm(t, parent.comm.name) end
    end
  end
  -- the comm object a sample of (pid, tid) takes
  function T.sample(pid, tid)
    local t = findnew(pid, tid)
    if not t.comm then t.comm = cobj(":" .. tostring(tid)) end
    return t.comm
  end
  function T.last(tid)
    local t = T.by_tid[tid]
    return t and t.comm and t.comm.name or nil
  end
  return T
end

-- perf's --time and -C as a predicate over sample records (opts.time =
-- { start=, stop= } in ns, inclusive; opts.cpus = { [cpu] = true }), what
-- f:profile's time and cpus keep; nil when neither is set.
function M.window(opts)
  local span, cpus = opts.time, opts.cpus
  if not span and not cpus then return nil end
  return function(rec)
    local t = rec.time
    if span and t and t ~= 0 and ((span.start and t < span.start) or (span.stop and t > span.stop)) then
      return false
    end
    return not (cpus and rec.cpu and not cpus[rec.cpu])
  end
end

-- Entries (for M.build) from a source of records (a perf.data file or a
-- session: anything with :records()).  Feeds the symbolizer with the
-- mapping records on the way.  per_sample: one entry per sample, in time
-- order, neighbours with the same thread and stack merged (flame charts,
-- speedscope); otherwise one entry per unique (pid, tid, comm, stack).
-- Each sample is named as its thread was then (M.threads).
function M.from_records(src, sym, opts)
  opts = opts or {}
  local threads = M.threads()
  local lost, throttled, marks = 0, 0, false
  local ents, index = {}, {}
  local last, lastkey
  local feeds = { MMAP = true, MMAP2 = true, FORK = true, EXIT = true, COMM = true }
  local it
  local perf = package.loaded.perf
  M.prime(sym, src)
  if perf and perf.symbolizer and M.is_dwarf(src, opts) then
    -- DWARF samples unwound, callers as call sites (as perf keeps DWARF
    -- chains); the unwinding feeds sym the maps itself, in the order the
    -- records come (a file opened ordered): in C for a perf.File
    sym = sym or perf.symbolizer()
    local mt = getmetatable(src)
    if type(src) == "userdata" and mt and mt.__name == "perf.File" then
      it = src:records{ unwind = true, symbolizer = sym }
    else
      it = perf.unwound_records(src, { symbolizer = sym, call_sites = true })
    end
    feeds = {}
  else
    it = src:records()
  end
  local space_gen = sym ~= nil and sym.space_gen ~= nil
  local keep = M.window(opts)
  for rec in it do
    local t = rec.type
    if t == "SAMPLE" and keep and not keep(rec) then
      -- outside perf's --time or -C: left out, as f:profile leaves it
      t = nil
    end
    if t == "SAMPLE" then
      local addrs = rec.callchain
      local nk = rec.callchain_kernel
      if not addrs or #addrs == 0 then
        addrs = { rec.ip }
        nk = (rec.cpumode == "kernel") and 1 or 0
      elseif rec.unwind and rec.unwind.truncated then
        addrs[#addrs + 1] = M.TRUNCATED_ADDR
        marks = true
      end
      local comm = rec.tid and threads.sample(rec.pid or -1, rec.tid)
      -- the generation of the pid's maps now: its addresses resolve in them
      local gen = space_gen and rec.pid and rec.pid >= 0 and sym:space_gen(rec.pid) or nil
      local key = tostring(rec.pid) .. ":" .. tostring(rec.tid) .. ":" ..
        (comm and comm.id or "") .. ":" .. tostring(rec.event) .. ":" .. tostring(gen) .. ":" ..
        table.concat(addrs, ",")
      local period = rec.period or 1
      local e
      if opts.per_sample then
        if key == lastkey then e = last end
      else
        e = index[key]
      end
      if e then
        e.count = e.count + 1
        e.period = e.period + period
      else
        e = { addrs = addrs, kernel = nk, count = 1, period = period, pid = rec.pid,
          tid = rec.tid, cpu = rec.cpu, time = rec.time, cobj = comm, event = rec.event, gen = gen }
        ents[#ents + 1] = e
        index[key] = e
      end
      last, lastkey = e, key
    else
      if t == "COMM" or t == "FORK" then threads.feed(rec) end
      if sym and feeds[t] then sym:feed(rec) end
      if t == "LOST" then lost = lost + (tonumber(rec.lost) or 0)
      elseif t == "LOST_SAMPLES" then lost = lost + (tonumber(rec.lost) or 0)
      elseif t == "THROTTLE" then throttled = throttled + 1 end
    end
  end
  -- names now: a first COMM renames the samples its thread had before it
  for _, e in ipairs(ents) do
    if e.cobj then e.comm = e.cobj.name; e.cobj = nil end
    if e.tid then e.thread_comm = threads.last(e.tid) end
  end
  local i = 0
  local bopts = opts
  if marks then bopts = setmetatable({ truncated_marks = true }, { __index = opts }) end
  local list = M.build(function() i = i + 1; return ents[i] end,
    sym and M.resolver(sym, opts) or nil, bopts)
  list.meta.lost, list.meta.throttled = lost, throttled
  return list
end

-- Event names in the file's order (perf's event list: its first event is
-- the one it shows), not in the order samples came; the rest after.
local function file_order(names, f)
  local pos = {}
  for i, ev in ipairs((header_of(f) or {}).events or {}) do
    if ev.name and not pos[ev.name] then pos[ev.name] = i end
  end
  local first = {}
  for i, n in ipairs(names) do first[n] = i end
  table.sort(names, function(a, b)
    local pa, pb = pos[a] or math.huge, pos[b] or math.huge
    if pa ~= pb then return pa < pb end
    return first[a] < first[b]
  end)
  return names
end

-- The stacks of event want alone, as a list of their own (its meta a copy
-- of list's, with the event's samples and period).
function M.select_event(list, want)
  local meta = {}
  for k, v in pairs(list.meta) do meta[k] = v end
  local out = { meta = meta }
  local samples, period = 0, 0
  for _, s in ipairs(list) do
    if (s.event or "") == want then
      out[#out + 1] = s
      samples = samples + s.count
      period = period + s.period
    end
  end
  meta.event = want
  meta.samples, meta.period = samples, period
  return out
end

-- Keeps the stacks of one event (reports and graphs show one event, as
-- stackcollapse-perf.pl does); meta.event names it, meta.events lists all
-- (in the order of f's events when f is given).  all: every event kept
-- (a report prints each in turn, as perf's), meta.event the first.
local function pick_event(list, want, f, all)
  local seen, names = {}, {}
  for _, s in ipairs(list) do
    local ev = s.event or ""
    if not seen[ev] then seen[ev] = true; names[#names + 1] = ev end
  end
  if f then file_order(names, f) end
  list.meta.events = names
  if want and not seen[want] then
    return nil, string.format("no event '%s' in this file (it has: %s)", want,
      table.concat(names, ", "))
  end
  if #names <= 1 or (all and not want) then
    list.meta.event = list.meta.event or (names[1] ~= "" and names[1] or nil)
    return list
  end
  want = want or names[1]
  local out = M.select_event(list, want)
  out.meta.warnings = out.meta.warnings or {}
  table.insert(out.meta.warnings, string.format("%d events recorded (%s): showing '%s'",
    #names, table.concat(names, ", "), want))
  return out
end

-- The symbolizer of a perf.data file (perf.open): its build-id table fed,
-- and its kernel addresses read as perf reads a recording's (the kernel and
-- module maps of its records, the symbols of the kernel it names: this
-- one's, perf's build-id cache copy, or none); offline: nothing read from
-- /proc for its pids, its user objects named only by an ELF with the build
-- id it recorded.  opts.kallsyms, opts.vmlinux: the kernel's symbols from
-- that file instead (perf's --kallsyms, --vmlinux); opts.symfs: objects
-- read under that directory (--symfs).  nil, message when a file named
-- cannot be read.
function M.file_symbolizer(f, opts)
  opts = opts or {}
  local perf = package.loaded.perf or require "perf"
  if not perf.symbolizer then return nil, "this build has no symbolizer" end
  local sym, err = perf.symbolizer{ kallsyms = opts.kallsyms, vmlinux = opts.vmlinux,
    symfs = opts.symfs, offline = true }
  if not sym then return nil, err end
  sym:recording(f)
  return sym
end

-- Readies sym (a perf.symbolizer) for the addresses of f (a perf.File) fed
-- record by record, as file_symbolizer does for one it makes.  f:profile and
-- f:records{unwind = true} do this in C.
function M.prime(sym, f)
  if sym and sym.recording and f and f.features then sym:recording(f) end
end

-- Every pending warning of sym, first in list.meta.warnings, in order.
local function take_warnings(sym, list)
  if not (sym and sym.warning) then return end
  local meta = list.meta or list
  local i = 0
  while true do
    local w = sym:warning()
    if not w then return end
    meta.warnings = meta.warnings or {}
    i = i + 1
    table.insert(meta.warnings, i, w)
  end
end

-- -C on a file whose samples carry no CPU: refused, as perf refuses it.
local function check_cpus(f, opts)
  if not opts.cpus then return true end
  for _, ev in ipairs(f:header().events) do
    if ev.sample_type and math.floor(ev.sample_type / 128) % 2 == 0 then
      return nil, "the file has no CPU in its samples (record with -a or -C); remove -C"
    end
  end
  return true
end

-- A stack list from a perf.data file, through perf.open (the C reader):
-- its profile (aggregated in C) and a symbolizer fed from its records
-- (none with opts.symbols = false).
function M.from_perf_data(path, opts)
  opts = opts or {}
  local perf = require "perf"
  if not perf.open then return nil, "this build cannot read perf.data (no perf.open)" end
  -- Per-sample lists need time order; f:profile reads the file in time
  -- order itself (a sample is named as its thread was then; DWARF samples
  -- need the maps before them).
  local f, err = perf.open(path, { unordered = not opts.per_sample })
  if not f then return nil, err end
  local cpus_ok, cerr = check_cpus(f, opts)
  if not cpus_ok then f:close(); return nil, cerr end
  local dwarf = M.is_dwarf(f)
  local sym
  -- symbols = false: frames stay addresses; frames = false: none (reports
  -- keyed by comm, pid...)
  if perf.symbolizer and opts.symbols ~= false and opts.frames ~= false then
    local serr
    sym, serr = M.file_symbolizer(f, opts)
    if not sym then f:close(); return nil, serr end
  end
  local list
  if opts.per_sample or not (f.profile and perf.core.Profile) then
    list = M.from_records(f, sym, opts)
  elseif dwarf and sym then
    -- one pass in C: unwinds, counts each sample under its thread's name
    -- at the time, feeds sym the maps
    local p, info = f:profile{ symbolizer = sym, mark_truncated = true, progress = opts.progress,
      time = opts.time, cpus = opts.cpus }
    if not p then f:close(); return nil, info end
    list = M.from_profile(p, sym, setmetatable({ truncated_marks = true }, { __index = opts }))
    if type(info) == "table" and (tonumber(info.truncated) or 0) > 0 then
      list.meta.warnings = list.meta.warnings or {}
      table.insert(list.meta.warnings, string.format(
        "%s of %s DWARF samples ran off the captured user stack (shown under %s): " ..
        "record with a larger --call-graph dwarf,SIZE", tostring(info.truncated),
        tostring(info.unwound), M.TRUNCATED_NAME))
    end
    if p.close then p:close() end
  else
    -- One pass in C, in time order: each sample counted under the name its
    -- thread had then (perf's rules), the records that shape address
    -- spaces fed to sym as they come (an exec drops the maps before the new
    -- image's come), before any address is resolved.
    local p, perr = f:profile{ symbolizer = sym, progress = opts.progress,
      time = opts.time, cpus = opts.cpus }
    if not p then f:close(); return nil, perr end
    list = M.from_profile(p, sym, opts)
    if p.close then p:close() end
  end
  take_warnings(sym, list)
  local picked, perr = pick_event(list, opts.event, f, opts.all_events)
  -- whether the file's samples carry call chains at all (perf's test)
  if picked and picked.meta and f.header then
    picked.meta.file_chains = has_callchains(f)
    picked.meta.groups = event_groups(f, opts.force_group)
  end
  if f.close then f:close() end
  return picked, perr
end

-- A perf.data file as a profile view (perf.core ProfileView: symbolized
-- once in C; reports, call graphs and folded stacks run in the core), for
-- the commands that only need aggregates.  Returns view, meta ({ event=,
-- events=, samples=, period=, lost=, throttled=, warnings=, has_chains=, file_chains=,
-- comm_width= } for the event shown, as M.load's list.meta), or nil and a
-- message; nil, nil when path is not a perf.data file (folded stacks: use
-- M.load).  opts: event, kallsyms, vmlinux, symfs, frames, inline, lines,
-- progress, by_label (a view for folded stacks and flame graphs alone:
-- ProfileView by_label), max_stack (the addresses of each stack kept from the leaf: 1
-- for reports that read leaves alone), leaf_symbols (with max_stack 1: each
-- leaf keyed by its symbol, f:profile's symbols), threads (false: such
-- stacks keyed by command name, not thread: no pid or tid to report),
-- by_symbol (a frame per symbol: ProfileView by_symbol, for reports
-- without call graphs or lines), all_events (a report of each event in
-- turn: no warning that the first alone is shown; M.load keeps every
-- event's stacks then), force_group (meta.groups: a file's events in one
-- group when it has several and none, as perf report --group makes one),
-- time and cpus (perf's --time and -C: the samples M.window keeps).
function M.open_view(path, opts)
  opts = opts or {}
  -- LUAPERF_ENGINE=lua: every report built in Lua from a stack list (the
  -- specs compare the two engines' output)
  if os.getenv("LUAPERF_ENGINE") == "lua" then return nil, nil end
  local fh, err = io.open(path, "rb")
  if not fh then return nil, "cannot open " .. tostring(err) end
  local head = fh:read(8)
  fh:close()
  if head ~= "PERFILE2" then return nil, nil end
  local perf = require "perf"
  if not (perf.open and perf.core.Profile and perf.core.Profile.view) then return nil, nil end
  local f, ferr = perf.open(path, { unordered = true })
  if not f then return nil, ferr end
  local cpus_ok, cerr = check_cpus(f, opts)
  if not cpus_ok then f:close(); return nil, cerr end
  local dwarf = M.is_dwarf(f)
  local sym
  if perf.symbolizer and opts.frames ~= false then
    local serr
    sym, serr = M.file_symbolizer(f, opts)
    if not sym then f:close(); return nil, serr end
  end
  local p, info = f:profile{ symbolizer = sym, mark_truncated = dwarf or nil, progress = opts.progress,
    max_stack = opts.max_stack, frames = opts.frames ~= false, symbols = opts.leaf_symbols,
    threads = opts.threads, split = opts.split, time = opts.time, cpus = opts.cpus }
  -- a profile without frames keeps no chains to see: the file's events
  -- say whether samples had them, as perf decides its children default
  local file_chains = has_callchains(f)
  local groups = event_groups(f, opts.force_group)
  local order = header_of(f)
  f:close()
  if not p then return nil, info end
  local v, verr = p:view{ symbolizer = sym, inline = opts.inline, lines = opts.lines,
    truncated_marks = dwarf, frames = opts.frames ~= false, by_label = opts.by_label,
    by_symbol = opts.by_symbol }
  if not v then return nil, verr end
  local pm = p:meta()
  local meta = { lost = tonumber(pm.lost) or 0, throttled = tonumber(pm.throttled) or 0 }
  if dwarf and type(info) == "table" and (tonumber(info.truncated) or 0) > 0 then
    meta.warnings = { string.format(
      "%s of %s DWARF samples ran off the captured user stack (shown under %s): " ..
      "record with a larger --call-graph dwarf,SIZE", tostring(info.truncated),
      tostring(info.unwound), M.TRUNCATED_NAME) }
  end
  take_warnings(sym, meta)
  -- the view holds every name it shows: the symbolizer's tables go before
  -- a report's come
  if sym then sym:close() end
  local names = file_order(v:summary().events, { header = function() return order end })
  local want = opts.event
  if want then
    local seen = false
    for _, n in ipairs(names) do if n == want then seen = true end end
    if not seen then
      return nil, string.format("no event '%s' in this file (it has: %s)", want,
        table.concat(names, ", "))
    end
  end
  want = want or names[1]
  local sm = v:summary(#names > 1 and want or nil)
  meta.events = names
  if want ~= "" then meta.event = want end
  meta.samples, meta.period = sm.samples, sm.period
  meta.has_chains, meta.comm_width = sm.has_chains, sm.comm_width
  if opts.frames == false then meta.has_chains = file_chains end
  -- whether the file's samples carry call chains at all (perf's test)
  meta.file_chains = file_chains
  meta.groups = groups
  if #names > 1 then
    meta.view_event = want
    -- a report of every event says nothing is left out
    if opts.all_events and not opts.event then return v, meta end
    meta.warnings = meta.warnings or {}
    table.insert(meta.warnings, string.format("%d events recorded (%s): showing '%s'",
      #names, table.concat(names, ", "), want))
  end
  return v, meta
end

-- Loads a profile file: perf.data (perf's or luaperf's) or folded stacks.
-- Inputs that are neither are refused in perf's words.
function M.load(path, opts)
  opts = opts or {}
  local fh, err = io.open(path, "rb")
  if not fh then return nil, "cannot open " .. tostring(err) end
  local head = fh:read(8)
  if head == nil then
    -- io.open takes a directory on Linux; reading it fails
    local _, rerr = fh:read(0)
    fh:close()
    if rerr and rerr:find("Is a directory", 1, true) then
      return nil, path .. ": is a directory, not a perf.data file"
    end
    return nil, "zero-sized data (" .. path .. "), nothing to do!"
  end
  if head == "PERFILE2" then
    fh:close()
    return M.from_perf_data(path, opts)
  end
  local text = head .. (fh:read("*a") or "")
  fh:close()
  -- Folded stacks are text: a NUL or a first line that does not parse
  -- means some other format.
  local folded = require "perf.folded"
  local list, perr = nil, nil
  if not text:find("\0", 1, true) then list, perr = folded.parse(text, opts) end
  if not list then
    if text:find("\0", 1, true) or (perr or ""):find("^folded input line 1:") then
      return nil, path .. ": incompatible file format (neither perf.data nor folded stacks)"
    end
    return nil, path .. ": " .. perr
  end
  return list
end

-- Merges stacks with identical frames and attributes (comm, pid...) that
-- a report ignores; keeps lists small before rendering.
function M.merge(list, keep)
  keep = keep or {}
  local index, out = {}, { meta = list.meta }
  local ids, nextid = {}, 0
  for _, s in ipairs(list) do
    local parts = {}
    for i, f in ipairs(s.frames) do
      local id = ids[f]
      if not id then nextid = nextid + 1; id = nextid; ids[f] = id end
      parts[i] = id
    end
    local key = table.concat(parts, ",") .. (s.discarded and "|discarded" or "")
    for _, k in ipairs(keep) do key = key .. "|" .. tostring(s[k]) end
    local m = index[key]
    if m then
      m.count = m.count + (s.count or 1)
      m.period = m.period + (s.period or 0)
    else
      m = { frames = s.frames, discarded = s.discarded, count = s.count or 1, period = s.period or 0 }
      for _, k in ipairs(keep) do m[k] = s[k] end
      index[key] = m
      out[#out + 1] = m
    end
  end
  return out
end

return M
