/* Address spaces per pid, and the string pool their paths live in. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "symbol/addrspace.h"

void addrspaces__init(struct addrspaces *a)
{
	memset(a, 0, sizeof(*a));
}

/* Lets go of as's block (freed with its last space); as holds none. */
static void block_drop(struct addrspace *as)
{
	if (as->blk != NULL && --as->blk->refs == 0)
		free(as->blk);
	as->blk = NULL;
	as->base = as->maps = NULL;
	as->n = as->cap = as->front = 0;
	as->inherited = 0;
}

static void addrspace__delete(struct addrspace *as)
{
	if (as->perfmap != NULL) {
		perfmap__exit(as->perfmap);
		free(as->perfmap);
	}
	block_drop(as);
	free(as->old);
	free(as);
}

void addrspaces__exit(struct addrspaces *a)
{
	size_t i;

	for (i = 0; i < a->nb; i++) {
		struct addrspace *as = a->b[i], *n;
		for (; as != NULL; as = n) {
			n = as->next;
			addrspace__delete(as);
		}
	}
	free(a->b);
	memset(a, 0, sizeof(*a));
}

static size_t pid_hash(uint32_t pid, size_t nb)
{
	return (size_t)((pid * 2654435761u) & (uint32_t)(nb - 1));
}

static int rehash(struct addrspaces *a)
{
	size_t nb = a->nb ? a->nb * 2 : 256, i;
	struct addrspace **b = calloc(nb, sizeof(*b));

	if (b == NULL)
		return -ENOMEM;
	for (i = 0; i < a->nb; i++) {
		struct addrspace *as = a->b[i], *n;
		for (; as != NULL; as = n) {
			size_t h = pid_hash(as->pid, nb);
			n = as->next;
			as->next = b[h];
			b[h] = as;
		}
	}
	free(a->b);
	a->b = b;
	a->nb = nb;
	return 0;
}

struct addrspace *addrspaces__get(struct addrspaces *a, uint32_t pid, int create)
{
	struct addrspace *as;
	size_t h;

	if (a->nb > 0)
		for (as = a->b[pid_hash(pid, a->nb)]; as != NULL; as = as->next)
			if (as->pid == pid)
				return as;
	if (!create)
		return NULL;
	if ((a->count + 1 > a->nb) && rehash(a) < 0)
		return NULL;
	as = calloc(1, sizeof(*as));
	if (as == NULL)
		return NULL;
	as->pid = pid;
	h = pid_hash(pid, a->nb);
	as->next = a->b[h];
	a->b[h] = as;
	a->count++;
	return as;
}

/* A space that shared its parent's block writes its own born marks into
 * the block it now holds alone. */
static void settle_born(struct addrspace *as)
{
	for (size_t k = 0; k < as->n; k++)
		as->maps[k].born = as->inherited_born;
	as->inherited = 0;
}

/* The n maps centred in a block of cap slots: this one when as alone
 * holds it and it has cap slots, else a new one. */
static int recentre(struct addrspace *as, size_t cap)
{
	size_t front = (cap - as->n) / 2;

	if (as->blk == NULL || as->blk->refs > 1 || cap != as->cap) {
		struct mapblock *b = malloc(sizeof(*b) + cap * sizeof(b->slot[0]));
		size_t n = as->n;
		int inherited = as->inherited;
		if (b == NULL)
			return -ENOMEM;
		b->refs = 1;
		if (n > 0)
			memcpy(b->slot + front, as->maps, n * sizeof(b->slot[0]));
		block_drop(as);
		as->blk = b;
		as->base = b->slot;
		as->n = n;
		as->inherited = inherited;
	} else if (as->n > 0) {
		memmove(as->blk->slot + front, as->maps, as->n * sizeof(*as->maps));
	}
	as->cap = cap;
	as->front = front;
	as->maps = as->base + front;
	if (as->inherited)
		settle_born(as);
	return 0;
}

/* Makes as's block its own (a copy when shared) before it writes. */
static int own(struct addrspace *as)
{
	if (as->blk == NULL || (as->blk->refs == 1 && !as->inherited))
		return 0;
	if (as->blk->refs == 1) {
		/* the others let go: the block is ours, its born marks not */
		settle_born(as);
		return 0;
	}
	return recentre(as, as->cap);
}

