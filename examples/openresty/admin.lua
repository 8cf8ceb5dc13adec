-- The admin location of examples/openresty: profiles this worker for N
-- seconds (other requests keep being served while it sleeps) and returns
-- folded stacks or a flame graph (vmstate=1: LuaJIT's VM state as a frame).
local perf = require "perf"

local M = {}

function M.profile()
  local args = ngx.req.get_uri_args()
  local seconds = tonumber(args.seconds) or 5
  local freq = tonumber(args.freq) or 999
  local format = args.format or "folded"
  if seconds <= 0 or seconds > 600 or freq < 1 or freq > 10000 or
     (format ~= "folded" and format ~= "svg") then
    ngx.status = ngx.HTTP_BAD_REQUEST
    ngx.say("usage: ?seconds=1..600&freq=1..10000&format=folded|svg&vmstate=0|1")
    return
  end
  local prof, err = perf.luaprofile{ freq = freq }
  if not prof then
    ngx.status = ngx.HTTP_INTERNAL_SERVER_ERROR
    ngx.say("luaprofile: ", err)
    return
  end
  local ok, serr = prof:start()
  if not ok then
    prof:close()
    ngx.status = ngx.HTTP_INTERNAL_SERVER_ERROR
    ngx.say("luaprofile: ", serr)
    return
  end
  ngx.sleep(seconds)
  local p = prof:stop()
  prof:close()
  local vmstate = args.vmstate == "1"
  if format == "svg" then
    ngx.header.content_type = "image/svg+xml"
    ngx.print(p:flamegraph{ title = "nginx worker " .. ngx.worker.pid(), vmstate = vmstate })
  else
    ngx.header.content_type = "text/plain"
    ngx.print(p:folded{ vmstate = vmstate })
  end
end

return M
