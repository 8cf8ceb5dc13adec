/*
 * Time ordering, as perf's ordered events: records with a time are queued
 * and delivered sorted by (time, arrival) up to the limit a FINISHED_ROUND
 * sets (the highest time seen before the previous round), all at the end,
 * or half the queued span when the queue reaches its memory bound.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata/perfdata.h"
#include "perfdata/perfdata_int.h"

void perfdata__chunk_put(struct chunk *c)
{
	if (c && --c->refs == 0 && !c->active)
		free(c);
}

/* -------------------------------------------------------- timestamps */

/* The attr a kernel record belongs to, found by its sample id like perf does. */
static const struct perf_event_attr *attr_of(struct perfdata *pd, const uint8_t *r, uint32_t size)
{
	const struct perf_event_attr *a0 = &pd->attrs[0].attr;
	uint64_t st = a0->sample_type;
	int idx;

	if (pd->nr_attrs == 1 || !(st & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)))
		return a0;
	if (rd32(r) == PERF_RECORD_SAMPLE) {
		unsigned pos = 8;
		if (!(st & PERF_SAMPLE_IDENTIFIER))
			pos += 8 * (!!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) +
				    !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR));
		if (pos + 8 > size)
			return a0;
		idx = perfdata__idx_of_id(pd, rd64(r + pos));
	} else {
		unsigned back = 8;
		if (!a0->sample_id_all)
			return a0;
		if (!(st & PERF_SAMPLE_IDENTIFIER))
			back += 8 * (!!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_STREAM_ID));
		if (back + 8 > size)
			return a0;
		idx = perfdata__idx_of_id(pd, rd64(r + size - back));
	}
	return idx >= 0 ? &pd->attrs[idx].attr : a0;
}

/* The record's time, or 0 when it carries none (delivered at once, like perf). */
uint64_t perfdata__record_time(struct perfdata *pd, const uint8_t *r, uint32_t size)
{
	const struct perf_event_attr *a = attr_of(pd, r, size);
	uint64_t st = a->sample_type;
	unsigned pos;

	if (!(st & PERF_SAMPLE_TIME))
		return 0;
	if (rd32(r) == PERF_RECORD_SAMPLE) {
		pos = 8 + 8 * (!!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_IP) +
			       !!(st & PERF_SAMPLE_TID));
		return pos + 8 <= size ? rd64(r + pos) : 0;
	}
	if (!a->sample_id_all)
		return 0;
	pos = 8 * (1 + !!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_CPU) +
		   !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_ID));
	return pos + 8 <= size ? rd64(r + size - pos) : 0;
}

/* ------------------------------------------------------------- ordering */

static int qent_less(const struct qent *a, const struct qent *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static int cmp_qent(const void *a, const void *b)
{
	return qent_less(a, b) ? -1 : qent_less(b, a);
}

/* Sorts the entries queued since the last flush and merges them into the sorted run. */
int perfdata__sort_queue(struct perfdata *pd)
{
	size_t a = pd->q_sorted - pd->q_head, b = pd->q_n - pd->q_sorted, i, j, k;
	struct qent *base, *tmp;

	if (!b)
		return 0;
	base = pd->q + pd->q_head;
	qsort(pd->q + pd->q_sorted, b, sizeof *pd->q, cmp_qent);
	if (a && qent_less(&base[a], &base[a - 1])) {
		tmp = malloc(a * sizeof *tmp);
		if (!tmp)
			return -ENOMEM;
		memcpy(tmp, base, a * sizeof *tmp);
		for (i = 0, j = a, k = 0; i < a; k++) {
			if (j < a + b && qent_less(&base[j], &tmp[i]))
				base[k] = base[j++];
			else
				base[k] = tmp[i++];
		}
		free(tmp);
	}
	pd->q_sorted = pd->q_n;
	return 0;
}

int perfdata__start_flush(struct perfdata *pd, uint64_t limit)
{
	int e = perfdata__sort_queue(pd);
	if (e)
		return e;
	pd->limit = limit;
	pd->flushing = 1;
	return 0;
}

int perfdata__enqueue(struct perfdata *pd, const uint8_t *p, uint32_t size, uint64_t time,
		   uint64_t off, struct chunk *c)
{
	struct qent *e;
	if (pd->q_head && pd->q_head == pd->q_n) {
		pd->q_head = pd->q_sorted = pd->q_n = 0;
	} else if (pd->q_n == pd->q_cap && pd->q_head > pd->q_cap / 2) {
		memmove(pd->q, pd->q + pd->q_head, (pd->q_n - pd->q_head) * sizeof *pd->q);
		pd->q_n -= pd->q_head;
		pd->q_sorted -= pd->q_head;
		pd->q_head = 0;
	}
	if (pd->q_n == pd->q_cap) {
		size_t n = pd->q_cap ? pd->q_cap * 2 : 4096;
		struct qent *q = realloc(pd->q, n * sizeof *q);
		if (!q)
			return -ENOMEM;
		pd->q = q;
		pd->q_cap = n;
	}
	/* Older than a record already delivered: it comes late (perf's "out of
	 * order event"), only possible after a forced flush or in a file whose
	 * rounds lie. */
	if (time < pd->last_flush)
		pd->stats.unordered++;
	if (time > pd->max_ts)
		pd->max_ts = time;
	e = &pd->q[pd->q_n++];
	e->time = time;
	e->seq = pd->seq++;
	e->offset = off;
	e->p = p;
	e->size = size;
	e->chunk = c;
	if (c)
		c->refs++;
	pd->q_bytes += size + sizeof *e;
	return 0;
}
