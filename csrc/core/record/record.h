/*
 * Records: the kernel's perf_event records (and the user-space ones perf
 * writes into perf.data) decoded into one C struct.  The same decoder serves
 * live rings and files, so a record looks the same from both.
 *
 * A decoded record points into the bytes it was decoded from: the caller
 * keeps those bytes (a copy out of the ring, or a file buffer) alive while
 * it uses the record.  Every size is checked against the record's own size
 * before use; a record that does not add up is rejected with a message.
 * Implemented in record.c (and evtab.c).  Plain C, no Lua.
 */
#ifndef LUAPERF_RECORD_H
#define LUAPERF_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/perf_event.h>

/* User-space record types perf writes into perf.data (tools/lib/perf/include/perf/event.h). */
enum {
	REC_HEADER_ATTR = 64,
	REC_HEADER_EVENT_TYPE = 65,
	REC_HEADER_TRACING_DATA = 66,
	REC_HEADER_BUILD_ID = 67,
	REC_FINISHED_ROUND = 68,
	REC_ID_INDEX = 69,
	REC_AUXTRACE_INFO = 70,
	REC_AUXTRACE = 71,
	REC_AUXTRACE_ERROR = 72,
	REC_THREAD_MAP = 73,
	REC_CPU_MAP = 74,
	REC_STAT_CONFIG = 75,
	REC_STAT = 76,
	REC_STAT_ROUND = 77,
	REC_EVENT_UPDATE = 78,
	REC_TIME_CONV = 79,
	REC_HEADER_FEATURE = 80,
	REC_COMPRESSED = 81,
	REC_FINISHED_INIT = 82,
};

/* "SAMPLE", "MMAP2", "FINISHED_ROUND", ...; "UNKNOWN" for others. */
const char *record__type_name(uint32_t type);

/*
 * The events a stream of records belongs to: attrs and the sample ids that
 * map to them.  A session fills it from PERF_EVENT_IOC_ID, a file from its
 * attr section or HEADER_ATTR records.  Opaque; see evtab.c.
 */
struct evtab;
struct evtab *evtab__new(void);
void evtab__delete(struct evtab *t);
/* Adds an event; returns its index (>= 0) or -errno. */
int evtab__add(struct evtab *t, const struct perf_event_attr *attr, const char *name);
int evtab__add_id(struct evtab *t, int idx, uint64_t id);
int evtab__count(const struct evtab *t);
const struct perf_event_attr *evtab__attr(const struct evtab *t, int idx);
const char *evtab__name(const struct evtab *t, int idx);
/* Index for a sample id; -1 when unknown (single-event streams map to 0). */
int evtab__lookup(const struct evtab *t, uint64_t id);
/* Index an id was added with (evtab__add_id), -1 if it was not: no
 * single-event shortcut.  O(1), for readers that map ids as they go. */
int evtab__find_id(const struct evtab *t, uint64_t id);
/* Renames event idx (a file names its events after their attrs); -errno. */
int evtab__set_name(struct evtab *t, int idx, const char *name);

/* PERF_SAMPLE_READ / READ record values, decoded with the attr's read_format. */
struct record_read {
	uint64_t nr;                  /* values (1 without PERF_FORMAT_GROUP) */
	uint64_t time_enabled, time_running;
	const uint64_t *values;       /* nr entries of {value[, id][, lost]} */
	unsigned stride;              /* u64s per entry */
	/* Where id and lost sit from an entry's start (0: absent).  Without
	 * PERF_FORMAT_GROUP the times come between value and id, so these are
	 * not always 1 and 2: entry i's id is values[i * stride + id_at]. */
	unsigned id_at, lost_at;
};

struct record_sample {
	uint64_t type;                /* the attr's sample_type: which fields are set */
	uint64_t id, ip, time, addr, stream_id, period, weight, data_src;
	uint64_t transaction, phys_addr, cgroup, data_page_size, code_page_size;
	uint32_t pid, tid, cpu;
	struct record_read read;
	uint64_t nr_callchain;        /* raw, context markers included */
	const uint64_t *callchain;
	uint32_t raw_size;
	const void *raw;
	uint64_t nr_branches, branch_hw_idx;
	const struct perf_branch_entry *branches;
	uint64_t regs_user_abi;
	const uint64_t *regs_user;    /* popcount(sample_regs_user) entries */
	unsigned nr_regs_user;
	uint64_t regs_intr_abi;
	const uint64_t *regs_intr;
	unsigned nr_regs_intr;
	uint64_t stack_user_size, stack_user_dyn_size;
	const void *stack_user;
	uint64_t aux_size;
	const void *aux;
};

