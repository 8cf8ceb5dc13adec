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

return M
