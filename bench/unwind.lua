-- Checks that bench/unwind_bench -p -s printed the same user stacks as
-- perf script -F pid,tid,time,ip,sym,dso --no-inline, sample by sample.
-- usage: lua5.4 bench/unwind.lua perf.txt ours.txt
local function lines(path)
  local f = assert(io.open(path))
  local s = f:read("*a")
  f:close()
  return (s .. "\n"):gmatch("([^\n]*)\n")
end

local function perf_samples(path)
  local out, cur = {}, nil
  for line in lines(path) do
    if line:match("^%s*%d+/%d+%s+%d+%.%d+:") then
      cur = { user = {}, marker = false }
      out[#out + 1] = cur
    elseif cur and line:match("^%s+%x+ ") then
      local addr, rest = line:match("^%s+(%x+) (.*)$")
      local dso = rest:match("%(([^()]*)%)$")
      if dso ~= "[kernel.kallsyms]" then
        if addr == "ffffffffffffffff" then cur.marker = true
        else cur.user[#cur.user + 1] = addr .. " " .. dso end
      end
    end
  end
  return out
end

local function our_samples(path)
  local out, cur = {}, nil
  for line in lines(path) do
    local st = line:match("^%d+/%d+ %d+ (%S+)$")
    if st then
      cur = { user = {}, status = st }
      out[#out + 1] = cur
    elseif cur and line:match("^\t%x+ ") then
      local addr, dso = line:match("^\t(%x+) .*%(([^()]*)%)$")
      cur.user[#cur.user + 1] = { addr .. " " .. dso, dso ~= "[unknown]" }
    end
  end
  return out
end

local p, o = perf_samples(arg[1]), our_samples(arg[2])
assert(#p == #o, string.format("perf has %d samples, ours %d", #p, #o))
local bad, frames, exec = 0, 0, 0
for i = 1, #p do
  local a, b = p[i], o[i]
  if #a.user == 0 and not a.marker and #b.user <= 1 then
    -- perf drops a lone ip it cannot unwind from (an exec in progress,
    -- the dynamic loader's first instructions); we keep it
    exec = exec + 1
  else
    local same = #a.user == #b.user and a.marker == (b.status == "truncated")
    for j = 1, #a.user do
      if not b.user[j] or a.user[j] ~= b.user[j][1] then same = false end
    end
    frames = frames + #a.user
    if not same then
      bad = bad + 1
      if bad <= 3 then io.stderr:write("sample ", i, " differs\n") end
    end
  end
end
print(string.format("stacks: %d samples, %d user frames compared, %d differ, %d lone ips perf drops",
                    #p, frames, bad, exec))
if bad > 0 then os.exit(1) end
