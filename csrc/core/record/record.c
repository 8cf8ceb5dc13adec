/*
 * The record decoder: one kernel record (or a perf.data user record) into
 * struct record.  Fields are taken in the kernel's fixed order
 * (kernel/events/core.c perf_output_sample, whose order differs from the
 * comment in perf_event.h for AUX: AUX comes last).  Every read goes through
 * a cursor bounded by the record's own size, so nothing is read past it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "base/bits.h"
#include "record/record.h"

static const char *const kernel_names[] = {
	[PERF_RECORD_MMAP] = "MMAP",
	[PERF_RECORD_LOST] = "LOST",
	[PERF_RECORD_COMM] = "COMM",
	[PERF_RECORD_EXIT] = "EXIT",
	[PERF_RECORD_THROTTLE] = "THROTTLE",
	[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
	[PERF_RECORD_FORK] = "FORK",
	[PERF_RECORD_READ] = "READ",
	[PERF_RECORD_SAMPLE] = "SAMPLE",
	[PERF_RECORD_MMAP2] = "MMAP2",
	[PERF_RECORD_AUX] = "AUX",
	[PERF_RECORD_ITRACE_START] = "ITRACE_START",
	[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
	[PERF_RECORD_SWITCH] = "SWITCH",
	[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[PERF_RECORD_NAMESPACES] = "NAMESPACES",
	[PERF_RECORD_KSYMBOL] = "KSYMBOL",
	[PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
	[PERF_RECORD_CGROUP] = "CGROUP",
	[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
	[PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
};

static const char *const user_names[] = {
	"HEADER_ATTR", "HEADER_EVENT_TYPE", "HEADER_TRACING_DATA",
	"HEADER_BUILD_ID", "FINISHED_ROUND", "ID_INDEX", "AUXTRACE_INFO",
	"AUXTRACE", "AUXTRACE_ERROR", "THREAD_MAP", "CPU_MAP", "STAT_CONFIG",
	"STAT", "STAT_ROUND", "EVENT_UPDATE", "TIME_CONV", "HEADER_FEATURE",
	"COMPRESSED", "FINISHED_INIT",
};

const char *record__type_name(uint32_t type)
{
	if (type < sizeof kernel_names / sizeof kernel_names[0] && kernel_names[type])
		return kernel_names[type];
	if (type >= REC_HEADER_ATTR &&
	    type - REC_HEADER_ATTR < sizeof user_names / sizeof user_names[0])
		return user_names[type - REC_HEADER_ATTR];
	return "UNKNOWN";
}

/* A bounded cursor over [p + off, p + end). */
struct cur {
	const uint8_t *p;
	size_t off, end;
	char *err;
	size_t errlen;
	uint32_t type;
};

