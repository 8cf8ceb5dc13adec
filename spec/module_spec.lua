-- The module loads from the checkout and the command runs without installing.
local perf = require "perf"
local util = require "util"

describe("perf module", function()
  it("has a version x.y.z", function()
    assert.is_string(perf.version)
    assert.truthy(perf.version:match("^%d+%.%d+%.%d+$"))
  end)

  it("is loaded from this checkout's build", function()
    local path = package.searchpath("perf.core", package.cpath)
    assert.truthy(path and path:find(util.cpath_dir(), 1, true), path)
  end)

  it("bin/luaperf prints usage and rejects unknown commands", function()
    local out, ok = util.luaperf("--help")
    assert.is_true(ok)
    assert.truthy(out:find("usage: luaperf", 1, true))
    local err, ok2 = util.luaperf("frobnicate")
    assert.is_false(ok2)
    assert.truthy(err:find("unknown command 'frobnicate'", 1, true))
  end)
end)
