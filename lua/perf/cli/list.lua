-- luaperf list [pattern ...]: the events this machine has, printed like
-- `perf list`.  Hardware and cache events that do not open here are
-- still shown, marked "not supported", so the name is findable.
local perf = require "perf"

local labels = {
  hardware = "Hardware event",
  software = "Software event",
}

local function usage(out)
  out:write([[
usage: luaperf list [pattern ...]

  pattern   a glob matched anywhere in the event name ("cache", "sched:*"),
            or one of: hw hardware sw software cache hwcache pmu tracepoint
            raw breakpoint
  -d        also print each event's description
]])
end

local function line(out, e, desc)
  local name = e.name
  if e.alias then name = name .. " OR " .. e.alias end
  local label = labels[e.kind] or e.desc
  if not e.available then label = label .. ", not supported" end
  out:write(string.format("  %-50s [%s]\n", name, label))
  if desc and labels[e.kind] and e.desc then
    out:write(string.format("       [%s]\n", e.desc))
  end
end

return function(args)
  local patterns, desc = {}, false
  for _, a in ipairs(args) do
    if a == "-h" or a == "--help" then
      usage(io.stdout)
      return 0
    elseif a == "-d" or a == "--desc" then
      desc = true
    elseif a:sub(1, 1) == "-" then
      io.stderr:write("luaperf list: unknown option '", a, "'\n")
      usage(io.stderr)
      return 129
    else
      patterns[#patterns + 1] = a
    end
  end
  if #patterns == 0 then patterns[1] = false end
  local seen = {}
  for _, pat in ipairs(patterns) do
    local list, err = perf.list(pat or nil)
    if not list then
      io.stderr:write("luaperf list: ", err, "\n")
      return 1
    end
    for _, e in ipairs(list) do
      if not seen[e.name] then
        seen[e.name] = true
        line(io.stdout, e, desc)
      end
    end
  end
  return 0
end
