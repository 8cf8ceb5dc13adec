/*
 * Off-CPU samples (offcpu.h): switch-out samples held per thread until
 * the thread's switch-in, then passed on with the time off the CPU as
 * their period.
 */
#include "sample/offcpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/u64map.h"
#include "record/record.h"

/* Per thread, what is not paired yet: records arrive ring by ring, so a
 * thread's later wait (drained from one CPU's ring) can come before its
 * earlier one (another CPU's ring), and a switch-in before its switch-out.
 * Both lists are kept in time order; they hold what the watermark has not
 * passed yet (a few passes' worth), up to a bound. */
#define MAX_HELD 65536

enum { OC_NONE, OC_SAMPLED, OC_BLOCKED };

struct oc_pending {
	uint8_t *buf;            /* the held sample, as the kernel wrote it */
	uint64_t t_out;
	uint8_t state;
};

struct oc_task {
	struct oc_pending *p;    /* by t_out */
	unsigned np, pcap;
	uint64_t *orphan;        /* unpaired switch-in times, ascending */
	unsigned norphan, ocap;
	uint64_t exit_time;      /* its EXIT (0: none): a later switch-out never ends */
};

struct offcpu {
	struct offcpu_opts o;
	struct u64map tids;      /* tid -> index into tasks */
	struct oc_task *tasks;
	size_t ntasks, cap;
	/* Where the fixed sample fields sit in the event's samples. */
	size_t tid_off, time_off, period_off;
	int layout;              /* 1: known, -1: the event lacks TID/TIME/PERIOD */
	uint64_t seen;           /* the latest time fed */
	struct offcpu_stats st;
};

static void task_free(struct oc_task *k)
{
	unsigned i;

	for (i = 0; i < k->np; i++)
		free(k->p[i].buf);
	free(k->p);
	free(k->orphan);
	k->p = NULL;
	k->orphan = NULL;
	k->np = k->pcap = k->norphan = k->ocap = 0;
}

int offcpu__new(const struct offcpu_opts *o, struct offcpu **out)
{
	struct offcpu *oc = calloc(1, sizeof *oc);

	*out = NULL;
	if (!oc)
		return -ENOMEM;
	oc->o = *o;
	u64map__init(&oc->tids);
	*out = oc;
	return 0;
}

void offcpu__delete(struct offcpu *oc)
{
	size_t i;

	if (!oc)
		return;
	for (i = 0; i < oc->ntasks; i++)
		task_free(&oc->tasks[i]);
	free(oc->tasks);
	u64map__exit(&oc->tids);
	free(oc);
}

void offcpu__stats(const struct offcpu *oc, struct offcpu_stats *st)
{
	*st = oc->st;
}