__attribute__((format(printf, 2, 3)))
static void set_err(struct cur *c, const char *fmt, ...)
{
	if (c->err && c->errlen) {
		int n = snprintf(c->err, c->errlen, "%s record: ", record__type_name(c->type));
		va_list ap;
		va_start(ap, fmt);
		if (n >= 0 && (size_t)n < c->errlen)
			vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
}

/* Record the message and yield -EINVAL; a macro so that the static analyzer,
 * which does not inline variadic functions, sees the constant result. */
#define FAIL(c, ...) (set_err((c), __VA_ARGS__), -EINVAL)

static inline size_t left(const struct cur *c) { return c->end - c->off; }

static inline int u64(struct cur *c, uint64_t *v, const char *what)
{
	if (left(c) < 8)
		return FAIL(c, "%s does not fit (%zu bytes left)", what, left(c));
	memcpy(v, c->p + c->off, 8);
	c->off += 8;
	return 0;
}

static inline int u32pair(struct cur *c, uint32_t *a, uint32_t *b, const char *what)
{
	if (left(c) < 8)
		return FAIL(c, "%s does not fit (%zu bytes left)", what, left(c));
	memcpy(a, c->p + c->off, 4);
	memcpy(b, c->p + c->off + 4, 4);
	c->off += 8;
	return 0;
}

/* An array of n u64s: returns a pointer into the record, checked first. */
static int u64s(struct cur *c, uint64_t n, const uint64_t **out, const char *what)
{
	if (n > left(c) / 8)
		return FAIL(c, "%s claims %llu u64s, only %zu bytes left", what,
			    (unsigned long long)n, left(c));
	*out = (const uint64_t *)(const void *)(c->p + c->off);
	c->off += (size_t)n * 8;
	return 0;
}

static int bytes(struct cur *c, uint64_t n, const void **out, const char *what)
{
	if (n > left(c))
		return FAIL(c, "%s claims %llu bytes, only %zu left", what,
			    (unsigned long long)n, left(c));
	*out = c->p + c->off;
	c->off += (size_t)n;
	return 0;
}

/* A NUL-terminated string that must end inside the cursor's range; the
 * cursor then moves to the end of the range (the kernel pads with zeros). */
static int string(struct cur *c, const char **out, const char *what)
{
	const uint8_t *s = c->p + c->off;
	if (!memchr(s, 0, left(c)))
		return FAIL(c, "%s is not NUL-terminated within the record", what);
	*out = (const char *)s;
	c->off = c->end;
	return 0;
}

static int read_values(struct cur *c, uint64_t rf, struct record_read *rd)
{
	unsigned te = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED);
	unsigned tr = !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	unsigned id = !!(rf & PERF_FORMAT_ID);
	unsigned lost = !!(rf & PERF_FORMAT_LOST);

	memset(rd, 0, sizeof *rd);
	if (rf & PERF_FORMAT_GROUP) {
		if (u64(c, &rd->nr, "read nr"))
			return -EINVAL;
		if (te && u64(c, &rd->time_enabled, "read time_enabled"))
			return -EINVAL;
		if (tr && u64(c, &rd->time_running, "read time_running"))
			return -EINVAL;
		rd->stride = 1 + id + lost;
		rd->id_at = id ? 1 : 0;
		rd->lost_at = lost ? 1 + id : 0;
		if (rd->nr > left(c) / 8 / rd->stride)
			return FAIL(c, "read group of %llu values does not fit",
				    (unsigned long long)rd->nr);
		return u64s(c, rd->nr * rd->stride, &rd->values, "read values");
	}
	/* One value: value, [enabled], [running], [id], [lost]. */
	rd->nr = 1;
	rd->stride = 1 + te + tr + id + lost;
	rd->id_at = id ? 1 + te + tr : 0;
	rd->lost_at = lost ? 1 + te + tr + id : 0;
	if (u64s(c, rd->stride, &rd->values, "read value"))
		return -EINVAL;
	if (te)
		memcpy(&rd->time_enabled, rd->values + 1, 8);
	if (tr)
		memcpy(&rd->time_running, rd->values + 1 + te, 8);
	return 0;
}

static int regs(struct cur *c, uint64_t mask, uint64_t *abi, const uint64_t **r,
		unsigned *n, const char *what)
{
	if (u64(c, abi, what))
		return -EINVAL;
	*n = 0;
	*r = NULL;
	if (*abi == PERF_SAMPLE_REGS_ABI_NONE)
		return 0;
	*n = (unsigned)bits_count(mask);
	return u64s(c, *n, r, what);
}

