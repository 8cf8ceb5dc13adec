-- The admin locations of examples/openresty.
--
-- /luaperf/profile profiles the worker that serves the request for N
-- seconds (other requests keep being served while it sleeps) and says which
-- (X-Luaperf-Worker: its pid).  With several workers a request lands on any
-- of them: &worker=PID asks for one, and another worker answers 421 (the
-- admin locations keep no connection alive), so a retry (a new connection) may land on the right
-- one (README.md: a loop with curl).  /luaperf/workers lists them all.
-- /luaperf/jitmap reports the worker's JIT map (perf.jitmap, turned on in
-- init_worker_by_lua): perf record -p PID from outside then names its
-- compiled Lua code.
local perf = require "perf"

local M = {}

local FORMATS = { folded = "text/plain", svg = "image/svg+xml",
                  pprof = "application/octet-stream", speedscope = "application/json" }
local WEIGHTS = { samples = true, wait = true, alloc = true }

local jitmap, jitmap_err

function M.init_worker()
  -- LUAPERF_JITMAP=0 leaves it off (the overhead's baseline)
  if os.getenv("LUAPERF_JITMAP") == "0" then
    jitmap, jitmap_err = nil, "off (LUAPERF_JITMAP=0)"
  else
    jitmap, jitmap_err = perf.jitmap()
  end
  if not jitmap then
    ngx.log(ngx.WARN, "perf.jitmap: ", jitmap_err)
  end
  local dict = ngx.shared.luaperf
  if dict then
    dict:set("worker:" .. ngx.worker.id(), ngx.worker.pid())
  end
end

local function fail(status, ...)
  ngx.status = status
  ngx.header.content_type = "text/plain"
  ngx.say(...)
end

-- true when this worker is the one asked for (or none was)
local function this_worker(args)
  local want = args.worker and tonumber(args.worker)
  if args.worker and not want then
    fail(ngx.HTTP_BAD_REQUEST, "worker must be a pid (see /luaperf/workers)")
    return false
  end
  if want and want ~= ngx.worker.pid() then
    fail(421, "this is worker ", ngx.worker.pid(), ", not ", want,
      ": retry (a new connection may land on another worker)")
    return false
  end
  return true
end

function M.profile()
  local args = ngx.req.get_uri_args()
  local seconds = tonumber(args.seconds) or 5
  local freq = tonumber(args.freq) or 999
  local format = args.format or "folded"
  local weight = args.weight or "samples"
  if seconds <= 0 or seconds > 600 or freq < 1 or freq > 10000 or
     not FORMATS[format] or not WEIGHTS[weight] then
    return fail(ngx.HTTP_BAD_REQUEST, "usage: ?seconds=1..600&freq=1..10000",
      "&format=folded|svg|pprof|speedscope&weight=samples|wait|alloc&vmstate=0|1&worker=PID")
  end
  if not this_worker(args) then return end
  ngx.header["X-Luaperf-Worker"] = ngx.worker.pid()
  -- wait: time off CPU; alloc: bytes allocated (every 64 KiB a sample)
  local prof, err = perf.luaprofile{ freq = freq, wait = weight == "wait" or nil,
                                     alloc = weight == "alloc" and 65536 or nil }
  if not prof then
    return fail(ngx.HTTP_INTERNAL_SERVER_ERROR, "luaprofile: ", err)
  end
  local ok, serr = prof:start()
  if not ok then
    prof:close()
    return fail(ngx.HTTP_INTERNAL_SERVER_ERROR, "luaprofile: ", serr)
  end
  ngx.sleep(seconds)
  local p = prof:stop()
  prof:close()
  local opts = { vmstate = args.vmstate == "1",
                 weight = weight ~= "samples" and weight or nil,
                 title = "nginx worker " .. ngx.worker.pid() }
  local rok, body = pcall(function()
    if format == "svg" then return p:flamegraph(opts) end
    if format == "pprof" then return p:pprof(opts) end
    if format == "speedscope" then return p:speedscope(opts) end
    return p:folded(opts)
  end)
  if not rok then
    return fail(ngx.HTTP_NOT_IMPLEMENTED, "cannot render ", format, " by ", weight, ": ", body)
  end
  ngx.header.content_type = FORMATS[format]
  ngx.print(body)
end

function M.jitmap()
  if not this_worker(ngx.req.get_uri_args()) then return end
  ngx.header["X-Luaperf-Worker"] = ngx.worker.pid()
  ngx.header.content_type = "text/plain"
  if not jitmap then
    return ngx.say("worker ", ngx.worker.pid(), ": no JIT map: ", tostring(jitmap_err))
  end
  local i = jitmap:info()
  ngx.say("worker ", ngx.worker.pid(), ": ", i.on and "on" or "off", " ", i.path)
  ngx.say("traces=", i.traces, " entries=", i.entries, " flushes=", i.flushes,
    " rewrites=", i.rewrites, i.error and (" error=" .. i.error) or "")
  -- perf reads a map owned by the reader or root: as root, a worker's
  -- (nobody's) map takes perf report -f
  ngx.say("record it from outside: perf record -e cpu-clock -p ", ngx.worker.pid(),
    " -- sleep 10; perf report -f --sort sym")
end

function M.workers()
  ngx.header.content_type = "text/plain"
  local dict = ngx.shared.luaperf
  for id = 0, ngx.worker.count() - 1 do
    local pid = dict and dict:get("worker:" .. id)
    ngx.say("worker ", id, " pid ", pid or "?",
      pid == ngx.worker.pid() and " (this request)" or "")
  end
end

return M