/* The fixed fields come before any variable one, in sample_type bit order. */
static void layout(struct offcpu *oc, const struct evtab *t)
{
	const struct perf_event_attr *a = evtab__attr(t, oc->o.evidx);
	uint64_t st = a ? a->sample_type : 0;
	size_t off = sizeof(struct perf_event_header);
	const uint64_t need = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;

	oc->layout = -1;
	if ((st & need) != need)
		return;
	off += (st & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	off += (st & PERF_SAMPLE_IP) ? 8 : 0;
	oc->tid_off = off;
	off += 8;
	oc->time_off = off;
	off += 8;
	off += (st & PERF_SAMPLE_ADDR) ? 8 : 0;
	off += (st & PERF_SAMPLE_ID) ? 8 : 0;
	off += (st & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	off += (st & PERF_SAMPLE_CPU) ? 8 : 0;
	oc->period_off = off;
	oc->layout = 1;
}

static struct oc_task *task_of(struct offcpu *oc, uint32_t tid, int create)
{
	uint32_t *v;
	int added = 0;

	if (!create) {
		v = u64map__find(&oc->tids, tid);
		return v ? &oc->tasks[*v] : NULL;
	}
	if (oc->ntasks == oc->cap) {
		size_t cap = oc->cap ? oc->cap * 2 : 64;
		struct oc_task *t = realloc(oc->tasks, cap * sizeof *t);
		if (!t)
			return NULL;
		oc->tasks = t;
		oc->cap = cap;
	}
	v = u64map__insert(&oc->tids, tid, (uint32_t)oc->ntasks, &added);
	if (!v)
		return NULL;
	if (added)
		memset(&oc->tasks[oc->ntasks++], 0, sizeof oc->tasks[0]);
	return &oc->tasks[*v];
}

/* Forgets the switch-ins up to t (paired, or ending no wait held). */
static void drop_orphans_upto(struct oc_task *k, uint64_t t)
{
	unsigned i = 0;

	while (i < k->norphan && k->orphan[i] <= t)
		i++;
	if (i) {
		memmove(k->orphan, k->orphan + i, (k->norphan - i) * sizeof k->orphan[0]);
		k->norphan -= i;
	}
}

static int add_orphan(struct oc_task *k, uint64_t t)
{
	unsigned i;

	if (k->norphan == MAX_HELD) {
		memmove(k->orphan, k->orphan + 1, (MAX_HELD - 1) * sizeof k->orphan[0]);
		k->norphan--;
	}
	if (k->norphan == k->ocap) {
		unsigned cap = k->ocap ? k->ocap * 2 : 8;
		uint64_t *o = realloc(k->orphan, cap * sizeof *o);
		if (!o)
			return -ENOMEM;
		k->orphan = o;
		k->ocap = cap;
	}
	i = k->norphan;
	while (i > 0 && k->orphan[i - 1] > t) {
		k->orphan[i] = k->orphan[i - 1];
		i--;
	}
	k->orphan[i] = t;
	k->norphan++;
	return 0;
}

/* The held switch-out after index i (UINT64_MAX: none). */
static uint64_t next_out(const struct oc_task *k, unsigned i)
{
	for (i++; i < k->np; i++)
		if (k->p[i].state != OC_NONE)
			return k->p[i].t_out;
	return UINT64_MAX;
}

/* Drops the entries no longer held, keeping the order. */
static void compact(struct oc_task *k)
{
	unsigned i, n = 0;

	for (i = 0; i < k->np; i++) {
		if (k->p[i].state == OC_NONE)
			free(k->p[i].buf);
		else
			k->p[n++] = k->p[i];
	}
	k->np = n;
}

/* The held sample, ended at t_in: passed on, or dropped as too short. */
static int complete(struct offcpu *oc, struct oc_pending *q, uint64_t t_in,
		    offcpu_emit_fn emit, void *arg)
{
	uint64_t period = t_in - q->t_out;
	int rc;

	if (period < oc->o.thresh_ns) {
		oc->st.short_waits++;
		q->state = OC_NONE;
		return 0;
	}
	memcpy(q->buf + oc->time_off, &t_in, 8);
	memcpy(q->buf + oc->period_off, &period, 8);
	rc = emit(arg, (const struct perf_event_header *)q->buf);
	if (rc < 0)
		return rc;
	q->state = OC_NONE;
	oc->st.samples++;
	oc->st.ns += period;
	return rc;
}

static int on_sample(struct offcpu *oc, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)h;
	uint32_t tid;
	uint64_t t;
	struct oc_task *k;
	uint8_t *buf;
	unsigned i;

	if (h->size < oc->period_off + 8)
		return 0;
	memcpy(&tid, p + oc->tid_off + 4, 4);
	memcpy(&t, p + oc->time_off, 8);
	if (t > oc->seen)
		oc->seen = t;
	if (tid == 0)                   /* the idle task */
		return 0;
	k = task_of(oc, tid, 1);
	if (!k)
		return -ENOMEM;
	if (k->exit_time && t >= k->exit_time)
		return 0;
	if (k->np == MAX_HELD) {
		/* the oldest wait gives up its place */
		k->p[0].state = OC_NONE;
		oc->st.unmatched++;
		compact(k);
	}
	if (k->np == k->pcap) {
		unsigned cap = k->pcap ? k->pcap * 2 : 4;
		struct oc_pending *np = realloc(k->p, cap * sizeof *np);
		if (!np)
			return -ENOMEM;
		k->p = np;
		k->pcap = cap;
	}
	buf = malloc(h->size);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, h, h->size);
	/* in time order: usually the last */
	i = k->np;
	while (i > 0 && k->p[i - 1].t_out > t) {
		k->p[i] = k->p[i - 1];
		i--;
	}
	k->p[i].buf = buf;
	k->p[i].t_out = t;
	k->p[i].state = OC_SAMPLED;
	k->np++;
	oc->st.switch_outs++;
	return 0;
}

static int on_switch_out(struct offcpu *oc, uint32_t tid, uint64_t t, int preempt)
{
	struct oc_task *k = task_of(oc, tid, 0);
	unsigned i;

	if (!k)
		return 0;
	/* its sample: the one of this thread taken last before it (the
	 * kernel writes the sample, then the switch record, in one ring) */
	for (i = k->np; i-- > 0; ) {
		struct oc_pending *q = &k->p[i];
		if (q->t_out > t)
			continue;
		if (q->state != OC_SAMPLED)
			return 0;
		if (preempt) {
			q->state = OC_NONE;
			oc->st.preempted++;
			if (i == k->np - 1) {
				free(q->buf);
				k->np--;
			}
		} else {
			q->state = OC_BLOCKED;
		}
		return 0;
	}
	return 0;
}

static int on_switch_in(struct offcpu *oc, uint32_t tid, uint64_t t)
{
	struct oc_task *k;

	if (tid == 0)
		return 0;
	k = task_of(oc, tid, 1);
	if (!k)
		return -ENOMEM;
	return add_orphan(k, t);
}

/*
 * Pairs what the watermark allows: every record of a time up to it has
 * been fed, so a wait's first switch-in at or below it is its end, and a
 * switch-out of the thread before that switch-in means the wait's end was
 * lost.
 */
