/*
 * The kernel interface: perf_event_open(2), the sysctls that bound it, and
 * small file readers for /proc and /sys.  Plain C, no Lua.
 */
#ifndef LUAPERF_PERF_SYS_H
#define LUAPERF_PERF_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

int perf_sys__open(struct perf_event_attr *attr, pid_t pid, int cpu,
		   int group_fd, unsigned long flags);

/* Reads a file into buf (NUL-terminated); returns bytes or -errno. */
ssize_t perf_sys__read_file(const char *path, char *buf, size_t size);
/* Reads one integer from a file; returns 0 or -errno. */
int perf_sys__read_int(const char *path, long long *out);

/* /proc/sys/kernel/perf_event_* values, or def when unreadable. */
int perf_sys__paranoid(void);
long long perf_sys__sysctl(const char *name, long long def);

/* Online CPUs as a list of numbers; returns count or -errno. */
int perf_sys__online_cpus(int *cpus, int max);

/* The tracefs mount point ("/sys/kernel/tracing" or the debugfs one), or NULL. */
const char *perf_sys__tracefs(void);

#endif