static int sample(struct cur *c, const struct perf_event_attr *a, struct record_sample *s)
{
	uint64_t st = a->sample_type, v;
	uint32_t res;

	s->type = st;
	if ((st & PERF_SAMPLE_IDENTIFIER) && u64(c, &s->id, "sample identifier"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_IP) && u64(c, &s->ip, "sample ip"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_TID) && u32pair(c, &s->pid, &s->tid, "sample pid/tid"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_TIME) && u64(c, &s->time, "sample time"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_ADDR) && u64(c, &s->addr, "sample addr"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_ID) && u64(c, &s->id, "sample id"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_STREAM_ID) && u64(c, &s->stream_id, "sample stream_id"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_CPU) && u32pair(c, &s->cpu, &res, "sample cpu"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_PERIOD) && u64(c, &s->period, "sample period"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_READ) && read_values(c, a->read_format, &s->read))
		return -EINVAL;
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (u64(c, &s->nr_callchain, "callchain nr") ||
		    u64s(c, s->nr_callchain, &s->callchain, "callchain"))
			return -EINVAL;
	}
	if (st & PERF_SAMPLE_RAW) {
		if (left(c) < 4)
			return FAIL(c, "raw size does not fit");
		memcpy(&s->raw_size, c->p + c->off, 4);
		c->off += 4;
		if (bytes(c, s->raw_size, &s->raw, "raw data"))
			return -EINVAL;
		/* The kernel pads size+data to u64s; anything else is a bad record. */
		if (c->off & 7)
			return FAIL(c, "raw size %u leaves the record misaligned", s->raw_size);
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		const uint64_t *br = NULL;
		if (u64(c, &s->nr_branches, "branch nr"))
			return -EINVAL;
		if ((a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) &&
		    u64(c, &s->branch_hw_idx, "branch hw_idx"))
			return -EINVAL;
		if (s->nr_branches > left(c) / sizeof(struct perf_branch_entry))
			return FAIL(c, "branch stack of %llu entries does not fit",
				    (unsigned long long)s->nr_branches);
		if (u64s(c, s->nr_branches * 3, &br, "branch entries"))
			return -EINVAL;
		s->branches = (const struct perf_branch_entry *)(const void *)br;
	}
	if ((st & PERF_SAMPLE_REGS_USER) &&
	    regs(c, a->sample_regs_user, &s->regs_user_abi, &s->regs_user,
		 &s->nr_regs_user, "regs_user"))
		return -EINVAL;
	if (st & PERF_SAMPLE_STACK_USER) {
		if (u64(c, &s->stack_user_size, "stack_user size"))
			return -EINVAL;
		/* size 0 (no user stack) carries no data and no dyn_size. */
		if (s->stack_user_size) {
			if (bytes(c, s->stack_user_size, &s->stack_user, "stack_user data") ||
			    u64(c, &s->stack_user_dyn_size, "stack_user dyn_size"))
				return -EINVAL;
			if (s->stack_user_dyn_size > s->stack_user_size)
				return FAIL(c, "stack_user dyn_size %llu exceeds size %llu",
					    (unsigned long long)s->stack_user_dyn_size,
					    (unsigned long long)s->stack_user_size);
		}
	}
	if ((st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) &&
	    u64(c, &s->weight, "sample weight"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_DATA_SRC) && u64(c, &s->data_src, "sample data_src"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_TRANSACTION) && u64(c, &s->transaction, "sample transaction"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_REGS_INTR) &&
	    regs(c, a->sample_regs_intr, &s->regs_intr_abi, &s->regs_intr,
		 &s->nr_regs_intr, "regs_intr"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_PHYS_ADDR) && u64(c, &s->phys_addr, "sample phys_addr"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_CGROUP) && u64(c, &s->cgroup, "sample cgroup"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_DATA_PAGE_SIZE) && u64(c, &s->data_page_size, "data_page_size"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_CODE_PAGE_SIZE) && u64(c, &s->code_page_size, "code_page_size"))
		return -EINVAL;
	if (st & PERF_SAMPLE_AUX) {
		if (u64(c, &s->aux_size, "aux size") ||
		    bytes(c, s->aux_size, &s->aux, "aux data"))
			return -EINVAL;
		v = c->off;
		if (v & 7)
			return FAIL(c, "aux size %llu leaves the record misaligned",
				    (unsigned long long)s->aux_size);
	}
	if (left(c))
		return FAIL(c, "%zu bytes left after the fields of sample_type 0x%llx",
			    left(c), (unsigned long long)st);
	return 0;
}

/* Bytes of the sample_id_all trailer for a sample_type. */
static size_t trailer_size(uint64_t st)
{
	return 8 * (size_t)bits_count(st & (PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER));
}

/* Decodes the trailer at [off, end): the cursor's end then moves to off. */
static int trailer(struct cur *c, uint64_t st, struct record_sample *s)
{
	size_t n = trailer_size(st);
	struct cur t;
	uint32_t res;

	if (left(c) < n)
		return FAIL(c, "sample_id trailer (%zu bytes) does not fit", n);
	t = *c;
	t.off = c->end - n;
	c->end = t.off;
	s->type = st;
	if ((st & PERF_SAMPLE_TID) && u32pair(&t, &s->pid, &s->tid, "trailer pid/tid"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_TIME) && u64(&t, &s->time, "trailer time"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_ID) && u64(&t, &s->id, "trailer id"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_STREAM_ID) && u64(&t, &s->stream_id, "trailer stream_id"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_CPU) && u32pair(&t, &s->cpu, &res, "trailer cpu"))
		return -EINVAL;
	if ((st & PERF_SAMPLE_IDENTIFIER) && u64(&t, &s->id, "trailer identifier"))
		return -EINVAL;
	return 0;
}

/*
 * Which event a record belongs to.  With PERF_SAMPLE_IDENTIFIER the id sits
 * at a fixed place (first u64 of a sample, last of a trailer); otherwise
 * all events share one sample_type (perf requires it) and the id position
 * follows from the first attr.
 */
