-- luaperf flame: a perf.data file (or folded stacks) to a flame graph SVG,
-- folded stacks, pprof or speedscope.
local usage = [[
usage: luaperf flame [-i perf.data|file.folded] [-o out.svg | -o -] [options]

  -i FILE             input: a perf.data file (perf's or luaperf's) or folded
                      stacks (default perf.data)
  -o FILE             output file, '-' for stdout (default flame.svg; folded
                      goes to stdout)
  --format F          svg (default), folded, pprof, speedscope
  --inverted          icicle layout (root at the top)
  --flamechart        x axis = time, stacks not merged
  --diff BASE         differential against BASE (same kinds of input): widths
                      from -i, colour red = grew, blue = shrank after
                      normalising BASE to the same total (add --no-comm
                      when the two runs' command names differ)
  --negate            with --diff: widths from BASE instead
  --weight W          samples (default; period for off-CPU time) or period
  --wall              wall-clock time: a file recorded with --off-cpu and a
                      clock event (-e cpu-clock or task-clock) drawn as one
                      graph, both weighted in nanoseconds
  --annotate          folded: add _[k] (kernel), _[j] (JIT), _[i] (inlined)
  --inline            expand inlined functions (DWARF)
  --no-comm           no command name as the root frame
  --title T           the title
  --width PX          image width (default 1200)
  --minwidth PX       leave out boxes narrower than PX (default 0.1)
  --pid N, --tid N, --comm NAME
                      only the samples of a process, thread or command
  -C, --cpu LIST      only samples taken on these CPUs (0,2-3)
  --time START,STOP   only samples in this time span (seconds.fraction,
                      inclusive; either side may be empty), as perf script's
  -e, --event NAME    the event to show when the file has several (default:
                      the first recorded)
  --kallsyms FILE     kernel symbols from FILE (a saved /proc/kallsyms),
                      whatever kernel the file recorded
  --vmlinux FILE      kernel symbols from FILE (an ELF vmlinux; used only if
                      it is the recorded kernel)
  --symfs DIR         read the recorded objects under DIR (DIR/usr/bin/foo),
                      as perf's --symfs
]]

local options = require "perf.cli.options"

local function parse(args)
  local o = { input = "perf.data", format = "svg" }
  local takes = { ["-i"] = "input", ["--input"] = "input", ["-o"] = "output",
    ["--output"] = "output", ["--format"] = "format", ["--diff"] = "diff",
    ["--weight"] = "weight", ["--title"] = "title", ["--minwidth"] = "minwidth",
    ["--width"] = "width", ["--pid"] = "pid", ["--tid"] = "tid", ["--comm"] = "comm",
    ["--event"] = "event", ["-e"] = "event", ["--kallsyms"] = "kallsyms",
    ["--vmlinux"] = "vmlinux", ["--symfs"] = "symfs" }
  options.window(takes)
  local flags = { ["--inverted"] = "inverted", ["--flamechart"] = "flamechart",
    ["--negate"] = "negate", ["--annotate"] = "annotate", ["--inline"] = "inline",
    ["--no-comm"] = "no_comm", ["--wall"] = "wall", ["-h"] = "help", ["--help"] = "help" }
  local ok, err = options.parse(args, o, takes, flags)
  if not ok then return nil, err end
  for _, k in ipairs({ "minwidth", "width", "pid", "tid" }) do
    if o[k] then
      local n = tonumber(o[k])
      if not n or n < 0 then return nil, "--" .. k .. " expects a number, got '" .. o[k] .. "'" end
      o[k] = n
    end
  end
  if o.weight and o.weight ~= "samples" and o.weight ~= "period" then
    return nil, "--weight expects samples or period, got '" .. o.weight .. "'"
  end
  local formats = { svg = true, folded = true, pprof = true, speedscope = true }
  if not formats[o.format] then
    return nil, "--format expects svg, folded, pprof or speedscope, got '" .. o.format .. "'"
  end
  if o.negate and not o.diff then return nil, "--negate needs --diff BASE" end
  if o.diff and o.format ~= "svg" then return nil, "--diff draws an SVG: use --format svg" end
  if o.wall and o.format ~= "svg" and o.format ~= "folded" then
    return nil, "--wall draws an SVG or folded stacks: use --format svg or folded"
  end
  if o.wall and (o.event or o.flamechart or o.diff) then
    return nil, "--wall takes both events of the file: not with -e, --flamechart or --diff"
  end
  if o.wall and o.weight == "samples" then return nil, "--wall weighs by time (period)" end
  return o
end

local OFFCPU = "offcpu-time"

-- --wall: the file's off-CPU samples and the samples of one clock event
-- (cpu-clock or task-clock: their periods are nanoseconds on the CPU, as
-- the off-CPU periods are nanoseconds off it), merged.
local function wall_check(view, meta)
  if not view then
    return nil, "--wall needs a perf.data file (read by the C report engine)"
  end
  local names, off, cpu = meta.events or {}, false, {}
  for _, n in ipairs(names) do
    if n == OFFCPU then off = true else cpu[#cpu + 1] = n end
  end
  if not off then
    return nil, "--wall: no '" .. OFFCPU .. "' samples in this file: record with --off-cpu"
  end
  if #cpu ~= 1 then
    return nil, "--wall: the file needs one CPU event beside '" .. OFFCPU .. "' (it has: " ..
      table.concat(names, ", ") .. "): record with --off-cpu -e cpu-clock"
  end
  local base = cpu[1]:gsub(":.*$", "")
  if base ~= "cpu-clock" and base ~= "task-clock" then
    return nil, "--wall: '" .. cpu[1] .. "' does not count time; record the CPU side with " ..
      "-e cpu-clock (or task-clock), whose periods are nanoseconds"
  end
  return true
end

local default_out = { svg = "flame.svg", folded = "-", pprof = "profile.pb.gz",
  speedscope = "profile.speedscope.json" }

return function(args)
  local o, err = parse(args)
  if not o then
    io.stderr:write("luaperf flame: ", err, "\n", usage)
    return 129
  end
  if o.help then io.stdout:write(usage); return 0 end
  local perf = require "perf"
  local stacks = require "perf.stacks"
  local report = require "perf.report"
  local lopts = { inline = o.inline, per_sample = o.flamechart or o.format == "speedscope",
    lines = o.format == "pprof" or o.format == "speedscope", event = o.event,
    kallsyms = o.kallsyms, vmlinux = o.vmlinux, symfs = o.symfs, time = o.time, cpus = o.cpus }
  local done
  lopts.progress, done = options.progress("luaperf flame", o.input)
  -- folded stacks and flame graphs of a perf.data file come from a view:
  -- symbolized once, folded and filtered in the core
  local view, list, lerr
  if not lopts.per_sample and (o.format == "folded" or o.format == "svg") then
    -- frames as folded stacks show them (a frame per function, not per
    -- address of each process), unless a diff reads the view's stack list
    lopts.by_label = not o.diff
    view, lerr = stacks.open_view(o.input, lopts)
  end
  if view == nil and lerr == nil then list, lerr = stacks.load(o.input, lopts) end
  done()
  if not view and not list then
    io.stderr:write("luaperf flame: ", lerr, "\n")
    return 1
  end
  local meta = view and lerr or list.meta
  if o.wall then
    local ok, why = wall_check(view, meta)
    if not ok then
      io.stderr:write("luaperf flame: ", why, "\n")
      return 1
    end
    local kept = {}
    for _, w in ipairs(meta.warnings or {}) do
      if not w:match("^%d+ events recorded") then kept[#kept + 1] = w end
    end
    meta.view_event, meta.warnings = nil, kept
    meta.samples, meta.period = view:summary().samples, view:summary().period
    o.weight = "period"
  elseif meta.event == OFFCPU and not o.weight then
    -- an off-CPU sample weighs the time its thread was blocked, not one
    o.weight = "period"
  end
  local folded_text, vopts
  if view then
    vopts = { event = meta.view_event, pid = o.pid, tid = o.tid, comm = o.comm,
      annotate = o.annotate, comm_frame = not o.no_comm, weight = o.weight }
    if o.format == "folded" then
      folded_text = view:folded(vopts)
    elseif not o.diff and view.flame then
      -- the tree and layout in C too (flame.render_view): no stack list
      vopts.draw = true
    else
      -- a flame graph keys frames by command and name: one stack for
      -- all the threads that share one
      vopts.merge = true
      list = view:list(vopts)
      list.meta = meta
    end
  elseif o.pid or o.tid or o.comm then
    local keep = report.filter({ pid = o.pid, tid = o.tid, comm = o.comm })
    local kept = { meta = list.meta }
    for _, s in ipairs(list) do if keep(s) then kept[#kept + 1] = s end end
    list = kept
  end
  for _, w in ipairs(meta.warnings or {}) do
    io.stderr:write("luaperf flame: warning: ", w, "\n")
  end
  local base
  if o.diff then
    base, lerr = stacks.load(o.diff, lopts)
    if not base then
      io.stderr:write("luaperf flame: ", lerr, "\n")
      return 1
    end
  end
  local ropts = { layout = o.flamechart and "flamechart" or (o.inverted and "inverted" or "flame"),
    diff = base, negate = o.negate, weight = o.weight, title = o.title, width = o.width,
    minwidth = o.minwidth, comm = not o.no_comm, annotate = o.annotate }
  local out
  local info
  if o.format == "svg" and vopts and vopts.draw then
    out, info = perf.flame.render_view(view, vopts, meta, ropts)
  elseif o.format == "svg" then
    out, info = perf.flame.render(list, ropts)
  elseif o.format == "folded" then
    out = folded_text or perf.folded.format(list, ropts)
  elseif o.format == "pprof" then
    out = perf.pprof.render(list, ropts)
  else
    out = perf.speedscope.render(list, ropts)
  end
  local path = o.output or default_out[o.format]
  if path == "-" then
    io.stdout:write(out)
  else
    local f, ferr = io.open(path, "wb")
    if not f then
      io.stderr:write("luaperf flame: cannot write ", ferr, "\n")
      return 1
    end
    f:write(out)
    f:close()
    local extra = ""
    if info and info.omitted > 0 then
      extra = string.format(", %d narrow frames left out", info.omitted)
    end
    io.stderr:write(string.format("luaperf flame: wrote %s (%s, %d samples%s)\n", path, o.format,
      meta.samples or 0, extra))
  end
  return 0
end
