-- The reference documentation (docs/*.md) against the code, under the
-- interpreter under test: every public name found at run time (keys of the
-- perf module, methods of each object's __index, fields of records and of
-- the script environment, each command's options) must be mentioned in
-- docs/ (in a heading or a `backquoted` span), and every example marked
-- runnable must run.  A name left undocumented on purpose goes in
-- KNOWN_UNDOCUMENTED below, where it is listed (and a name listed there
-- that docs/ now mentions fails too, so the list does not rot).
local util = require "util"
local perf = require "perf"

-- Names found at run time that docs/ does not describe yet, on purpose.
-- Each is printed by the spec; none may be documented (remove it then).
local KNOWN_UNDOCUMENTED = {
}

local DOCS = { "README.md", "reference.md", "script.md", "cli.md" }

local function read_doc(name)
  local s = util.read(util.root .. "/docs/" .. name)
  assert(s, "docs/" .. name .. " is missing")
  return s
end

-- The places a name counts as mentioned: headings and `code spans`.
local function mention_spans(text)
  local spans = {}
  local in_fence = false
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    if line:match("^```") then
      in_fence = not in_fence
    elseif not in_fence then
      if line:match("^#+ ") then spans[#spans + 1] = line end
      for code in line:gmatch("`([^`]+)`") do spans[#spans + 1] = code end
    end
  end
  return spans
end

-- Whether name occurs in one of spans as a whole token: not preceded or
-- followed by a letter, digit or underscore (so `c:read` does not count
-- for c:read_each, nor `perf.list` for perf.listx).
local function escape(s) return (s:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0")) end
local function mentioned_in(spans, name)
  local pat = escape(name)
  for _, s in ipairs(spans) do
    local init = 1
    while true do
      local a, b = s:find(pat, init)
      if not a then break end
      local before = a > 1 and s:sub(a - 1, a - 1) or ""
      local after = s:sub(b + 1, b + 1)
      -- an option (-g) is not a part of another (--no-g), nor a path's
      local opt = name:sub(1, 1) == "-"
      local bad_before = before:match("[%w_]") or (opt and before:match("[%-/]"))
      local bad_after = after:match("[%w_]") or (opt and after:match("%-"))
      if not bad_before and not bad_after then return true end
      init = a + 1
    end
  end
  return false
end

local all_spans, per_doc = {}, {}
for _, d in ipairs(DOCS) do
  local text = read_doc(d)
  per_doc[d] = { text = text, spans = mention_spans(text) }
  for _, s in ipairs(per_doc[d].spans) do all_spans[#all_spans + 1] = s end
end

local known = {}
for _, n in ipairs(KNOWN_UNDOCUMENTED) do known[n] = true end

-- Checks names (an array) against spans; returns the missing ones, and
-- fails on documented names still listed as known undocumented.
local found_total, documented_total = 0, 0
local function check(names, spans, what)
  local missing, stale = {}, {}
  table.sort(names)
  for _, n in ipairs(names) do
    found_total = found_total + 1
    local ok = mentioned_in(spans, n)
    if ok then documented_total = documented_total + 1 end
    if known[n] then
      if ok then stale[#stale + 1] = n end
      io.stderr:write("docs_spec: known undocumented (" .. what .. "): " .. n .. "\n")
    elseif not ok then
      missing[#missing + 1] = n
    end
  end
  assert(#stale == 0, what .. ": documented now, remove from KNOWN_UNDOCUMENTED: " ..
    table.concat(stale, ", "))
  assert(#missing == 0, what .. ": not mentioned in docs/ (a heading or a `backquoted` name): " ..
    table.concat(missing, ", "))
end

local function keys_of(t, skip_meta)
  local out = {}
  for k in pairs(t) do
    if type(k) == "string" and not (skip_meta and k:match("^__")) then out[#out + 1] = k end
  end
  return out
end

-- The methods of an object: its metatable's __index table.
local function methods_of(obj)
  local mt = getmetatable(obj)
  assert(mt, "no metatable")
  local idx = mt.__index
  assert(type(idx) == "table", "__index is not a table")
  return keys_of(idx, true)
end

-- A small CPU-bound program for recordings, run through sh.
local dir = util.tmpdir()
local loop = dir .. "/loop.sh"
util.write(loop, "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done\n")

-- A perf.data file recorded with call chains, as the brief of script.md says.
local data = dir .. "/docs.data"
local rec_out, rec_ok = util.luaperf("record -e cpu-clock -g -o " .. util.q(data) ..
  " -- " .. util.target("sh " .. util.q(loop)))

describe("docs/", function()
  it("mentions every key of the perf module", function()
    local names = {}
    for k, v in pairs(perf) do
      if type(k) == "string" and k ~= "core" and (k == "_VERSION" or not k:match("^_")) then
        names[#names + 1] = "perf." .. k
        -- plain modules (perf.stacks, perf.report, ...): their functions too;
        -- class tables (perf.Profile, ...) are checked through their objects
        if type(v) == "table" and rawget(v, "__index") == nil and not k:match("^%u") then
          for k2 in pairs(v) do
            if type(k2) == "string" and not k2:match("^_") then
              names[#names + 1] = "perf." .. k .. "." .. k2
            end
          end
        end
      end
    end
    check(names, all_spans, "perf module")
  end)

  it("mentions every method of every object", function()
    local objs = {}
    local function add(kind, prefixes, obj)
      assert(obj, "could not make a " .. kind)
      objs[#objs + 1] = { kind = kind, prefixes = prefixes, obj = obj }
    end
    add("counter", { "c" }, assert(perf.counter("task-clock", { pid = 0 })))
    add("group", { "g", "c" }, assert(perf.group{ "task-clock", "page-faults" }))
    add("workload", { "wl" }, assert(perf.workload{ "true" }))
    local s = assert(perf.session{ events = { "cpu-clock" }, freq = 99, pid = 0 })
    add("session", { "s" }, s)
    add("profile", { "p" }, perf.profile())
    add("symbolizer", { "sym" }, perf.symbolizer())
    add("unwinder", { "u" }, perf.unwinder())
    assert(rec_ok, rec_out)
    local f = assert(perf.open(data))
    add("file", { "f" }, f)
    local w = assert(perf.writer(dir .. "/w.data"))
    add("writer", { "w" }, w)
    local core_prof = assert(perf.core.luaprofile{})
    add("C Lua profiler", { "prof" }, core_prof)
    local prof = assert(perf.luaprofile{})
    add("Lua profiler", { "prof" }, prof)
    assert(prof:start())
    add("Lua profile result", { "lp" }, prof:stop())
    -- a method is documented as PREFIX:name with one of its kind's
    -- prefixes (group methods shared with counters count as c:name)
    local missing, stale = {}, {}
    for _, o in ipairs(objs) do
      for _, m in ipairs(methods_of(o.obj)) do
        local n = o.prefixes[1] .. ":" .. m
        local ok = false
        for _, pre in ipairs(o.prefixes) do
          if mentioned_in(all_spans, pre .. ":" .. m) then ok = true end
        end
        found_total = found_total + 1
        if ok then documented_total = documented_total + 1 end
        if known[n] then
          if ok then stale[#stale + 1] = n end
          io.stderr:write("docs_spec: known undocumented (methods): " .. n .. "\n")
        elseif not ok then
          missing[#missing + 1] = n .. " (" .. o.kind .. ")"
        end
      end
    end
    assert(#stale == 0, "documented now, remove from KNOWN_UNDOCUMENTED: " .. table.concat(stale, ", "))
    assert(#missing == 0, "methods not mentioned in docs/: " .. table.concat(missing, ", "))
    prof:close(); core_prof:close(); w:close(); f:close(); s:close()
    for _, o in ipairs(objs) do
      if o.obj.close and o.kind ~= "Lua profile result" then pcall(o.obj.close, o.obj) end
    end
  end)

  it("mentions every field of a perf.stat result", function()
    local res = assert(perf.stat{ events = { "task-clock" }, run = util.target_argv{ "true" } })
    local names = {}
    for k in pairs(res) do names[#names + 1] = "res." .. k end
    check(names, all_spans, "perf.stat result")
  end)

  -- One run of luaperf script over the recording: the environment's
  -- globals, every raw field of every record type, and the lazy fields.
  local script_out
  local function run_probe()
    if script_out then return script_out end
    assert(rec_ok, rec_out)
    local probe = dir .. "/probe.lua"
    util.write(probe, [[
local env = getfenv and getfenv(1) or _ENV
local g = {}
for k in pairs(env) do g[#g + 1] = k end
print("GLOBALS " .. table.concat(g, " "))
local seen, lazy_done = {}, false
local function note(rec)
  local t = rec.type
  seen[t] = seen[t] or {}
  for k in pairs(rec) do seen[t][k] = true end
end
function sample(rec)
  note(rec)
  if not lazy_done and rec.callchain and #rec.callchain > 1 then
    lazy_done = true
    local ks = {}
    for _, k in ipairs(argv) do
      local v = rec[k]
      ks[#ks + 1] = k .. "=" .. (v == nil and "nil" or type(v))
    end
    print("LAZY " .. table.concat(ks, " "))
    local sk = {}
    for k in pairs(rec.sym) do sk[#sk + 1] = k end
    print("SYM " .. table.concat(sk, " "))
    local fk = {}
    for k in pairs(rec.frames[1]) do fk[#fk + 1] = k end
    print("FRAME " .. table.concat(fk, " "))
  end
end
function record(rec) note(rec) end
function finish()
  for t, ks in pairs(seen) do
    local l = {}
    for k in pairs(ks) do l[#l + 1] = k end
    print("FIELDS " .. t .. " " .. table.concat(l, " "))
  end
end
]])
    -- the documented per-sample fields that apply to this recording
    local want = {}
    for line in per_doc["script.md"].text:gmatch("[^\n]+") do
      local name, present = line:match("^| `rec%.([%w_]+)` | ([%w%-]+) |")
      if name and (present == "always" or present == "-g") then want[#want + 1] = name end
    end
    assert(#want > 10, "script.md: the SAMPLE field table was not found")
    -- and the fields the script's records compute on first use (from the source)
    local src = util.read(util.root .. "/lua/perf/cli/script.lua")
    local lazy = {}
    local body = src:match("local function decorate%(st%)(.-)\nend\n")
    assert(body, "lua/perf/cli/script.lua: decorate() not found")
    for k in body:gmatch('k == "([%w_]+)"') do lazy[#lazy + 1] = k end
    assert(#lazy >= 3, "no lazy fields found in decorate()")
    local args = table.concat(want, " ") .. " " .. table.concat(lazy, " ")
    local out, ok = util.luaperf("script -i " .. util.q(data) .. " " .. util.q(probe) .. " " .. args)
    assert(ok, out)
    script_out = { out = out, want = want, lazy = lazy }
    return script_out
  end

  it("describes the script environment: callbacks and globals", function()
    local r = run_probe()
    local g = r.out:match("GLOBALS ([^\n]*)")
    assert(g, r.out)
    local names = {}
    for k in g:gmatch("%S+") do names[#names + 1] = k end
    assert(#names >= 3, "globals: " .. g)
    local spans = per_doc["script.md"].spans
    check(names, spans, "script globals")
    -- the callbacks script.lua calls, and the tracepoint handler form
    local src = util.read(util.root .. "/lua/perf/cli/script.lua")
    local cbs = {}
    for n in src:gmatch('call%(env, "([%w_]+)"') do cbs[#cbs + 1] = n end
    assert(#cbs >= 4, "callbacks not found in lua/perf/cli/script.lua")
    assert(src:find('gsub(":", "__")', 1, true), "the tracepoint handler naming changed")
    cbs[#cbs + 1] = "sched__sched_switch"
    cbs[#cbs + 1] = "subsys__event"
    check(cbs, spans, "script callbacks")
  end)

  it("describes every record field, and the documented ones are there", function()
    local r = run_probe()
    local spans = per_doc["script.md"].spans
    local names, seen = {}, {}
    for t, ks in r.out:gmatch("FIELDS (%S+) ([^\n]*)") do
      for k in ks:gmatch("%S+") do
        if not seen[k] then seen[k] = true; names[#names + 1] = "rec." .. k end
      end
      assert(t)
    end
    assert(seen.type and seen.callchain, "no SAMPLE fields seen:\n" .. r.out)
    for _, k in ipairs(r.lazy) do
      if not seen[k] then seen[k] = true; names[#names + 1] = "rec." .. k end
    end
    check(names, spans, "record fields")
    local sym = r.out:match("SYM ([^\n]*)")
    local fr = r.out:match("FRAME ([^\n]*)")
    assert(sym and fr, "no sample with a call chain:\n" .. r.out)
    local sub = {}
    for k in sym:gmatch("%S+") do sub[#sub + 1] = "rec.sym." .. k end
    for k in fr:gmatch("%S+") do sub[#sub + 1] = "rec.frames[i]." .. k end
    check(sub, spans, "rec.sym / rec.frames fields")
    -- every documented "always" and "-g" field, and every lazy one, is set
    local lz = r.out:match("LAZY ([^\n]*)")
    assert(lz, r.out)
    local absent = {}
    for k, v in lz:gmatch("([%w_]+)=(%S+)") do
      if v == "nil" then absent[#absent + 1] = k end
    end
    assert(#absent == 0, "documented sample fields nil on a luaperf record -g sample: " ..
      table.concat(absent, ", "))
  end)

  it("describes each luaperf command and its options", function()
    local cli = per_doc["cli.md"].text
    local out, ok = util.luaperf("--help")
    assert(ok, out)
    local cmds = {}
    for c in out:gmatch("\n  (%l+)%s") do cmds[#cmds + 1] = c end
    assert(#cmds >= 6, out)
    local missing = {}
    for _, c in ipairs(cmds) do
      -- the command's section: its heading up to the next one
      local a = cli:find("\n## `luaperf " .. c .. "`", 1, true)
      found_total = found_total + 1
      if not a then
        missing[#missing + 1] = "luaperf " .. c
      else
        documented_total = documented_total + 1
        local b = cli:find("\n## ", a + 1, true) or #cli
        local spans = mention_spans(cli:sub(a, b))
        local help = util.luaperf(c .. " --help")
        local opts, seen = {}, {}
        local function add(o)
          if not seen[o] then seen[o] = true; opts[#opts + 1] = o end
        end
        -- options in the help text, as tokens that start a word
        for o in (" " .. help):gmatch("[%s,%[|(](%-%-?%a[%w%-]*)") do add(o) end
        -- and every option the command's source accepts
        local src = util.read(util.root .. "/lua/perf/cli/" .. c .. ".lua") or ""
        for o in src:gmatch('"(%-%-?%a[%w%-]*)"') do add(o) end
        local miss = {}
        for _, o in ipairs(opts) do
          found_total = found_total + 1
          if mentioned_in(spans, o) then
            documented_total = documented_total + 1
          elseif not known["luaperf " .. c .. " " .. o] then
            miss[#miss + 1] = o
          end
        end
        if #miss > 0 then missing[#missing + 1] = "luaperf " .. c .. ": " .. table.concat(miss, " ") end
      end
    end
    assert(#missing == 0, "docs/cli.md does not describe: " .. table.concat(missing, "; "))
  end)

  -- Examples: ```lua blocks after <!-- run --> run in a child interpreter;
  -- after <!-- run-script --> under luaperf script on the recording; ```sh
  -- blocks after <!-- run-sh --> with luaperf on PATH, in a fresh directory.
  local function examples()
    local list = {}
    for _, d in ipairs(DOCS) do
      local text = per_doc[d].text
      for mark, lang, body in text:gmatch("<!%-%- (run[%w%-]*) %-%->%s*\n```(%w+)\n(.-)\n```") do
        list[#list + 1] = { doc = d, mark = mark, lang = lang, body = body, n = #list + 1 }
      end
    end
    return list
  end

  it("has runnable examples, and they run", function()
    local list = examples()
    local counts = {}
    for _, e in ipairs(list) do counts[e.doc] = (counts[e.doc] or 0) + 1 end
    assert((counts["reference.md"] or 0) >= 10, "reference.md: too few runnable examples")
    assert((counts["script.md"] or 0) >= 1, "script.md: no runnable example")
    assert((counts["cli.md"] or 0) >= 5, "cli.md: too few runnable examples")
    local failed = {}
    for i, e in ipairs(list) do
      local where = string.format("docs/%s example %d (%s):\n%s", e.doc, i, e.mark, e.body)
      local path = dir .. "/example" .. i .. ".lua"
      if e.mark == "run" and e.lang == "lua" then
        local ok, err = pcall(util.run_lua, path, e.body)
        if not ok then failed[#failed + 1] = where .. "\n--> " .. tostring(err) end
      elseif e.mark == "run-script" and e.lang == "lua" then
        assert(rec_ok, rec_out)
        util.write(path, e.body)
        local out, ok = util.luaperf("script -i " .. util.q(data) .. " " .. util.q(path) .. " 5")
        if not ok then failed[#failed + 1] = where .. "\n--> " .. out end
      elseif e.mark == "run-sh" and e.lang == "sh" then
        if not util.preload then
          local wd = util.tmpdir()
          util.write(wd .. "/example.sh", "set -e\n" .. e.body .. "\n")
          local out, ok = util.sh("cd " .. util.q(wd) .. " && PATH=" .. util.q(util.root .. "/bin") ..
            ":$PATH LUAPERF_LUA=" .. util.lua .. " sh example.sh")
          if not ok then failed[#failed + 1] = where .. "\n--> " .. out end
        end
      else
        failed[#failed + 1] = where .. "\n--> unknown marker or language"
      end
    end
    assert(#failed == 0, table.concat(failed, "\n\n"))
  end)

  it("links the C embedding API", function()
    local readme = per_doc["README.md"].text
    assert(readme:find("csrc/include/luaperf.h", 1, true))
    assert(util.read(util.root .. "/csrc/include/luaperf.h"), "csrc/include/luaperf.h is missing")
  end)

  it("reports how much is documented", function()
    io.stderr:write(string.format("docs_spec: %d of %d names documented, %d known undocumented\n",
      documented_total, found_total, #KNOWN_UNDOCUMENTED))
  end)
end)