static int find_event(const struct evtab *t, const uint8_t *p, size_t size, int is_sample)
{
	const struct perf_event_attr *a0;
	uint64_t st, id;
	size_t pos;

	if (!t || evtab__count(t) == 0)
		return -1;
	if (evtab__count(t) == 1)
		return 0;
	a0 = evtab__attr(t, 0);
	st = a0->sample_type;
	if (!is_sample && !a0->sample_id_all)
		return -1;
	if (st & PERF_SAMPLE_IDENTIFIER) {
		pos = is_sample ? 8 : size - 8;
	} else if (st & PERF_SAMPLE_ID) {
		if (is_sample) {
			pos = 8 + 8 * (size_t)bits_count(st & (PERF_SAMPLE_IP |
				PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR));
		} else {
			size_t after = 8 * (size_t)bits_count(st &
				(PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU));
			if (size < 16 + after)
				return -1;
			pos = size - 8 - after;
		}
	} else {
		return -1;
	}
	if (pos < 8 || pos + 8 > size)
		return -1;
	memcpy(&id, p + pos, 8);
	return evtab__lookup(t, id);
}

int record__sample_event(const struct evtab *t, const void *buf, size_t size)
{
	return find_event(t, buf, size, 1);
}

uint64_t record__time(const struct evtab *t, const void *buf, size_t size)
{
	const uint8_t *p = buf;
	const struct perf_event_attr *a;
	uint32_t type;
	uint64_t st, v;
	size_t pos;
	int idx;

	if (!t || evtab__count(t) == 0 || size < sizeof(struct perf_event_header))
		return 0;
	memcpy(&type, p, sizeof type);
	idx = find_event(t, p, size, type == PERF_RECORD_SAMPLE);
	/* an id nobody announced: the first event's layout, as perf guesses */
	a = evtab__attr(t, idx >= 0 ? idx : 0);
	st = a->sample_type;
	if (!(st & PERF_SAMPLE_TIME))
		return 0;
	if (type == PERF_RECORD_SAMPLE) {
		pos = 8 + 8 * (size_t)bits_count(st & (PERF_SAMPLE_IDENTIFIER |
			PERF_SAMPLE_IP | PERF_SAMPLE_TID));
		if (pos + 8 > size)
			return 0;
	} else {
		/* the trailer's time, counted back from its end */
		size_t back;
		if (!a->sample_id_all)
			return 0;
		back = 8 * (1 + (size_t)bits_count(st & (PERF_SAMPLE_IDENTIFIER |
			PERF_SAMPLE_CPU | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_ID)));
		if (back + 8 > size)
			return 0;
		pos = size - back;
	}
	memcpy(&v, p + pos, sizeof v);
	return v;
}

int record__window_keeps(const struct record_window *w, const struct evtab *t,
			 const void *buf, size_t size)
{
	const uint8_t *p = buf;
	uint64_t st, time = 0;
	uint32_t cpu = 0;
	size_t pos;
	int idx;

	if (!t || evtab__count(t) == 0 || size < sizeof(struct perf_event_header))
		return 1;
	if ((idx = find_event(t, p, size, 1)) < 0)
		return 1;
	st = evtab__attr(t, idx)->sample_type;
	/* the fixed fields in order: identifier, ip, tid, time, addr, id,
	 * stream id, cpu */
	pos = 8 + 8 * (size_t)bits_count(st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
					       PERF_SAMPLE_TID));
	if ((st & PERF_SAMPLE_TIME) && pos + 8 <= size)
		memcpy(&time, p + pos, sizeof time);
	pos += 8 * (size_t)bits_count(st & (PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
					    PERF_SAMPLE_STREAM_ID));
	if ((st & PERF_SAMPLE_CPU) && pos + 4 <= size)
		memcpy(&cpu, p + pos, sizeof cpu);
	return record_window__keeps(w, st, time, cpu);
}

