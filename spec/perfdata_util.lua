-- Helpers shared by perfdata_spec, script_spec and record_cli_spec: record
-- perf.data files with perf, and put perf script's samples and ours side by
-- side in one shape.
local util = require "util"
local M = {}

function M.shaped()
  return util.root .. "/build/progs/shaped"
end

function M.tracefs()
  util.sh("mount | grep -q tracefs || mount -t tracefs nodev /sys/kernel/tracing")
  local _, ok = util.sh("test -e /sys/kernel/tracing/events/sched/sched_switch/id")
  return ok
end

-- perf record ...; returns the file or raises with perf's output.
function M.perf_record(dir, name, args)
  local path = dir .. "/" .. name
  local out, ok = util.sh("perf record -q -o " .. path .. " " .. args .. " >/dev/null 2>" .. path .. ".err")
  assert(ok, (util.read(path .. ".err") or "") .. out)
  return path
end

-- file(name, args): perf record into dir once per run (perf is the slow
-- part); later calls with the same name reuse the file.
function M.recorder(dir)
  local files = {}
  return function(name, args)
    if not files[name] then files[name] = M.perf_record(dir, name, args) end
    return files[name]
  end
end

local function trim_hex(s)
  s = s:gsub("^0x", ""):gsub("^0+(%x)", "%1")
  return s
end

-- An address as perf prints it (lower-case hex, no leading zeros).
function M.hex(v)
  if type(v) == "string" then return trim_hex(v:lower()) end
  if v < 0 then return string.format("%x", v) end
  if v >= 2^53 then return trim_hex(string.format("%x", v)) end
  return string.format("%x", v)
end

local function is_kernel(v)
  if type(v) == "string" then return true end   -- > 2^53: kernel half on x86_64
  return v < 0 or v >= 2^63
end

-- perf script -F event,pid,tid,[cpu,]time,period,ip --ns: one table per sample.
function M.perf_samples(path, with_cpu, hide_chain)
  local fields = "event,pid,tid," .. (with_cpu and "cpu," or "") .. "time,period,ip"
  local out = util.sh("perf script -i " .. path .. " -F " .. fields .. " --ns" ..
    (hide_chain and " -G" or "") .. " 2>/dev/null")
  local list, cur = {}, nil
  for line in (out .. "\n"):gmatch("([^\n]*)\n") do
    if line:match("^%s*%-?%d+/%-?%d+ ") then
      local pid, tid, rest = line:match("^%s*(%-?%d+)/(%-?%d+)%s+(.*)$")
      local cpu, r2 = rest:match("^%[(%d+)%]%s+(.*)$")
      if cpu then rest = r2 end
      local sec, nsec, period, ev, ip = rest:match("^(%d+)%.(%d+):%s+(%d+)%s+(%S+):%s*(%x*)")
      cur = { pid = tonumber(pid), tid = tonumber(tid), cpu = cpu and tonumber(cpu),
              time = sec .. "." .. nsec, period = tonumber(period), event = ev,
              ip = ip ~= "" and ip or nil, chain = {} }
      list[#list + 1] = cur
    elseif cur and line:match("^\t") then
      cur.chain[#cur.chain + 1] = line:match("^\t%s*(%x+)")
    end
  end
  return list
end

-- Our samples in the same shape: user call chain entries relative to their
-- map (what perf prints), kernel ones absolute.
function M.our_samples(path, with_cpu, hide_chain)
  local perf = require "perf"
  local f = assert(perf.open(path))
  local period = {}
  for _, ev in ipairs(f:header().events) do
    if not ev.freq then period[ev.name] = ev.sample_period end
  end
  local maps, list = {}, {}
  local function rel(pid, a)
    if is_kernel(a) then return M.hex(a) end
    local m = maps[pid]
    if m then
      for i = #m, 1, -1 do
        local e = m[i]
        if type(e.start) == "number" and type(e.len) == "number" and type(e.pgoff) == "number"
           and a >= e.start and a < e.start + e.len then return M.hex(a - e.start + e.pgoff) end
      end
    end
    return M.hex(a)
  end
  for rec in f:records() do
    local t = rec.type
    if (t == "MMAP" or t == "MMAP2") and rec.pid ~= -1 and rec.cpumode ~= "kernel" then
      maps[rec.pid] = maps[rec.pid] or {}
      -- perf maps anonymous memory one to one (it prints those addresses as they are)
      local fn = rec.filename or ""
      local ident = fn == "//anon" or fn:match("^/dev/zero") or fn:match("^/anon_hugepage")
        or fn:match("^%[stack") or fn:match("^/SYSV") or fn == "[heap]"
      table.insert(maps[rec.pid], { start = rec.start, len = rec.len,
                                    pgoff = ident and rec.start or rec.pgoff })
    elseif t == "FORK" and rec.pid ~= rec.ppid then
      -- as perf: a fork replaces whatever was known of the child by the parent's maps
      local copy = {}
      for i, e in ipairs(maps[rec.ppid] or {}) do copy[i] = e end
      maps[rec.pid] = copy
    elseif t == "SAMPLE" then
      local s = { pid = rec.pid, tid = rec.tid, cpu = with_cpu and rec.cpu or nil,
                  time = string.format("%d.%09d", math.floor(rec.time / 1e9), rec.time % 1000000000),
                  period = rec.period or period[rec.event], event = rec.event, chain = {} }
      if rec.callchain and not hide_chain then
        for i, a in ipairs(rec.callchain) do s.chain[i] = rel(rec.pid, a) end
      else
        s.ip = M.hex(rec.ip)
      end
      list[#list + 1] = s
    end
  end
  f:close()
  return list
end

-- Compares two sample lists; returns nil or a message about the first difference.
-- perf discards a whole call chain holding an unknown context marker (a
-- stack word in [-4095, -1] read from a task without frame pointers); our
-- decoder drops just the marker.  Those samples (a handful, only in -a
-- captures) are counted in M.discarded instead of failing.
M.discarded = 0
function M.diff(ours, theirs)
  if #ours ~= #theirs then
    return string.format("%d samples, perf script has %d", #ours, #theirs)
  end
  for i = 1, #ours do
    local a, b = ours[i], theirs[i]
    for _, k in ipairs({ "pid", "tid", "cpu", "time", "period", "event", "ip" }) do
      if a[k] ~= b[k] then
        return string.format("sample %d: %s is %s, perf script says %s", i, k,
          tostring(a[k]), tostring(b[k]))
      end
    end
    if #b.chain == 0 and #a.chain > 0 then
      M.discarded = M.discarded + 1
    elseif #a.chain ~= #b.chain then
      return string.format("sample %d (time %s): %d call chain entries, perf script has %d",
        i, a.time, #a.chain, #b.chain)
    end
    for k = 1, #b.chain do
      if a.chain[k] ~= b.chain[k] then
        return string.format("sample %d frame %d: %s, perf script says %s", i, k, a.chain[k], b.chain[k])
      end
    end
  end
  return nil
end

function M.count_by_event(list)
  local c = {}
  for _, s in ipairs(list) do c[s.event] = (c[s.event] or 0) + 1 end
  return c
end

-- perf report --stats: { TOTAL = n, MMAP = n, SAMPLE = n, ... } (the aggregated part)
function M.perf_stats(path)
  local out = util.sh("perf report -i " .. path .. " --stats 2>/dev/null")
  local t, agg = {}, out:match("Aggregated stats:(.-)\n%S") or out
  for name, n in agg:gmatch("%s([%u_]+) events:%s+(%d+)") do t[name] = tonumber(n) end
  return t, out
end

return M
