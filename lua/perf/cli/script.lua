-- luaperf script: perf script's default listing of a perf.data file, or a
-- Lua script run over its records with perf script's hooks:
--
--   luaperf script [-i FILE] [-g | -G] [--ns] [--show-all] [script.lua [args...]]
--
-- The listing has one line per sample: comm, tid, [cpu], time, period,
-- event, ip, sym+off, (dso); with a call chain (recorded with -g, or asked
-- with -g) each frame follows on its own line, as perf script prints them.
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

local USAGE = [==[
usage: luaperf script [-i FILE] [-g | -G] [--ns] [script.lua [args...]]
  -i FILE       the perf.data file (default ./perf.data)
  -g            print call chains (the default when the file has them)
  -G            hide call chains
  --ns          nanosecond timestamps
  --show-all    also list non-sample records (COMM, MMAP2, ...)
]==]

local function hex(v)
  if type(v) == "string" then return (v:gsub("^0x", "")) end
  return string.format("%x", v)
end

-- An address as a hex string of 16 digits at most, for comparisons and keys.
local function is_kernel_addr(v)
  if type(v) == "string" then return #v >= 18 and v:sub(3, 3) == "f" end
  return v < 0 or v >= 9.2e18   -- 5.4: kernel addresses wrap negative
end

local function timestr(t, ns)
  local sec = math.floor(t / 1000000000)
  local rem = t - sec * 1000000000
  if ns then return string.format("%5d.%09d", sec, rem) end
  return string.format("%5d.%06d", sec, math.floor(rem / 1000))
end

local M = {}

-- Tracks comm per thread (COMM, FORK) and feeds the symbolizer.
local function new_state(f)
  -- perf names the idle task (pid 0) swapper
  local st = { comm = { [0] = "swapper" }, f = f }
  if perf.symbolizer then
    local ok, sym = pcall(perf.symbolizer)
    if ok and sym then st.sym = sym end
  end
  st.cache = {}
  return st
end

local function observe(st, rec)
  local t = rec.type
  if t == "COMM" then
    st.comm[rec.tid] = rec.comm
  elseif t == "FORK" then
    if st.comm[rec.ptid] and not st.comm[rec.tid] then
      st.comm[rec.tid] = st.comm[rec.ptid]
    end
  end
  if st.sym and (t == "MMAP" or t == "MMAP2" or t == "COMM" or t == "FORK" or t == "EXIT") then
    -- the unwinding reader (f:records{unwind = true}) fed it already
    if not st.unwinder_feeds then st.sym:feed(rec) end
    st.cache = {}
  end
end

-- Symbol of addr in pid: { name=, offset=, dso=, rel= } with [unknown]s.
local function resolve(st, pid, addr)
  local byaddr = st.cache[pid or -1]
  if not byaddr then
    byaddr = {}
    st.cache[pid or -1] = byaddr
  end
  local r = byaddr[addr]
  if r then return r end
  r = { name = "[unknown]", dso = "[unknown]" }
  if st.sym then
    local s = st.sym:resolve(pid, addr)
    if s then
      r.name, r.offset, r.dso = s.name, s.offset, s.dso or "[unknown]"
    end
    local m = st.sym.map and st.sym:map(pid, addr)
    if m then
      r.dso = (s and s.dso) or m.path
      r.map = m
    elseif is_kernel_addr(addr) and not s then
      r.dso = "[kernel.kallsyms]"
    end
  end
  byaddr[addr] = r
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
  if m and not is_kernel_addr(addr) and type(addr) == "number" and type(m.start) == "number"
     and type(m.pgoff) == "number" then
    return string.format("%x", addr - m.start + m.pgoff)
  end
  return hex(addr)
end

local function symtext(r)
  if r.offset and r.name ~= "[unknown]" then
    return string.format("%s+0x%x (%s)", r.name, r.offset, r.dso)
  end
  return string.format("%s (%s)", r.name, r.dso)
end

