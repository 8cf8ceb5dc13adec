-- luaperf script: perf script's listing of a perf.data file, or a Lua
-- script run over its records with perf script's hooks:
--
--   luaperf script [-i FILE] [-g | -G] [--ns] [--show-all] [-F FIELDS]
--                  [--comm LIST] [--pid LIST] [--tid LIST] [-C CPUS]
--                  [--time START,STOP] [--symfs DIR] [script.lua [args...]]
--
-- The listing has one line per sample: comm, tid, [cpu], time, period,
-- event, ip, sym+off, (dso) by default, or the fields -F names (laid out
-- by perf/script_fields.lua); with a call chain (recorded with -g, or asked
-- with -g) each frame follows on its own line, as perf script prints them.
-- The filters select the samples perf script selects, for the listing and
-- for scripts (other records are not filtered).
--
-- The listing is formatted in C (f:script_text: no Lua value per record)
-- whenever its fields are ones the C formatter has (script_fields.c_fields)
-- and --show-all is not asked; the Lua listing below prints the rest, and
-- everything when LUAPERF_ENGINE=lua (the same text: the specs compare).
--
-- A script may define begin(), sample(rec), subsys__event(rec) for
-- tracepoints (sched__sched_switch, ...; rec.fields holds the decoded
-- payload), record(rec) for every other record, and finish().  Records have
-- rec.comm, and rec.sym / rec.frames (symbolized ip and call chain) computed
-- on first use.  Globals: perf, file (the perf.File), argv (script args).
--
-- Files recorded with --call-graph dwarf: call chains are unwound from each
-- sample's registers and stack bytes (f:records{unwind = true}), callers as
-- call sites (return address - 1) as perf script prints them, and a chain
-- that ran off the captured stack ends with perf's ffffffffffffffff line;
-- rec.unwind says so ({ truncated=, failed=, user=, kernel= }), and the
-- records carry no regs_user / stack_user then (-G keeps them raw).
local perf = require "perf"
local fields = require "perf.script_fields"
local stacks = require "perf.stacks"
local options = require "perf.cli.options"

local USAGE = [==[
usage: luaperf script [-i FILE] [options] [script.lua [args...]]
  -i FILE            the perf.data file (default ./perf.data)
  -g                 print call chains (the default when the file has them)
  -G                 hide call chains
  --ns               nanosecond timestamps
  --no-inline        DWARF call chains without the functions inlined at each
                     frame (perf's default shows them, "(inlined)")
  --show-all         also list non-sample records (COMM, MMAP2, ...)
  -F, --fields LIST  the fields of a sample line, as perf script's -F:
                     a,b,c (replace), +a,-b (edit the default), or
                     hw:|sw:|trace:|raw:|break: LIST for one event type;
                     fields: comm,tid,pid,time,cpu,event,period,ip,sym,
                     symoff,dso,addr,trace
  --comm LIST        only samples of these commands (comma list)
  --pid LIST         only samples of these processes
  --tid LIST         only samples of these threads
  -C, --cpu LIST     only samples taken on these CPUs (0,2-3)
  --time START,STOP  only samples in this time span (seconds.fraction,
                     inclusive; either side may be empty)
  --kallsyms FILE    kernel symbols from FILE (a saved /proc/kallsyms),
                     whatever kernel the file recorded
  --vmlinux FILE     kernel symbols from FILE (an ELF vmlinux with symbols;
                     used only if it is the recorded kernel)
  --symfs DIR        read the recorded objects under DIR (DIR/usr/bin/foo),
                     as perf's --symfs
]==]

local function hex(v)
  if type(v) == "string" then return (v:gsub("^0x", "")) end
  return string.format("%x", v)
end

local function timestr(t, ns)
  local sec = math.floor(t / 1000000000)
  local rem = t - sec * 1000000000
  if ns then return string.format("%5d.%09d", sec, rem) end
  return string.format("%5d.%06d", sec, math.floor(rem / 1000))
end

local M = {}

-- Tracks the threads' names (COMM, FORK) and feeds the symbolizer: the
-- file's (stacks.file_symbolizer: offline, its build ids decide the
-- objects, its kernel read as perf reads a recording's; opts.kallsyms,
-- opts.vmlinux, opts.symfs as perf's options).
local function new_state(f, opts)
  -- perf names the idle task (pid 0) swapper
  local st = { threads = { [0] = { pid = 0, comm = "swapper" } }, f = f }
  if perf.symbolizer then
    local sym, err = stacks.file_symbolizer(f, { kallsyms = opts.kallsyms, vmlinux = opts.vmlinux,
      symfs = opts.symfs })
    if not sym then return nil, err end
    st.sym = sym
  end
  st.cache = {}
  return st
end

-- Why objects stayed unnamed (their build id is not the recorded one, ...),
-- each said once, as they arise.
local function warnings(st)
  if not (st.sym and st.sym.warning) then return end
  while true do
    local w = st.sym:warning()
    if not w then return end
    io.stderr:write("luaperf script: warning: ", w, "\n")
  end
end

-- Threads by tid, named by perf's rules (as csrc/core/profile/threads.c,
-- which the C listing uses): { pid=, comm= }, comm nil until the thread
-- has a name of its own (":TID" until then).
local function thread(st, pid, tid)
  local t = st.threads[tid]
  if not t then
    t = { pid = pid }
    st.threads[tid] = t
  end
  -- perf fills in a pid it did not know
  if t.pid == -1 then t.pid = pid end
  return t
