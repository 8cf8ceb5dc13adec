-- Flame graphs: a stack list rendered as a self-contained interactive SVG
-- (click to zoom, reset zoom, search with highlight and cumulative
-- percentage, tooltips), in four layouts:
--   flame      root at the bottom, siblings merged and sorted by name
--   inverted   the same, root at the top (icicle)
--   flamechart x = time: stacks in time order, only neighbours merged
--   diff       widths from one profile, colour from the delta against a
--              base normalised to the same total (red grew, blue shrank)
-- Boxes narrower than minwidth pixels are left out (the footer says how
-- many), and the number of boxes is capped so the file stays bounded.
local stacks = require "perf.stacks"
local svgjs = require "perf.flame_js"

local M = {}

-- Keeps valid UTF-8 sequences, turns stray bytes into '?' (a symbol or
-- path in another encoding must not make the SVG unreadable XML).
local function utf8_clean(s)
  if not s:find("[\128-\255]") then return s end
  local out, i, n = {}, 1, #s
  while i <= n do
    local c = s:byte(i)
    local len = c < 0x80 and 1 or (c >= 0xC2 and c <= 0xDF) and 2 or
      (c >= 0xE0 and c <= 0xEF) and 3 or (c >= 0xF0 and c <= 0xF4) and 4 or 0
    local ok = len > 0 and i + len - 1 <= n
    for j = i + 1, i + len - 1 do
      if not ok then break end
      local d = s:byte(j)
      if d < 0x80 or d > 0xBF then ok = false end
    end
    if ok then
      out[#out + 1] = s:sub(i, i + len - 1)
      i = i + len
    else
      out[#out + 1] = "?"
      i = i + 1
    end
  end
  return table.concat(out)
end

local function xml(s)
  s = utf8_clean(s)
  return (s:gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" })
    :gsub("[%z\1-\8\11\12\14-\31]", "?"))
end
M.xml_escape = xml

local function weight_fn(opts)
  if opts.weight == "period" then
    return function(s) return s.period or 0 end
  end
  return function(s) return s.count or 1 end
end

-- The call tree of a stack list.  A node: { name=, kind=, key=, v=, kids=
-- { [key] = node }, order = { node, ... }, seq= (0, 1, 2... as made) }.
-- chart: stacks in time order, a frame merges only with the last child
-- (neighbours), so x is time.
function M.tree(list, opts)
  opts = opts or {}
  local w = weight_fn(opts)
  local with_comm = opts.comm ~= false
  local chart = opts.layout == "flamechart"
  local root = { name = "all", kind = "root", key = "all", v = 0, kids = {}, order = {}, seq = 0 }
  local made = 0
  local seq = list
  if chart then
    seq = {}
    for i, s in ipairs(list) do seq[i] = s end
    local idx = {}
    for i, s in ipairs(seq) do idx[s] = i end
    table.sort(seq, function(a, b)
      local ta, tb = a.time or 0, b.time or 0
      if ta ~= tb then return ta < tb end
      return idx[a] < idx[b]
    end)
  end
  -- per frame table: its key and label, made once (frames are shared)
  local keycache, labelcache = {}, {}
  local function child(node, name, kind, key)
    local c
    if chart then
      c = node.order[#node.order]
      if c and c.key ~= key then c = nil end
    else
      c = node.kids[key]
    end
    if not c then
      made = made + 1
      c = { name = name, kind = kind, key = key, v = 0, kids = {}, order = {}, seq = made }
      node.kids[key] = c
      node.order[#node.order + 1] = c
    end
    return c
  end
  for _, s in ipairs(seq) do
    local wt = w(s)
    if wt > 0 then
      root.v = root.v + wt
      local node = root
      if with_comm and s.comm then
        node = child(node, s.comm, "comm", "\2" .. s.comm)
        node.v = node.v + wt
      end
      for _, f in ipairs(s.frames) do
        local key = keycache[f]
        local label
        if key then
          label = labelcache[f]
        else
          label = stacks.label(f)
          key = label .. "\1" .. (f.kind or "user")
          keycache[f], labelcache[f] = key, label
        end
        node = child(node, label, f.kind or "user", key)
        node.v = node.v + wt
      end
    end
  end
  return root
end

-- Sets node.delta on every node of skel from the matching path in other,
-- after scaling other to skel's total.
local function set_deltas(skel, other, negate)
  local scale = (other.v > 0) and (skel.v / other.v) or 0
  local eps = 1e-9 * (skel.v > 0 and skel.v or 1)
  local maxd = 0
  local function walk(n, o)
    local d = n.v - (o and o.v * scale or 0)
    if negate then d = -d end
    if d < eps and d > -eps then d = 0 end
    n.delta = d
    if d > maxd then maxd = d elseif -d > maxd then maxd = -d end
    for _, c in ipairs(n.order) do
      walk(c, o and o.kids[c.key] or nil)
    end
  end
  walk(skel, other)
  return maxd
end

-- Deterministic colours: a hash of the name picks the shade, the kind
-- picks the palette (user red-yellow, kernel blue-grey, JIT green,
-- inlined aqua, Lua violet).
local function hash3(name)
  local h1, h2 = 0, 0
  for i = 1, math.min(#name, 24) do
    local b = name:byte(i)
    h1 = (h1 * 31 + b) % 1000003
    h2 = (h2 * 17 + b * 7) % 999983
  end
  return (h1 % 1000) / 1000, (h2 % 1000) / 1000, ((h1 + h2) % 997) / 997
end

local palettes = {
  user = function(a, b, c) return 220 + 35 * c, 50 + 150 * a, 30 + 40 * b end,
  comm = function(a, b, c) return 220 + 35 * c, 50 + 150 * a, 30 + 40 * b end,
  kernel = function(a, b, c) return 110 + 40 * a, 150 + 30 * b, 200 + 30 * c end,
  jit = function(a, b, c) return 50 + 60 * a, 190 + 60 * c, 50 + 60 * b end,
  inline = function(a, b, c) return 60 + 50 * a, 200 + 50 * c, 200 + 50 * b end,
  lua = function(a, b, c) return 170 + 40 * a, 120 + 40 * b, 220 + 35 * c end,
  root = function() return 200, 200, 200 end,
}

local function colour(name, kind, delta, diff, maxd)
  if diff then
    local r, g, b = 255, 255, 255
    local d = delta or 0
    if maxd > 0 then
      if d > 0 then
        g = math.floor(210 * (maxd - d) / maxd); b = g
      elseif d < 0 then
        r = math.floor(210 * (maxd + d) / maxd); g = r
      end
    end
    return string.format("rgb(%d,%d,%d)", r, g, b)
  end
  local p = palettes[kind] or palettes.user
  local r, g, b = p(hash3(name))
  return string.format("rgb(%d,%d,%d)", math.floor(r), math.floor(g), math.floor(b))
end

local function commas(n)
  local s = string.format("%.0f", n)
  local out = s:reverse():gsub("(%d%d%d)", "%1,"):reverse()
  return (out:gsub("^,", ""))
end
M.commas = commas

local FH, FS, XPAD = 16, 12, 10

local function layout_of(opts)
  local layout = opts.layout or "flame"
  if opts.inverted then layout = "inverted" end
  if opts.flamechart then layout = "flamechart" end
  return layout
end

-- Lays a stack list out: the boxes drawn, as arrays (names, kinds, starts,
-- values, depths, deltas), in drawing order, and what was left out.
-- csrc/core/profile/pvflame.c makes the same from a profile view.
local function lay_out(list, opts, layout)
  local topts = { weight = opts.weight, comm = opts.comm, layout = layout }
  local root = M.tree(list, topts)
  local diff = opts.diff ~= nil
  local maxd = 0
  if diff then
    local base = M.tree(opts.diff, topts)
    if opts.negate then
      root, base = base, root
    end
    maxd = set_deltas(root, base, opts.negate)
  end

  local W = opts.width or 1200
  local minw = opts.minwidth or 0.1
  local maxboxes = opts.maxboxes or 10000
  local total = root.v
  local scale = total > 0 and (W - 2 * XPAD) / total or 0

  -- Cap the number of boxes: keep the widest maxboxes, shallower first
  -- among equals (then first made: the order is total, so every Lua and
  -- pvflame.c keep the same), so a kept box's parent is always kept.  A box narrower
  -- than minw is left out anyway and is lighter than every wider one: only
  -- the wide ones are ranked, and only when there are too many of them.
  local keep, capped
  local nboxes = 0
  local wide = {}
  local function collect(n, depth)
    nboxes = nboxes + 1
    if depth == 0 or n.v * scale >= minw then wide[#wide + 1] = { n, depth } end
    for _, c in ipairs(n.order) do collect(c, depth + 1) end
  end
  collect(root, 0)
  capped = nboxes > maxboxes
  if capped and #wide > maxboxes then
    table.sort(wide, function(a, b)
      if a[1].v ~= b[1].v then return a[1].v > b[1].v end
      if a[2] ~= b[2] then return a[2] < b[2] end
      return a[1].seq < b[1].seq
    end)
    keep = {}
    for i = 1, maxboxes do keep[wide[i][1]] = true end
  end
  wide = nil

  local lay = { names = {}, kinds = {}, starts = {}, values = {}, depths = {}, deltas = {},
    total = total, omitted = 0, omitted_weight = 0, maxdepth = 0, capped = capped, maxd = maxd }
  local names, kinds, starts, values, depths, deltas =
    lay.names, lay.kinds, lay.starts, lay.values, lay.depths, lay.deltas
  local nb = 0
  local omitted, omitted_w, maxdepth = 0, 0, 0
  local sorted = layout ~= "flamechart"
  local function count_subtree(n)
    local k = 1
    for _, c in ipairs(n.order) do k = k + count_subtree(c) end
    return k
  end
  local function visit(n, start, depth)
    if depth > 0 and (n.v * scale < minw or (keep and not keep[n])) then
      omitted = omitted + count_subtree(n)
      omitted_w = omitted_w + n.v
      return
    end
    nb = nb + 1
    names[nb], kinds[nb], starts[nb], values[nb], depths[nb], deltas[nb] =
      n.name, n.kind, start, n.v, depth, n.delta or 0
    if depth > maxdepth then maxdepth = depth end
    local kids = n.order
    if sorted and #kids > 1 then
      kids = {}
      for i, c in ipairs(n.order) do kids[i] = c end
      table.sort(kids, function(a, b)
        if a.name ~= b.name then return a.name < b.name end
        return a.kind < b.kind
      end)
    end
    local x = start
    for _, c in ipairs(kids) do
      visit(c, x, depth + 1)
      x = x + c.v
    end
  end
  if total > 0 then visit(root, 0, 0) end
  lay.omitted, lay.omitted_weight, lay.maxdepth = omitted, omitted_w, maxdepth
  return lay
end

-- The SVG text of a layout (lay_out's or a view's v:flame{}).
local function emit(lay, meta, opts, layout)
  local diff = opts.diff ~= nil
  local maxd = lay.maxd or 0
  local W = opts.width or 1200
  local fh, fs, xpad = FH, FS, XPAD
  local minw = opts.minwidth or 0.1
  local maxboxes = opts.maxboxes or 10000
  local total = lay.total
  local scale = total > 0 and (W - 2 * xpad) / total or 0
  local names, kinds, starts, values, depths, deltas =
    lay.names, lay.kinds, lay.starts, lay.values, lay.depths, lay.deltas
  local nb = #names
  local omitted, omitted_w, maxdepth, capped = lay.omitted, lay.omitted_weight, lay.maxdepth,
    lay.capped

  meta = meta or {}
  local warn = {}
  if (meta.lost or 0) > 0 then warn[#warn + 1] = commas(meta.lost) .. " samples lost" end
  if (meta.throttled or 0) > 0 then warn[#warn + 1] = commas(meta.throttled) .. " throttle events" end
  local top = fh * 3 + (#warn > 0 and fh or 0)
  local bottom = fh * 2
  local H = top + (maxdepth + 1) * fh + bottom
  local inverted = layout == "inverted"
  local function ypos(depth)
    if inverted then return top + depth * fh end
    return H - bottom - (depth + 1) * fh
  end

  local unit = opts.weight == "period" and (meta.unit or "period") or "samples"
  local title = opts.title
  if not title then
    local what = ({ flame = "Flame Graph", inverted = "Icicle Graph",
      flamechart = "Flame Chart" })[layout] or "Flame Graph"
    if diff then what = "Differential " .. what end
    local ev = meta.event and (meta.event .. ", ") or ""
    title = string.format("%s: %s%s %s", what, ev, commas(total), unit)
  end
  local subtitle = opts.subtitle
  if not subtitle and diff then
    subtitle = opts.negate
      and "widths: base profile; red: grew, blue: shrank (normalised to the same total)"
      or "widths: this profile; red: grew, blue: shrank vs base (normalised to the same total)"
  end

  local out = {}
  local n = 0
  local function put(s) n = n + 1; out[n] = s end
  put('<?xml version="1.0" standalone="no"?>\n')
  put(string.format('<svg version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" ' ..
    'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" ' ..
    'onload="init(evt)" data-total="%.17g" data-xpad="%d" data-fontw="%.3f" data-unit="%s" data-layout="%s">\n',
    W, H, W, H, total, xpad, fs * 0.59, xml(unit), layout))
  put('<style type="text/css">\n' ..
    'text { font-family: Verdana, sans-serif; font-size: ' .. fs .. 'px; fill: rgb(0,0,0); }\n' ..
    '#title { text-anchor: middle; font-size: 17px; }\n' ..
    '#warn { text-anchor: middle; fill: rgb(200,0,0); font-weight: bold; }\n' ..
    '#subtitle, #omitted { fill: rgb(90,90,90); }\n' ..
    '#search, #matched, #unzoom { opacity: 0.1; cursor: pointer; }\n' ..
    '#search:hover, #search.show, #unzoom.show, #matched.show { opacity: 1; }\n' ..
    '#unzoom.hide { display: none; }\n' ..
    'g.f:hover rect { stroke: black; stroke-width: 0.5; cursor: pointer; }\n' ..
    'g.f text { pointer-events: none; }\n' ..
    'g.parent { opacity: 0.5; }\n' ..
    'g.hide { display: none; }\n' ..
    '</style>\n')
  put('<script type="text/ecmascript"><![CDATA[\n' .. svgjs .. '\n]]></script>\n')
  put(string.format('<rect x="0" y="0" width="%d" height="%d" fill="rgb(248,248,248)"/>\n', W, H))
  put(string.format('<text id="title" x="%d" y="%d">%s</text>\n', W / 2, fh + 4, xml(title)))
  local y = fh * 2 + 2
  if #warn > 0 then
    put(string.format('<text id="warn" x="%d" y="%d">WARNING: %s: this profile may be biased</text>\n',
      W / 2, y, xml(table.concat(warn, ", "))))
    y = y + fh
  end
  if subtitle then
    put(string.format('<text id="subtitle" x="%d" y="%d">%s</text>\n', xpad, y, xml(subtitle)))
  end
  put(string.format('<text id="unzoom" class="hide" x="%d" y="%d">Reset Zoom</text>\n', xpad, top - 4))
  put(string.format('<text id="search" x="%d" y="%d" text-anchor="end">Search</text>\n', W - xpad, top - 4))
  put(string.format('<text id="matched" x="%d" y="%d" text-anchor="end"> </text>\n', W - xpad, H - 8))
  put(string.format('<text id="details" x="%d" y="%d"> </text>\n', xpad, H - 8))
  if omitted > 0 then
    local why = string.format("narrower than %.2f px", minw)
    if capped then why = why .. " or past the cap of " .. commas(maxboxes) .. " boxes" end
    put(string.format('<text id="omitted" x="%d" y="%d" text-anchor="middle">%s frames %s omitted (%s %s)</text>\n',
      W / 2, H - fh - 8 + fh, commas(omitted), why, commas(omitted_w), unit))
  end
  -- a legend of the kinds present, when there is more than one
  if not diff then
    local present, order = {}, { "user", "kernel", "jit", "inline", "lua" }
    for i = 1, nb do
      local k = kinds[i]
      if k == "comm" then k = "user" end
      present[k] = true
    end
    local shown = {}
    for _, k in ipairs(order) do if present[k] then shown[#shown + 1] = k end end
    if #shown > 1 then
      local lnames = { user = "user", kernel = "kernel", jit = "JIT", inline = "inlined", lua = "Lua" }
      local x = W / 2 - #shown * 40
      for _, k in ipairs(shown) do
        local r, g, bl = palettes[k](0.5, 0.5, 0.5)
        put(string.format('<rect x="%d" y="%d" width="10" height="10" fill="rgb(%d,%d,%d)"/>' ..
          '<text x="%d" y="%d">%s</text>\n', x, top - 13, math.floor(r), math.floor(g), math.floor(bl),
          x + 14, top - 4, lnames[k]))
        x = x + 80
      end
    end
  end
  put('<g id="frames">\n')
  local fontw = fs * 0.59
  for i = 1, nb do
    local name, v, start, depth = names[i], values[i], starts[i], depths[i]
    local delta = deltas and deltas[i] or 0
    local x = xpad + start * scale
    local w = v * scale
    local pct = 100 * v / total
    local tip
    if diff then
      tip = string.format("%s (%s %s, %.2f%%; %+.2f%% vs base)", name, commas(v), unit, pct,
        100 * delta / total)
    else
      tip = string.format("%s (%s %s, %.2f%%)", name, commas(v), unit, pct)
    end
    local label = ""
    local chars = math.floor((w - 3) / fontw)
    if chars >= 3 then
      label = name
      if #label > chars then label = label:sub(1, chars - 2) .. ".." end
    end
    local yy = ypos(depth)
    put(string.format('<g class="f" data-s="%.17g" data-e="%.17g" data-d="%d"><title>%s</title>' ..
      '<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" rx="2"/>',
      start, start + v, depth, xml(tip), x, yy, w, fh - 1, colour(name, kinds[i], delta, diff, maxd)))
    if label ~= "" then
      put(string.format('<text x="%.1f" y="%d">%s</text>', x + 3, yy + fh - 4, xml(label)))
    end
    put('</g>\n')
  end
  put('</g>\n</svg>\n')
  return table.concat(out), { boxes = nb, omitted = omitted, omitted_weight = omitted_w,
    total = total, minwidth = minw, maxdelta = maxd }
end

-- Renders a stack list as SVG text.  opts:
--   layout      "flame" (default) | "inverted" | "flamechart"
--   diff        a base stack list: differential colouring; negate flips
--               the direction (widths from the base)
--   weight      "samples" (default) | "period"
--   title, subtitle, width (px, 1200), minwidth (px, 0.1), maxboxes (10000:
--               a file Chromium opens in about a second)
--   comm        false: no command frame at the root
function M.render(list, opts)
  opts = opts or {}
  if type(list) ~= "table" then error("flame.render: expected a stack list", 2) end
  local layout = layout_of(opts)
  return emit(lay_out(list, opts, layout), list.meta, opts, layout)
end

-- The same SVG from a profile view (perf.ProfileView), its tree and layout
-- built in C (v:flame{}): Lua formats only the boxes drawn.  vopts: the
-- view's filters (event, comm, pid, tid); meta: the stack list's meta;
-- opts: M.render's, but for diff and the flamechart layout.
function M.render_view(view, vopts, meta, opts)
  opts = opts or {}
  local layout = layout_of(opts)
  if opts.diff ~= nil or layout == "flamechart" then
    error("flame.render_view: no diff or flamechart (render a stack list)", 2)
  end
  local fopts = { event = vopts.event, comm = vopts.comm, pid = vopts.pid, tid = vopts.tid,
    comm_frame = opts.comm ~= false, weight = opts.weight, width = opts.width or 1200,
    xpad = XPAD, minwidth = opts.minwidth or 0.1, maxboxes = opts.maxboxes or 10000 }
  return emit(view:flame(fopts), meta, opts, layout)
end

return M
