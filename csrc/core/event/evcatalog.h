/*
 * The event catalog: perf's symbolic names (hardware, software, hardware
 * cache), tracepoints from tracefs, sysfs PMU events, the "did you mean"
 * suggestions, and the list behind `perf list`.  Plain C, no Lua.
 */
#ifndef LUAPERF_EVCATALOG_H
#define LUAPERF_EVCATALOG_H

#include <stddef.h>
#include <stdint.h>
#include "event/evspec.h"

struct evcatalog_symbol {
	const char *name;     /* perf's first name: "cpu-cycles" */
	const char *alias;    /* the other name or NULL: "cycles" */
	uint32_t type;        /* PERF_TYPE_HARDWARE or PERF_TYPE_SOFTWARE */
	uint64_t config;
	const char *desc;
};

/* The hardware and software symbols; *n gets the count. */
const struct evcatalog_symbol *evcatalog__symbols(size_t *n);

/* Looks up a hardware/software name or alias (case-sensitive, as perf). */
const struct evcatalog_symbol *evcatalog__symbol(const char *name);

/*
 * A hardware-cache name: "L1-dcache-load-misses", "LLC-loads", "dTLB",
 * "branch-loads"...  Returns 0 with the config, -ENOENT when the text is no
 * cache name at all, -EINVAL when the parts are known but do not combine
 * (msg says why; "L1-icache-stores": the L1-icache has no store operation).
 */
int evcatalog__cache(const char *name, uint64_t *config, char *msg, size_t len);

/* perf's name for a cache config ("L1-dcache-load-misses"); -EINVAL if invalid. */
int evcatalog__cache_name(uint64_t config, char *buf, size_t len);

/*
 * The tracefs mount point; *err is 0, -EACCES (mounted but this user may
 * not enter it: the path is still returned) or -ENODEV (not mounted: NULL).
 */
const char *evcatalog__tracefs(int *err);

/*
 * Tracepoint id of sys:event from tracefs.  Returns 0, -ENODEV (tracefs
 * not mounted), -EACCES, -ENOENT (no such system: *sys_missing = 1, or no
 * such event: 0).
 */
int evcatalog__tracepoint_id(const char *sys, const char *event, uint64_t *id,
			     int *sys_missing);

/* Levenshtein distance, for suggestions (strings longer than 255 bytes: large). */
size_t evcatalog__distance(const char *a, const char *b);

/*
 * The known name nearest to word, when near enough to be a likely typo:
 * hardware, software, cache names and sysfs PMU events.  0 or -ENOENT.
 */
int evcatalog__suggest(const char *word, char *out, size_t len);
/* Same among the tracepoints: sys:event, or a system name when sys is unknown. */
int evcatalog__suggest_tracepoint(const char *sys, const char *event, char *out,
				  size_t len);
/* Same among the sysfs PMU names. */
int evcatalog__suggest_pmu(const char *name, char *out, size_t len);
/* Same among a PMU's format terms, events and perf's built-in terms. */
int evcatalog__suggest_term(const char *pmu, const char *term, char *out, size_t len);
/* Comma-separated list of the PMU names here. */
void evcatalog__pmu_names(char *out, size_t len);
/* Comma-separated list of the terms a PMU accepts (formats, then events). */
void evcatalog__pmu_terms(const char *pmu, char *out, size_t len);

/* One entry of `perf list`. */
struct evcatalog_entry {
	const char *name;
	const char *alias;   /* NULL when none */
	enum evspec_kind kind;
	const char *pmu;
	const char *desc;
	int available;       /* opens here (hardware/cache are probed) */
};

/*
 * Calls fn for every catalog entry matching pattern (NULL: all).  A pattern
 * is a glob matched anywhere in the name, alias or "sys:event"; the words
 * hw/hardware, sw/software, cache/hwcache, pmu, tracepoint, raw and
 * breakpoint select a kind.  Stops at a non-zero return of fn.
 */
int evcatalog__foreach(const char *pattern,
		       int (*fn)(const struct evcatalog_entry *e, void *arg), void *arg);

/* Whether attr opens on the calling thread (user space only); ENOENT etc. -> 0. */
int evcatalog__opens(const struct perf_event_attr *attr);

#endif