/* Slots for n maps, half as many more and extra at each end: cap, or
 * cap doubled until they fit. */
static size_t block_for(size_t cap, size_t n, size_t extra)
{
	size_t need = n + n / 2 + 2 * extra;

	if (cap < 16)
		cap = 16;
	while (cap < need)
		cap *= 2;
	return cap;
}

/*
 * Room for extra more maps at each end of the array.  A process maps its
 * libraries top-down (each new map goes first) and a synthesized list
 * comes bottom-up (each goes last): with room at both ends, an insert
 * moves only the maps on its shorter side.  When one end runs out, the
 * maps are centred again in a block with room for half as many more (the
 * same block when it has that room).
 */
static int reserve(struct addrspace *as, size_t extra)
{
	int e;

	if ((e = own(as)) < 0)
		return e;
	if (as->base != NULL && as->front >= extra && as->cap - as->front - as->n >= extra)
		return 0;
	return recentre(as, block_for(as->cap, as->n, extra));
}

/* First map whose end is above addr. */
static size_t first_after(const struct addrspace *as, uint64_t addr)
{
	size_t lo = 0, hi = as->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (as->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether every address of a and b names the same thing: one object at
 * one bias (anonymous code is named by the pid's perf map, whatever maps it). */
static int same_naming(const struct map *a, const struct map *b)
{
	if (a->kind == MAP_ANON && b->kind == MAP_ANON)
		return 1;
	return a->kind == b->kind && a->path == b->path && a->start - a->pgoff == b->start - b->pgoff;
}

/* Keeps maps[i, j), which m replaces, for the generations before the next. */
static int retire(struct addrspace *as, size_t i, size_t j, const struct map *m)
{
	size_t k;
	int differs = 0;

	for (k = i; k < j; k++)
		differs |= !same_naming(&as->maps[k], m);
	if (!differs)
		return 0;
	if (as->gen == UINT32_MAX - 1)
		return 0;           /* (the last generation: stays) */
	if (as->nold + (j - i) > as->oldcap) {
		size_t cap = as->oldcap ? as->oldcap : 8;
		struct old_map *o;
		while (cap < as->nold + (j - i))
			cap *= 2;
		o = realloc(as->old, cap * sizeof(*o));
		if (o == NULL)
			return -ENOMEM;
		as->old = o;
		as->oldcap = cap;
	}
	for (k = i; k < j; k++) {
		as->old[as->nold].m = as->maps[k];
		if (as->inherited)
			as->old[as->nold].m.born = as->inherited_born;
		as->old[as->nold++].died = as->gen + 1;
	}
	as->gen++;
	return 1;
}

int addrspace__insert(struct addrspace *as, const struct map *m)
{
	size_t i, j;
	struct map head, tail;
	int have_head = 0, have_tail = 0, newgen;

	if (m->end <= m->start)
		return 0;
	memset(&head, 0, sizeof(head));
	memset(&tail, 0, sizeof(tail));
	/* Room for the map and one split. */
	if (reserve(as, 2) < 0)
		return -ENOMEM;
	i = first_after(as, m->start);
	j = i;
	/* maps[i, j) overlap m: keep what sticks out on either side. */
	while (j < as->n && as->maps[j].start < m->end)
		j++;
	if ((newgen = retire(as, i, j, m)) < 0)
		return newgen;
	if (i < j && as->maps[i].start < m->start) {
		head = as->maps[i];
		head.end = m->start;
		have_head = 1;
	}
	if (i < j && as->maps[j - 1].end > m->end) {
		tail = as->maps[j - 1];
		tail.pgoff += m->end - tail.start;
		tail.start = m->end;
		have_tail = 1;
	}
	{
		size_t nnew = (size_t)have_head + 1 + (size_t)have_tail;
		size_t removed = j - i;
		if (i < as->n - j) {
			/* the maps before i move down (nnew - removed may be < 0) */
			size_t front = as->front + removed - nnew;
			memmove(as->base + front, as->maps, i * sizeof(*as->maps));
			as->front = front;
			as->maps = as->base + front;
		} else {
			memmove(&as->maps[i + nnew], &as->maps[j], (as->n - j) * sizeof(*as->maps));
		}
		as->n = as->n - removed + nnew;
		if (have_head)
			as->maps[i++] = head;
		as->maps[i] = *m;
		/* a new mapping of fresh addresses is taken as always there */
		as->maps[i++].born = newgen ? as->gen : 0;
		if (have_tail)
			as->maps[i] = tail;
	}
	return 0;
}

void addrspace__clear(struct addrspace *as)
{
	if (as->blk != NULL && as->blk->refs > 1)
		block_drop(as);
	as->n = 0;
	as->inherited = 0;
	if (as->perfmap != NULL) {
		perfmap__exit(as->perfmap);
		free(as->perfmap);
		as->perfmap = NULL;
	}
}

int addrspace__copy(struct addrspace *dst, const struct addrspace *src)
{
	int e;

	if (dst == src)
		return 0;

	/* a pid reused: its old maps stay for the generations before */
	if (dst->n > 0) {
		struct map none;
		memset(&none, 0, sizeof(none));
		none.kind = MAP_FILE;
		if ((e = retire(dst, 0, dst->n, &none)) < 0)
			return e;
	}
	block_drop(dst);
	if (src->blk == NULL)
		return 0;
	dst->blk = src->blk;
	dst->blk->refs++;
	dst->base = src->base;
	dst->cap = src->cap;
	dst->front = src->front;
	dst->maps = src->maps;
	dst->n = src->n;
	dst->inherited = 1;
	dst->inherited_born = dst->gen;
	return 0;
}

struct map *addrspace__find(struct addrspace *as, uint64_t addr)
{
	size_t i = first_after(as, addr);

	if (i < as->n && as->maps[i].start <= addr)
		return &as->maps[i];
	return NULL;
}

struct map *addrspace__find_at(struct addrspace *as, uint64_t addr, uint32_t gen)
{
	struct map *m = addrspace__find(as, addr);
	size_t k;

	if (m != NULL && (as->inherited ? as->inherited_born : m->born) <= gen)
		return m;
	for (k = as->nold; k > 0; k--) {
		struct old_map *o = &as->old[k - 1];
		if (o->m.start <= addr && addr < o->m.end && o->m.born <= gen && gen < o->died)
			return &o->m;
	}
	return NULL;
}

/* A chained hash set of strings. */
struct str_ent {
	struct str_ent *next;
	size_t hash;
	char s[];
};

struct strpool {
	struct str_ent **b;
	size_t nb, count;
};

struct strpool *strpool__new(void)
{
	struct strpool *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->nb = 256;
	p->b = calloc(p->nb, sizeof(*p->b));
	if (p->b == NULL) {
		free(p);
		return NULL;
	}
	return p;
}

void strpool__delete(struct strpool *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->nb; i++) {
		struct str_ent *e = p->b[i], *n;
		for (; e != NULL; e = n) {
			n = e->next;
			free(e);
		}
	}
	free(p->b);
	free(p);
}

static size_t str_hash(const char *s)
{
	size_t h = 14695981039346656037u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

const char *strpool__intern(struct strpool *p, const char *s)
{
	size_t h = str_hash(s), len;
	struct str_ent *e;

	for (e = p->b[h & (p->nb - 1)]; e != NULL; e = e->next)
		if (e->hash == h && strcmp(e->s, s) == 0)
			return e->s;
	if (p->count + 1 > p->nb * 2) {
		size_t nb = p->nb * 2, i;
		struct str_ent **b = calloc(nb, sizeof(*b));
		if (b != NULL) {
			for (i = 0; i < p->nb; i++) {
				struct str_ent *x = p->b[i], *n;
				for (; x != NULL; x = n) {
					n = x->next;
					x->next = b[x->hash & (nb - 1)];
					b[x->hash & (nb - 1)] = x;
				}
			}
			free(p->b);
			p->b = b;
			p->nb = nb;
		}
	}
	len = strlen(s);
	e = malloc(sizeof(*e) + len + 1);
	if (e == NULL)
		return NULL;
	e->hash = h;
	memcpy(e->s, s, len + 1);
	e->next = p->b[h & (p->nb - 1)];
	p->b[h & (p->nb - 1)] = e;
	p->count++;
	return e->s;
}
