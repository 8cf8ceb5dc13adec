-- The application of examples/openresty: one expensive handler, one cheap.
local M = {}

local function checksum(n)
  local h = 0
  for i = 1, n do h = (h * 31 + i) % 1000000007 end
  return h
end

local function render_page(rows)
  local out = {}
  for i = 1, rows do out[i] = ("<tr><td>%d</td></tr>"):format(i) end
  return table.concat(out)
end

function M.hot()
  local h = checksum(300000)
  local page = render_page(2000)
  ngx.say(h, " ", #page)
end

function M.cold()
  ngx.say(checksum(20000))
end

return M
