/* Machine capabilities for perf_events: sysctls, PMUs, hardware, tracefs. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include "event/caps.h"
#include "event/evcatalog.h"
#include "base/perf_sys.h"
#include "event/pmu.h"

int caps__hardware(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	return evcatalog__opens(&a);
}

static int add_pmu(const char *name, uint32_t type, void *arg)
{
	struct caps *c = arg;
	struct caps_pmu *p;

	if (c->npmus >= CAPS_PMU_MAX) {
		c->pmus_truncated = 1;
		return 1;
	}
	if (strlen(name) >= sizeof p->name)
		return 0;
	p = &c->pmus[c->npmus++];
	strcpy(p->name, name);
	p->type = type;
	if (pmu__cap(name, "max_precise", &p->max_precise) != 0)
		p->max_precise = -1;
	if (pmu__cap(name, "branches", &p->branches) != 0)
		p->branches = -1;
	return 0;
}

void caps__read(struct caps *c)
{
	const char *tfs = perf_sys__tracefs();

	memset(c, 0, sizeof *c);
	c->paranoid = perf_sys__paranoid();
	c->max_sample_rate = perf_sys__sysctl("perf_event_max_sample_rate", -1);
	c->mlock_kb = perf_sys__sysctl("perf_event_mlock_kb", -1);
	c->max_stack = perf_sys__sysctl("perf_event_max_stack", -1);
	c->max_contexts_per_stack = perf_sys__sysctl("perf_event_max_contexts_per_stack", -1);
	c->cpu_time_max_percent = perf_sys__sysctl("perf_cpu_time_max_percent", -1);
	c->nmi_watchdog = perf_sys__sysctl("nmi_watchdog", -1);
	c->kptr_restrict = perf_sys__sysctl("kptr_restrict", -1);
	c->hardware = caps__hardware();
	if (tfs != NULL && strlen(tfs) < sizeof c->tracefs) {
		char path[128];
		DIR *d;

		strcpy(c->tracefs, tfs);
		snprintf(path, sizeof path, "%s/events", tfs);
		d = opendir(path);
		c->tracefs_readable = d != NULL;
		if (d != NULL)
			closedir(d);
	}
	pmu__foreach(add_pmu, c);
}
