/*
 * Dynamic probes in bpftrace's spelling, opened through the kernel's
 * uprobe and kprobe PMUs (perf_event_open with the path or symbol in
 * config1 and the offset in config2), so nothing is written to tracefs
 * and nothing outlives the event:
 *
 *   uprobe:PATH:FUNC[+OFF]   uretprobe:PATH:FUNC
 *   kprobe:FUNC[+OFF]        kretprobe:FUNC
 *
 * PATH is a file, or a bare name looked up as perf and bpftrace do (an
 * executable in $PATH, a library such as "libc" in the system's library
 * directories).  FUNC is resolved with the symbolizer (symbol/symfind.h).
 * Plain C, no Lua.
 */
#ifndef LUAPERF_PROBE_H
#define LUAPERF_PROBE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct probe {
	int kernel;                   /* kprobe/kretprobe */
	int ret;                      /* a return probe */
	/* Both strings live as long as the process: attr.config1 points at
	 * one of them, and attrs are copied freely until they are opened. */
	const char *path;             /* uprobe: the object, absolute; NULL for kprobes */
	const char *func;             /* the function as written */
	uint64_t offset;              /* uprobe: file offset; kprobe: offset in func */
	uint64_t addr;                /* uprobe: the probed address in the object */
};

/* Whether spec is spelled as a dynamic probe (uprobe:, uretprobe:, ...). */
int probe__is_spec(const char *spec);

/*
 * Fills attr (type, config, config1, config2; sample_period 1: every hit)
 * and out.  0, or -EINVAL (malformed), -ENOENT (no such file, function or
 * PMU; err suggests the nearest function), -errno of reading the object.
 */
int probe__parse(const char *spec, struct perf_event_attr *attr, struct probe *out,
		 char *err, size_t errlen);

#endif
