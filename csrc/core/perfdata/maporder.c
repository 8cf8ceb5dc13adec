/* Address-space records held in file order, handed back in time order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "perfdata/maporder.h"

struct mo_ent {
	uint64_t time;
	size_t seq;                 /* order added: ties stay in file order */
	size_t off;                 /* the record's copy in the arena */
	uint32_t size;
};

struct maporder {
	struct mo_ent *e;
	size_t n, cap;
	uint8_t *arena;             /* 8-aligned copies, so decoding reads aligned u64s */
	size_t len, arena_cap;
};

struct maporder *maporder__new(void)
{
	return calloc(1, sizeof(struct maporder));
}

void maporder__delete(struct maporder *mo)
{
	if (mo == NULL)
		return;
	free(mo->e);
	free(mo->arena);
	free(mo);
}

int maporder__wants(uint32_t type)
{
	return type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 ||
	       type == PERF_RECORD_COMM || type == PERF_RECORD_FORK ||
	       type == PERF_RECORD_EXIT;
}

/* The time a record reader shows for r (l_record.c: the trailer's, then
 * FORK and EXIT's own over it). */
static uint64_t time_of(const struct record *r)
{
	if (r->type == PERF_RECORD_FORK || r->type == PERF_RECORD_EXIT)
		return r->u.task.time;
	return (r->s.type & PERF_SAMPLE_TIME) ? r->s.time : 0;
}

int maporder__add(struct maporder *mo, const struct record *r)
{
	size_t need, off;
	struct mo_ent *e;

	if (!maporder__wants(r->type))
		return 0;
	if (r->size < sizeof(struct perf_event_header) || r->data == NULL)
		return 0;
	if (mo->n == mo->cap) {
		size_t cap = mo->cap ? mo->cap * 2 : 64;
		struct mo_ent *ne = realloc(mo->e, cap * sizeof(*ne));
		if (ne == NULL)
			return -ENOMEM;
		mo->e = ne;
		mo->cap = cap;
	}
	off = (mo->len + 7) & ~(size_t)7;
	need = off + r->size;
	if (need > mo->arena_cap) {
		size_t cap = mo->arena_cap ? mo->arena_cap : 4096;
		uint8_t *na;
		while (cap < need) {
			if (cap > SIZE_MAX / 2)
				return -ENOMEM;
			cap *= 2;
		}
		na = realloc(mo->arena, cap);
		if (na == NULL)
			return -ENOMEM;
		mo->arena = na;
		mo->arena_cap = cap;
	}
	memcpy(mo->arena + off, r->data, r->size);
	mo->len = need;
	e = &mo->e[mo->n];
	e->time = time_of(r);
	e->seq = mo->n;
	e->off = off;
	e->size = r->size;
	mo->n++;
	return 0;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct mo_ent *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

size_t maporder__sort(struct maporder *mo)
{
	size_t i;

	/* Records mostly come in time order already: check first. */
	for (i = 1; i < mo->n && cmp_ent(&mo->e[i - 1], &mo->e[i]) < 0; i++)
		;
	if (i < mo->n)
		qsort(mo->e, mo->n, sizeof(*mo->e), cmp_ent);
	return mo->n;
}

int maporder__get(const struct maporder *mo, size_t i, const struct evtab *t,
		  struct record *out)
{
	if (i >= mo->n)
		return -EINVAL;
	return record__decode(t, mo->arena + mo->e[i].off, mo->e[i].size, out, NULL, 0);
}
