-- perf.luaprofile: in-process profiles of the Lua code of this thread.
--
--   local prof = perf.luaprofile{ event = "cpu-clock", freq = 999,
--                                 counters = { "page-faults" }, native = true }
--   prof:start(); work(); local p = prof:stop(); prof:close()
--   print(p:folded()); p:top{ n = 10 }; p:flamegraph{}
--
-- The C side (csrc/lua/l_luaprofile.c) samples and aggregates; this file
-- turns its raw result into a stack list (lua/perf/stacks.lua's shape), so
-- the reports, folded text, flame graphs and exports of every other
-- profile work on it unchanged.
--
-- Frames: Lua functions are kind "lua", named "[Lua] name file:line" (the
-- line where the function is defined); C functions called from Lua are
-- kind "lua" too, named as they are reachable ("string.rep"); native frames
-- (kind "user") come from the kernel's call chain; on LuaJIT the VM state
-- is a frame "[vm:compiled]", "[vm:interpreted]", "[vm:C]", "[vm:GC]" or
-- "[vm:JIT compiler]" below the Lua frames.  Counter deltas between samples
-- go to the stack of the later sample: stack.counters[name], and
-- p:top{ weight = "<counter name>" } ranks by them.
return function(perf)
  local core = perf.core
  local M = core.LuaProfile
  if type(M) ~= "table" then return end

  local LP = {}
  LP.__index = LP

  -- "\1name\3dso" is native; "[Lua] name src:line" a Lua function.
  local function make_frame(tok, cache)
    local f = cache[tok]
    if f then return f end
    if tok:byte(1) == 1 then
      local name, dso = tok:match("^\1([^\3]*)\3(.*)$")
      f = { name = name, dso = dso ~= "" and dso or nil, kind = "user" }
    else
      f = { name = tok, kind = "lua" }
      local src, line = tok:match("^%[Lua%] .- (.*):(%d+)$")
      if src then f.file, f.line = src, tonumber(line) end
    end
    cache[tok] = f
    return f
  end

  -- The stack list of a raw result: unique stacks (native addresses that
  -- resolved to one name are merged), frames root first.
  local function to_list(raw)
    local list, index, cache = {}, {}, {}
    local samples, period = 0, 0
    local names = raw.counters or {}
    for _, e in ipairs(raw.stacks) do
      local key = e[1]
      local st = index[key]
      if not st then
        local frames = {}
        for tok in (key .. "\2"):gmatch("([^\2]*)\2") do
          frames[#frames + 1] = make_frame(tok, cache)
        end
        -- Unwound roots go past __libc_start_call_main, where the kernel's
        -- frame-pointer chains (glibc has none) stop: start all there.
        for i = 1, math.min(3, #frames) do
          if frames[i].name == "__libc_start_call_main" then
            for _ = 1, i - 1 do table.remove(frames, 1) end
            break
          end
        end
        st = { frames = frames, count = 0, period = 0, event = raw.event,
          counters = {} }
        for _, n in ipairs(names) do st.counters[n] = 0 end
        index[key] = st
        list[#list + 1] = st
      end
      st.count = st.count + e[2]
      st.period = st.period + e[3]
      for i, n in ipairs(names) do st.counters[n] = st.counters[n] + e[3 + i] end
      samples = samples + e[2]
      period = period + e[3]
    end
    list.meta = { event = raw.event, samples = samples, period = period,
      lost = tonumber(raw.lost) or 0, throttled = 0,
      unattributed = tonumber(raw.unattributed) or 0,
      signals = tonumber(raw.signals) or 0, counters = names,
      native = raw.native }
    return list
  end

  -- Weighting by a counter: a copy of the list whose periods are its deltas.
  local function weighted(list, opts)
    local w = opts and opts.weight
    if not w or w == "samples" or w == "period" then return list, opts end
    local copy = { meta = {} }
    for k, v in pairs(list.meta) do copy.meta[k] = v end
    local total = 0
    for i, st in ipairs(list) do
      local v = st.counters[w]
      if v == nil then error("no counter named '" .. tostring(w) .. "' in this profile", 3) end
      copy[i] = { frames = st.frames, count = st.count, period = v, event = st.event,
        counters = st.counters }
      total = total + v
    end
    copy.meta.period = total
    local o = {}
    for k, v in pairs(opts) do o[k] = v end
    o.weight = "period"
    return copy, o
  end

  function LP:stacklist() return self.list end
  function LP:total() return self.list.meta.samples, self.list.meta.period end
  function LP:meta() return self.list.meta end
  -- for frames, count, period, counters in p:stacks() do ... end
  function LP:stacks()
    local i = 0
    return function()
      i = i + 1
      local st = self.list[i]
      if st then return st.frames, st.count, st.period, st.counters end
    end
  end
  function LP:top(opts)
    local l, o = weighted(self.list, opts)
    return perf.report.top(l, o)
  end
  function LP:folded(opts)
    local l, o = weighted(self.list, opts)
    return perf.folded.format(l, o)
  end
  function LP:flamegraph(opts)
    local l, o = weighted(self.list, opts)
    return (perf.flame.render(l, o or {}))
  end
  function LP:pprof(opts) return perf.pprof.render(self.list, opts) end
  function LP:speedscope(opts) return perf.speedscope.render(self.list, opts) end

  perf.LuaProfileResult = LP

  local raw_stop = M.stop
  -- prof:stop() -> the profile of what ran since start().
  function M.stop(prof)
    return setmetatable({ list = to_list(raw_stop(prof)) }, LP)
  end

  -- perf.luaprofile(opts) | nil, msg, errno.  Defaults (in C): cpu-clock
  -- at 999 Hz, native stacks on, user space only.
  local new = core.luaprofile
  function perf.luaprofile(opts)
    if opts ~= nil and type(opts) ~= "table" then
      error("bad argument #1 to 'luaprofile' (table expected, got " .. type(opts) .. ")", 2)
    end
    return new(opts)
  end
end
