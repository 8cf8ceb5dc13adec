/*
 * System call numbers and names of the architecture built for (from the
 * kernel headers: syscall_names.inc, made by tools/gen-syscalls.sh), as
 * perf trace and strace name them.  Plain C, no Lua.
 */
#ifndef LUAPERF_SYSCALLS_H
#define LUAPERF_SYSCALLS_H

/* The name of system call nr, or NULL when this architecture has none. */
const char *syscalls__name(long nr);

/* The number of the named system call, or -ENOENT. */
long syscalls__number(const char *name);

#endif
