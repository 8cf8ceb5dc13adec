-- What alloc = N costs on its own (issue 17's target: <= 3% at 256 KiB
-- against the same run unprofiled):
--   lua5.4|luajit bench/luaprofile_alloc.lua [ROUNDS]
-- The densest allocation pattern of Lua (1.5M string concatenations and
-- two-field tables, about 30M allocator calls a second on Lua 5.4), run
-- unprofiled, with the sampler alone at 1 Hz (it takes no sample: what
-- start and stop cost), with alloc = 1 GiB (the allocator shim alone: it
-- samples nothing) and with alloc = 256 KiB.  The variants' order turns
-- each round, so none always runs first (the first run of a round was up
-- to 3% faster or slower here); medians of CPU seconds (os.clock).
local B = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "luaprofile_work.lua")
local rounds = tonumber(arg[1]) or 15

local variants = {
  { "unprofiled", nil },
  { "1 Hz", { freq = 1 } },
  { "1 Hz + alloc=1GiB", { freq = 1, alloc = 1024 * 1024 * 1024 } },
  { "1 Hz + alloc=256KiB", { freq = 1, alloc = 256 * 1024 } },
}
local t, stats = {}, nil
for r = 1, rounds do
  for k = 0, #variants - 1 do
    local v = variants[(r + k) % #variants + 1]
    local c, st = B.run(v[2], B.alloc_work)
    t[v[1]] = t[v[1]] or {}
    table.insert(t[v[1]], c)
    if v[1] == "1 Hz + alloc=256KiB" then stats = st end
  end
end
local who = _VERSION .. (jit and " (LuaJIT)" or "")
local base, hz = B.median(t.unprofiled), B.median(t["1 Hz"])
for _, v in ipairs(variants) do
  local m = B.median(t[v[1]])
  print(string.format("%s alloc-only %-20s %.3f s CPU  %+.1f%% of unprofiled  %+.1f%% of 1 Hz",
    who, v[1], m, (m / base - 1) * 100, (m / hz - 1) * 100))
end
print(string.format("%s alloc-only 256 KiB: %d samples, %.1f MB counted, safe points %.1f us each",
  who, stats.alloc_samples, stats.alloc_bytes / 1e6,
  stats.safepoints > 0 and stats.safepoint_ns / stats.safepoints / 1e3 or 0))