end

-- The name of tid's thread now, nil while it has none.
local function comm_of(st, tid)
  local t = tid and st.threads[tid]
  return t and t.comm
end

local function observe(st, rec)
  local t = rec.type
  if t == "COMM" then
    thread(st, rec.pid, rec.tid).comm = rec.comm or ""
  elseif t == "FORK" then
    -- the child is a new thread, named as its parent is (if it has a
    -- name); a parent of that tid in another process was lost: perf
    -- starts it afresh
    local p = thread(st, rec.ppid, rec.ptid)
    if p.pid ~= rec.ppid then p.pid, p.comm = rec.ppid, nil end
    local name = p.comm
    local c = thread(st, rec.pid, rec.tid)
    c.pid, c.comm = rec.pid, name
  elseif t == "SAMPLE" and rec.tid then
    -- every sample makes its thread, as perf's do
    thread(st, rec.pid, rec.tid)
  end
  if st.sym and (t == "MMAP" or t == "MMAP2" or t == "COMM" or t == "FORK" or t == "EXIT") then
    -- the unwinding reader (f:records{unwind = true}) fed it already
    if not st.unwinder_feeds then st.sym:feed(rec) end
    st.cache = {}
  end
  if st.dmaps then
    -- every mapping, data ones too, for the objects -F addr names
    if (t == "MMAP" or t == "MMAP2") and type(rec.start) == "number" and type(rec.len) == "number"
       and rec.pid and rec.pid ~= -1 then
      local l = st.dmaps[rec.pid] or {}
      st.dmaps[rec.pid] = l
      l[#l + 1] = { start = rec.start, stop = rec.start + rec.len, path = rec.filename }
      st.acache = {}
    elseif t == "FORK" and rec.pid ~= rec.ppid then
      -- as perf: the child starts with its parent's maps
      local copy = {}
      for i, m in ipairs(st.dmaps[rec.ppid] or {}) do copy[i] = m end
      st.dmaps[rec.pid] = copy
      st.acache = {}
    end
  end
end

-- perf's anonymous memory (map.c: is_anon_memory)
local function is_anon(path)
  return path == "//anon" or path:sub(1, 9) == "/dev/zero" or path:sub(1, 14) == "/anon_hugepage"
end

-- Symbol of addr in pid: { name=, offset=, dso=, rel= } with [unknown]s.
-- kernel: the address is the kernel's (the sample's cpumode, the call
-- chain's marks), else the process's; nil: told by the address.
local KERNEL, USER = { kernel = true }, { kernel = false }
local INLINES = { kernel = false, inlines = true }
local function resolve(st, pid, addr, kernel, inlines)
  local key = kernel and "k" or kernel == false and (inlines and "i" or "") .. tostring(pid or -1)
    or ("?" .. tostring(pid))
  local byaddr = st.cache[key]
  if not byaddr then
    byaddr = {}
    st.cache[key] = byaddr
  end
  local r = byaddr[addr]
  if r then return r end
  r = { name = "[unknown]", dso = "[unknown]" }
  if st.sym then
    local o = kernel and KERNEL or kernel == false and (inlines and INLINES or USER) or nil
    local s = st.sym:resolve(pid, addr, o)
    if s then
      r.name, r.offset, r.dso = s.name, s.offset, s.dso or "[unknown]"
      -- a DWARF-unwound frame, as perf prints it: the functions inlined
      -- there, then the function itself by its DWARF name
      if inlines then
        if s.inlined then
          r.inl = {}
          for j, x in ipairs(s.inlined) do r.inl[j] = x.name end
        end
        r.func = s.func
      end
    end
    if kernel then
      -- the kernel map names the object even without a symbol
      local m = not s and st.sym:map(pid, addr, KERNEL)
      if m then r.dso = m.path end
    else
      local m = st.sym.map and st.sym:map(pid, addr)
      if m then
        r.dso = (s and s.dso) or m.path
        r.map = m
        -- perf names anonymous executable memory after the JIT map it reads
        if not s and is_anon(m.path) then r.dso = "/tmp/perf-" .. tostring(pid or -1) .. ".map" end
      end
    end
    warnings(st)
  end
  byaddr[addr] = r
  return r
end

-- Whether a sample's ip, or the i-th entry of its call chain, is the kernel's.
local function ip_is_kernel(rec)
  return rec.cpumode == "kernel"
end
local function chain_is_kernel(rec, i)
  return i <= (rec.callchain_kernel or 0)
end

-- A sample's data address (-F addr): its function symbol if it has one,
-- and the object mapped there, data mappings included.
local function resolve_addr(st, pid, addr)
  local key = tostring(pid) .. ":" .. tostring(addr)
  local r = st.acache[key]
  if r then return r end
  local s = resolve(st, pid, addr)
  r = { name = s.name, offset = s.offset, dso = s.dso }
  if r.dso == "[unknown]" and type(addr) == "number" then
    local l = st.dmaps[pid] or {}
    for i = #l, 1, -1 do
      local m = l[i]
      if addr >= m.start and addr < m.stop then r.dso = m.path or "[unknown]"; break end
    end
  end
  st.acache[key] = r
  return r
end

-- The address perf prints for a call chain entry: relative to its map for
-- user-space DSOs, absolute for the kernel and for unmapped addresses.
local function anon(path)
  return path == "//anon" or path:match("^/dev/zero") or path:match("^/anon_hugepage")
    or path:match("^%[stack") or path:match("^/SYSV") or path == "[heap]"
end

local function chain_addr(r, addr)
  local m = r.map
  if m and anon(m.path or "") then return hex(addr) end
  if m and type(addr) == "number" and type(m.start) == "number"
     and type(m.pgoff) == "number" then
    return string.format("%x", addr - m.start + m.pgoff)
  end
  return hex(addr)
end

local function print_other(out, st, rec, opts)
  local comm = comm_of(st, rec.tid) or (":" .. tostring(rec.tid or -1))
  local t = rec.time and (timestr(rec.time, opts.ns) .. ": ") or ""
  out:write(string.format("%16s %5d %sPERF_RECORD_%s\n", comm, rec.tid or -1, t, rec.type))
end

-- The lazy fields a script sees: rec.comm, rec.sym, rec.frames.
local function decorate(st)
  return {
    __index = function(rec, k)
      if k == "comm" then
        return comm_of(st, rawget(rec, "tid"))
      elseif k == "period" then
        -- a fixed-period event's samples weigh its sample_period, as in perf
        return st.period[rawget(rec, "event")]
      elseif k == "sym" then
        local ip = rawget(rec, "ip")
        if not ip then return nil end
        local r = resolve(st, rawget(rec, "pid"), ip, ip_is_kernel(rec))
        rawset(rec, "sym", r)
        return r
      elseif k == "frames" then
        local chain = rawget(rec, "callchain")
        if not chain then return nil end
        local fr = {}
        for i, a in ipairs(chain) do
          local r = resolve(st, rawget(rec, "pid"), a, chain_is_kernel(rec, i))
          fr[i] = { addr = a, name = r.name, offset = r.offset, dso = r.dso }
        end
        rawset(rec, "frames", fr)
        return fr
      end
    end,
  }
end

local function load_script(path, f, argv)
  local env = setmetatable({ perf = perf, file = f, argv = argv }, { __index = _G })
  local chunk, err
  if setfenv then
    chunk, err = loadfile(path)
    if chunk then setfenv(chunk, env) end
  else
    chunk, err = loadfile(path, "t", env)
  end
  if not chunk then return nil, err end
  local ok, e = pcall(chunk)
  if not ok then return nil, e end
  return env
end

local function call(env, name, ...)
  local fn = rawget(env, name)
  if type(fn) == "function" then
    local ok, err = pcall(fn, ...)
    if not ok then error({ msg = name .. ": " .. tostring(err) }) end
    return true
  end
  return false
end

-- Filter lists, as perf parses them: "a,b" for comms, integers for pids
-- and tids (options.cpu_list and options.time_span read -C and --time).
local function name_list(text)
  local t = {}
  for w in text:gmatch("[^,]+") do t[w] = true end
  return t
end

local function int_list(text, opt)
  local t = {}
  for w in text:gmatch("[^,]+") do
    local n = tonumber(w:match("^%s*(%-?%d+)%s*$"))
    if not n then return nil, opt .. ": '" .. w .. "' is not a number" end
    t[n] = true
  end
  return t
end

-- The samples perf script shows: time first, then CPU, then the thread.
local function sample_filter(opts, st)
  if not (opts.time or opts.cpus or opts.comms or opts.pids or opts.tids) then return nil end
  local window, comms, pids, tids = stacks.window(opts), opts.comms, opts.pids, opts.tids
  return function(rec)
    if window and not window(rec) then return false end
    if comms and not comms[comm_of(st, rec.tid) or (":" .. tostring(rec.tid or -1))] then
      return false
    end
    if pids and not pids[rec.pid] then return false end
    if tids and not tids[rec.tid] then return false end
    return true
  end
end

local TAKES = {
  ["-i"] = "input", ["--input"] = "input", ["-F"] = "fields", ["--fields"] = "fields",
  ["--comm"] = "comm", ["--pid"] = "pid", ["--tid"] = "tid", ["-C"] = "cpu", ["--cpu"] = "cpu",
  ["--time"] = "time", ["--kallsyms"] = "kallsyms", ["--vmlinux"] = "vmlinux",
  ["--symfs"] = "symfs",
}

local function parse_args(args)
  local opts = { input = "perf.data", ns = false }
  local script, sargs = nil, {}
  local i = 1
  while i <= #args do
    local a = args[i]
    local long, val = a:match("^(%-%-[%w%-]+)=(.*)$")
    if script then
      sargs[#sargs + 1] = a
    elseif TAKES[long or a] then
      if not long then
        i = i + 1; val = args[i]
        if val == nil then return nil, a .. " needs a value" end
      end
      opts[TAKES[long or a]] = val
    elseif a == "-g" then opts.force_callchain = true
    elseif a == "-G" or a == "--hide-call-graph" then opts.hide_callchain = true
    elseif a == "--ns" then opts.ns = true
    elseif a == "--no-inline" then opts.no_inline = true
    elseif a == "--inline" then opts.no_inline = false
    elseif a == "--show-all" then opts.show_all = true
    elseif a == "-h" or a == "--help" then opts.help = true
    elseif a:sub(1, 1) == "-" and a ~= "-" then
      return nil, "unknown option " .. a
    else
      script = a
    end
    i = i + 1
  end
  local err
  if opts.fields then opts.request, err = fields.parse(opts.fields) end
  if not err and opts.comm then opts.comms = name_list(opts.comm) end
  if not err and opts.pid then opts.pids, err = int_list(opts.pid, "--pid") end
  if not err and opts.tid then opts.tids, err = int_list(opts.tid, "--tid") end
  if not err and opts.cpu then opts.cpus, err = options.cpu_list(opts.cpu) end
  if not err and opts.time then opts.time, err = options.time_span(opts.time) end
  if err then return nil, err end
  return opts, script, sargs
end

function M.run(args)
  local opts, script, sargs = parse_args(args)
  if not opts then
    -- the usage for a malformed command line, just the reason for a bad value
    local usage = (script:match("^unknown option") or script:match("needs a value")) and USAGE or ""
    io.stderr:write("luaperf script: ", script, "\n", usage)
    return 129
  end
  if opts.help then io.stdout:write(USAGE); return 0 end
  local f, err = perf.open(opts.input)
  if not f then
    io.stderr:write("luaperf script: ", tostring(err), "\n")
    return 1
  end
  -- what the reader read around (a feature skipped, data cut short), as
  -- perf warns and goes on; lines met while reading come at the end
  local warned = 0
  local function warn_new()
    local w = f.warnings and f:warnings() or {}
    for i = warned + 1, #w do io.stderr:write("luaperf script: warning: ", w[i], "\n") end
    warned = #w
  end
  warn_new()
  local st, serr = new_state(f, opts)
  if not st then
    f:close()
    io.stderr:write("luaperf script: ", tostring(serr), "\n")
    return 1
  end
  local hdr = f:header()
  local name_width, has_chain, has_cpu = 0, false, false
  local ev_by_name = {}
  st.tp, st.period = {}, {}
  for _, ev in ipairs(hdr.events) do
    ev_by_name[ev.name] = ev_by_name[ev.name] or ev
    -- without PERF_SAMPLE_PERIOD a sample weighs the attr's fixed period
    if not ev.freq then st.period[ev.name] = ev.sample_period end
    if #ev.name > name_width then name_width = #ev.name end
    if ev.type == 2 then st.tp[ev.name] = true end
    if ev.sample_type and math.floor(ev.sample_type / 32) % 2 == 1 then has_chain = true end
    if ev.sample_type and math.floor(ev.sample_type / 128) % 2 == 1 then has_cpu = true end
    -- PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER
    if ev.sample_type and math.floor(ev.sample_type / 4096) % 4 == 3 then st.dwarf = true end
  end
  opts.callchain = (has_chain or opts.force_callchain) and not opts.hide_callchain
  local function fail(msg)
    f:close()
    io.stderr:write("luaperf script: ", msg, "\n")
    return 1
  end
  if opts.cpus and not has_cpu then
    return fail("the file has no CPU in its samples (record with -a or -C); remove -C")
  end
  local layout, lerr
  if not script then
    layout, lerr = fields.setup(opts.request, hdr.events, opts.callchain,
      function(msg) io.stderr:write(msg, "\n") end)
    if not layout then return fail(lerr) end
  end
  if layout and layout.any_addr then st.dmaps, st.acache = {}, {} end
  local keep = sample_filter(opts, st)
  -- DWARF files: user stacks unwound in C as the records come (callers as
  -- call sites, return address - 1, as perf prints DWARF chains); the
  -- reader feeds the symbolizer then
  local function records(filter)
    if opts.callchain and st.dwarf and st.sym then
      st.unwinder_feeds = true
      filter = filter or {}
      filter.unwind, filter.symbolizer = true, st.sym
    end
    return f:records(filter)
  end

  -- The default listing (and the -F fields, filters and options it
  -- takes) is formatted in C, with the same text; LUAPERF_ENGINE=lua keeps
  -- it in Lua (the specs compare the two).
  local cfields = not script and not opts.show_all
    and st.sym and f.script_text and os.getenv("LUAPERF_ENGINE") ~= "lua"
    and fields.c_fields(layout, hdr.events)
  if cfields then
    local res, cerr, _, cwarn = f:script_text{
      symbolizer = st.sym, fields = cfields, callchain = opts.callchain, ns = opts.ns,
      unwind = opts.callchain and st.dwarf or false, inlines = not opts.no_inline,
      time = opts.time, cpus = opts.cpus, pids = opts.pids, tids = opts.tids, comms = opts.comms,
    }
    for _, w in ipairs(res and res.warnings or cwarn or {}) do
      io.stderr:write("luaperf script: warning: ", w, "\n")
    end
    warn_new()
    f:close()
    if not res then
      if cerr:match("Broken pipe") then return 0 end
      if cerr:match("^offset %d") then cerr = opts.input .. ": " .. cerr end
      io.stderr:write("luaperf script: ", cerr, "\n")
      return 1
    end
    return 0
  end

  local out = io.stdout
  local ok, e = pcall(function()
    if script then
      local env, serr = load_script(script, f, sargs)
      if not env then error({ msg = serr }) end
      local mt = decorate(st)
      call(env, "begin")
      for rec in records() do
        observe(st, rec)
        setmetatable(rec, mt)
        if rec.type == "SAMPLE" then
          if not keep or keep(rec) then
            local handled = false
            if st.tp[rec.event] then
              handled = call(env, (rec.event:gsub(":", "__")), rec)
            end
            if not handled then call(env, "sample", rec) end
          end
        else
          call(env, "record", rec)
        end
      end
      call(env, "finish")
    else
      local ctx = {
        inlines = not opts.no_inline,
        name_width = name_width, hex = hex,
        comm = function(rec) return comm_of(st, rec.tid) or (":" .. tostring(rec.tid or -1)) end,
        timestr = function(t) return timestr(t, opts.ns) end,
        period = function(rec) return rec.period or st.period[rec.event] end,
        trace_text = function(rec) return f:trace_text(rec.raw, rec.cpu or 0) end,
        resolve = function(pid, addr, kernel, inlines) return resolve(st, pid, addr, kernel, inlines) end,
        ip_is_kernel = ip_is_kernel, chain_is_kernel = chain_is_kernel,
        resolve_addr = function(pid, addr) return resolve_addr(st, pid, addr) end,
        chain_addr = chain_addr,
      }
      local unknown = { type = 7, sample_type = 0 }
      for rec in records{ user = false } do
        observe(st, rec)
        if rec.type == "SAMPLE" then
          if not keep or keep(rec) then
            fields.print(out, ctx, layout, rec, ev_by_name[rec.event] or unknown)
          end
        elseif opts.show_all then
          print_other(out, st, rec, opts)
        end
      end
    end
  end)
  warn_new()
  f:close()
  if not ok then
    local msg = type(e) == "table" and e.msg or tostring(e)
    if type(msg) == "string" and msg:match("Broken pipe") then return 0 end
    -- the reader's errors name the offset; say which file
    if type(e) == "string" and msg:match("^offset %d") then msg = opts.input .. ": " .. msg end
    io.stderr:write("luaperf script: ", tostring(msg), "\n")
    return 1
  end
  return 0
end

return M.run
