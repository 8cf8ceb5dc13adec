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
	if (!c || --c->refs != 0 || c->active)
		return;
	if (c->pool) {
		/* a window's pages are used again, not faulted in anew */
		c->next = *c->pool;
		*c->pool = c;
	} else {
		free(c);
	}
}

/* ------------------------------------------------------------- ordering */

static int qent_less(const struct qent *a, const struct qent *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

/*
 * Sorts v[0..n) by (time, arrival): a natural merge sort.  A round holds one
 * time-ordered run per CPU buffer after the part already sorted, so there
 * are few runs and the sort is close to a copy; qsort would not see them.
 */
static int sort_runs(struct perfdata *pd, struct qent *v, size_t n)
{
	size_t *bound, nb = 0, i;
	struct qent *src = v, *dst;

	for (i = 1; i < n; i++)
		if (qent_less(&v[i], &v[i - 1]))
			break;
	if (i >= n)
		return 0;
	if (pd->sort_cap < n) {
		size_t cap = pd->sort_cap ? pd->sort_cap : 4096;
		while (cap < n)
			cap *= 2;
		free(pd->sort_bound);
		free(pd->sort_tmp);
		pd->sort_bound = malloc((cap + 1) * sizeof *pd->sort_bound);
		pd->sort_tmp = malloc(cap * sizeof *pd->sort_tmp);
		if (!pd->sort_bound || !pd->sort_tmp) {
			free(pd->sort_bound);
			free(pd->sort_tmp);
			pd->sort_bound = NULL;
			pd->sort_tmp = NULL;
			pd->sort_cap = 0;
			return -ENOMEM;
		}
		pd->sort_cap = cap;
	}
	bound = pd->sort_bound;
	bound[nb++] = 0;
	for (i = 1; i < n; i++)
		if (qent_less(&v[i], &v[i - 1]))
			bound[nb++] = i;
	bound[nb] = n;
	dst = pd->sort_tmp;
	/* nb runs, run r = [bound[r], bound[r + 1]); merged pairwise until one */
	while (nb > 1) {
		size_t r, out = 0;
		for (r = 0; r < nb; r += 2) {
			size_t lo = bound[r], mid = bound[r + 1], hi = bound[r + 2 <= nb ? r + 2 : r + 1];
			size_t a = lo, b = mid, k = lo;
			while (a < mid && b < hi)
				dst[k++] = qent_less(&src[b], &src[a]) ? src[b++] : src[a++];
			memcpy(dst + k, src + a, (mid - a) * sizeof *src);
			k += mid - a;
			memcpy(dst + k, src + b, (hi - b) * sizeof *src);
			bound[out++] = lo;
		}
		bound[out] = n;
		nb = out;
		src = dst;
		dst = src == pd->sort_tmp ? v : pd->sort_tmp;
	}
	if (src != v)
		memcpy(v, src, n * sizeof *v);
	return 0;
}

/* Sorts the entries queued since the last flush with the sorted run before them. */
int perfdata__sort_queue(struct perfdata *pd)
{
	int e;

	if (pd->q_n == pd->q_sorted)
		return 0;
	if ((e = sort_runs(pd, pd->q + pd->q_head, pd->q_n - pd->q_head)) < 0)
		return e;
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
