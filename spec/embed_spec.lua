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
    -- as the README says: no LUA_PATH or LUA_CPATH (the host finds its checkout)
    out, ok = util.sh("cd " .. util.q(util.root) .. " && env -u LUA_PATH -u LUA_CPATH" ..
      " build/embed/embed 2 " .. util.q(folded))
    assert(ok, out)
    -- every frame of the loop was marked through the C API
    local frames, marked = tonumber(out:match("frames=(%d+)")), tonumber(out:match("marked=(%d+)"))
    assert.is_true(frames > 10 and marked == frames, out)
    assert.is_true(tonumber(out:match("frames_ms=([%d%.]+)")) > 0, out)
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

  for _, lang in ipairs({ { "C", "cc -x c -std=c99" }, { "C++", "c++ -x c++ -std=c++11" } }) do
    it("builds a host of the C API as " .. lang[1] .. " with -Wall -Wextra -Werror, and runs it", function()
      local out, ok = util.sh("cd " .. util.q(util.root) .. " && make -s all 2>&1")
      assert(ok, out)
      local dir = util.tmpdir()
      local bin = dir .. "/capi"
      out, ok = util.sh(string.format("%s -Wall -Wextra -Werror $(pkg-config --cflags lua5.4) -I%s -o %s %s " ..
        "$(pkg-config --libs lua5.4) -L%s -l:core.so -Wl,-rpath,%s",
        lang[2], util.q(util.root .. "/csrc/include"), util.q(bin), util.q(util.root .. "/spec/hosts/capi.c"),
        util.q(util.root .. "/build/perf"), util.q(util.root .. "/build/perf")))
      assert(ok, out)
      out, ok = util.sh("cd " .. util.q(util.root) .. " && LUA_PATH='lua/?.lua;lua/?/init.lua;;'" ..
        " LUA_CPATH='build/?.so;;' " .. util.q(bin))
      assert(ok, out)
      local f = {}
      for k, v in out:gmatch("([%w_]+)=([^\n ]*)") do f[k] = tonumber(v) or v end
      assert.are.equal("null", f.bad_new, out)
      assert.truthy(out:find("bad_err=[^\n]*unknown event 'cyclez'"), out)
      assert.are.equal("null", f.early_folded, out)
      assert.truthy(out:find("early_err=no profile yet", 1, true), out)
      assert.is_true(f.samples > 20, out)
      assert.are.equal(40, f.frames, out)
      assert.is_true(f.frames_ns > 0, out)
      assert.are.equal(1, f.stack_kept, out)
      assert.are.equal(1, f.busy_in_folded, out)
      assert.are.equal(1, f.svg, out)
      assert.are.equal("none", f.hook_after, out)
    end)
  end
end)
