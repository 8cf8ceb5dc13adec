-- DWARF call graphs from Lua: records of a "dwarf" session or of a file
-- recorded with `perf record --call-graph dwarf`, with their user stacks
-- unwound (perf.unwinder, csrc/core/unwind/unwind.c) from the registers and stack
-- bytes each sample carries.  (For a perf.File, f:records{unwind = true}
-- does the same in C, call sites included, without the stack bytes going
-- through Lua; f:profile() aggregates DWARF files unwound.)
--
--   for rec in perf.unwound_records(source[, opts]) do ... end
--       source: anything with :records() (perf.open(path), perf.session{...})
--       every record of the source; a DWARF sample gets rec.callchain (leaf
--       first, kernel part first, as the kernel's own chains) and
--       rec.callchain_kernel from the unwind, and rec.unwind = { user=,
--       kernel=, truncated=, failed=, error= }
--   local p, stats = perf.unwind_profile(source[, opts])
--       a profile (perf.profile) of the source, DWARF samples unwound
--   opts: unwinder=, symbolizer= (kept across calls, e.g. for a live
--         session drained several times; made here otherwise);
--         call_sites = true (unwound_records): callers as return address
--         - 1, inside the call instruction, as perf keeps DWARF chains
--         (perf script prints them so, and a noreturn call at the end of a
--         function then names its caller, not the next function)
return function(perf)
  local function tools(opts)
    opts = opts or {}
    local u = opts.unwinder or perf.unwinder()
    local sym = opts.symbolizer or perf.symbolizer()
    return u, sym
  end

  local function dwarf(rec)
    return rec.type == "SAMPLE" and rec.regs_user ~= nil and rec.stack_user ~= nil
  end

  function perf.unwound_records(source, opts)
    local u, sym = tools(opts)
    local call_sites = opts and opts.call_sites
    local it = source:records()
    return function()
      local rec = it()
      if rec == nil then return nil end
      if dwarf(rec) then
        local chain, info = u:unwind(rec, sym)
        if chain and call_sites then
          for i = info.kernel + 2, #chain do chain[i] = chain[i] - 1 end
        end
        if chain then
          rec.callchain = chain
          rec.callchain_kernel = info.kernel
          rec.unwind = info
        end
      elseif rec.type ~= "SAMPLE" then
        sym:feed(rec)
      end
      return rec
    end
  end

  function perf.unwind_profile(source, opts)
    local u, sym = tools(opts)
    local p = perf.profile()
    for rec in source:records() do
      if dwarf(rec) then
        u:add(p, rec, sym)
      else
        if rec.type ~= "SAMPLE" then sym:feed(rec) end
        p:add(rec)
      end
    end
    return p, u:stats()
  end
end
