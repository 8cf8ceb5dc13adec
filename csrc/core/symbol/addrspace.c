/* Address spaces per pid, and the string pool their paths live in. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "symbol/addrspace.h"

void addrspaces__init(struct addrspaces *a)
{
	memset(a, 0, sizeof(*a));
}

static void addrspace__delete(struct addrspace *as)
{
	if (as->perfmap != NULL) {
		perfmap__exit(as->perfmap);
		free(as->perfmap);
	}
	free(as->maps);
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

static int reserve(struct addrspace *as, size_t need)
{
	size_t cap = as->cap ? as->cap : 16;
	struct map *m;

	if (need <= as->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	m = realloc(as->maps, cap * sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	as->maps = m;
	as->cap = cap;
	return 0;
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

int addrspace__insert(struct addrspace *as, const struct map *m)
{
	size_t i, j;
	struct map head, tail;
	int have_head = 0, have_tail = 0;

	if (m->end <= m->start)
		return 0;
	memset(&head, 0, sizeof(head));
	memset(&tail, 0, sizeof(tail));
	/* Room for the map and one split. */
	if (reserve(as, as->n + 2) < 0)
		return -ENOMEM;
	i = first_after(as, m->start);
	j = i;
	/* maps[i, j) overlap m: keep what sticks out on either side. */
	while (j < as->n && as->maps[j].start < m->end)
		j++;
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
		memmove(&as->maps[i + nnew], &as->maps[j], (as->n - j) * sizeof(*as->maps));
		as->n = as->n - removed + nnew;
		if (have_head)
			as->maps[i++] = head;
		as->maps[i++] = *m;
		if (have_tail)
			as->maps[i] = tail;
	}
	return 0;
}

void addrspace__clear(struct addrspace *as)
{
	as->n = 0;
	if (as->perfmap != NULL) {
		perfmap__exit(as->perfmap);
		free(as->perfmap);
		as->perfmap = NULL;
	}
}

int addrspace__copy(struct addrspace *dst, const struct addrspace *src)
{
	if (reserve(dst, src->n) < 0)
		return -ENOMEM;
	if (src->n > 0)
		memcpy(dst->maps, src->maps, src->n * sizeof(*src->maps));
	dst->n = src->n;
	return 0;
}

struct map *addrspace__find(struct addrspace *as, uint64_t addr)
{
	size_t i = first_after(as, addr);

	if (i < as->n && as->maps[i].start <= addr)
		return &as->maps[i];
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
