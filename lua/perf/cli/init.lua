-- The luaperf command: dispatches `luaperf <subcommand> ...` to
-- lua/perf/cli/<subcommand>.lua, each of which returns a function
-- run(args) -> exit status.
local M = {}

local commands = {
  { "stat",   "count events for a command, a pid or the machine" },
  { "record", "sample into a perf.data file" },
  { "report", "print a report of a perf.data file" },
  { "flame",  "write a flame graph or a profile export" },
  { "script", "print records, or run a Lua script over them" },
  { "top",    "a live view of the hottest functions (perf top)" },
  { "list",   "list the events this machine has" },
  { "trace",  "system call summaries, probes as they happen, function latency" },
}

local function usage(out)
  out:write("usage: luaperf <command> [options]\n\n")
  for _, c in ipairs(commands) do
    out:write(string.format("  %-8s %s\n", c[1], c[2]))
  end
  out:write("\nluaperf <command> -h for the options of one command\n")
end

-- bin/luaperf runs the interpreter with glibc's heap in huge pages; the
-- commands it starts (stat, record, a script's os.execute) get the
-- caller's GLIBC_TUNABLES back, as unset if it was.
local function restore_tunables()
  local saved = os.getenv("LUAPERF_GLIBC_TUNABLES")
  if saved then
    local core = require "perf.core"
    assert(core.setenv("GLIBC_TUNABLES", saved:match("^=(.*)")))
    assert(core.setenv("LUAPERF_GLIBC_TUNABLES", nil))
  end
end

-- The commands that read a perf.data file build tables of hundreds of MB
-- on system-wide recordings; a helper thread faults their pages in ahead
-- of them (perf.prefault).  LUAPERF_PREFAULT=0 leaves it off.
local reads_files = { report = true, flame = true, script = true }

function M.main(argv)
  restore_tunables()
  local args = {}
  for i = 1, #argv do args[i] = argv[i] end
  local name = table.remove(args, 1)
  if name == nil or name == "-h" or name == "--help" or name == "help" then
    usage(name and io.stdout or io.stderr)
    return name and 0 or 1
  end
  if name == "--version" or name == "version" then
    io.stdout:write("luaperf ", require("perf").version, "\n")
    return 0
  end
  local known = false
  for _, c in ipairs(commands) do if c[1] == name then known = true end end
  local ok, cmd
  if known then ok, cmd = pcall(require, "perf.cli." .. name) end
  if ok and reads_files[name] and os.getenv("LUAPERF_PREFAULT") ~= "0" then
    local core = require "perf.core"
    core.prefault(true)   -- without it (no thread), the command runs as it would
  end
  if not known then
    io.stderr:write("luaperf: unknown command '", name, "'\n")
    usage(io.stderr)
    return 1
  end
  if not ok then
    io.stderr:write("luaperf ", name, ": ", tostring(cmd), "\n")
    return 1
  end
  -- A command reports what it expects to go wrong itself; anything else is
  -- a bug: one line without a Lua source position, the traceback on demand.
  local debug_on = os.getenv("LUAPERF_DEBUG") == "1"
  local ok2, status = xpcall(cmd, function(e)
    if debug_on then return debug.traceback(tostring(e), 2) end
    if type(e) == "table" then e = e.msg or tostring(e) end
    return (tostring(e):gsub("^[^:\n]*%.lua:%d+: ", ""))
  end, args)
  if not ok2 then
    io.stderr:write("luaperf ", name, ": ", tostring(status), "\n")
    if not debug_on then
      io.stderr:write("luaperf ", name, ": (an internal error: LUAPERF_DEBUG=1 shows the traceback)\n")
    end
    return 1
  end
  return status or 0
end

return M
