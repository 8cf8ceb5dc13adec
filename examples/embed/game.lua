-- The game's Lua side for examples/embed/embed.c: update functions called
-- once per frame.  The host profiles it through luaperf's C API; nothing
-- here knows about the profiler.

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
