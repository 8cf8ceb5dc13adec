-- The game-loop fixture of spec/luaprofile_frames_spec.lua, run from Lua
-- and from a C host (spec/hosts/gamehost.c): frame(i) is frame i of 60.
-- Every frame updates (a little CPU) and builds garbage strings; frame 30
-- burns 60 ms of CPU in burner(); every tenth frame, waiter() waits for a
-- child process that sleeps 50 ms.  Strings are kept in a small ring so
-- no JIT can sink their allocation.
local keep = {}

function update()
  local x = 0
  for i = 1, 20000 do x = x + i % 7 end
  return x
end

function garbage(frame)
  local n = 0
  for i = 1, 4000 do
    local s = "item " .. i .. " of a garbage string long enough to be a long one, frame " .. frame
    keep[i % 64 + 1] = s
    n = n + #s
  end
  return n
end

function burner(ms)
  local t0, x = os.clock(), 0
  while os.clock() - t0 < ms / 1000 do
    for i = 1, 20000 do x = x + i % 7 end
  end
  return x
end

function waiter()
  local f = io.popen("sleep 0.05")
  f:read("a")
  f:close()
end

function frame(i)
  update()
  garbage(i)
  if i == 30 then burner(60) end
  if i % 10 == 0 then waiter() end
end