static int flush_task(struct offcpu *oc, struct oc_task *k, uint64_t w,
		      offcpu_emit_fn emit, void *arg)
{
	unsigned i, j = 0;
	int rc = 0;

	for (i = 0; i < k->np && !rc; i++) {
		struct oc_pending *q = &k->p[i];
		uint64_t limit;

		if (q->state == OC_NONE)
			continue;
		if (q->t_out > w)
			break;
		if (q->state != OC_BLOCKED) {
			/* a sample whose switch record was lost, or not drained:
			 * waits past the watermark */
			if (next_out(k, i) <= w) {
				q->state = OC_NONE;
				oc->st.unmatched++;
			}
			continue;
		}
		while (j < k->norphan && k->orphan[j] <= q->t_out)
			j++;
		limit = next_out(k, i);
		if (j < k->norphan && k->orphan[j] <= w && k->orphan[j] < limit) {
			rc = complete(oc, q, k->orphan[j], emit, arg);
			if (rc < 0)
				break;
			j++;
		} else if (limit <= w && (j == k->norphan || k->orphan[j] > limit)) {
			/* the thread switched out again first: its switch-in was lost */
			q->state = OC_NONE;
			oc->st.unmatched++;
		} else {
			break;
		}
	}
	compact(k);
	/* switch-ins up to the watermark before every held switch-out end
	 * nothing: their switch-outs were fed, and were preemptions */
	{
		uint64_t first = k->np ? k->p[0].t_out : UINT64_MAX, upto = first < w ? first : w;
		if (upto)
			drop_orphans_upto(k, upto - 1);
	}
	return rc;
}

int offcpu__flush(struct offcpu *oc, uint64_t watermark, offcpu_emit_fn emit, void *arg)
{
	size_t i;
	int rc;

	for (i = 0; i < oc->ntasks; i++) {
		rc = flush_task(oc, &oc->tasks[i], watermark, emit, arg);
		if (rc)
			return rc;
	}
	return 0;
}

uint64_t offcpu__seen(const struct offcpu *oc)
{
	return oc->seen;
}

static void on_task(struct offcpu *oc, const struct record *r)
{
	struct oc_task *k = task_of(oc, r->u.task.tid, r->type == PERF_RECORD_FORK);
	unsigned i;

	if (!k)
		return;
	if (r->type == PERF_RECORD_EXIT) {
		/* what it holds is paired as usual; the switch-out that ends
		 * it (after the EXIT) is not a wait */
		k->exit_time = (r->s.type & PERF_SAMPLE_TIME) ? r->s.time : UINT64_MAX;
		return;
	}
	/* A new thread with the number of one gone: forget what the old one
	 * left before the fork.  What comes after it is the new thread's,
	 * and may have been drained already from another CPU's ring (its
	 * switch-in, its EXIT) before this FORK from its parent's. */
	if (!(r->s.type & PERF_SAMPLE_TIME)) {
		task_free(k);
		k->exit_time = 0;
		return;
	}
	drop_orphans_upto(k, r->s.time);
	for (i = 0; i < k->np; i++)
		if (k->p[i].t_out < r->s.time)
			k->p[i].state = OC_NONE;
	compact(k);
	if (k->exit_time && k->exit_time < r->s.time)
		k->exit_time = 0;
}

int offcpu__feed(struct offcpu *oc, const struct evtab *t, const struct perf_event_header *h,
		 offcpu_emit_fn emit, void *arg)
{
	struct record r;
	uint64_t id;
	int rc;

	if (!oc->layout)
		layout(oc, t);
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		/* sessions give every event PERF_SAMPLE_IDENTIFIER: the first field */
		if (oc->layout < 0 || h->size < 16)
			return emit(arg, h);
		memcpy(&id, (const uint8_t *)h + 8, 8);
		if (evtab__find_id(t, id) != oc->o.evidx)
			return emit(arg, h);
		return on_sample(oc, h);
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (record__decode(t, h, h->size, &r, NULL, 0) || !(r.s.type & PERF_SAMPLE_TID))
			return oc->o.keep_switches ? emit(arg, h) : 0;
		if (r.s.type & PERF_SAMPLE_TIME && r.s.time > oc->seen)
			oc->seen = r.s.time;
		if (h->misc & PERF_RECORD_MISC_SWITCH_OUT)
			rc = on_switch_out(oc, r.s.tid, r.s.time,
					   !!(h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT));
		else
			rc = on_switch_in(oc, r.s.tid, r.s.time);
		if (rc < 0 || !oc->o.keep_switches)
			return rc;
		return emit(arg, h);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (!record__decode(t, h, h->size, &r, NULL, 0)) {
			on_task(oc, &r);
			if (r.s.type & PERF_SAMPLE_TIME && r.s.time > oc->seen)
				oc->seen = r.s.time;
		}
		return emit(arg, h);
	default:
		return emit(arg, h);
	}
}
