-- examples/embed: a C host embedding Lua 5.4 profiles itself with
-- perf.luaprofile.  The host measures its own per-phase CPU time (thread
-- CPU clock) in the same run: that is the reference for the shares.
local util = require "util"

local function share(folded, pred)
  local n, total = 0, 0
  for stack, count in folded:gmatch("([^\n]*) (%d+)\n") do
    count = tonumber(count)
    total = total + count
    if pred(stack) then n = n + count end
  end
  return total > 0 and 100 * n / total or 0, total
end

describe("examples/embed", function()
  -- The host links Lua 5.4 and loads the 5.4 build of the module.
  if util.lua ~= "lua5.4" then
    pending("runs under the Lua 5.4 pass (the host embeds Lua 5.4)")
    return
  end

  it("profiles Lua updates, the C they call and the host's own frames", function()
    local out, ok = util.sh("cd " .. util.q(util.root) .. " && make -s embed 2>&1")
    assert(ok, out)
    local dir = util.tmpdir()
    local folded = dir .. "/embed.folded"
    out, ok = util.sh("cd " .. util.q(util.root) .. " && LUA_PATH='lua/?.lua;lua/?/init.lua;;'" ..
      " LUA_CPATH='build/?.so;;' build/embed/embed 2 " .. util.q(folded))
    assert(ok, out)
    local upd = tonumber(out:match("cpu_update=([%d%.]+)"))
    local ren = tonumber(out:match("cpu_render=([%d%.]+)"))
    local text = assert(util.read(folded))
    local in_lua, total = share(text, function(s) return s:find("[Lua] update ", 1, true) end)
    local host = share(text, function(s)
      return s:find("main;render", 1, true) and not s:find("[Lua]", 1, true)
    end)
    local msg = out .. "\n" .. text
    assert.is_true(total > 1000, msg)
    -- the host's rendering is not charged to the Lua function called next
    assert.is_true(math.abs(in_lua - 100 * upd / (upd + ren)) <= 10, msg)
    assert.is_true(math.abs(host - 100 * ren / (upd + ren)) <= 10, msg)
    -- a C function of the host called from Lua keeps its native frames
    assert.truthy(text:find("%[Lua%] draw examples/embed/game%.lua:%d+;blit;blit_rows %d+\n"), msg)
    -- the host's own frames above its call into Lua (nm names them)
    local nm = util.sh("nm " .. util.q(util.root .. "/build/embed/embed"))
    assert.truthy(nm:find(" t frame_loop\n", 1, true), nm)
    assert.truthy(text:find("__libc_start_call_main;main;frame_loop;call;lua_pcallk;[Lua] update ", 1, true), msg)
    -- Lua frames with their file and line, in caller order
    assert.truthy(text:find("[Lua] update examples/embed/game.lua:30;[Lua] physics examples/embed/game.lua:8", 1, true), msg)
  end)
end)
