/*
 * Event specs: perf's -e grammar parsed into perf_event_attr.
 *
 *   cycles  cpu-clock:u  L1-dcache-load-misses  sched:sched_switch  r01c4
 *   mem:0x1000/8:rw  msr/tsc/  cpu/event=0x3c,umask=0,name=x/pp
 *
 * Implemented in evspec.c (grammar), pmu.c (sysfs PMUs) and evcatalog.c
 * (the symbolic names, perf list).  Plain C, no Lua.
 */
#ifndef LUAPERF_EVSPEC_H
#define LUAPERF_EVSPEC_H

#include <stddef.h>
#include <linux/perf_event.h>

#define EVSPEC_NAME_MAX 256

struct evspec {
	struct perf_event_attr attr;  /* size set; sample fields left to callers */
	char name[EVSPEC_NAME_MAX];   /* as perf prints it: "cycles:u", "sched:sched_switch" */
	char pmu[64];                 /* PMU name ("cpu", "software", "tracepoint", ...) */
	int has_period;               /* period=/freq= term given in the spec */
};

/*
 * Parses one event (no commas at top level; use evspec__split for lists).
 * Returns 0, or -EINVAL/-ENOENT with a message in err that quotes the spec,
 * points at the bad part and suggests the nearest known name.
 */
int evspec__parse(const char *spec, struct evspec *out, char *err, size_t errlen);

/*
 * Splits "a,b,pmu/x=1,y=2/,c" into events at top-level commas (commas inside
 * /.../ and {...} belong to the event).  Calls fn for each; stops at the first
 * non-zero return and returns it.
 */
int evspec__split(const char *list, int (*fn)(const char *ev, void *arg), void *arg);

#endif
