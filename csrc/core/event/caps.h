/*
 * What perf_events allows on this machine: the sysctls that bound it, the
 * PMUs with their caps, whether hardware events open, where tracefs is.
 * Plain C, no Lua.
 */
#ifndef LUAPERF_CAPS_H
#define LUAPERF_CAPS_H

#include <stddef.h>
#include <stdint.h>

#define CAPS_PMU_MAX 256

struct caps_pmu {
	char name[64];
	uint32_t type;
	long long max_precise;  /* caps/max_precise, -1 when absent */
	long long branches;     /* caps/branches (LBR depth), -1 when absent */
};

struct caps {
	/* /proc/sys/kernel values; -1 when unreadable (paranoid: 2, the kernel default). */
	int paranoid;
	long long max_sample_rate;   /* perf_event_max_sample_rate */
	long long mlock_kb;          /* perf_event_mlock_kb */
	long long max_stack;         /* perf_event_max_stack */
	long long max_contexts_per_stack; /* perf_event_max_contexts_per_stack */
	long long cpu_time_max_percent;   /* perf_cpu_time_max_percent */
	long long nmi_watchdog;
	long long kptr_restrict;
	int hardware;                /* cycles opens on the calling thread */
	char tracefs[64];            /* mount point, "" when not mounted */
	int tracefs_readable;        /* events/ can be listed by this user */
	size_t npmus;
	int pmus_truncated;          /* more than CAPS_PMU_MAX PMUs */
	struct caps_pmu pmus[CAPS_PMU_MAX];
};

/* Fills c; always succeeds (missing values are -1). */
void caps__read(struct caps *c);

/* Whether a hardware cycles counter opens here (user space, this thread). */
int caps__hardware(void);

#endif
