-- The perf module: the Lua facade over perf.core (the C core and binding).
-- Policy and presentation live here and in the files beside it; the C
-- side does the per-record work.
local core = require "perf.core"

local perf = {}

-- Everything the core exports is part of the module; the Lua files below
-- add the one-call forms and reports on top.
for k, v in pairs(core) do perf[k] = v end
perf.version = core.version      -- "0.2.0"
perf._VERSION = core._VERSION    -- "luaperf 0.2.0"
perf.core = core

-- Lua-side parts, each in its own file; each gets the module to extend.
local parts = {
  "report",
  "stat",
  "stat_report",
  "luaprofile",
  "unwind",
  "jitmap",
  "hist",
}
for _, name in ipairs(parts) do
  require("perf." .. name)(perf)
end
require("perf.query").install(perf)

return perf