/* The fixed part of each kernel record type after the header. */
static int body(struct cur *c, const struct evtab *t, struct record *r)
{
	switch (r->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		const void *b = NULL;
		if (u32pair(c, &r->u.mmap.pid, &r->u.mmap.tid, "pid/tid") ||
		    u64(c, &r->u.mmap.start, "addr") || u64(c, &r->u.mmap.len, "len") ||
		    u64(c, &r->u.mmap.pgoff, "pgoff"))
			return -EINVAL;
		if (r->type == PERF_RECORD_MMAP2) {
			if (bytes(c, 24, &b, "maj/min/ino or build id"))
				return -EINVAL;
			if (r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
				const uint8_t *bb = b;
				r->u.mmap.build_id_size = bb[0];
				r->u.mmap.build_id = bb + 4;
				if (bb[0] > 20)
					return FAIL(c, "build id size %u exceeds 20", bb[0]);
			} else {
				memcpy(&r->u.mmap.maj, b, 4);
				memcpy(&r->u.mmap.min, (const uint8_t *)b + 4, 4);
				memcpy(&r->u.mmap.ino, (const uint8_t *)b + 8, 8);
				memcpy(&r->u.mmap.ino_generation, (const uint8_t *)b + 16, 8);
			}
			if (u32pair(c, &r->u.mmap.prot, &r->u.mmap.flags, "prot/flags"))
				return -EINVAL;
		}
		return string(c, &r->u.mmap.filename, "filename");
	}
	case PERF_RECORD_LOST:
		return u64(c, &r->u.lost.id, "id") || u64(c, &r->u.lost.lost, "lost") ? -EINVAL : 0;
	case PERF_RECORD_COMM:
		if (u32pair(c, &r->u.comm.pid, &r->u.comm.tid, "pid/tid"))
			return -EINVAL;
		return string(c, &r->u.comm.comm, "comm");
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		if (u32pair(c, &r->u.task.pid, &r->u.task.ppid, "pid/ppid") ||
		    u32pair(c, &r->u.task.tid, &r->u.task.ptid, "tid/ptid") ||
		    u64(c, &r->u.task.time, "time"))
			return -EINVAL;
		return 0;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		if (u64(c, &r->u.throttle.time, "time") || u64(c, &r->u.throttle.id, "id") ||
		    u64(c, &r->u.throttle.stream_id, "stream_id"))
			return -EINVAL;
		return 0;
	case PERF_RECORD_READ: {
		const struct perf_event_attr *a;
		if (u32pair(c, &r->u.read.pid, &r->u.read.tid, "pid/tid"))
			return -EINVAL;
		a = t && r->evidx >= 0 ? evtab__attr(t, r->evidx) : NULL;
		if (!a)
			return FAIL(c, "no event attr to decode its read_format");
		return read_values(c, a->read_format, &r->u.read.read);
	}
	case PERF_RECORD_AUX:
		if (u64(c, &r->u.aux.offset, "aux_offset") || u64(c, &r->u.aux.size, "aux_size") ||
		    u64(c, &r->u.aux.flags, "flags"))
			return -EINVAL;
		return 0;
	case PERF_RECORD_ITRACE_START:
		return u32pair(c, &r->u.itrace_start.pid, &r->u.itrace_start.tid, "pid/tid");
	case PERF_RECORD_LOST_SAMPLES:
		return u64(c, &r->u.lost_samples.lost, "lost");
	case PERF_RECORD_SWITCH:
		return 0;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return u32pair(c, &r->u.switch_cpu_wide.next_prev_pid,
			       &r->u.switch_cpu_wide.next_prev_tid, "next_prev_pid/tid");
	case PERF_RECORD_NAMESPACES:
		if (u32pair(c, &r->u.namespaces.pid, &r->u.namespaces.tid, "pid/tid") ||
		    u64(c, &r->u.namespaces.nr, "nr_namespaces"))
			return -EINVAL;
		if (r->u.namespaces.nr > left(c) / 16)
			return FAIL(c, "%llu namespaces do not fit",
				    (unsigned long long)r->u.namespaces.nr);
		return u64s(c, r->u.namespaces.nr * 2, &r->u.namespaces.link_info, "link_info");
	case PERF_RECORD_KSYMBOL: {
		uint32_t tf = 0;
		if (u64(c, &r->u.ksymbol.addr, "addr") ||
		    u32pair(c, &r->u.ksymbol.len, &tf, "len/type/flags"))
			return -EINVAL;
		r->u.ksymbol.ksym_type = (uint16_t)tf;
		r->u.ksymbol.flags = (uint16_t)(tf >> 16);
		return string(c, &r->u.ksymbol.name, "name");
	}
	case PERF_RECORD_BPF_EVENT: {
		uint32_t tf = 0;
		const void *tag = NULL;
		if (u32pair(c, &tf, &r->u.bpf_event.id, "type/flags/id") ||
		    bytes(c, 8, &tag, "tag"))
			return -EINVAL;
		r->u.bpf_event.bpf_type = (uint16_t)tf;
		r->u.bpf_event.flags = (uint16_t)(tf >> 16);
		r->u.bpf_event.tag = tag;
		return 0;
	}
	case PERF_RECORD_CGROUP:
		if (u64(c, &r->u.cgroup.id, "id"))
			return -EINVAL;
		return string(c, &r->u.cgroup.path, "path");
	case PERF_RECORD_TEXT_POKE: {
		const void *b = NULL;
		uint16_t l[2];
		if (u64(c, &r->u.text_poke.addr, "addr") || bytes(c, 4, &b, "old_len/new_len"))
			return -EINVAL;
		memcpy(l, b, 4);
		r->u.text_poke.old_len = l[0];
		r->u.text_poke.new_len = l[1];
		if (bytes(c, (uint64_t)l[0] + l[1], &b, "old and new bytes"))
			return -EINVAL;
		r->u.text_poke.bytes = b;
		c->off = c->end;  /* padding */
		return 0;
	}
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		return u64(c, &r->u.aux_output_hw_id.hw_id, "hw_id");
	}
	return 0;
}

