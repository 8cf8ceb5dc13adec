-- The flame graph SVG in a real browser: headless Chromium, driven over
-- the DevTools pipe by spec/browser/drive.py (no network).  Search
-- highlights the right boxes and shows the cumulative percentage that
-- perf report --children gives the function; a click zooms; reset zoom
-- restores; recursion is not counted twice.
local util = require "util"
local folded = require "perf.folded"
local flame = require "perf.flame"

local chromium = "/usr/bin/chromium"

-- JSON for the steps: strings and numbers only.
local function json(v)
  if type(v) == "table" then
    if #v > 0 then
      local parts = {}
      for i, x in ipairs(v) do parts[i] = json(x) end
      return "[" .. table.concat(parts, ",") .. "]"
    end
    local parts = {}
    for k, x in pairs(v) do parts[#parts + 1] = json(k) .. ":" .. json(x) end
    return "{" .. table.concat(parts, ",") .. "}"
  elseif type(v) == "string" then
    return '"' .. v:gsub('[%c"\\]', function(c) return string.format("\\u%04x", c:byte()) end) .. '"'
  end
  return tostring(v)
end

-- Runs the steps; returns the results' values (or raises with the error).
local function drive(dir, steps)
  util.write(dir .. "/steps.json", json(steps))
  local out = util.sh("python3 " .. util.root .. "/spec/browser/drive.py --chromium " .. chromium ..
    " < " .. dir .. "/steps.json 2>/dev/null")
  local ok = out:match('^{"ok": true')
  assert(ok, "browser driver: " .. out)
  -- values are strings, numbers or arrays of strings: pick them out in order
  local results = {}
  local body = out:match('"results": %[(.*)%]}')
  for item in body:gmatch("%b{}") do
    local v = item:match('^{"value": (.*)}$')
    local ms = item:match('"ms": ([%d%.e%-]+)')
    results[#results + 1] = { raw = v, ms = ms and tonumber(ms) }
  end
  return results
end

local function str(r) return (r.raw:match('^"(.*)"$')) end

local boxes_with = [[
Array.from(document.querySelectorAll('g.f')).filter(function (g) {
  return g.querySelector('rect').getAttribute('fill') == 'rgb(230,0,230)';
}).map(function (g) { return g.querySelector('title').textContent; }).sort().join('|')]]

local function box(name)
  return "Array.from(document.querySelectorAll('g.f')).filter(function (g) {" ..
    "return g.querySelector('title').textContent.indexOf(" .. json(name .. " (") .. ") == 0; })[0]"
end

describe("flame graph in headless Chromium", function()
  local dir
  setup(function()
    dir = util.tmpdir()
    local f = io.open(chromium)
    assert(f, chromium .. " is missing: make deps installs Debian's chromium")
    f:close()
  end)
  teardown(function() util.sh("rm -rf " .. util.q(dir)) end)

  it("search highlights the boxes and shows perf report's children percentage; a click zooms", function()
    local prog = util.cc(util.read(util.root .. "/spec/progs/shaped.c"),
      "-O1 -g -fno-omit-frame-pointer -fno-inline", "shaped")
    local data = dir .. "/shaped.data"
    local out, ok = util.perf("record -q -e cpu-clock -F 999 -g -o " .. data .. " " .. prog .. " 1000 2>&1")
    assert.is_true(ok, out)
    local svgpath = dir .. "/flame.svg"
    out, ok = util.luaperf("flame -i " .. data .. " -o " .. svgpath)
    assert.is_true(ok, out)

    -- the reference: perf report's children share of leaf_hash
    local rep = util.sh("perf report -i " .. data ..
      " --stdio --children --sort sym -g none 2>/dev/null")
    local want = tonumber(rep:match("\n%s*([%d%.]+)%%%s+[%d%.]+%%%s+%[%.%] leaf_hash\n"))
    assert.is_not_nil(want, rep)
    -- the boxes that should light up: every leaf_hash box of the SVG
    local svg = util.read(svgpath)
    local titles = {}
    for t in svg:gmatch("<title>(leaf_hash %b())</title>") do titles[#titles + 1] = t end
    table.sort(titles)
    assert.is_true(#titles >= 1)

    local r = drive(dir, {
      { op = "open", url = "file://" .. svgpath },
      { op = "prompt", text = "^leaf_hash$" },
      { op = "click", expr = "document.getElementById('search')" },
      { op = "eval", expr = "document.getElementById('matched').textContent" },
      { op = "eval", expr = boxes_with },
      { op = "eval", expr = box("do_query") .. ".querySelector('rect').getAttribute('width')" },
      { op = "eval", expr = box("leaf_io") .. ".getAttribute('class')" },
      { op = "click", expr = box("do_query") },
      { op = "eval", expr = "document.getElementById('details').textContent" },
      { op = "eval", expr = box("do_query") .. ".querySelector('rect').getAttribute('width')" },
      { op = "eval", expr = box("leaf_io") .. ".getAttribute('class')" },
      { op = "eval", expr = "document.getElementById('unzoom').getAttribute('class')" },
      { op = "click", expr = "document.getElementById('unzoom')" },
      { op = "eval", expr = box("do_query") .. ".querySelector('rect').getAttribute('width')" },
      { op = "eval", expr = box("leaf_io") .. ".getAttribute('class')" },
    })
    local matched = str(r[4])
    local pct = tonumber(matched:match("Matched: ([%d%.]+)%%"))
    assert.is_not_nil(pct, matched)
    assert.is_true(math.abs(pct - want) < 0.015, matched .. " vs perf report " .. want)
    assert.equal(table.concat(titles, "|"), str(r[5]))
    local before = tonumber(str(r[6]))
    assert.is_true(before < 1180)
    assert.equal("f", str(r[7]))
    -- the pointer rests on the box it clicked: its tooltip line shows
    assert.truthy(str(r[9]):match("^do_query %([%d,]+ samples, [%d%.]+%%%)$"), str(r[9]))
    -- zoomed: do_query spans the whole width, leaf_io (not under it) hides
    assert.equal("1180.00", str(r[10]))
    assert.truthy(str(r[11]):find("hide", 1, true))
    assert.equal("show", str(r[12]))
    -- reset zoom restores
    assert.equal(before, tonumber(str(r[14])))
    assert.equal("f", str(r[15]))
  end)

  it("counts a recursive function once in the cumulative percentage", function()
    local list = assert(folded.parse("main;rec;rec;rec 30\nmain;rec;leaf 10\nmain;other 60\n"))
    local svgpath = dir .. "/rec.svg"
    util.write(svgpath, (flame.render(list)))
    local r = drive(dir, {
      { op = "open", url = "file://" .. svgpath .. "?s=rec" },
      { op = "eval", expr = "document.getElementById('matched').textContent" },
    })
    assert.equal("Matched: 40.00% (3 boxes)", str(r[2]))
  end)
end)
