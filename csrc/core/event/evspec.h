/*
 * Event specs: perf's -e grammar parsed into perf_event_attr.
 *
 *   cycles  cpu-clock:u  L1-dcache-load-misses  sched:sched_switch  r01c4
 *   mem:0x1000/8:rw  msr/tsc/  cpu/event=0x3c,umask=0,name=x/pp
 *   uprobe:/bin/bash:readline  uretprobe:libc:malloc  (event/probe.h)
 *
 * Implemented in evspec.c (grammar), pmu.c (sysfs PMUs) and evcatalog.c
 * (the symbolic names, perf list).  Plain C, no Lua.
 */
#ifndef LUAPERF_EVSPEC_H
#define LUAPERF_EVSPEC_H

#include <stddef.h>
#include <linux/perf_event.h>
#include "event/probe.h"

#define EVSPEC_NAME_MAX 256
/* The longest spec accepted (bytes, without the NUL). */
#define EVSPEC_SPEC_MAX (EVSPEC_NAME_MAX - 1)

enum evspec_kind {
	EVSPEC_HARDWARE,    /* cycles, instructions, ... (PERF_TYPE_HARDWARE) */
	EVSPEC_SOFTWARE,    /* cpu-clock, page-faults, ... */
	EVSPEC_CACHE,       /* L1-dcache-load-misses, ... (PERF_TYPE_HW_CACHE) */
	EVSPEC_TRACEPOINT,  /* sched:sched_switch */
	EVSPEC_PMU,         /* msr/tsc/, pmu/event=1/, a sysfs alias, type:config */
	EVSPEC_RAW,         /* r01c4 */
	EVSPEC_BREAKPOINT,  /* mem:0x1000/8:rw */
	EVSPEC_UPROBE,      /* uprobe:PATH:FUNC, uretprobe:PATH:FUNC */
	EVSPEC_KPROBE,      /* kprobe:FUNC, kretprobe:FUNC */
};

struct evspec {
	struct perf_event_attr attr;  /* size set; sample fields left to callers */
	char name[EVSPEC_NAME_MAX];   /* as perf prints it: "cycles:u", "sched:sched_switch" */
	char pmu[64];                 /* PMU name ("cpu", "software", "tracepoint", ...) */
	int has_period;               /* period=/freq= term given in the spec */
	/* Added with the parser (fields below are new; the ones above are unchanged). */
	enum evspec_kind kind;
	int precise_max;              /* :P — perf opens with the highest precise_ip that works */
	int sample_read;              /* :S — read the group at each sample (PERF_SAMPLE_READ) */
	int exclude_GH;               /* :G or :H was given (a group's :u keeps the guest) */
	struct probe probe;           /* EVSPEC_UPROBE, EVSPEC_KPROBE */
};

/* "hardware", "software", "cache", "tracepoint", "pmu", "raw", "breakpoint",
 * "uprobe", "kprobe". */
const char *evspec__kind_name(enum evspec_kind kind);

/*
 * Parses one event (no commas at top level; use evspec__split for lists).
 * Returns 0, or -EINVAL/-ENOENT/-ERANGE/-E2BIG with a message in err that
 * quotes the spec, points at the bad part and suggests the nearest known
 * name.  Modifiers follow perf: no modifier leaves exclude_guest set (perf
 * counts the host only); :u/:k/:h keep only the levels named; :G/:H
 * likewise for guest and host; :p.. sets precise_ip (at most 3) and
 * excludes the guest; :D pinned; :e exclusive; :I exclude_idle.
 * Breakpoints get perf's default sample_period of 1 (has_period stays 0, so
 * a caller's period or frequency replaces it).  Probes (event/probe.h) get
 * sample_period 1 the same way: every hit.
 */
int evspec__parse(const char *spec, struct evspec *out, char *err, size_t errlen);

/*
 * Applies modifiers (the text after a group's ':') on top of the event's
 * own, as perf applies a group's to each member: :k on a member and :u on
 * its group count both levels.  Returns 0 or -EINVAL with a message.
 */
int evspec__add_modifiers(struct evspec *ev, const char *mods, char *err, size_t errlen);

/*
 * Splits "a,b,pmu/x=1,y=2/,c" into events at top-level commas (commas inside
 * /.../ and {...} belong to the event).  Calls fn for each; stops at the first
 * non-zero return and returns it.
 */
int evspec__split(const char *list, int (*fn)(const char *ev, void *arg), void *arg);

#endif
