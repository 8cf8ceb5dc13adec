-- The game's Lua side for examples/embed/embed.c: update functions called
-- once per frame, and the profile of the whole process (perf.luaprofile).
local perf = require "perf"

local entities = {}
for i = 1, 10000 do entities[i] = { x = i, y = 0, vx = 1, vy = 0.5 } end

local function physics(dt)
  for _, e in ipairs(entities) do
    e.vy = e.vy - 9.81 * dt
    e.x, e.y = e.x + e.vx * dt, e.y + e.vy * dt
    if e.y < 0 then e.y, e.vy = 0, -e.vy * 0.9 end
  end
end

local function think()
  local n = 0
  for i = 1, #entities, 4 do
    local e = entities[i]
    if (e.x * 31 + e.y) % 7 < 3 then n = n + 1 end
  end
  return n
end

local function draw()
  host.blit(30)              -- C function of the host: its frames stay native
  return #string.rep("-", 64)
end

function update(frame)
  physics(1 / 60)
  think()
  think()
  draw()
end

local prof

function profile_begin()
  prof = assert(perf.luaprofile{ freq = 999, counters = { "task-clock" } })
  prof:start()
end

function profile_end(out)
  local p = prof:stop()
  prof:close()
  local text = p:folded()
  if out == "-" then
    io.write(text)
  else
    local f = assert(io.open(out, "w"))
    f:write(text)
    f:close()
  end
end
