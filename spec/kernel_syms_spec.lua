-- Kernel frames as perf names them, on recordings nobody here shaped (the
-- shared corpus) and on fresh ones: the kernel and module maps of the
-- file's records, the kernel its build id names (this one, perf's build-id
-- cache copy, or none: [unknown]), addresses relocated by the reference
-- symbol, kernel or user from the sample's cpumode and the chain's marks,
-- and --kallsyms / --vmlinux as perf takes them.
local util = require "util"

local corpus = util.root .. "/../shared/perfdata-corpus"
local have_corpus = select(2, util.sh("test -d " .. util.q(corpus)))
local have_perf = select(2, util.sh("command -v perf"))

local function lines(s)
  local t = {}
  for l in (s .. "\n"):gmatch("([^\n]*)\n") do t[#t + 1] = l end
  while #t > 0 and t[#t] == "" do t[#t] = nil end
  return t
end

-- The frames of a listing that are the kernel's, as "addr sym (dso)": a
-- kernel object named, or an upper-half address (x86-64 kernel text).
local function kernel_lines(text)
  local out = {}
  for _, l in ipairs(lines(text)) do
    local addr, sym, dso = l:match("(%x+) (%S+) %(([^()]*)%)$")
    if addr and (dso == "[kernel.kallsyms]" or dso:match("%.ko$") or
        (dso:match("^%[[%w_]+%]$") and dso ~= "[vdso]" and dso ~= "[unknown]") or
        (#addr == 16 and addr:match("^ffff"))) then
      out[#out + 1] = addr .. " " .. sym .. " (" .. dso .. ")"
    end
  end
  return out
end

-- The first difference of two lists, for a readable failure.
local function same_list(want, got, what)
  for i = 1, math.max(#want, #got) do
    if want[i] ~= got[i] then
      error(string.format("%s: line %d differs:\n  perf:    %s\n  luaperf: %s", what, i,
        tostring(want[i]), tostring(got[i])), 2)
    end
  end
end

local function script_both(path, extra)
  extra = extra or ""
  local theirs, ok = util.perf("script -i " .. util.q(path) .. " " .. extra .. " 2>/dev/null")
  assert(ok, theirs)
  local ours, ok2 = util.luaperf("script -i " .. util.q(path) .. " " .. extra .. " 2>/dev/null")
  assert(ok2, ours)
  return theirs, ours
end

describe("kernel frames on the perf.data corpus", function()
  local function need()
    if not have_corpus then
      pending("the shared corpus is absent (../shared/perfdata-corpus next to the checkout)")
      return false
    end
    if not have_perf then pending("perf is not installed") return false end
    return true
  end

  -- Whole listings: everything else on these lines already matches perf.
  for _, name in ipairs({
    "piped.no_attr_ids-4.14",          -- no kernel build id: this kernel's kallsyms, relocated
    "piped.target-3.4",                -- the same, reference symbol _stext
    "piped.target.throttled-3.4",      -- a 32-bit kernel, relocated modulo 2^64
    "armv7-3.4",                       -- 32-bit kernel addresses told by cpumode
    "piped.header_feautres_group_desc-6.8", -- no kernel map: [unknown] ([unknown])
    "hw_and_sw-3.4", "lost_samples-4.4", "raw-3.4", "remmap-3.2",
  }) do
    it("perf.data." .. name .. ": the whole listing", function()
      if not need() then return end
      local theirs, ours = script_both(corpus .. "/perf.data." .. name)
      same_list(lines(theirs), lines(ours), name)
    end)
  end

  -- Kernel lines only: user objects, fields and chains are other stories.
  for _, name in ipairs({
    "busy.0-3.4", "callgraph-3.4", "weight_struct", -- another kernel's build id: [unknown]
    "systemwide.5-3.8",                -- module maps from the records, named by path
    "callgraph_and_branch-3.8",        -- [module] names, addresses outside every kernel map
  }) do
    it("perf.data." .. name .. ": the kernel's frames", function()
      if not need() then return end
      local theirs, ours = script_both(corpus .. "/perf.data." .. name)
      local want, got = kernel_lines(theirs), kernel_lines(ours)
      assert.is_true(#want > 0, "no kernel frames in perf's listing")
      same_list(want, got, name)
    end)
  end

  -- Reports, row for row and in perf's order: a kernel module is
  -- "[ath9k]" (also when the build-id table gives its path), its unnamed
  -- addresses are within its map; ties go as perf sorts them.
  for _, name in ipairs({ "forkexit-3.8", "systemwide.5-3.8", "raw-3.4" }) do
    it("perf.data." .. name .. ": luaperf report prints perf report's rows", function()
      if not need() then return end
      local path = util.q(corpus .. "/perf.data." .. name)
      for _, args in ipairs({ "", "--sort comm,dso", "--no-children --sort dso,sym" }) do
        local theirs, ok = util.perf("report -i " .. path .. " --stdio -g none " .. args .. " 2>/dev/null")
        assert(ok, theirs)
        local ours, ok2 = util.luaperf("report -i " .. path .. " --stdio " .. args .. " 2>/dev/null")
        assert(ok2, ours)
        local function rows(text)
          local t = {}
          for _, l in ipairs(lines(text)) do
            if l:match("^%s+[%d.]+%%") then t[#t + 1] = (l:gsub("%s+$", "")) end
          end
          return t
        end
        local want = rows(theirs)
        assert.is_true(#want > 10, name .. " " .. args .. ": " .. #want .. " rows")
        same_list(want, rows(ours), name .. " " .. args)
      end
    end)
  end
end)

-- A program that spends its time in system calls, recorded here with -g.
local SYSCALLS = [[
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
int main(void)
{
	char buf[4096];
	int z = open("/dev/zero", O_RDONLY), n = open("/dev/null", O_WRONLY);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 200; i++) {
			if (read(z, buf, sizeof buf) < 0 || write(n, buf, sizeof buf) < 0)
				return 1;
			getppid();
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 300000000L);
	return 0;
}
]]

describe("kernel frames of a recording made here", function()
  local dir, data, ksave
  local function need()
    if not have_perf then pending("perf is not installed") return false end
    if not util.is_root() then pending("kernel samples and kallsyms addresses need root") return false end
    if data then return true end
    dir = util.tmpdir()
    local prog = util.cc(SYSCALLS, "-O1 -fno-omit-frame-pointer")
    data = dir .. "/perf.data"
    local out, ok = util.perf("record -q -g -F 2000 -o " .. util.q(data) .. " -- " .. util.q(prog))
    assert(ok, out)
    -- a saved kallsyms, moved by 16 MiB and renamed: perf relocates it by
    -- the recorded _text, and the names say which file was read (not
    -- named "kallsyms", or perf looks for a kcore beside it)
    local ks = assert(util.read("/proc/kallsyms"))
    local moved = {}
    for addr, rest in ks:gmatch("(%x+) ([^\n]*)\n") do
      if #addr == 16 and addr:match("^ffffffff8") then
        local lo = tonumber(addr:sub(9), 16) + 0x1000000
        local hi = tonumber(addr:sub(1, 8), 16) + math.floor(lo / 4294967296)
        -- the reference symbols keep their names (perf looks them up)
        local named = rest:match("^%a _s?text$") and rest or rest:gsub("^(%a) ", "%1 k_")
        moved[#moved + 1] = string.format("%08x%08x %s", hi, lo % 4294967296, named)
      end
    end
    ksave = dir .. "/kallsyms.txt"
    util.write(ksave, table.concat(moved, "\n") .. "\n")
    return true
  end

  it("--kallsyms FILE names what perf names with the same option", function()
    if not need() then return end
    local theirs, ours = script_both(data, "--kallsyms " .. util.q(ksave))
    local want, got = kernel_lines(theirs), kernel_lines(ours)
    local named = 0
    for _, l in ipairs(want) do if l:match(" k_") then named = named + 1 end end
    assert.is_true(named >= 10, "perf named few kernel frames from the file: " .. named)
    same_list(want, got, "--kallsyms")
  end)

  it("report and flame take --kallsyms too, and so does the Lua API", function()
    if not need() then return end
    local out, ok = util.luaperf("report -i " .. util.q(data) .. " --kallsyms " .. util.q(ksave))
    assert(ok, out)
    assert.truthy(out:find("%[k%] k_"), out)
    local folded, ok2 = util.luaperf("flame -i " .. util.q(data) .. " --format folded -o - --kallsyms " ..
      util.q(ksave))
    assert(ok2, folded)
    assert.truthy(folded:find(";k_"), folded:sub(1, 2000))
    local stacks = require "perf.stacks"
    local list = assert(stacks.from_perf_data(data, { kallsyms = ksave }))
    local k = 0
    for _, st in ipairs(list) do
      for _, f in ipairs(st.frames) do
        if f.kind == "kernel" and f.name and f.name:match("^k_") then k = k + 1 end
      end
    end
    assert.is_true(k > 0, "no kernel frame named from the file")
  end)

  it("a kernel build id that is not this kernel's gives [unknown], as in perf", function()
    if not need() then return end
    local perf = require "perf"
    local f = assert(perf.open(data))
    local hex
    for _, b in ipairs(f:features().build_ids or {}) do
      if b.filename == "[kernel.kallsyms]" then hex = b.build_id end
    end
    f:close()
    assert.truthy(hex, "the recording has no kernel build id")
    local bytes = hex:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)
    local raw = assert(util.read(data))
    -- the build-id table entry: id, padding, then the name
    local at = raw:find(bytes, 1, true)
    while at and not raw:sub(at, at + 64):find("[kernel.kallsyms]", 1, true) do
      at = raw:find(bytes, at + 1, true)
    end
    assert.truthy(at, "the kernel's entry of the build-id table was not found")
    local flipped = string.char((raw:byte(at) + 1) % 256)
    local other = dir .. "/other-kernel.data"
    util.write(other, raw:sub(1, at - 1) .. flipped .. raw:sub(at + 1))
    local theirs, ours = script_both(other)
    local want, got = kernel_lines(theirs), kernel_lines(ours)
    assert.is_true(#want > 10, "few kernel frames")
    for _, l in ipairs(want) do
      assert.truthy(l:match(" %[unknown%] %(%[kernel%.kallsyms%]%)$"), l)
    end
    same_list(want, got, "another kernel's build id")
    -- --kallsyms still names them, whatever the build id says
    theirs, ours = script_both(other, "--kallsyms " .. util.q(ksave))
    want, got = kernel_lines(theirs), kernel_lines(ours)
    assert.truthy(table.concat(want, "\n"):find(" k_"))
    same_list(want, got, "another kernel's build id, --kallsyms")
  end)

  it("--vmlinux of another object gives [unknown], as in perf", function()
    if not need() then return end
    local elf = "/bin/true"
    local theirs, ours = script_both(data, "--vmlinux " .. elf)
    local want, got = kernel_lines(theirs), kernel_lines(ours)
    assert.is_true(#want > 10, "few kernel frames")
    same_list(want, got, "--vmlinux " .. elf)
  end)
end)
