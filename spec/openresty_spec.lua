-- examples/openresty: Debian's nginx with libnginx-mod-http-lua (LuaJIT),
-- started as the README says (examples/openresty/run.sh start), loaded by
-- wrk on a hot and a cold handler.  Two references: the handlers' work (the
-- hot one does 15x the cold one's checksum and a page), so the hot one must
-- dominate the worker's own profile; and perf, which records the worker
-- from outside and names its compiled Lua code from the map the worker
-- wrote (perf.jitmap in init_worker_by_lua).
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

  it("run.sh starts nginx; the admin location profiles the worker; perf names its traces", function()
    assert(exists(MODULE) and exists("/usr/sbin/nginx") and exists("/usr/bin/wrk"),
      "nginx, libnginx-mod-http-lua and wrk are needed (make deps)")
    local dir = util.tmpdir()
    -- a port of our own: 20000 + pid-ish
    local port = 20000 + (tonumber(dir:match("(%w+)$"), 36) or 1) % 20000
    local env = "PORT=" .. port .. " PREFIX=" .. dir .. "/prefix "
    local run = env .. util.q(util.root .. "/examples/openresty/run.sh")
    local out, ok = util.sh(run .. " start")
    local base = "http://127.0.0.1:" .. port
    assert(ok, out .. (util.read(dir .. "/prefix/logs/error.log") or ""))
    assert.truthy(out:find(base .. "/luaperf/profile?seconds=5", 1, true), out)
    local master = tonumber(util.read(dir .. "/prefix/logs/nginx.pid"))
    local r = {}
    local function fetch(path, file)
      return util.sh("curl -s -o " .. dir .. "/" .. file .. " -D " .. dir .. "/" .. file ..
        ".h -w '%{http_code}' '" .. base .. path .. "'")
    end
    local function run_all()
      r.workers = util.sh("curl -sf " .. base .. "/luaperf/workers")
      r.pid = tonumber(r.workers:match("worker 0 pid (%d+)"))
      assert(r.pid, r.workers)
      util.write(dir .. "/mix.lua", [[
local i = 0
request = function()
  i = i + 1
  return wrk.format(nil, i % 2 == 0 and "/hot" or "/cold")
end
]])
      -- load, and meanwhile: the worker's own profile, perf from outside
      out, ok = util.sh("wrk -t1 -c4 -d4s -s " .. dir .. "/mix.lua " .. base .. " > " .. dir ..
        "/wrk.txt & sleep 0.5; " ..
        "curl -s -D " .. dir .. "/prof.h '" .. base .. "/luaperf/profile?seconds=2&vmstate=1' > " ..
        dir .. "/prof.folded & " ..
        "perf record -q -e cpu-clock -F 999 -p " .. r.pid .. " -o " .. dir ..
        "/perf.data -- sleep 2; wait")
      assert(ok, out)
      r.folded = util.read(dir .. "/prof.folded") or ""
      r.header = util.read(dir .. "/prof.h") or ""
      r.wrk = util.read(dir .. "/wrk.txt") or ""
      -- the other formats, each under load of its own
      for _, f in ipairs{ "svg", "pprof", "speedscope" } do
        util.sh("wrk -t1 -c2 -d1s " .. base .. "/hot >/dev/null & " ..
          "curl -s '" .. base .. "/luaperf/profile?seconds=0.5&format=" .. f .. "' > " ..
          dir .. "/prof." .. f .. "; wait")
        r[f] = util.read(dir .. "/prof." .. f) or ""
      end
      r.jitmap = util.sh("curl -s " .. base .. "/luaperf/jitmap")
      r.bad = fetch("/luaperf/profile?seconds=-1", "bad")
      r.other = fetch("/luaperf/profile?seconds=1&worker=1", "other")
      r.other_body = util.read(dir .. "/other") or ""
    end
    local okrun, err = pcall(run_all)
    local stop_out, stopped = util.sh(run .. " stop")
    local log = (util.read(dir .. "/prefix/logs/error.log") or "")
    assert(okrun, tostring(err) .. "\n" .. log)
    assert(stopped, stop_out)
    -- nothing left behind: neither the master nor its worker
    util.sh("sleep 0.2")
    local left = util.sh("ps -o pid= -p " .. master .. "," .. r.pid)
    assert.equal("", (left:gsub("%s+", "")), left)
    assert.equal("not running\n", (util.sh(run .. " status")))

    -- the worker's profile: the hot handler dominates, and it says whose
    local hot, cold, total = 0, 0, 0
    for stack, n in r.folded:gmatch("([^\n]*) (%d+)\n") do
      n = tonumber(n)
      total = total + n
      if stack:find("[Lua] app.hot ", 1, true) then hot = hot + n end
      if stack:find("[Lua] app.cold ", 1, true) then cold = cold + n end
    end
    local msg = r.folded .. "\n" .. r.wrk .. "\n" .. log
    assert.truthy(r.header:find("X%-Luaperf%-Worker: " .. r.pid .. "\r\n"), r.header)
    assert.is_true(total >= 20, msg)
    assert.is_true(hot > 0.5 * total, msg)
    assert.is_true(hot > 5 * cold, msg)
    assert.truthy(r.folded:find("[Lua] app.hot " .. util.root .. "/examples/openresty/app.lua:16", 1, true), msg)
    assert.truthy(r.folded:find("[vm:", 1, true), msg)
    assert.truthy(r.folded:find("ngx_http_lua_run_thread;[Lua] main chunk content_by_lua(", 1, true), msg)
    assert.truthy(r.wrk:find("Requests/sec:", 1, true), r.wrk)
    -- the other formats
    assert.truthy(r.svg:find("<svg", 1, true), r.svg:sub(1, 300) .. log)
    assert.equal("\31\139", r.pprof:sub(1, 2))               -- gzip, as pprof takes it
    assert.truthy(r.speedscope:find('"$schema":"https://www.speedscope.app/', 1, true), r.speedscope:sub(1, 200))
    -- bad input and the wrong worker
    assert.equal("400", r.bad)
    assert.equal("421", r.other)
    assert.truthy(r.other_body:find("this is worker " .. r.pid .. ", not 1", 1, true), r.other_body)

    -- the JIT map, and perf naming the worker's compiled code from it
    local map = "/tmp/perf-" .. r.pid .. ".map"
    assert.truthy(r.jitmap:find("worker " .. r.pid .. ": on " .. map, 1, true), r.jitmap)
    local ntraces = tonumber(r.jitmap:match("traces=(%d+)"))
    assert.is_true(ntraces and ntraces > 0, r.jitmap)
    -- the worker runs as nobody: its map is nobody's, which perf reads as
    -- root only when forced (perf's rule, as the jitmap location says)
    local report = util.perf_stdout("report -f -i " .. dir .. "/perf.data --sort dso,sym --stdio")
    local maptext = util.read(map) or ""
    os.remove(map)
    local jitted, named, checksum = 0, 0, 0
    for key, pcts in pairs(util.report_rows(report)) do
      if key:find("[JIT] tid", 1, true) then
        jitted = jitted + pcts[1]
        if key:find("[.] TRACE_", 1, true) then named = named + pcts[1] end
        if key:find("/examples/openresty/app.lua:6 checksum", 1, true) then
          checksum = checksum + pcts[1]
        end
      end
    end
    msg = maptext .. "\n" .. report
    assert.is_true(jitted > 30, msg)            -- the handlers run compiled
    assert.is_true(named > 0.9 * jitted, msg)   -- and perf names the traces
    assert.is_true(checksum > 0.5 * jitted, msg) -- the hot loop first
  end)
end)
