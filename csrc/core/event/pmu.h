/*
 * The PMUs the kernel publishes in sysfs:
 *   /sys/bus/event_source/devices/<pmu>/{type,format/,events/,caps/}
 * Format files say which attr bits a term fills ("config:0-7,21"); event
 * files are named term lists ("event=0x3c,umask=0x00").  Plain C, no Lua.
 *
 * The directory can be moved with the environment variable
 * LUAPERF_PMU_ROOT (tests use it to describe PMUs this machine lacks).
 */
#ifndef LUAPERF_PMU_H
#define LUAPERF_PMU_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#define PMU_NAME_MAX 64

/* Where the PMU directories are. */
const char *pmu__root(void);

/* The PMU's type number; 0 or -errno (-ENOENT: no such PMU). */
int pmu__type(const char *pmu, uint32_t *type);

/* The name of the PMU with this type; 0 or -ENOENT. */
int pmu__name_of(uint32_t type, char *name, size_t len);

/* Calls fn for every PMU, sorted by name; stops at a non-zero return. */
int pmu__foreach(int (*fn)(const char *pmu, uint32_t type, void *arg), void *arg);

/* Calls fn for every sysfs event of a PMU (sorted) with its term list. */
int pmu__foreach_event(const char *pmu,
		       int (*fn)(const char *event, const char *terms, void *arg),
		       void *arg);

/* Calls fn for every format term of a PMU (sorted) with its bit spec. */
int pmu__foreach_format(const char *pmu,
			int (*fn)(const char *term, const char *bits, void *arg),
			void *arg);

/* The term list of events/<event>; 0, -ENOENT, or -E2BIG. */
int pmu__event_terms(const char *pmu, const char *event, char *terms, size_t len);

/*
 * A format term: which attr field (0 config, 1 config1, 2 config2) and
 * which bits of it.  Returns 0, -ENOENT (no such term), -EINVAL (the
 * format file is malformed).
 */
struct pmu_format {
	int field;
	uint64_t mask;
	int nbits;
};
int pmu__format(const char *pmu, const char *term, struct pmu_format *fmt);

/* Parses a format file's text ("config:0-7,21"); 0 or -EINVAL. */
int pmu_format__parse(const char *text, struct pmu_format *fmt);

/*
 * Spreads value over the format's bits, lowest first, ORing them into
 * the field as perf does (config=5,event=0 keeps 5).  -ERANGE when value
 * needs more bits than the format has.
 */
int pmu_format__apply(const struct pmu_format *fmt, uint64_t value,
		      struct perf_event_attr *attr);

/* The largest value the format can hold. */
uint64_t pmu_format__max(const struct pmu_format *fmt);

/* caps/<cap> as an integer; 0 or -errno. */
int pmu__cap(const char *pmu, const char *cap, long long *out);

#endif
