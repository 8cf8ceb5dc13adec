-- A histogram of system calls from the raw_syscalls:sys_enter tracepoint.
--
--   luaperf record -e raw_syscalls:sys_enter -a -- sleep 2
--   luaperf script -i perf.data examples/syscall_histogram.lua
local counts, total = {}, 0
local names = {}

-- Syscall numbers to names, from the kernel headers when they are installed.
local function load_names()
  for _, path in ipairs({ "/usr/include/x86_64-linux-gnu/asm/unistd_64.h",
                          "/usr/include/asm/unistd_64.h" }) do
    local f = io.open(path)
    if f then
      for line in f:lines() do
        local name, nr = line:match("^#define __NR_([%w_]+)%s+(%d+)")
        if name then names[tonumber(nr)] = name end
      end
      f:close()
      return
    end
  end
end

function begin() load_names() end

function raw_syscalls__sys_enter(rec)
  local id = rec.fields and rec.fields.id
  if id == nil then return end
  counts[id] = (counts[id] or 0) + 1
  total = total + 1
end

function finish()
  local list = {}
  for id, n in pairs(counts) do list[#list + 1] = { id, n } end
  table.sort(list, function(a, b) return a[2] > b[2] or (a[2] == b[2] and a[1] < b[1]) end)
  local max = list[1] and list[1][2] or 1
  print(string.format("%-24s %9s  (%d system calls)", "syscall", "count", total))
  for _, e in ipairs(list) do
    local bar = string.rep("#", math.max(1, math.floor(40 * e[2] / max)))
    print(string.format("%-24s %9d  %s", names[e[1]] or ("syscall_" .. e[1]), e[2], bar))
  end
end
