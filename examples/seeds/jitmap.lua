-- perf-profiling-tool.txt, "Production Notes" (the JIT perf map contract,
-- jit-interface.txt): a JIT writes /tmp/perf-PID.map, one "START SIZE name" line a
-- code range, hex without 0x, owned by the process's user; profilers then name
-- samples in code no ELF file describes.  LuaJIT's traces, named by perf.jitmap,
-- sampled from this process: without the map they would be bare addresses.
-- Plain Lua has no JIT: the script runs itself under luajit when it can.
--   luajit examples/seeds/jitmap.lua      (lua5.4 ... re-runs it under luajit)
local perf = dofile(arg[0]:match("^(.-)[^/]*$") .. "../checkout.lua")
if not jit then
  print("plain Lua has no JIT and no perf map (" .. select(2, perf.jitmap()) .. "): running it under luajit")
  io.stdout:flush()
  local ok = os.execute("luajit " .. arg[0])
  os.exit(ok == true or ok == 0)
end
local jm = assert(perf.jitmap())
local s = assert(perf.session{ events = { "cpu-clock" }, freq = 999, pid = 0, user_only = true })
local function checksum(n)
  local h = 0
  for i = 1, n do h = (h * 31 + i) % 2147483647 end
  return h
end
assert(s:start())
local t0 = perf.clock()
repeat checksum(1e5) until perf.clock() - t0 > 0.3
s:stop()
local info = jm:info()
print(("%s: %d lines, %d traces named (START SIZE name):"):format(info.path, info.entries, info.traces))
for i, e in ipairs(jm:entries()) do if i <= 5 then print(("  %x %x %s"):format(e.start, e.size, e.name)) end end
print("top symbols of the samples taken in this process:")
for _, row in ipairs(s:profile():top{ by = "sym", n = 5 }) do print(("  %6.2f%%  %s"):format(row.self_pct, row.sym)) end
jm:close(); s:close()
os.remove(info.path)          -- a profiler reading it after the process is gone would keep it