/*
 * Fields a sample does not carry read as zero.  Stored one by one: a
 * memset of the whole struct (rep stos) cost a quarter of the decode.
 * The assert makes a new field in record.h fail here until it is added.
 */
_Static_assert(sizeof(struct record_sample) == 320, "zero_sample must zero every field");
static inline void zero_sample(struct record_sample *s)
{
	s->type = s->id = s->ip = s->time = s->addr = s->stream_id = s->period = 0;
	s->weight = s->data_src = s->transaction = s->phys_addr = s->cgroup = 0;
	s->data_page_size = s->code_page_size = 0;
	s->pid = s->tid = s->cpu = 0;
	s->read.nr = s->read.time_enabled = s->read.time_running = 0;
	s->read.values = NULL;
	s->read.stride = s->read.id_at = s->read.lost_at = 0;
	s->nr_callchain = 0;
	s->callchain = NULL;
	s->raw_size = 0;
	s->raw = NULL;
	s->nr_branches = s->branch_hw_idx = 0;
	s->branches = NULL;
	s->regs_user_abi = s->regs_intr_abi = 0;
	s->regs_user = s->regs_intr = NULL;
	s->nr_regs_user = s->nr_regs_intr = 0;
	s->stack_user_size = s->stack_user_dyn_size = 0;
	s->stack_user = NULL;
	s->aux_size = 0;
	s->aux = NULL;
}

int record__decode(const struct evtab *t, const void *buf, size_t len,
		   struct record *out, char *err, size_t errlen)
{
	struct perf_event_header h;
	struct cur c = { .p = buf, .err = err, .errlen = errlen };
	const struct perf_event_attr *a = NULL;
	int rc;

	if (err && errlen)
		err[0] = 0;
	if (len < sizeof h) {
		c.type = 0;
		return FAIL(&c, "%zu bytes cannot hold a record header", len);
	}
	memcpy(&h, buf, sizeof h);
	c.type = h.type;
	if (h.size < sizeof h || h.size > len)
		return FAIL(&c, "size %u outside the %zu bytes available (minimum 8)",
			    h.size, len);
	/* Arrays are handed out as u64 pointers into the buffer. */
	if ((uintptr_t)buf & 7)
		return FAIL(&c, "record buffer is not 8-byte aligned");

	zero_sample(&out->s);
	out->type = h.type;
	out->misc = h.misc;
	out->size = h.size;
	out->data = buf;
	out->evidx = -1;
	c.off = sizeof h;
	c.end = h.size;

	if (h.type >= PERF_RECORD_MAX || h.type == 0)
		return 0;  /* unknown kernel or user-space record: raw bytes only */

	out->evidx = find_event(t, buf, h.size, h.type == PERF_RECORD_SAMPLE);
	if (out->evidx >= 0)
		a = evtab__attr(t, out->evidx);

	if (h.type != PERF_RECORD_SAMPLE)
		memset(&out->u, 0, sizeof out->u);
	if (h.type == PERF_RECORD_SAMPLE) {
		if (!a) {
			if (!t || evtab__count(t) == 0)
				return FAIL(&c, "no event attrs to decode it with");
			return FAIL(&c, "its sample id matches no known event");
		}
		return sample(&c, a, &out->s);
	}
	if (a && a->sample_id_all) {
		rc = trailer(&c, a->sample_type, &out->s);
		if (rc)
			return rc;
	}
	return body(&c, t, out);
}
