-- perf.jitmap(): names LuaJIT's compiled traces for any profiler that reads
-- perf maps (perf report, luaperf report, continuous profilers).  LuaJIT
-- writes /tmp/perf-PID.map only when built with LUAJIT_USE_PERFTOOLS and
-- never drops flushed code; this listens to trace events instead
-- (jit.attach), so it costs nothing between compilations.
--
-- The map: one line per trace, "START SIZE TRACE_N source:line function"
-- (hex START and SIZE, perf's format).  A new trace is appended; one whose
-- machine code overlaps an older trace's (code reused after jit.flush())
-- makes the map be rewritten without the older one, so the later name wins.
-- Rewrites go to a private temporary file renamed over the map: a symlink
-- or a stale file at the map's path is replaced, never followed, and the
-- map is always owned by the process's user (perf's rule).
local perfmap               -- perf.perfmap: loaded on LuaJIT only (FFI)
local state                 -- the one map of this process (nil when off)

-- "source:line function" of a trace's start: the chunk as Lua names it, the
-- line of the start position, the function's name from its caller or its
-- definition line ("local function checksum(" / "function M.hot(").
local sources = {}
local function source_line(path, line)
  local lines = sources[path]
  if lines == nil then
    lines = false
    local f = io.open(path, "rb")
    if f then
      local text = f:read("*a") or ""
      f:close()
      lines = {}
      for l in (text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
    end
    sources[path] = lines
  end
  return lines and lines[line]
end

local function defined_name(src, linedefined)
  if linedefined == 0 then return "main chunk" end
  local l = src:sub(1, 1) == "@" and source_line(src:sub(2), linedefined)
  if not l then return nil end
  return l:match("function%s+([%w_.:]+)%s*%(") or
         l:match("([%w_.:%[%]\"']+)%s*=%s*function%s*%(")
end

local function chunk(src)
  if src:sub(1, 1) == "@" or src:sub(1, 1) == "=" then return src:sub(2) end
  return '[string "' .. (src:match("^[^\n]*"):sub(1, 40)) .. '"]'
end

local function trace_name(jutil, tr, func, pc, caller_name)
  local fi = func and jutil.funcinfo(func, pc)
  if not (fi and fi.source) then
    if fi and fi.ffid then return ("TRACE_%d builtin#%d"):format(tr, fi.ffid) end
    return ("TRACE_%d"):format(tr)
  end
  local fname = defined_name(fi.source, fi.linedefined) or caller_name or
                ("function@" .. fi.linedefined)
  return ("TRACE_%d %s:%d %s"):format(tr, chunk(fi.source), fi.currentline or fi.linedefined, fname)
end

-- The name the calling frame gives the function being recorded: its frame
-- is on the stack below the event handler.
local function caller_name(func)
  for level = 2, 6 do
    local info = debug.getinfo(level, "fn")
    if not info then return nil end
    if info.func == func then return info.name end
  end
  return nil
end

local function entry(jutil, tr, name)
  local mc, addr = jutil.tracemc(tr)
  if not (mc and addr and #mc > 0) then return nil end
  return { start = addr, size = #mc, name = name, trace = tr }
end

-- Every trace alive now (traces compiled before the map was turned on have
-- no recorded start: they are named by number).
local function existing(st, jutil)
  local known = {}
  for _, e in ipairs(st.map.entries) do known[e.start] = true end
  for tr = 1, 65535 do
    if jutil.traceinfo(tr) and not known[select(2, jutil.tracemc(tr))] then
      local e = entry(jutil, tr, ("TRACE_%d (compiled before perf.jitmap)"):format(tr))
      if e then st.map:add(e) end
    end
  end
end

-- Traces stop while any Lua code runs, ours too: while perf.jitmap is
-- setting up (busy) they wait in st.pending, so the map is never changed
-- under a loop that walks it.
local function drain(st)
  local pending = st.pending
  st.pending = {}
  for _, e in ipairs(pending) do
    local ok, err = st.map:add(e)
    if not ok then st.error = err end
  end
end

local function handler(what, tr, func, pc, otr, oex)
  local st = state
  if not st then return end
  -- LuaJIT keeps one handler an event: the one we replaced (jit.v, jit.dump)
  -- still sees every event
  if st.prev then pcall(st.prev, what, tr, func, pc, otr, oex) end
  local jutil = st.jutil
  local w = st.map
  if w.fd and perfmap.getpid() ~= w.pid then
    -- a forked child (an nginx worker after init_by_lua): a map of its own
    local ok, err = w:open()
    if not ok then st.error = err end
  end
  if what == "start" then
    st.starting[tr] = trace_name(jutil, tr, func, pc, caller_name(func))
  elseif what == "stop" then
    local e = entry(jutil, tr, st.starting[tr] or ("TRACE_%d"):format(tr))
    st.starting[tr] = nil
    if e then
      st.traces = st.traces + 1
      st.pending[#st.pending + 1] = e
      if not st.busy then drain(st) end
    end
  elseif what == "abort" then
    st.starting[tr] = nil
  elseif what == "flush" then
    -- the code stays where it was until reused: its names stay true for
    -- the samples taken in it, and a new trace there replaces them (add)
    st.flushes = st.flushes + 1
  end
end

-- LuaJIT's table of event handlers (its registry key, lj_vmevent.h): read
-- to find the trace handler ours replaces.
local function vmevents()
  local reg = debug.getregistry()
  return type(reg) == "table" and type(reg._VMEVENTS) == "table" and reg._VMEVENTS or {}
end

-- Attaches handler to trace events; returns the slot and what was there.
local function attach()
  local before = {}
  for k, v in pairs(vmevents()) do before[k] = v end
  jit.attach(handler, "trace")
  for k, v in pairs(vmevents()) do
    if v == handler then return k, before[k] end
  end
  return nil
end

local JM = {}
JM.__index = JM

function JM:close()
  if state ~= self.st then return true end
  local events = vmevents()
  -- restore the handler we replaced, unless someone replaced ours since
  if events[self.st.key] == handler then
    jit.attach(handler)
    if self.st.prev then jit.attach(self.st.prev, "trace") end
  end
  self.st.map:close()
  state = nil
  return true
end
-- No __gc: the map stays on until closed (the module keeps it alive).
JM.__close = JM.close

-- { path=, pid=, traces= (named since on), entries= (lines in the map),
--   flushes=, rewrites=, error= (the last write that failed) }
function JM:info()
  local st = self.st
  local w = st.map
  return { path = w.path, pid = w.pid, traces = st.traces, entries = #w.entries,
           flushes = st.flushes, rewrites = w.rewrites, error = st.error,
           on = state == st }
end

function JM:entries()
  local t = {}
  for i, e in ipairs(self.st.map.entries) do
    t[i] = { start = e.start, size = e.size, name = e.name, trace = e.trace }
  end
  return t
end

return function(perf)
  -- perf.jitmap{ dir = "/tmp" } -> map | nil, message.  One map a process:
  -- a second call while it is on returns the same object.
  function perf.jitmap(opts)
    if type(opts) ~= "nil" and type(opts) ~= "table" then
      error("bad argument #1 to 'jitmap' (table expected, got " .. type(opts) .. ")", 2)
    end
    opts = opts or {}
    if type(jit) ~= "table" or type(jit.attach) ~= "function" then
      return nil, "perf.jitmap needs LuaJIT (this is " .. tostring(_VERSION) ..
        ", whose functions are never compiled)"
    end
    local okutil, jutil = pcall(require, "jit.util")
    if not okutil or not jutil.tracemc then
      return nil, "perf.jitmap needs jit.util (this LuaJIT was built without it)"
    end
    if not jit.status() then
      return nil, "the JIT compiler is off (jit.on() turns it on): no code to name"
    end
    if not perfmap then
      local okffi, m = pcall(require, "perf.perfmap")
      if not okffi then return nil, "perf.jitmap needs LuaJIT's FFI: " .. tostring(m) end
      perfmap = m
    end
    if state then return state.obj end
    local dir = opts.dir or "/tmp"
    if type(dir) ~= "string" or dir == "" then
      error("bad option 'dir' to 'jitmap' (a directory name expected)", 2)
    end
    local st = { map = perfmap.new(dir), jutil = jutil, starting = {}, traces = 0,
                 flushes = 0, pending = {}, busy = true }
    -- attached first, so what compiles during the scan below is named too
    state = st
    st.key, st.prev = attach()
    st.obj = setmetatable({ st = st }, JM)
    jit.off(existing)       -- its scan is not worth a trace of its own
    existing(st, jutil)
    local ok, msg, e = st.map:open()
    if not ok then
      st.obj:close()
      return nil, msg, e
    end
    st.busy = false
    drain(st)
    return st.obj
  end
end
