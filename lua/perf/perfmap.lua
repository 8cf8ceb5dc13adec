-- A writer of perf maps (/tmp/perf-PID.map: "START SIZE name" a line, hex
-- START and SIZE), the names perf and luaperf give code a JIT made.  LuaJIT
-- only (it writes through the FFI); perf.jitmap feeds it.
--
-- An entry is appended; one whose range overlaps older ones (machine code
-- reused) drops them and the map is rewritten, so the later name wins:
-- perf keeps one of two symbols at the same start by its own preferences,
-- not the later one.  Every rewrite goes to a private file (mkstemp)
-- renamed over the map: a symlink or a stale file at the map's path is
-- replaced, never followed, and the map is owned by the process's user
-- (perf's rule: owned by the reader or root, not a symlink).
local ffi = require "ffi"

-- one at a time: a host (OpenResty) may have declared some already
for _, d in ipairs{
  "int getpid(void);",
  "int mkstemp(char *template);",
  "int fchmod(int fd, unsigned int mode);",
  "long write(int fd, const void *buf, size_t count);",
  "int close(int fd);",
  "int rename(const char *oldpath, const char *newpath);",
  "int unlink(const char *pathname);",
  "char *strerror(int errnum);",
} do pcall(ffi.cdef, d) end
local C = ffi.C

local M = {}

local function syserr(what)
  local e = ffi.errno()
  return what .. ": " .. ffi.string(C.strerror(e)), e
end

local function write_all(fd, s)
  local off = 0
  while off < #s do
    local n = tonumber(C.write(fd, ffi.cast("const char *", s) + off, #s - off))
    if n < 0 then
      if ffi.errno() ~= 4 then return nil end -- EINTR: again
    else
      off = off + n
    end
  end
  return true
end

local function line_of(e)
  return ("%x %x %s\n"):format(e.start, e.size, e.name)
end

local W = {}
W.__index = W

-- Writes every entry to a new private file and renames it over the map.
function W:rewrite()
  local tmp = self.path .. ".XXXXXX"
  local buf = ffi.new("char[?]", #tmp + 1, tmp)
  local fd = C.mkstemp(buf)
  if fd < 0 then return nil, syserr("cannot create " .. tmp) end
  local parts = {}
  for _, e in ipairs(self.entries) do parts[#parts + 1] = line_of(e) end
  local tmpname = ffi.string(buf)
  if C.fchmod(fd, 420) ~= 0 or not write_all(fd, table.concat(parts)) then -- 0644
    local msg, e = syserr("cannot write " .. tmpname)
    C.close(fd); C.unlink(tmpname)
    return nil, msg, e
  end
  if C.rename(tmpname, self.path) ~= 0 then
    local msg, e = syserr("cannot replace " .. self.path ..
      " (another user's file in a sticky directory?)")
    C.close(fd); C.unlink(tmpname)
    return nil, msg, e
  end
  if self.fd then C.close(self.fd) end
  self.fd = fd                    -- the new map: later entries are appended
  self.rewrites = self.rewrites + 1
  return true
end

-- Adds { start=, size=, name= }; true | nil, message, errno.
function W:add(e)
  local stale = false
  for i = #self.entries, 1, -1 do
    local o = self.entries[i]
    if o.start < e.start + e.size and e.start < o.start + o.size then
      stale = true
      table.remove(self.entries, i)
    end
  end
  self.entries[#self.entries + 1] = e
  if not self.fd then return true end   -- not written yet: the first write has it
  if stale then return self:rewrite() end
  if not write_all(self.fd, line_of(e)) then return nil, syserr("cannot write " .. self.path) end
  return true
end

function M.getpid() return C.getpid() end

-- Writes the map of this process (after a fork: the child's own map).
function W:open()
  if self.fd then C.close(self.fd); self.fd = nil end
  self.pid = C.getpid()
  self.path = ("%s/perf-%d.map"):format(self.dir, self.pid)
  return self:rewrite()
end

function W:close()
  if self.fd then C.close(self.fd); self.fd = nil end
end

-- A writer for dir (default /tmp) holding entries (kept, written by open()).
function M.new(dir, entries)
  return setmetatable({ dir = dir or "/tmp", entries = entries or {}, rewrites = 0 }, W)
end

return M
