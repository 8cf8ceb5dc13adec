/*
 * A k-way merge of rings by record time.  The heap holds one entry per ring
 * with a record left before the head taken for the round: its next record
 * (peeked, not consumed) and that record's time; the root is the oldest,
 * ties broken by ring index.  A drain that stops early leaves the heap as
 * it is: the next one goes on from it (a peeked record stays where it is,
 * past the ring's data_tail, or in the ring's own bounce buffer), so a
 * caller taking one record a drain pays a heap step for it, not a look at
 * every ring.
 */
#include <errno.h>
#include <stdlib.h>
#include "sample/ringmerge.h"

struct head {
	uint64_t time;
	int ring;
	const struct perf_event_header *rec;
};

struct ringmerge {
	struct ring **rings;
	int n;
	const struct evtab *evtab;
	struct head *heap;
	int nheap;           /* rings with a record left in this round */
};

int ringmerge__new(struct ring **rings, int n, const struct evtab *t, struct ringmerge **out)
{
	struct ringmerge *m;

	*out = NULL;
	if (n < 0)
		return -EINVAL;
	m = calloc(1, sizeof *m);
	if (!m)
		return -ENOMEM;
	m->heap = calloc(n > 0 ? (size_t)n : 1, sizeof *m->heap);
	if (!m->heap) {
		free(m);
		return -ENOMEM;
	}
	m->rings = rings;
	m->n = n;
	m->evtab = t;
	*out = m;
	return 0;
}

void ringmerge__delete(struct ringmerge *m)
{
	if (!m)
		return;
	free(m->heap);
	free(m);
}

static int before(const struct head *a, const struct head *b)
{
	return a->time < b->time || (a->time == b->time && a->ring < b->ring);
}

static void sift_up(struct head *h, int i)
{
	struct head e = h[i];

	while (i > 0 && before(&e, &h[(i - 1) / 2])) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = e;
}

static void sift_down(struct head *h, int n, int i)
{
	struct head e = h[i];

	for (;;) {
		int c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && before(&h[c + 1], &h[c]))
			c++;
		if (!before(&h[c], &e))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = e;
}

/* Ring i's next record into *h; 0 when it has none left. */
static int load(struct ringmerge *m, int i, struct head *h, int *corrupt)
{
	int err = 0;
	const struct perf_event_header *rec = ring__peek(m->rings[i], &err);

	if (err)
		(*corrupt)++;
	if (!rec)
		return 0;
	h->rec = rec;
	h->ring = i;
	/* one ring is in order already: no time to read */
	h->time = m->n > 1 ? record__time(m->evtab, rec, rec->size) : 0;
	return 1;
}

/* A new round: every ring's head taken once, its next record loaded. */
static int round_begin(struct ringmerge *m, int *corrupt)
{
	struct head *h = m->heap;
	int i;

	for (i = 0; i < m->n; i++) {
		int rc = ring__begin(m->rings[i]);
		if (rc < 0)
			return rc;
		if (load(m, i, &h[m->nheap], corrupt))
			sift_up(h, m->nheap++);
	}
	return 0;
}

int ringmerge__drain(struct ringmerge *m,
		     int (*fn)(void *arg, const struct perf_event_header *rec),
		     void *arg, int *corrupt)
{
	struct head *h = m->heap;
	int i, rc = 0, fresh = 0, consumed = 0, resumed = m->nheap > 0;

	*corrupt = 0;
	for (;;) {
		int v;
		if (m->nheap == 0) {
			/* at most one new round a call, after what an earlier
			 * call left */
			if (fresh)
				break;
			/* a round reads each ring's data_tail: ours, so far */
			for (i = 0; resumed && i < m->n; i++)
				ring__end(m->rings[i]);
			if ((rc = round_begin(m, corrupt)) < 0)
				break;
			fresh = 1;
			if (m->nheap == 0)
				break;
		}
		v = fn(arg, h[0].rec);
		if (v < 0)
			break;
		ring__next(m->rings[h[0].ring]);
		consumed++;
		if (!load(m, h[0].ring, &h[0], corrupt))
			h[0] = h[--m->nheap];
		if (m->nheap > 0)
			sift_down(h, m->nheap, 0);
		if (v > 0)
			break;
	}
	for (i = 0; i < m->n; i++)
		ring__end(m->rings[i]);
	return rc < 0 ? rc : consumed;
}
