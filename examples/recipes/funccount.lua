-- funccount (bcc): how many times functions are called.  One counter per
-- function, `uprobe:PATH:FUNC` opened through the uprobe PMU (counting, no
-- samples, nothing in the rings), read once the command exits (perf.stat).
-- FUNC may be a glob (`str*`): the object's symbols are listed with nm and
-- each match gets its probe (not IFUNCs: strlen names its resolver; glob
-- `*strlen*` for __strlen_avx2 and kin).  Probes follow the command, not its children.
--   lua5.4 examples/recipes/funccount.lua 'PATH:FUNC[,PATH:FUNC...]' [-- command ...]
--   (default: known_calls's probe_target and libc's write, `known_calls calls 1000`)
local perf, root = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
local prog = root .. "/build/progs/known_calls"
local cmd = arg[2] == "--" and { select(3, (table.unpack or unpack)(arg)) } or { prog, "calls", "1000" }
local events = {}
for _, want in ipairs(perf.split(arg[1] or prog .. ":probe_target,libc:write")) do
  local obj, func = want:match("^(.*):([^:]+)$")
  if func:find("*", 1, true) then             -- a glob: every text symbol of the object that matches
    local path = assert(perf.parse("uprobe:" .. obj .. ":0x0")).probe.path
    local pat, seen = "^" .. func:gsub("[%^%$%(%)%%%.%[%]%+%-%?]", "%%%0"):gsub("%*", ".*") .. "$", {}
    for name in io.popen("{ nm --defined-only " .. path .. "; nm -D --defined-only " .. path .. "; } 2>/dev/null"):lines() do
      local sym = name:match("^%x+ [TtW] ([^@%s]+)")
      if sym and sym:match(pat) and not seen[sym] then seen[sym] = true; events[#events + 1] = "uprobe:" .. path .. ":" .. sym end
    end
  else events[#events + 1] = "uprobe:" .. want end
end
local res = assert(perf.stat{ events = events, run = cmd })
table.sort(res.events, function(a, b) return (a.value or 0) > (b.value or 0) end)
print(("%-36s %8s   (%d probes, %.3f s)"):format("FUNC", "COUNT", #events, res.elapsed))
for _, ev in ipairs(res.events) do
  if (ev.value or 0) > 0 then print(("%-36s %8d"):format(ev.spec:match("([^:]+)$"), ev.value)) end
end
