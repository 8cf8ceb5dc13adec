-- luaperf report: what `perf report --stdio` prints, from a perf.data file
-- (or folded stacks): a header with the event, the sample count and the
-- lost samples; one row per (command, shared object, symbol) with its
-- overhead (children and self); optionally the call graph under each row.
local usage = [[
usage: luaperf report [-i perf.data|file.folded] [options]

  -i FILE                input (default perf.data)
  -s, --sort KEYS        comma-separated: sym, dso, comm, pid, tid, cpu,
                         srcline, parent (default comm,dso,sym); comm is
                         the name the thread had at each sample; pid, as
                         perf's, is one row per thread, "TID:its last name"
                         (tid too)
  -p, --parent REGEX     the parent regex (POSIX extended; default
                         ^sys_|^do_page_fault); adds parent to the keys
  --children             overhead includes callees (default with call chains)
  --no-children          self overhead only
  --percent-limit P      hide rows under P percent
  -g, --call-graph[=ARGS]
                         print the call graph under each row; ARGS, as
                         perf's, comma-separated: graph (the default),
                         none, caller (root first, the default) or callee
                         (the row's entry first, then its callers), a
                         threshold in percent (default 0.5), function
  -G, --inverted         the call graph, caller order (perf's alias)
  --max-stack N          walk at most N entries of each call chain, as
                         perf's: in the graphs' order (root first with
                         children: the N nearest the root), the sample's
                         own entry counted still
  --no-call-graph        no call graph (default)
  -n, --show-nr-samples  a Samples column (the samples of each row's own
                         entry), as perf's
  --show-total-period    a Period column (their period), as perf's
  -q, --quiet            the rows alone: no header, no column titles
  --stats                the records of each type and each event's samples
                         and lost samples, as perf report --stats; no report
  --header, --header-only
                         the file's header and features as perf prints
                         them (host, kernel, perf version, command line,
                         events, PMUs, ...), then the report (or not)
  --rows N               at most N rows
  --weight W             samples or period (default period, as perf)
  --comm NAME, --dso PATTERN, --symbol PATTERN
                         only samples of that command, or whose leaf's
                         object or symbol matches (Lua patterns)
  -c, --comms LIST, --pid LIST, --tid LIST, -d, --dsos LIST, -S, --symbols LIST
                         perf's filters (comma-separated): only the rows
                         made by a sample of one of those commands,
                         processes or threads, whose leaf is in one of
                         those objects and symbols (perf marks a row by the
                         sample that makes it; later samples of any thread
                         still add to it). One name: its column left out,
                         "# comm: NAME" above, as perf's
  -C, --cpu LIST         only samples taken on these CPUs (0,2-3), as
                         perf's: the others are not counted at all
  --time START,STOP      only samples in this time span (seconds.fraction,
                         inclusive; either side may be empty), as perf's
  --percentage absolute|relative
                         percentages of every sample (default, as perf) or
                         of the samples the filters keep
  -e, --event NAME       the one event to report when the file has several
                         (default: each in turn, as perf prints them)
  --group, --no-group    the events of a group (perf record -e '{a,b}') in
                         one table, a column each (default, as perf), or
                         each in a table of its own
  --symfs DIR            read the recorded objects under DIR (DIR/usr/bin/foo),
                         as perf's --symfs
  --stdio                accepted for perf compatibility (always text)
  --kallsyms FILE        kernel symbols from FILE (a saved /proc/kallsyms),
                         whatever kernel the file recorded
  --vmlinux FILE         kernel symbols from FILE (an ELF vmlinux; used only
                         if it is the recorded kernel)
]]

local options = require "perf.cli.options"

-- perf's -g ARGS: "print_type,threshold[,print_limit],order,sort_key
-- [,branch],value", any order; what is not drawn here is refused by name
local function call_graph(o, v)
  local numbers = 0
  for t in v:gmatch("[^,]+") do
    if t == "graph" or t == "function" or t == "percent" then
      o.graph = true
    elseif t == "none" then
      o.graph = false
    elseif t == "caller" or t == "callee" then
      o.graph, o.callee = o.graph ~= false, t == "callee"
    elseif tonumber(t) and numbers == 0 then
      numbers = 1
      o.graph, o.graph_pct = o.graph ~= false, tonumber(t)
    else
      return "-g: '" .. t .. "' is not drawn here (graph, none, caller, callee, " ..
        "a threshold, function)"
    end
  end
  if o.graph == nil then o.graph = true end
end

local function parse(args)
  local o = { input = "perf.data", sort = "comm,dso,sym", weight = "period" }
  -- -g takes a value only as perf's does: attached, or a next argument
  -- that is not an option
  local a, i = {}, 1
  while i <= #args do
    local x, nxt = args[i], args[i + 1]
    if (x == "-g" or x == "--call-graph") and nxt and nxt:sub(1, 1) ~= "-" then
      a[#a + 1], i = "--call-graph=" .. nxt, i + 2
    else
      a[#a + 1], i = x == "--call-graph" and "-g" or x, i + 1
    end
  end
  args = a
  local takes = { ["-i"] = "input", ["--input"] = "input", ["-s"] = "sort", ["--sort"] = "sort",
    ["--percent-limit"] = function(o, v)
      -- as perf's: the graphs' threshold too (the last given wins)
      o.percent_limit, o.graph_pct = v, tonumber(v)
    end,
    ["--call-graph"] = call_graph, ["--rows"] = "n", ["--comm"] = "comm",
    ["-c"] = "comms", ["--comms"] = "comms", ["-d"] = "dsos", ["--dsos"] = "dsos",
    ["-S"] = "symbols", ["--symbols"] = "symbols",
    ["--pid"] = "pids", ["--tid"] = "tids", ["--dso"] = "dso", ["--symbol"] = "symbol",
    ["--weight"] = "weight", ["-e"] = "event", ["--event"] = "event",
    ["--kallsyms"] = "kallsyms", ["--vmlinux"] = "vmlinux", ["--symfs"] = "symfs",
    ["--percentage"] = "percentage", ["-p"] = "parent", ["--parent"] = "parent",
    ["--max-stack"] = options.number("max_stack", "--max-stack expects a number >= 0", 0) }
  options.window(takes)
  local flags = { ["--children"] = { "children", true }, ["--no-children"] = { "children", false },
    ["-g"] = { "graph", true }, ["-G"] = { "graph", true }, ["--inverted"] = { "graph", true },
    ["--no-call-graph"] = { "graph", false }, ["--stdio"] = { "stdio", true },
    ["--group"] = { "group", true }, ["--no-group"] = { "group", false },
    ["-n"] = { "show_samples", true }, ["--show-nr-samples"] = { "show_samples", true },
    ["--show-total-period"] = { "show_period", true },
    ["-q"] = { "quiet", true }, ["--quiet"] = { "quiet", true }, ["--stats"] = { "stats", true },
    ["--header"] = { "header", true }, ["--header-only"] = { "header_only", true },
    ["-h"] = { "help", true }, ["--help"] = { "help", true } }
  local ok, err = options.parse(args, o, takes, flags)
  if not ok then return nil, err end
  for _, k in ipairs({ "comms", "dsos", "symbols" }) do
    if o[k] then
      local list = {}
      for name in o[k]:gmatch("[^,]+") do list[#list + 1] = name end
      o[k] = list
    end
  end
  for _, k in ipairs({ "pids", "tids" }) do
    if o[k] then
      local list = {}
      for v in o[k]:gmatch("[^,]+") do
        list[#list + 1] = math.tointeger and math.tointeger(tonumber(v)) or tonumber(v)
        if not list[#list] then
          return nil, "--" .. k:sub(1, 3) .. " expects numbers, got '" .. o[k] .. "'"
        end
      end
      o[k] = list
    end
  end
  for _, k in ipairs({ "percent_limit", "n" }) do
    if type(o[k]) == "string" then
      local n = tonumber(o[k])
      if not n then
        return nil, (k == "n" and "rows" or k:gsub("_", "-")) .. " expects a number, got '" .. o[k] .. "'"
      end
      o[k] = n
    end
  end
  if o.weight ~= "samples" and o.weight ~= "period" then
    return nil, "--weight expects samples or period"
  end
  o.percentage = o.percentage or "absolute"
  if o.percentage ~= "absolute" and o.percentage ~= "relative" then
    return nil, "--percentage expects absolute or relative"
  end
  return o
end

-- perf's sample count: 2814 -> "2K"
local short_count = require("perf.report").short_count

local fixed = require("perf.report").fixed

local function pct(x) return fixed(x, 2) .. "%" end

-- The lines above the table: losses, the sample count and the event.
local function header(meta)
  local out = {}
  local function put(s) out[#out + 1] = s end
  put("# luaperf report")
  put("#")
  put(string.format("# Total Lost Samples: %d", meta.lost or 0))
  if (meta.throttled or 0) > 0 then
    put(string.format("# Throttle events: %d (samples were dropped; the profile may be biased)", meta.throttled))
  end
  put("#")
  -- perf's "events" for a group, and for its leader shown alone
  -- perf's " (time slices: ARG)" after the event under --time
  put(string.format("# Samples: %s of event%s '%s'%s", short_count(meta.samples or 0),
    meta.plural and "s" or "", meta.event or "unknown",
    meta.time_str and " (time slices: " .. meta.time_str .. ")" or ""))
  put(string.format("# Event count (approx.): %.0f", meta.period or 0))
  put("#")
  return table.concat(out, "\n")
end

-- The call graph under a row, in perf's ASCII style (perf's default
-- "graph,0.5": absolute percentages, branches under 0.5% of the total left
-- out; --percent-limit P raises that to P, as in perf).
-- A node's name: an address with no symbol is perf's "%#lx" there, not
-- the row's 16 digits.
local function node_name(s)
  local hex = s:match("^0x(%x+)$")
  if hex and #hex == 16 and not hex:find("[A-F]") then return "0x" .. (hex:gsub("^0+(.)", "%1")) end
  -- address 0, which "%#.16lx" prints without its 0x: "%#lx" is "0"
  if s == "0000000000000000" then return "0" end
  return s
end

local function print_graph(out, root, total, minpct)
  local function line(s) out[#out + 1] = s end
  local min = total * minpct / 100
  local function branches(node, prefix)
    local kids = {}
    for _, c in ipairs(node.kids) do if c.w >= min then kids[#kids + 1] = c end end
    for i, c in ipairs(kids) do
      local last = i == #kids
      line(prefix .. "|          ")
      line(prefix .. (last and " --" or "|--") .. pct(100 * c.w / total) .. "--" .. node_name(c.name))
      local sub = prefix .. (last and " " or "|") .. string.rep(" ", 10)
      -- a chain continues without percentages while it does not split
      local n = c
      while #n.kids == 1 and n.kids[1].w == n.w do
        n = n.kids[1]
        line(sub .. node_name(n.name))
      end
      branches(n, sub)
    end
  end
  local top = root.kids
  -- perf drops a root's kids lighter than min: a tree lighter than min
  -- prints nothing
  if root.w < min then return end
  if #top == 1 and top[1].w == root.w then
    line("            |")
    line("            ---" .. node_name(top[1].name))
    local n = top[1]
    while #n.kids == 1 and n.kids[1].w == n.w do
      n = n.kids[1]
      line(string.rep(" ", 15) .. node_name(n.name))
    end
    branches(n, string.rep(" ", 15))
  else
    local any = false
    for _, c in ipairs(top) do any = any or c.w >= min end
    -- perf ends a graph with a blank line, when it printed one
    if not any then return end
    branches(root, string.rep(" ", 12))
  end
  line("")
end

-- The rows of an event group as perf's group view shows them: a row for
-- each key any member has, its values in each member's table (member i's
-- fields self_pcts[i], total_pcts[i]; 0 where it has none), sorted as
-- perf sorts a group: by the leader's sum, then each member's, children
-- before self, then the keys' order.  rows_of(event, extra_opts) are a
-- report's rows; nil and a message when a report fails.
local function group_rows(members, children, rows_of)
  local per, total, all = {}, {}, {}
  for i, ev in ipairs(members) do
    local rows, err = rows_of(ev)
    if not rows then return nil, err end
    per[i] = {}
    for _, r in ipairs(rows) do per[i][r.key] = r end
    total[i], all[i] = rows.total, rows.all
  end
  -- every key in perf's order of equal sums (rows of events outside the
  -- group are passed over)
  local ordered, err = rows_of(nil, { order = "keys" })
  if not ordered then return nil, err end
  local out = {}
  for rank, r in ipairs(ordered) do
    local row
    for i = 1, #members do
      local m = per[i][r.key]
      if m and not row then
        row = setmetatable({ rank = rank, self_pcts = {}, total_pcts = {}, selfs = {},
          totals = {}, sampless = {}, periods = {} }, { __index = m })
      end
    end
    if row then
      for i = 1, #members do
        local m = per[i][r.key]
        row.self_pcts[i], row.total_pcts[i] = m and m.self_pct or 0, m and m.total_pct or 0
        row.selfs[i], row.totals[i] = m and m.self or 0, m and m.total or 0
        row.sampless[i], row.periods[i] = m and m.samples or 0, m and m.period or 0
      end
      -- the leader's percentages, for --percent-limit
      row.self_pct, row.total_pct = row.self_pcts[1], row.total_pcts[1]
      out[#out + 1] = row
    end
  end
  local function cmp(a, b, field)
    for i = 1, #members do
      local x, y = a[field][i], b[field][i]
      if x ~= y then return x > y end
    end
  end
  table.sort(out, function(a, b)
    local c
    if children then c = cmp(a, b, "totals") end
    if c == nil then c = cmp(a, b, "selfs") end
    if c == nil then return a.rank < b.rank end
    return c
  end)
  out.total, out.all = total[1], all[1]
  return out
end

-- One event's table (and call graphs) to stdout, after head; 0, or the
-- exit code of a usage error or a failed write.  group: the events of a
-- group, shown together (perf's group view).
local function print_table(o, src, list, meta, head, children, keys, by, report, group)
  local comm_cut = meta.comm_width or 0
  if list then
    for _, s in ipairs(list) do
      -- perf sizes the Command column by each thread's last name (its
      -- thread__comm_len) and cuts every name to that width: a thread named
      -- "pyenv-hooks" before it exec'd "bash" shows as "pyenv-ho" beside "python3"
      local n = #(s.thread_comm or s.comm or "")
      if n > comm_cut then comm_cut = n end
    end
  end
  -- never narrower than its title: "perf-exec" beside threads last named
  -- "shaped" or shorter is "perf-ex"
  if comm_cut > 0 and comm_cut < #"Command" then comm_cut = #"Command" end

  -- perf report -g is "graph,0.5,caller": root first in both modes
  local ropts = { by = by, children = children, caller = o.graph or nil, callee = o.callee,
    graph_ties = o.graph or nil,
    weight = o.weight,
    event = meta.view_event,
    comm = o.comm, dso = o.dso, sym = o.symbol,
    comms = o.comms, pids = o.pids, tids = o.tids, dsos = o.dsos, syms = o.symbols,
    percentage = o.percentage, parent = o.parent, max_stack = o.max_stack }
  local ok, rows
  if group then
    local stacks = require "perf.stacks"
    local function rows_of(ev, extra)
      local ro = {}
      for k, v in pairs(ropts) do ro[k] = v end
      for k, v in pairs(extra or {}) do ro[k] = v end
      ro.event = ev
      -- a member with no sample: a column of zeros
      if ev and not meta.sampled[ev] then return { total = 0, all = 0 } end
      if src then return src:report(ro) end
      return report.top(ev and stacks.select_event(list, ev) or list, ro)
    end
    local gerr
    ok, rows, gerr = pcall(group_rows, group, children, rows_of)
    if ok and not rows then
      io.stderr:write("luaperf report: ", tostring(gerr), "\n")
      return 1
    end
  elseif src then
    -- the table itself is laid out in the core
    local cols = children and { "children", "self" } or { "overhead" }
    if o.show_samples then cols[#cols + 1] = "samples" end
    if o.show_period then cols[#cols + 1] = "period" end
    for _, k in ipairs(keys) do cols[#cols + 1] = k end
    ropts.columns, ropts.percent_limit, ropts.n = cols, o.percent_limit, o.n
    ropts.quiet, ropts.comm_of_rows = o.quiet, o.perf_filters
    ropts.comm_cut, ropts.graph, ropts.graph_pct = comm_cut, o.graph, o.graph_pct or 0.5
    -- the table goes to stdout as it is made, after the header; a bad
    -- option fails before either is written
    ropts.out, ropts.head = io.stdout, head ~= "" and head .. "\n" or nil
    local written, err
    ok, written, err = pcall(src.report_text, src, ropts)
    if ok and not written then
      -- the report could not be made or written (memory, a closed pipe)
      io.stderr:write("luaperf report: ", tostring(err), "\n")
      return 1
    end
    rows = written  -- when the call raised: its message, printed below
  else
    ok, rows = pcall(report.top, list, ropts)
  end
  if not ok then
    -- a bad --sort key or filter: a usage error
    io.stderr:write("luaperf report: ", (tostring(rows):gsub("^[^:]*:%d+: ", "")), "\n")
    return 129
  end

  -- perf ends a table with two newlines (the tip follows unless -q)
  local tail = o.quiet and "\n\n" or "\n"
  if src and not group then
    io.stdout:write(tail)
    return 0
  end
  local out = { head ~= "" and head or nil }
  local function put(s) out[#out + 1] = s end

  -- columns
  local cols = {}
  -- a group's column holds each member's percentage, 8 wide
  local function pcts(field, one)
    if not group then return function(r) return pct(r[one]) end end
    return function(r)
      local parts = {}
      for i = 1, #group do
        local v = pct(r[field][i])
        parts[i] = string.rep(" ", 8 - #v) .. v
      end
      return table.concat(parts)
    end
  end
  if children then
    cols[#cols + 1] = { title = "Children", get = pcts("total_pcts", "total_pct"), right = true }
    cols[#cols + 1] = { title = "Self", get = pcts("self_pcts", "self_pct"), right = true }
  else
    cols[#cols + 1] = { title = "Overhead", get = pcts("self_pcts", "self_pct"), right = true }
  end
  -- perf's counts: "%12" each (a group's members side by side), a longer
  -- one overflowing its column rather than widening it
  local function counts_col(title, field, one)
    local function cell(v) local t = string.format("%d", v); return string.rep(" ", 12 - #t) .. t end
    local get = function(r) return cell(r[one] or r.self) end
    if group then
      get = function(r)
        local parts = {}
        for i = 1, #group do parts[i] = cell(r[field][i]) end
        return table.concat(parts)
      end
    end
    return { title = title, get = get, right = true, fixed = 12 * (group and #group or 1) }
  end
  if o.show_samples then cols[#cols + 1] = counts_col("Samples", "sampless", "samples") end
  if o.show_period then cols[#cols + 1] = counts_col("Period", "periods", "period") end
  -- perf's headers: the thread's lines up its name with "%7d:"
  local titles = { comm = "Command", dso = "Shared Object", sym = "Symbol", pid = "    Pid:Command",
    tid = "    Tid:Command", cpu = "CPU" }
  -- perf pads a last cell to the column's width but for the symbol (and
  -- the right-aligned CPU): those are printed to a precision, not a width
  local pads_last = { comm = true, dso = true, pid = true, tid = true, parent = true }
  local getters = {
    comm = function(r) return r.comm or "[unknown]" end,
    dso = function(r) return r.dso or "[unknown]" end,
    sym = function(r) return (r.kind == "kernel" and "[k] " or "[.] ") .. (r.sym or "[unknown]") end,
    pid = function(r) return string.format("%7d:%s", r.tid or -1, r.thread_comm or r.comm or "[unknown]") end,
    tid = function(r) return string.format("%7d:%s", r.tid or -1, r.thread_comm or r.comm or "[unknown]") end,
    -- perf's "%*.*d" at width 3: 000, 001, -001 for none
    cpu = function(r) return string.format("%3.3d", r.cpu or -1) end,
  }
  for _, k in ipairs(keys) do
    -- (the core's engine has every key; this one not srcline or parent)
    if not titles[k] then
      io.stderr:write("luaperf report: --sort ", k, " needs the core's report engine ",
        "(a perf.data file, without LUAPERF_ENGINE=lua)\n")
      return 1
    end
    local c = { title = titles[k], get = getters[k], pad = pads_last[k], key = k }
    if k == "comm" and comm_cut > 0 then
      c.get = function(r) return getters.comm(r):sub(1, comm_cut) end
    end
    cols[#cols + 1] = c
  end
  local limit = o.percent_limit or 0
  -- perf's filters, by the sample that made the row (its first stack):
  -- the core marks a row of a perf.data file that fails them (shown =
  -- false); a stack list's row carries that stack's leaf
  local function listed(list, ...)
    if not list then return true end
    for _, name in ipairs(list) do
      for i = 1, select("#", ...) do if select(i, ...) == name then return true end end
    end
    return false
  end
  local function passes(r)
    if src then return r.shown ~= false end
    return listed(o.comms, r.comm) and listed(o.pids, r.pid) and listed(o.tids, r.tid) and
      listed(o.dsos, r.leaf_dso, r.leaf_path) and listed(o.symbols, r.leaf_sym)
  end
  local shown, kept = {}, {}
  for _, r in ipairs(rows) do
    if passes(r) then
      kept[#kept + 1] = r
      local p = children and r.total_pct or r.self_pct
      if p >= limit and (not o.n or #shown < o.n) then shown[#shown + 1] = r end
    end
  end
  kept.total, kept.all = rows.total, rows.all
  rows = kept
  for _, c in ipairs(cols) do
    -- perf's overhead columns are at least 8 wide (a group's, 8 a member)
    c.width = c.fixed or c.right and math.max(8 * (group and #group or 1), #c.title) or #c.title
    -- perf's Command column: as wide as the longest thread name its rows
    -- were made by, whatever names the rows print (as pvtext.c)
    if c.key == "comm" and comm_cut > c.width then c.width = comm_cut end
    -- as perf: sized by every row, shown or not
    for _, r in ipairs(c.fixed and {} or rows) do
      local v = c.get(r)
      if #v > c.width then c.width = #v end
      -- an entry with no map or symbol: room for an address's 16 digits
      -- (the object's, unless --dsos names them)
      -- (a stack list's row has its frame; the core's says unmapped,
      -- unnamed)
      local unmapped, unnamed = r.unmapped, r.unnamed
      if r.frame then unmapped, unnamed = not (r.dso and r.dso ~= "[unknown]"), not r.frame.name end
      if c.key == "dso" and not o.dsos and unmapped and c.width < 16 then
        c.width = 16
      elseif c.key == "sym" and unnamed and c.width < 22 then
        c.width = 22
      end
    end
  end
  local function fmt_row(vals, title)
    local parts = {}
    for i, c in ipairs(cols) do
      local v = vals[i]
      if c.right then parts[i] = string.rep(" ", c.width - #v) .. v
      elseif i == #cols and not title and not c.pad then parts[i] = v
      else parts[i] = v .. string.rep(" ", c.width - #v) end
    end
    return table.concat(parts, "  ")
  end
  local th, dots = {}, {}
  for i, c in ipairs(cols) do
    th[i] = c.title
    dots[i] = string.rep(".", c.width)
  end
  if not o.quiet then
    put("# " .. fmt_row(th, true))
    put("# " .. fmt_row(dots))
    put("#")
  end
  local gtotal = o.percentage == "absolute" and rows.all or rows.total
  local gpct = o.graph_pct or 0.5
  -- a row's graph: the chains of the samples counted in it (perf report
  -- -g: caller order)
  local gopts = { caller = true }
  for k, v in pairs(ropts) do gopts[k] = v end
  for _, r in ipairs(shown) do
    local vals = {}
    for j, c in ipairs(cols) do vals[j] = c.get(r) end
    put("  " .. fmt_row(vals))
    if o.graph then
      print_graph(out, report.callgraph(list, r, gopts), gtotal, gpct)
    end
  end
  put("")
  io.stdout:write(table.concat(out, "\n"), tail)
  return 0
end

-- perf's record type names in type order (util/event.c), as --stats
-- prints them; ours say HEADER_ where perf does not
local STAT_TYPES = { "MMAP", "LOST", "COMM", "EXIT", "THROTTLE", "UNTHROTTLE", "FORK", "READ",
  "SAMPLE", "MMAP2", "AUX", "ITRACE_START", "LOST_SAMPLES", "SWITCH", "SWITCH_CPU_WIDE",
  "NAMESPACES", "KSYMBOL", "BPF_EVENT", "CGROUP", "TEXT_POKE", "AUX_OUTPUT_HW_ID",
  "HEADER_ATTR", "HEADER_EVENT_TYPE", "HEADER_TRACING_DATA", "HEADER_BUILD_ID",
  "FINISHED_ROUND", "ID_INDEX", "AUXTRACE_INFO", "AUXTRACE", "AUXTRACE_ERROR", "THREAD_MAP",
  "CPU_MAP", "STAT_CONFIG", "STAT", "STAT_ROUND", "EVENT_UPDATE", "TIME_CONV",
  "HEADER_FEATURE", "COMPRESSED", "FINISHED_INIT" }

-- --stats: perf report --stats, the records of each type and each
-- event's samples and lost samples (f:scan), no report
local function print_stats(o)
  local perf = require "perf"
  local f, err = perf.open(o.input, { unordered = true })
  if not f then
    io.stderr:write("luaperf report: ", tostring(err), "\n")
    return 1
  end
  local ok, s, serr = pcall(f.scan, f)
  if not ok or not s then
    f:close()
    io.stderr:write("luaperf report: ", tostring(serr or s), "\n")
    return 1
  end
  -- each event's lost samples: the LOST_SAMPLES records' counts
  local lost = {}
  if (s.by_type.LOST_SAMPLES or 0) > 0 then
    for r in f:records{ type = "LOST_SAMPLES", fields = false } do
      if r.event then lost[r.event] = (lost[r.event] or 0) + (r.lost or 0) end
    end
  end
  -- perf names a pipe's events from their attrs here (it reads the
  -- stream's names for its reports, not for --stats)
  local hdr = f:header()
  local names, shown = {}, {}
  for _, ev in ipairs(hdr.events) do
    names[#names + 1] = ev.name
    shown[#shown + 1] = hdr.mode == "pipe" and ev.attr_name or ev.name
  end
  local aux = false
  for _, feat in ipairs(hdr.features or {}) do aux = aux or feat == "auxtrace" end
  f:close()
  local out = { "", "Aggregated stats:" .. (aux and
    " (excludes AUX area (e.g. instruction trace) decoded / synthesized events)" or "") }
  local function line(name, n, pct)
    out[#out + 1] = string.format("%16s events: %10d", name, n) ..
      (pct and string.format("  (%4.1f%%)", pct) or "")
  end
  -- perf counts a COMPRESSED record and each record it holds
  s.by_type.COMPRESSED = (s.by_type.COMPRESSED or 0) + (s.compressed_records or 0)
  local total = s.records + (s.compressed_records or 0)
  line("TOTAL", total)
  for _, t in ipairs(STAT_TYPES) do
    local n = s.by_type[t]
    if n and n > 0 then line((t:gsub("^HEADER_", "")), n, total > 0 and 100 * n / total or nil) end
  end
  -- each event name once (f:scan counts by name: two events of one name,
  -- which perf prints apart, are one line here)
  local seen = {}
  for i, name in ipairs(names) do
    local n, nlost = s.by_event[name] or 0, lost[name] or 0
    if not seen[name] and (n > 0 or nlost > 0) then
      seen[name] = true
      out[#out + 1] = shown[i] .. " stats:"
      if n > 0 then line("SAMPLE", n) end
      if nlost > 0 then line("LOST_SAMPLES", nlost) end
    end
  end
  io.stdout:write(table.concat(out, "\n"), "\n")
  return 0
end

return function(args)
  local o, err = parse(args)
  if not o then
    io.stderr:write("luaperf report: ", err, "\n", usage)
    return 129
  end
  if o.help then io.stdout:write(usage); return 0 end
  if o.stats then return print_stats(o) end
  if o.header or o.header_only then
    -- perf's header lines (f:header_text), then the report unless
    -- --header-only; the report's own first line goes, as perf's hint does
    local perf = require "perf"
    local f, ferr = perf.open(o.input, { unordered = true })
    local text = f and f:header_text()
    if f then f:close() end
    if not text then
      io.stderr:write("luaperf report: ", tostring(ferr or "cannot read the header"),
        ferr and "" or (": " .. o.input), "\n")
      return 1
    end
    io.stdout:write(text)
    if o.header_only then return 0 end
    io.stdout:flush()
  end
  local stacks = require "perf.stacks"
  local report = require "perf.report"
  -- -p adds parent to the keys, as perf's does
  if o.parent and not (("," .. o.sort .. ","):find(",parent,", 1, true)) then
    o.sort = o.sort .. ",parent"
  end
  -- rows keyed by comm, pid or tid alone need no frames (perf too resolves
  -- only what its sort keys show)
  local frames = o.graph or o.dso or o.symbol or o.dsos or o.symbols or false
  o.perf_filters = (o.comms or o.pids or o.tids or o.dsos or o.symbols) and true or nil
  local lines, parent = false, false
  local cpu = false
  for k in o.sort:gmatch("[^,%s]+") do
    if k ~= "comm" and k ~= "pid" and k ~= "tid" and k ~= "cpu" then frames = true end
    if k == "srcline" then lines = true end
    if k == "parent" then parent = true end
    if k == "cpu" then cpu = true end
  end
  local progress, done = options.progress("luaperf report", o.input)
  -- --group or --no-group on a file without groups: perf's forced leader
  local lopts = { event = o.event, all_events = true, force_group = o.group ~= nil, kallsyms = o.kallsyms, vmlinux = o.vmlinux, symfs = o.symfs,
    frames = frames and true or false, lines = lines or nil, progress = progress,
    time = o.time, cpus = o.cpus,
    -- rows and their call graphs read a frame per symbol (a graph's
    -- nodes are symbols; lines are an address's)
    by_symbol = not lines or nil,
    -- the samples of each CPU apart (a file without CPUs: all of -1)
    split = cpu and "cpu" or nil }
  -- self overhead without call graphs reads each sample's leaf alone (as
  -- perf, which resolves no chain then); a parent is looked for up the chain
  if o.children == false and not o.graph and not parent then
    lopts.max_stack = 1
    -- and keyed by its symbol (as perf's rows are; a line is an address's),
    -- by command name when no key or filter asks for the thread: a resolve
    -- per symbol, not per address of each thread
    if not lines then
      lopts.leaf_symbols = true
      -- (perf's filters read the thread of the sample that made a row,
      -- and size the Command column by the rows they keep)
      local threads = o.perf_filters
      for k in o.sort:gmatch("[^,%s]+") do
        if k == "pid" or k == "tid" then threads = true end
      end
      if not threads then lopts.threads = false end
    end
  end
  -- a perf.data file: a view whose rows and call graphs the core computes;
  -- folded stacks: a stack list and lua/perf/report.lua
  local src, info = stacks.open_view(o.input, lopts)
  local list
  if src == nil and info == nil then list, info = stacks.load(o.input, lopts) end
  done()
  if not src and not list then
    io.stderr:write("luaperf report: ", info, "\n")
    return 1
  end
  local meta = src and info or list.meta
  meta.time_str = o.time_str
  for _, w in ipairs(meta.warnings or {}) do
    io.stderr:write("luaperf report: warning: ", w, "\n")
  end
  -- perf prints the table of each event in turn (-e picks one), the
  -- events of a group in one table (its group view) unless --no-group; a
  -- group's call graphs are drawn event by event here
  local items = { { event = meta.view_event or meta.event or false } }
  local sampled = {}
  for _, ev in ipairs(meta.events or {}) do sampled[ev] = true end
  meta.sampled = sampled
  if not o.event and meta.events and (#meta.events > 1 or meta.groups) then
    local leader_of, member = {}, {}
    for _, g in ipairs(meta.groups or {}) do
      if sampled[g.events[1]] then
        leader_of[g.events[1]] = g
        if o.group ~= false and not o.graph then
          for i = 2, #g.events do member[g.events[i]] = true end
        end
      end
    end
    items = {}
    for _, ev in ipairs(meta.events) do
      local g = leader_of[ev]
      if g and o.group ~= false and not o.graph then
        items[#items + 1] = { event = ev, group = g }
      elseif not member[ev] then
        -- a leader shown alone is still perf's "events"
        items[#items + 1] = { event = ev, plural = g ~= nil }
      end
    end
  end
  -- as perf, which reads the events' combined sample type: children by
  -- default when samples of any event have call chains
  local has_chains = meta.has_chains
  if src and #(meta.events or {}) > 1 then has_chains = src:summary().has_chains end
  if list then
    for _, s in ipairs(list) do
      if (s.depth or #s.frames) > 1 then has_chains = true; break end
    end
  end
  local children = o.children
  if children == nil then children = has_chains end
  if meta.file_chains == false then
    -- as perf report: what needs call chains is refused on a file without
    -- them, and children are self
    if o.graph then
      io.stderr:write("luaperf report: -g needs call chains, and this file has none ",
        "(did you call 'perf record' without -g?)\n")
      return 1
    end
    if parent then
      io.stderr:write("luaperf report: --sort parent needs call chains, and this file has none ",
        "(did you call 'perf record' without -g?)\n")
      return 1
    end
    children = false
  end

  local keys, by = {}, {}
  for k in o.sort:gmatch("[^,%s]+") do
    if k == "symbol" then k = "sym" end
    if k == "shared_object" then k = "dso" end
    keys[#keys + 1] = k
    -- perf's "pid" is the thread: one row per tid
    by[#by + 1] = (k == "pid" or k == "tid") and "thread" or k
  end
  -- as perf: a filter of one name leaves its column out (unless it would
  -- leave none) and says so above the table
  local elided, shown_keys, elide_lines = {}, {}, {}
  local lists = { comm = { o.comms, "comm" }, dso = { o.dsos, "dso" }, sym = { o.symbols, "symbol" } }
  for _, k in ipairs(keys) do
    local l = lists[k]
    if l and l[1] and #l[1] == 1 then
      elided[k] = true
      elide_lines[#elide_lines + 1] = "# " .. l[2] .. ": " .. l[1][1]
    else
      shown_keys[#shown_keys + 1] = k
    end
  end
  if #shown_keys > 0 then keys = shown_keys end
  -- an event's counts and command width
  local function counts(ev)
    if not sampled[ev] then return { samples = 0, period = 0, comm_width = 0 } end
    if src then return src:summary(ev) end
    local l = stacks.select_event(list, ev)
    return { samples = l.meta.samples, period = l.meta.period, list = l }
  end
  for i, it in ipairs(items) do
    local ev, m, evlist = it.event, meta, list
    if it.group then
      -- the members' counts summed, the group named as perf names it
      local desc = table.concat(it.group.events, ", ")
      if not it.group.forced then desc = it.group.name .. " { " .. desc .. " }" end
      m = setmetatable({ event = desc, plural = true, samples = 0, period = 0, comm_width = 0 },
        { __index = meta })
      for _, gev in ipairs(it.group.events) do
        local c = counts(gev)
        m.samples, m.period = m.samples + c.samples, m.period + c.period
        m.comm_width = math.max(m.comm_width, c.comm_width or 0)
      end
    elseif #items > 1 or it.plural then
      -- the event's own counts; the lines above its table are perf's
      -- between two tables
      local c = counts(ev)
      m = setmetatable({ event = ev, view_event = ev, plural = it.plural, samples = c.samples,
        period = c.period, comm_width = c.comm_width }, { __index = meta })
      if c.list then evlist = c.list end
    end
    local head = header(m)
    if #elide_lines > 0 then
      head = head:gsub("^(# luaperf report\n#\n)", "%1" .. table.concat(elide_lines, "\n") .. "\n#\n")
    end
    if o.quiet then head = ""
    elseif i > 1 then head = "\n" .. head:match("\n(# Samples:.*)$")
    elseif o.header then head = head:gsub("^# luaperf report\n", "") end
    local rc = print_table(o, src, evlist, m, head, children, keys, by, report,
      it.group and it.group.events)
    if rc ~= 0 then return rc end
  end
  return 0
end
