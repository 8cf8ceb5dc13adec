-- The rockspec: its lists match the tree, and `luarocks make --tree` (Debian's
-- luarocks, offline) installs a module that loads and counts from that tree.
local util = require "util"

local function have_luarocks()
  local out = util.sh("command -v luarocks")
  return out:match("%S") ~= nil
end

describe("the rockspecs", function()
  it("lists every C source and Lua module of the tree", function()
    local out, ok = util.sh("cd " .. util.q(util.root) .. " && lua5.4 tools/gen-rockspec.lua --check")
    assert.is_true(ok, out)
  end)

  it("installs with luarocks make --tree and loads from there", function()
    if not have_luarocks() then
      return pending("luarocks is not installed (apt-get install luarocks)")
    end
    -- LuaJIT loads modules built for the Lua 5.1 ABI.
    local luaver = util.lua == "lua5.4" and "5.4" or "5.1"
    local dir = util.tmpdir()
    -- Built from a copy: the builtin backend writes objects beside the sources.
    local out, ok = util.sh(table.concat({
      "cd " .. util.q(util.root),
      "cp -r csrc lua bin tools Makefile " .. dir .. "/",
      "cd " .. dir,
      -- Generated from the copy, so the install covers the tree as it is now
      -- (the test above says when the checked-in rockspec is stale).
      "lua5.4 tools/gen-rockspec.lua",
      "luarocks --lua-version " .. luaver .. " make --tree " .. dir .. "/tree luaperf-scm-1.rockspec",
    }, " && "))
    assert.is_true(ok, out)
    assert.truthy(out:find("luaperf scm-1 is now installed", 1, true), out)
    local env = "eval \"$(luarocks --lua-version " .. luaver .. " --tree " .. dir .. "/tree path)\"; " ..
      "cd /; LUA_PATH=\"$LUA_PATH;;\" LUA_CPATH=\"$LUA_CPATH;;\" "
    local code = [[
      local perf = require "perf"
      local path = package.searchpath("perf.core", package.cpath)
      local c = assert(perf.counter("task-clock"))
      print(perf.version, path, c:read().value > 0)
    ]]
    out, ok = util.sh(env .. util.lua .. " -e " .. util.q(code))
    assert.is_true(ok, out)
    assert.truthy(out:find(dir .. "/tree/lib/lua/" .. luaver .. "/perf/core.so\ttrue", 1, true), out)
    -- The installed command runs from the tree too.
    out, ok = util.sh(env .. "LUAPERF_LUA=" .. util.lua .. " " .. dir .. "/tree/bin/luaperf stat -x, -e task-clock -- true")
    assert.is_true(ok, out)
    assert.truthy(out:match("[%d.]+,msec,task%-clock,"), out)
    util.sh("rm -rf " .. dir)
  end)

  it("make dist builds the versioned source rock, which luarocks install takes offline", function()
    if not have_luarocks() then
      return pending("luarocks is not installed (apt-get install luarocks)")
    end
    if util.lua ~= "lua5.4" then return pending("built once, under Lua 5.4") end
    local version = util.sh("cd " .. util.q(util.root) .. " && lua5.4 tools/gen-rockspec.lua --version")
    version = version:match("^([%d.]+)")
    local dir = util.tmpdir()
    -- From a copy of the tree, so that build/dist of the checkout is left alone.
    local out, ok = util.sh(table.concat({
      "cd " .. util.q(util.root),
      "tar cf - --exclude=./build --exclude=./.git . | (cd " .. dir .. " && tar xf -)",
      "cd " .. dir,
      "make dist",
    }, " && "))
    assert.is_true(ok, out)
    local rock = dir .. "/build/dist/luaperf-" .. version .. "-1.src.rock"
    local list = util.sh("unzip -l " .. rock)
    assert.truthy(list:find("luaperf-" .. version .. "-1.rockspec", 1, true), list)
    assert.truthy(list:find("luaperf-" .. version .. ".tar.gz", 1, true), list)
    -- No network: the tarball comes from the rock itself.
    out, ok = util.sh("cd / && luarocks --lua-version 5.4 install --tree " .. dir .. "/tree " .. rock)
    assert.is_true(ok, out)
    assert.truthy(out:find("luaperf " .. version .. "-1 is now installed", 1, true), out)
    local env = "eval \"$(luarocks --lua-version 5.4 --tree " .. dir .. "/tree path)\"; " ..
      "cd /; LUA_PATH=\"$LUA_PATH;;\" LUA_CPATH=\"$LUA_CPATH;;\" "
    out, ok = util.sh(env .. "lua5.4 -e " .. util.q([[
      local perf = require "perf"
      print(perf._VERSION, perf.version, package.searchpath("perf.core", package.cpath))]]))
    assert.is_true(ok, out)
    assert.are.equal("luaperf " .. version .. "\t" .. version .. "\t" .. dir ..
      "/tree/lib/lua/5.4/perf/core.so\n", out)
    util.sh("rm -rf " .. dir)
  end)
end)
