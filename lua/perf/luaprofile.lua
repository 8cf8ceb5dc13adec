-- perf.luaprofile: in-process profiles of the Lua code of this thread.
--
--   local prof = perf.luaprofile{ event = "cpu-clock", freq = 999,
--                                 counters = { "page-faults" }, native = true }
--   prof:start(); work(); local p = prof:stop(); prof:close()
--   print(p:folded()); p:top{ n = 10 }; p:flamegraph{}
--
-- The C side (csrc/lua/luaprofile/, the userdata perf.core.LuaProfile)
-- samples and aggregates; perf.luaprofile wraps it in a Profiler whose
-- stop() turns the raw result into a stack list (lua/perf/stacks.lua's
-- shape), so the reports, folded text, flame graphs and exports of every
-- other profile work on it unchanged.  Frames of the host's loop marked
-- with prof:frame() come back as lp:frames().
--
-- Frames: Lua functions are kind "lua", named "[Lua] name file:line" (the
-- line where the function is defined); C functions called from Lua are
-- kind "lua" too, named as they are reachable ("string.rep"); native frames
-- (kind "user") come from the kernel's call chain.  On LuaJIT the VM state
-- ("compiled", "interpreted", "C", "GC", "JIT compiler") is a dimension of
-- its own, stack.vmstate: the leaf is the Lua function that ran (or the
-- native code under it), so a self-time top names functions, as on 5.x;
-- p:top{ by = "vmstate" } (or "sym,vmstate") ranks by state, and
-- { vmstate = true } to folded, flamegraph, top, pprof and speedscope puts
-- it back as a frame "[vm:compiled]" under the Lua frames.  Counter deltas
-- between samples go to the stack of the later sample:
-- stack.counters[name], and p:top{ weight = "<counter name>" } ranks by them.
return function(perf)
  local core = perf.core
  if type(core.luaprofile) ~= "function" then return end

  local LP = {}
  LP.__index = LP

  -- The stack list of a raw result: its perf.Profile symbolized as any
  -- other (named frames are the Lua ones), the VM state taken out of the
  -- frames, counter deltas from the weights, and stacks whose native
  -- addresses resolved to the same names merged; frames root first.
  local function to_list(raw)
    local list, index = {}, {}
    local samples, period = 0, 0
    local names = raw.counters or {}
    local extra = raw.weights or {}   -- "wait", "alloc", "live" as asked for
    local symbolized = raw.profile:stacklist()
    raw.profile:close()
    for _, s in ipairs(symbolized) do
      local frames, vmstate, vmpos = {}, nil, nil
      for _, f in ipairs(s.frames) do
        local vm = f.kind == "lua" and f.name:match("^%[vm:(.*)%]$")
        if vm then
          vmstate, vmpos = vm, #frames + 1
        else
          -- every frame has a name here: an unresolved address is named
          -- after its object, as perf does ("[libfoo.so]", "[unknown]")
          if not f.name then f.name = perf.stacks.label(f) end
          frames[#frames + 1] = f
        end
      end
      -- Unwound roots go past __libc_start_call_main, where the kernel's
      -- frame-pointer chains (glibc has none) stop: start all there.
      for i = 1, math.min(3, #frames) do
        if frames[i].name == "__libc_start_call_main" then
          for _ = 1, i - 1 do table.remove(frames, 1) end
          if vmpos then vmpos = vmpos - (i - 1) end
          break
        end
      end
      local parts = { vmstate or "" }
      for i, f in ipairs(frames) do
        parts[i + 1] = f.name .. "\1" .. (f.dso or "")
      end
      local key = table.concat(parts, "\2")
      local st = index[key]
      if not st then
        st = { frames = frames, count = 0, period = 0, event = raw.event,
          counters = {}, weights = {}, vmstate = vmstate, vmpos = vmpos }
        for _, n in ipairs(names) do st.counters[n] = 0 end
        for _, n in ipairs(extra) do st.weights[n] = 0 end
        index[key] = st
        list[#list + 1] = st
      end
      st.count = st.count + s.count
      st.period = st.period + s.period
      for _, n in ipairs(names) do
        st.counters[n] = st.counters[n] + (s.weights and tonumber(s.weights[n]) or 0)
      end
      for _, n in ipairs(extra) do
        st.weights[n] = st.weights[n] + (s.weights and tonumber(s.weights[n]) or 0)
      end
      samples = samples + s.count
      period = period + s.period
    end
    list.meta = { event = raw.event, samples = samples, period = period,
      lost = tonumber(raw.lost) or 0, throttled = 0,
      unattributed = tonumber(raw.unattributed) or 0,
      signals = tonumber(raw.signals) or 0, safepoints = tonumber(raw.safepoints) or 0,
      safepoint_ns = tonumber(raw.safepoint_ns) or 0, counters = names,
      native = raw.native, weights = extra }
    for _, k in ipairs({ "wait_ns", "waits", "preempted_ns", "alloc_bytes", "alloc_samples",
      "alloc_rate" }) do
      list.meta[k] = tonumber(raw[k])
    end
    return list
  end

  -- The VM state as a frame again, where it was (opts.vmstate): a copy.
  local vmcache = setmetatable({}, { __mode = "k" })
  local function with_vmstate(list)
    if vmcache[list] then return vmcache[list] end
    local copy = { meta = list.meta }
    for i, st in ipairs(list) do
      local c = {}
      for k, v in pairs(st) do c[k] = v end
      if st.vmstate then
        local frames = {}
        for j, f in ipairs(st.frames) do frames[j] = f end
        table.insert(frames, math.min(st.vmpos, #frames + 1),
          { name = "[vm:" .. st.vmstate .. "]", kind = "lua" })
        c.frames = frames
      end
      copy[i] = c
    end
    vmcache[list] = copy
    return copy
  end

  -- The weights other than samples: their unit and their name in pprof.
  local WEIGHTS = {
    wait = { unit = "nanoseconds", event = "wait", what = "wait = true" },
    alloc = { unit = "bytes", event = "alloc_space", what = "alloc = N" },
    live = { unit = "bytes", event = "inuse_space", what = "alloc = N" },
  }

  -- The stacks that have CPU samples: stacks charged only with wait time
  -- or allocations are left out of the samples' views (a copy, cached).
  local sampled_cache = setmetatable({}, { __mode = "k" })
  local function sampled(list)
    if #(list.meta.weights or {}) == 0 then return list end
    if sampled_cache[list] then return sampled_cache[list] end
    local copy = { meta = list.meta }
    for _, st in ipairs(list) do
      if st.count > 0 then copy[#copy + 1] = st end
    end
    sampled_cache[list] = copy
    return copy
  end

  -- Weighting by a counter, wait time, bytes allocated or live: a copy of
  -- the list whose periods are those (stacks without any left out).
  -- With opts.vmstate, the VM state is a frame of each stack.
  local function weighted(list, opts)
    if opts and opts.vmstate then list = with_vmstate(list) end
    local w = opts and opts.weight
    if not w or w == "samples" or w == "period" then return sampled(list), opts end
    local extra = WEIGHTS[w]
    if extra then
      local have = false
      for _, n in ipairs(list.meta.weights or {}) do have = have or n == w end
      if not have then
        error("this profile has no '" .. w .. "' weight: profile with " .. extra.what, 3)
      end
    end
    local copy = { meta = {} }
    for k, v in pairs(list.meta) do copy.meta[k] = v end
    local total = 0
    for _, st in ipairs(list) do
      local v
      if extra then v = st.weights[w] else v = st.counters[w] end
      if v == nil then error("no counter named '" .. tostring(w) .. "' in this profile", 3) end
      if not extra or v > 0 then
        copy[#copy + 1] = { frames = st.frames, count = st.count, period = v, event = st.event,
          counters = st.counters, weights = st.weights }
        total = total + v
      end
    end
    copy.meta.period = total
    if extra then
      copy.meta.unit, copy.meta.event, copy.meta.weight = extra.unit, extra.event, w
    end
    local o = {}
    for k, v in pairs(opts) do o[k] = v end
    o.weight = "period"
    return copy, o
  end

  function LP:stacklist() return self.list end
  function LP:total() return self.list.meta.samples, self.list.meta.period end
  function LP:meta() return self.list.meta end
  -- for frames, count, period, counters, vmstate in p:stacks() do ... end
  function LP:stacks()
    local i = 0
    return function()
      i = i + 1
      local st = self.list[i]
      if st then return st.frames, st.count, st.period, st.counters, st.vmstate end
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
  -- A slowest frame's own profile (made once, when first asked for).
  local function frame_profile(self, index)
    local fp = self.frame_profiles
    local v = fp and fp[index]
    if v == nil or getmetatable(v) == LP then return v end
    local raw = self.raw_meta
    local lp = setmetatable({ list = to_list({ profile = v, event = raw.event,
      counters = raw.counters, weights = raw.weights, native = raw.native }),
      raw_frames = {}, frames_total = 0 }, LP)
    fp[index] = lp
    return lp
  end

  -- { {index=, duration=ns, samples=, wait=ns, alloc=bytes, counters=}, ... }
  -- in order: the frames marked with prof:frame() (the last frames= of
  -- them; wait with wait = true, alloc, exact, with alloc = N, else 0;
  -- counters with counters = {...}: what each counted in the frame, exact,
  -- by name); { slowest = N }: the N longest, longest first, each with
  -- .profile (its own profile: the frame_profiles= slowest frames keep one).
  function LP:frames(opts)
    local out, names = {}, self.raw_meta and self.raw_meta.counters or {}
    for i, f in ipairs(self.raw_frames) do
      local counters = {}
      for k, name in ipairs(names) do counters[name] = f[6] and f[6][k] or 0 end
      out[i] = { index = f[1], duration = f[2], samples = f[3], wait = f[4] or 0,
        alloc = f[5] or 0, counters = counters }
    end
    if opts and opts.slowest then
      table.sort(out, function(a, b)
        if a.duration ~= b.duration then return a.duration > b.duration end
        return a.index < b.index
      end)
      for i = #out, opts.slowest + 1, -1 do out[i] = nil end
      for _, f in ipairs(out) do f.profile = frame_profile(self, f.index) end
    end
    return out
  end
  function LP:pprof(opts)
    local l = weighted(self.list, opts and { vmstate = opts.vmstate, weight = opts.weight })
    return perf.pprof.render(l, opts)
  end
  function LP:speedscope(opts)
    return perf.speedscope.render(weighted(self.list, opts and { vmstate = opts.vmstate }), opts)
  end

  perf.LuaProfileResult = LP

  -- The profiler: the core's userdata (prof.core) with stop() giving the
  -- profile object above.  The userdata closes itself when collected, and
  -- is held by its Lua state while started.
  local Profiler = {}
  Profiler.__index = Profiler
  Profiler.__name = "perf.LuaProfiler"
  perf.LuaProfiler = Profiler
  function Profiler:start()
    local ok, err, errno = self.core:start()
    if not ok then return nil, err, errno end
    return self
  end
  -- prof:stop() -> the profile of what ran since start().
  function Profiler:stop()
    local raw = self.core:stop()
    return setmetatable({ list = to_list(raw), raw_frames = raw.frames or {},
      frames_total = tonumber(raw.frames_total) or 0, frame_profiles = raw.frame_profiles,
      raw_meta = { event = raw.event, counters = raw.counters, weights = raw.weights,
        native = raw.native } }, LP)
  end
  function Profiler:frame() return self.core:frame() end
  function Profiler:stats() return self.core:stats() end
  function Profiler:close() return self.core:close() end
  Profiler.__close = Profiler.close

  -- perf.luaprofile(opts) | nil, msg, errno.  Defaults (in C): cpu-clock
  -- at 999 Hz, native stacks on, user space only.
  local new = core.luaprofile
  function perf.luaprofile(opts)
    if opts ~= nil and type(opts) ~= "table" then
      error("bad argument #1 to 'luaprofile' (table expected, got " .. type(opts) .. ")", 2)
    end
    local c, err, errno = new(opts)
    if not c then return nil, err, errno end
    return setmetatable({ core = c }, Profiler)
  end
end
