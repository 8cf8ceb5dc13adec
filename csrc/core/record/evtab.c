/*
 * The event table: attrs, names, and a hash from sample id to event index
 * (open addressing, linear probing; ids come from the kernel or a file and
 * are never 0 in practice, but 0 is handled with a used flag anyway).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "record/record.h"

struct evtab_event {
	struct perf_event_attr attr;
	char *name;
};

struct evtab_slot {
	uint64_t id;
	int idx;
	int used;         /* 0: empty, so a calloc'ed table starts empty */
};

struct evtab {
	struct evtab_event *ev;
	int nr, cap;
	struct evtab_slot *slots;
	size_t nslots, nids;     /* nslots: a power of two or 0 */
};

struct evtab *evtab__new(void)
{
	return calloc(1, sizeof(struct evtab));
}

void evtab__delete(struct evtab *t)
{
	int i;

	if (!t)
		return;
	for (i = 0; i < t->nr; i++)
		free(t->ev[i].name);
	free(t->ev);
	free(t->slots);
	free(t);
}

int evtab__add(struct evtab *t, const struct perf_event_attr *attr, const char *name)
{
	struct evtab_event *e;
	size_t sz;

	if (t->nr == t->cap) {
		int cap = t->cap ? t->cap * 2 : 4;
		e = realloc(t->ev, (size_t)cap * sizeof *e);
		if (!e)
			return -ENOMEM;
		t->ev = e;
		t->cap = cap;
	}
	e = &t->ev[t->nr];
	memset(e, 0, sizeof *e);
	/* A file may carry an attr of another size: keep what both know. */
	sz = attr->size && attr->size < sizeof e->attr ? attr->size : sizeof e->attr;
	memcpy(&e->attr, attr, sz);
	e->attr.size = sizeof e->attr;
	e->name = strdup(name ? name : "");
	if (!e->name)
		return -ENOMEM;
	return t->nr++;
}

static size_t hash(uint64_t id)
{
	id ^= id >> 33;
	id *= UINT64_C(0xff51afd7ed558ccd);
	id ^= id >> 33;
	return (size_t)id;
}

static void put(struct evtab_slot *s, size_t n, uint64_t id, int idx)
{
	size_t i = hash(id) & (n - 1);

	while (s[i].used && s[i].id != id)
		i = (i + 1) & (n - 1);
	s[i].id = id;
	s[i].idx = idx;
	s[i].used = 1;
}

int evtab__add_id(struct evtab *t, int idx, uint64_t id)
{
	if (idx < 0 || idx >= t->nr)
		return -EINVAL;
	if ((t->nids + 1) * 2 > t->nslots) {
		size_t n = t->nslots ? t->nslots * 2 : 16, i;
		struct evtab_slot *s = calloc(n, sizeof *s);
		if (!s)
			return -ENOMEM;
		for (i = 0; i < t->nslots; i++)
			if (t->slots[i].used)
				put(s, n, t->slots[i].id, t->slots[i].idx);
		free(t->slots);
		t->slots = s;
		t->nslots = n;
	}
	if (evtab__find_id(t, id) < 0)
		t->nids++;
	put(t->slots, t->nslots, id, idx);
	return 0;
}

int evtab__count(const struct evtab *t)
{
	return t ? t->nr : 0;
}

const struct perf_event_attr *evtab__attr(const struct evtab *t, int idx)
{
	return idx >= 0 && idx < t->nr ? &t->ev[idx].attr : NULL;
}

const char *evtab__name(const struct evtab *t, int idx)
{
	return idx >= 0 && idx < t->nr ? t->ev[idx].name : NULL;
}

int evtab__find_id(const struct evtab *t, uint64_t id)
{
	size_t i;

	if (!t->nslots)
		return -1;
	i = hash(id) & (t->nslots - 1);
	while (t->slots[i].used) {
		if (t->slots[i].id == id)
			return t->slots[i].idx;
		i = (i + 1) & (t->nslots - 1);
	}
	return -1;
}

int evtab__lookup(const struct evtab *t, uint64_t id)
{
	if (t->nr == 1)
		return 0;
	return evtab__find_id(t, id);
}

int evtab__set_name(struct evtab *t, int idx, const char *name)
{
	char *s;

	if (idx < 0 || idx >= t->nr)
		return -EINVAL;
	s = strdup(name ? name : "");
	if (!s)
		return -ENOMEM;
	free(t->ev[idx].name);
	t->ev[idx].name = s;
	return 0;
}