struct record {
	uint32_t type;
	uint16_t misc, size;
	const void *data;             /* the whole record, header included */
	int evidx;                    /* index in the evtab, -1 when unknown */
	struct record_sample s;       /* SAMPLE, or the sample_id_all trailer */
	union {
		struct {              /* MMAP, MMAP2 */
			uint32_t pid, tid;
			uint64_t start, len, pgoff;
			uint32_t maj, min;
			uint64_t ino, ino_generation;
			uint32_t prot, flags;
			uint8_t build_id_size;        /* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
			const uint8_t *build_id;
			const char *filename;         /* NUL-terminated inside the record */
		} mmap;
		struct { uint64_t id, lost; } lost;
		struct { uint32_t pid, tid; const char *comm; } comm;
		struct { uint32_t pid, ppid, tid, ptid; uint64_t time; } task;  /* FORK, EXIT */
		struct { uint64_t time, id, stream_id; } throttle;              /* (UN)THROTTLE */
		struct { uint32_t pid, tid; struct record_read read; } read;
		struct { uint64_t offset, size, flags; } aux;
		struct { uint32_t pid, tid; } itrace_start;
		struct { uint64_t lost; } lost_samples;
		struct { uint32_t next_prev_pid, next_prev_tid; } switch_cpu_wide;
		struct { uint32_t pid, tid; uint64_t nr; const uint64_t *link_info; } namespaces;
		struct { uint64_t addr; uint32_t len; uint16_t ksym_type, flags; const char *name; } ksymbol;
		struct { uint16_t bpf_type, flags; uint32_t id; const uint8_t *tag; } bpf_event;
		struct { uint64_t id; const char *path; } cgroup;
		struct { uint64_t addr; uint16_t old_len, new_len; const uint8_t *bytes; } text_poke;
		struct { uint64_t hw_id; } aux_output_hw_id;
	} u;
};

/*
 * Decodes one record of len bytes (len >= header.size).  Returns 0, or
 * -EINVAL with a message naming the field that did not fit.
 */
int record__decode(const struct evtab *t, const void *buf, size_t len,
		   struct record *out, char *err, size_t errlen);

/* The index of the event a SAMPLE record (buf, size bytes) belongs to, as
 * record__decode finds it; -1 when none is known. */
int record__sample_event(const struct evtab *t, const void *buf, size_t size);

/* A kernel record's time (a sample's field or the sample_id_all trailer's),
 * as perf reads it for ordering: 0 when the record carries none.  A record
 * of an unknown id is read with the first event's layout. */
uint64_t record__time(const struct evtab *t, const void *buf, size_t size);

/*
 * perf's sample filters by time and CPU (perf script and perf report
 * --time START,STOP and -C LIST): a sample outside the span (inclusive, in
 * ns; a sample without a time passes) or taken on none of the CPUs (a
 * sample without a CPU passes) is left out.
 */
struct record_window {
	int has_start, has_stop;
	uint64_t start, stop;
	const uint8_t *cpus;            /* cpus[c] != 0: kept (c < nr_cpus); NULL: all */
	size_t nr_cpus;
};

static inline int record_window__keeps(const struct record_window *w, uint64_t stype,
				       uint64_t time, uint32_t cpu)
{
	if ((stype & PERF_SAMPLE_TIME) && time != 0 &&
	    ((w->has_start && time < w->start) || (w->has_stop && time > w->stop)))
		return 0;
	return !w->cpus || !(stype & PERF_SAMPLE_CPU) || (cpu < w->nr_cpus && w->cpus[cpu]);
}

/* Whether the window keeps a SAMPLE record (buf, size bytes; a record it
 * cannot place passes, as record__decode would then refuse it). */
int record__window_keeps(const struct record_window *w, const struct evtab *t,
			 const void *buf, size_t size);

/* Whether a call chain's context marker puts the addresses after it in the
 * kernel (the host's or a guest's). */
static inline int record__kernel_context(uint64_t v)
{
	return v == (uint64_t)PERF_CONTEXT_KERNEL || v == (uint64_t)PERF_CONTEXT_GUEST_KERNEL;
}

/*
 * A call chain perf would use: 0 when it holds a context marker perf does
 * not know (a corrupt chain, seen in system-wide captures), which perf
 * discards whole: no frames at all, not the chain less the marker.
 */
static inline int record__callchain_usable(const uint64_t *cc, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++) {
		uint64_t v;
		memcpy(&v, cc + i, sizeof v);     /* records need not be aligned */
		if (v >= (uint64_t)PERF_CONTEXT_MAX && v != (uint64_t)PERF_CONTEXT_HV &&
		    v != (uint64_t)PERF_CONTEXT_KERNEL && v != (uint64_t)PERF_CONTEXT_USER &&
		    v != (uint64_t)PERF_CONTEXT_GUEST && v != (uint64_t)PERF_CONTEXT_GUEST_KERNEL &&
		    v != (uint64_t)PERF_CONTEXT_GUEST_USER)
			return 0;
	}
	return 1;
}

#endif