local function print_sample(out, st, rec, opts, name_width)
  local chain = opts.callchain and rec.callchain
  local comm = st.comm[rec.tid] or (":" .. tostring(rec.tid))
  local parts = {}
  if chain then
    parts[#parts + 1] = comm .. " "
  else
    parts[#parts + 1] = string.format("%16s ", comm)
  end
  parts[#parts + 1] = string.format("%5d ", rec.tid or -1)
  if rec.cpu then parts[#parts + 1] = string.format("[%03d] ", rec.cpu) end
  if rec.time then parts[#parts + 1] = timestr(rec.time, opts.ns) .. ": " end
  local tracepoint = rec.raw and st.tp[rec.event]
  local period = rec.period or st.period[rec.event]
  if not tracepoint and period then
    parts[#parts + 1] = string.format("%10d ", period)
  end
  parts[#parts + 1] = string.format("%" .. name_width .. "s: ", rec.event or "[unknown]")
  if tracepoint then
    parts[#parts + 1] = st.f:trace_text(rec.raw, rec.cpu or 0) or ""
  end
  if chain then
    out:write(table.concat(parts), "\n")
    for _, a in ipairs(rec.callchain) do
      local r = resolve(st, rec.pid, a)
      -- the printed line is a function of (pid, addr): made once
      local line = r.printed
      if not line then
        line = string.format("\t%16s %s\n", chain_addr(r, a), symtext(r))
        r.printed = line
      end
      out:write(line)
    end
    -- an unwind that ran off the captured stack: perf ends it with -1
    if rec.unwind and rec.unwind.truncated then
      out:write(string.format("\t%16s [unknown] ([unknown])\n", "ffffffffffffffff"))
    end
    out:write("\n")
  else
    if rec.ip and not tracepoint then
      local r = resolve(st, rec.pid, rec.ip)
      parts[#parts + 1] = string.format(" %16s %s", hex(rec.ip), symtext(r))
    end
    out:write(table.concat(parts), "\n")
  end
end

local function print_other(out, st, rec, opts)
  local comm = st.comm[rec.tid] or (":" .. tostring(rec.tid or -1))
  local t = rec.time and (timestr(rec.time, opts.ns) .. ": ") or ""
  out:write(string.format("%16s %5d %sPERF_RECORD_%s\n", comm, rec.tid or -1, t, rec.type))
end

-- The lazy fields a script sees: rec.comm, rec.sym, rec.frames.
local function decorate(st)
  return {
    __index = function(rec, k)
      if k == "comm" then
        return st.comm[rawget(rec, "tid")]
      elseif k == "period" then
        -- a fixed-period event's samples weigh its sample_period, as in perf
        return st.period[rawget(rec, "event")]
      elseif k == "sym" then
        local ip = rawget(rec, "ip")
        if not ip then return nil end
        local r = resolve(st, rawget(rec, "pid"), ip)
        rawset(rec, "sym", r)
        return r
      elseif k == "frames" then
        local chain = rawget(rec, "callchain")
        if not chain then return nil end
        local fr = {}
        for i, a in ipairs(chain) do
          local r = resolve(st, rawget(rec, "pid"), a)
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

function M.run(args)
  local opts = { input = "perf.data", ns = false }
  local script, sargs = nil, {}
  local i = 1
  while i <= #args do
    local a = args[i]
    if script then
      sargs[#sargs + 1] = a
    elseif a == "-i" or a == "--input" then
      i = i + 1; opts.input = args[i]
    elseif a:match("^%-%-input=") then
      opts.input = a:match("=(.*)")
    elseif a == "-g" then opts.force_callchain = true
    elseif a == "-G" or a == "--hide-call-graph" then opts.hide_callchain = true
    elseif a == "--ns" then opts.ns = true
    elseif a == "--show-all" then opts.show_all = true
    elseif a == "-h" or a == "--help" then io.stdout:write(USAGE); return 0
    elseif a:sub(1, 1) == "-" and a ~= "-" then
      io.stderr:write("luaperf script: unknown option ", a, "\n", USAGE); return 1
    else
      script = a
    end
    i = i + 1
  end
  if not opts.input then io.stderr:write(USAGE); return 1 end
  local f, err = perf.open(opts.input)
  if not f then
    io.stderr:write("luaperf script: ", tostring(err), "\n")
    return 1
  end
  local st = new_state(f)
  local hdr = f:header()
  local name_width, has_chain = 0, false
  st.tp, st.period = {}, {}
  for _, ev in ipairs(hdr.events) do
    -- without PERF_SAMPLE_PERIOD a sample weighs the attr's fixed period
    if not ev.freq then st.period[ev.name] = ev.sample_period end
    if #ev.name > name_width then name_width = #ev.name end
    if ev.type == 2 then st.tp[ev.name] = true end
    if ev.sample_type and math.floor(ev.sample_type / 32) % 2 == 1 then has_chain = true end
    -- PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER
    if ev.sample_type and math.floor(ev.sample_type / 4096) % 4 == 3 then st.dwarf = true end
  end
  opts.callchain = (has_chain or opts.force_callchain) and not opts.hide_callchain
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

  local out = io.stdout
  local ok, e = pcall(function()
    if script then
      local env, lerr = load_script(script, f, sargs)
      if not env then error({ msg = lerr }) end
      local mt = decorate(st)
      call(env, "begin")
      for rec in records() do
        observe(st, rec)
        setmetatable(rec, mt)
        if rec.type == "SAMPLE" then
          local handled = false
          if st.tp[rec.event] then
            handled = call(env, (rec.event:gsub(":", "__")), rec)
          end
          if not handled then call(env, "sample", rec) end
        else
          call(env, "record", rec)
        end
      end
      call(env, "finish")
    else
      for rec in records{ user = false } do
        observe(st, rec)
        if rec.type == "SAMPLE" then
          print_sample(out, st, rec, opts, name_width)
        elseif opts.show_all then
          print_other(out, st, rec, opts)
        end
      end
    end
  end)
  f:close()
  if not ok then
    local msg = type(e) == "table" and e.msg or tostring(e)
    if type(msg) == "string" and msg:match("Broken pipe") then return 0 end
    io.stderr:write("luaperf script: ", tostring(msg), "\n")
    return 1
  end
  return 0
end

return M.run
