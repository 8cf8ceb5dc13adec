/*
 * The name perf gives an event from its attr alone (evsel__name in perf
 * 6.1), for files that do not name their events (no event_desc feature,
 * no EVENT_UPDATE): "cycles:ppH", "raw 0x1cd:u", "L1-dcache-load-misses",
 * "mem:0x1000:rw".  The names are facts of perf's output format.
 */
#include <stdio.h>
#include <string.h>

#include "perfdata/perfdata_int.h"

static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
	"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
	"bpf-output", "cgroup-switches",
};
static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses", "branches",
	"branch-misses", "bus-cycles", "stalled-cycles-frontend", "stalled-cycles-backend",
	"ref-cycles",
};
static const char *const cache_names[] = { "L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB",
					   "branch", "node" };
/* [op][0] names a result-qualified event, [op][1] a bare one ("L1-dcache-loads") */
static const char *const cache_ops[][2] = { { "load", "loads" }, { "store", "stores" },
					    { "prefetch", "prefetches" } };
static const char *const cache_results[] = { "refs", "misses" };
/* the ops each cache supports (bit per op: read, write, prefetch) */
static const unsigned char cache_valid_ops[] = { 7, 5, 7, 7, 1, 1, 7 };

#define N(a) (sizeof (a) / sizeof (a)[0])

/* Appends perf's modifiers: ":" then k/u/h for the levels counted when
 * some are excluded, p per precise_ip, H/G for host/guest when either
 * differs from what the other modifiers imply. */
static void add_modifiers(const struct perf_event_attr *a, char *buf, size_t n)
{
	char mod[16];
	size_t k = 0;
	int guest_default = 0;

	if (a->exclude_kernel || a->exclude_user || a->exclude_hv) {
		if (!a->exclude_kernel) mod[k++] = 'k';
		if (!a->exclude_user) mod[k++] = 'u';
		if (!a->exclude_hv) mod[k++] = 'h';
		guest_default = 1;
	}
	if (a->precise_ip) {
		unsigned i;
		for (i = 0; i < a->precise_ip && i < 3; i++)
			mod[k++] = 'p';
		guest_default = 1;
	}
	if (a->exclude_host || (int)a->exclude_guest == guest_default) {
		if (!a->exclude_host) mod[k++] = 'H';
		if (!a->exclude_guest) mod[k++] = 'G';
	}
	mod[k] = '\0';
	if (k) {
		size_t len = strlen(buf);
		snprintf(buf + len, len < n ? n - len : 0, ":%s", mod);
	}
}

static void cache_name(uint64_t config, char *buf, size_t n)
{
	unsigned type = config & 0xff, op = (config >> 8) & 0xff, res = (config >> 16) & 0xff;

	if (type >= N(cache_names))
		snprintf(buf, n, "unknown-ext-hardware-cache-type");
	else if (op >= N(cache_ops))
		snprintf(buf, n, "unknown-ext-hardware-cache-op");
	else if (res >= N(cache_results))
		snprintf(buf, n, "unknown-ext-hardware-cache-result");
	else if (!(cache_valid_ops[type] & (1u << op)))
		snprintf(buf, n, "invalid-cache");
	else if (res)
		snprintf(buf, n, "%s-%s-%s", cache_names[type], cache_ops[op][0], cache_results[res]);
	else
		snprintf(buf, n, "%s-%s", cache_names[type], cache_ops[op][1]);
}

void perfdata__attr_name(const struct perf_event_attr *a, char *buf, size_t n)
{
	if (!n)
		return;
	buf[0] = '\0';
	switch (a->type) {
	case PERF_TYPE_HARDWARE:
		snprintf(buf, n, "%s", a->config < N(hw_names) ? hw_names[a->config] : "unknown-hardware");
		break;
	case PERF_TYPE_SOFTWARE:
		snprintf(buf, n, "%s", a->config < N(sw_names) ? sw_names[a->config] : "unknown-software");
		break;
	case PERF_TYPE_HW_CACHE:
		cache_name(a->config, buf, n);
		break;
	case PERF_TYPE_RAW:
		snprintf(buf, n, "raw 0x%llx", (unsigned long long)a->config);
		break;
	case PERF_TYPE_BREAKPOINT:
		snprintf(buf, n, "mem:0x%llx:%s%s%s", (unsigned long long)a->bp_addr,
			 (a->bp_type & 1) ? "r" : "", (a->bp_type & 2) ? "w" : "",
			 (a->bp_type & 4) ? "x" : "");
		break;
	case PERF_TYPE_TRACEPOINT:
		/* perf names it from the tracing data's formats; without a
		 * name in the file, type:id keeps the id visible */
		snprintf(buf, n, "%u:%llu", a->type, (unsigned long long)a->config);
		return;
	default:
		snprintf(buf, n, "unknown attr type: %u", a->type);
		return;
	}
	add_modifiers(a, buf, n);
}
