-- Command-line options for the luaperf subcommands: "-x value", "--long
-- value", "--long=value", and flags.  One loop for every command.
--
--   options.parse(args, o, takes, flags) -> o | nil, message
--     takes: { ["--output"] = "output", ["-o"] = "output", ... }
--     flags: { ["--inverted"] = "inverted" }            (sets true), or
--            { ["--no-children"] = { "children", false } } (sets a value)
local M = {}

function M.parse(args, o, takes, flags)
  local i = 1
  while i <= #args do
    local a = args[i]
    local k, v = a:match("^(%-%-[%w%-]+)=(.*)$")
    if k then a = k end
    if takes[a] then
      if v == nil then
        i = i + 1
        v = args[i]
        if v == nil then return nil, a .. " needs a value" end
      end
      o[takes[a]] = v
    elseif flags[a] ~= nil and v == nil then
      local f = flags[a]
      if type(f) == "table" then o[f[1]] = f[2] else o[f] = true end
    else
      return nil, "unknown option '" .. args[i] .. "'"
    end
    i = i + 1
  end
  return o
end

-- A progress line for a long read ("luaperf report: reading FILE: 45%"),
-- on stderr when it is a terminal, once the work has run a second, as
-- perf report shows one: returns opts.progress for stacks.load and the
-- function that clears the line; nil, noop elsewhere.
function M.progress(cmd, path)
  local ok = os.execute("test -t 2")
  if ok ~= true and ok ~= 0 then return nil, function() end end
  local clock = require("perf").core.clock
  local t0, shown = clock(), false
  local function update(done, total)
    if clock() - t0 < 1e9 or total == 0 then return end
    shown = true
    io.stderr:write(string.format("\r%s: reading %s: %3d%% (%.1f of %.1f MB)", cmd, path,
      math.floor(done * 100 / total), done / 2^20, total / 2^20))
    io.stderr:flush()
  end
  return update, function() if shown then io.stderr:write("\r\27[K") end end
end

return M
