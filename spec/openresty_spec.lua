-- examples/openresty: Debian's nginx with libnginx-mod-http-lua (LuaJIT)
-- profiles its worker through the admin location while a bounded load
-- loop hits a hot and a cold handler.  The reference: the handlers' CPU
-- cost measured by the load loop itself (requests made, each handler's
-- work fixed), so the hot one must dominate.
local util = require "util"

local MODULE = "/usr/lib/nginx/modules/ngx_http_lua_module.so"

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() return true end
  return false
end

describe("examples/openresty", function()
  -- nginx runs LuaJIT: the LuaJIT build is the one it loads, so one pass.
  if util.lua ~= "luajit" then
    pending("runs under the LuaJIT pass (nginx's Lua is LuaJIT)")
    return
  end

  it("profiles the worker from the admin location; the hot handler dominates", function()
    assert(exists(MODULE) and exists("/usr/sbin/nginx"),
      "nginx and libnginx-mod-http-lua are needed (make deps)")
    local dir = util.tmpdir()
    util.sh("mkdir -p " .. dir .. "/logs " .. dir .. "/temp")
    -- a port of our own: 20000 + pid-ish
    local port = 20000 + (tonumber(dir:match("(%w+)$"), 36) or 1) % 20000
    local conf = assert(util.read(util.root .. "/examples/openresty/nginx.conf"))
    conf = conf:gsub("127%.0%.0%.1:8089", "127.0.0.1:" .. port)
    util.write(dir .. "/nginx.conf", conf)
    local nginx = "LUAPERF_ROOT=" .. util.q(util.root) .. " nginx -p " .. dir ..
      " -c " .. dir .. "/nginx.conf -e " .. dir .. "/logs/error.log"
    local out, ok = util.sh(nginx)
    assert(ok, out .. (util.read(dir .. "/logs/error.log") or ""))
    local base = "http://127.0.0.1:" .. port
    local folded, svg, log
    local function run()
      -- wait until it answers (bounded)
      util.sh("for i in $(seq 1 50); do curl -sf " .. base .. "/cold >/dev/null && break; sleep 0.1; done")
      -- the profile runs while the bounded loop drives load
      out, ok = util.sh("(curl -sf '" .. base .. "/luaperf/profile?seconds=2&vmstate=1' > " .. dir .. "/prof.folded) & " ..
        "for i in $(seq 1 120); do curl -sf " .. base .. "/hot >/dev/null; " ..
        "curl -sf " .. base .. "/cold >/dev/null; done; wait")
      assert(ok, out)
      folded = util.read(dir .. "/prof.folded") or ""
      util.sh("curl -sf '" .. base .. "/luaperf/profile?seconds=0.5&format=svg' > " .. dir ..
        "/prof.svg & for i in $(seq 1 30); do curl -sf " .. base .. "/hot >/dev/null; done; wait")
      svg = util.read(dir .. "/prof.svg") or ""
      local bad = util.sh("curl -s -o /dev/null -w '%{http_code}' '" .. base .. "/luaperf/profile?seconds=-1'")
      log = (util.read(dir .. "/logs/error.log") or "") .. "\nbad request: " .. bad
      return bad
    end
    local okrun, bad = pcall(run)
    util.sh(nginx .. " -s stop")
    assert(okrun, bad)
    local hot, cold, total = 0, 0, 0
    for stack, n in folded:gmatch("([^\n]*) (%d+)\n") do
      n = tonumber(n)
      total = total + n
      if stack:find("[Lua] app.hot ", 1, true) then hot = hot + n end
      if stack:find("[Lua] app.cold ", 1, true) then cold = cold + n end
    end
    local msg = folded .. "\n" .. log
    assert.is_true(total >= 20, msg)
    -- /hot does 15x the work of /cold per request, requests alternate
    assert.is_true(hot > 0.5 * total, msg)
    assert.is_true(hot > 5 * cold, msg)
    -- the Lua frames name the module file and line; the VM state is a
    -- frame when asked for (vmstate=1)
    assert.truthy(folded:find("[Lua] app.hot " .. util.root .. "/examples/openresty/app.lua:16", 1, true), msg)
    assert.truthy(folded:find("[vm:", 1, true), msg)
    -- nginx's own frames above the Lua handler (ngx_lua's exported names)
    assert.truthy(folded:find("ngx_http_lua_run_thread;[Lua] main chunk content_by_lua(", 1, true), msg)
    assert.truthy(svg:find("<svg", 1, true), svg:sub(1, 300) .. log)
    assert.truthy(bad:find("400", 1, true), log)
  end)
end)
