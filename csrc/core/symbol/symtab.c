/* Sorted symbol tables with perf's duplicate and size rules. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/bigmem.h"
#include "symbol/symtab.h"
#include "symbol/demangle.h"

void symtab__init(struct symtab *t)
{
	memset(t, 0, sizeof(*t));
}

void symtab__exit(struct symtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		const char *d = t->v[i].demangled;
		if (d != NULL && d != t->str + t->v[i].name)
			free((char *)d);
	}
	bigmem__free(t->v);
	bigmem__free(t->str);
	bigmem__free(t->starts);
	memset(t, 0, sizeof(*t));
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *np;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		ncap *= 2;
	}
	np = bigmem__realloc(*p, ncap * elem);
	if (np == NULL)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

int symtab__add(struct symtab *t, uint64_t start, uint64_t size, const char *name,
		size_t name_len, unsigned prio, unsigned aux)
{
	struct symtab_sym *s;

	if (name_len >= UINT32_MAX || t->str_len > UINT32_MAX - name_len - 1)
		return -ENOMEM;
	if (grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v)) < 0 ||
	    grow((void **)&t->str, &t->str_cap, t->str_len + name_len + 1, 1) < 0)
		return -ENOMEM;
	s = &t->v[t->n++];
	s->start = start;
	s->end = start + size;
	if (s->end < start)
		s->end = UINT64_MAX;
	s->name = (uint32_t)t->str_len;
	s->prio = (uint16_t)prio;
	s->aux = (uint16_t)aux;
	s->demangled = NULL;
	memcpy(t->str + t->str_len, name, name_len);
	t->str[t->str_len + name_len] = '\0';
	t->str_len += name_len + 1;
	return 0;
}

static int cmp_start(const void *a, const void *b)
{
	const struct symtab_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

static size_t underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* 1 when a is a better name than b for the same address (perf's order). */
static int better(const struct symtab *t, const struct symtab_sym *a,
		  const struct symtab_sym *b)
{
	int sa = a->end > a->start, sb = b->end > b->start;
	const char *na = symtab__name(t, a), *nb = symtab__name(t, b);
	size_t ua, ub;

	if (sa != sb)
		return sa;
	if (a->prio != b->prio)
		return a->prio > b->prio;
	ua = underscores(na);
	ub = underscores(nb);
	if (ua != ub)
		return ua < ub;
	return strlen(na) > strlen(nb);
}

int symtab__finish(struct symtab *t, uint64_t limit)
{
	size_t i, o;

	bigmem__free(t->starts);
	t->starts = NULL;
	if (t->n == 0)
		return 0;
	/* Ties keep insertion order apart only by the tie-break below.
	 * kallsyms and most symbol tables come sorted: check before sorting. */
	for (i = 1; i < t->n && t->v[i - 1].start <= t->v[i].start; i++)
		;
	if (i < t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_start);
	for (i = 1, o = 0; i < t->n; i++) {
		if (t->v[i].start == t->v[o].start) {
			if (better(t, &t->v[i], &t->v[o]))
				t->v[o] = t->v[i];
			continue;
		}
		t->v[++o] = t->v[i];
	}
	t->n = o + 1;
	for (i = 0; i < t->n; i++) {
		struct symtab_sym *s = &t->v[i];
		if (s->end > s->start)
			continue;
		if (i + 1 < t->n)
			s->end = t->v[i + 1].start;
		else
			s->end = limit > s->start ? limit : s->start + 1;
	}
	/* The search touches 8 bytes per step instead of a whole entry. */
	t->starts = bigmem__malloc(t->n * sizeof(*t->starts));
	if (t->starts == NULL)
		return -ENOMEM;
	for (i = 0; i < t->n; i++)
		t->starts[i] = t->v[i].start;
	return 0;
}

const struct symtab_sym *symtab__find(const struct symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->starts != NULL ? t->n : 0;

	/* The last symbol starting at or before addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->starts[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	if (addr < t->v[lo - 1].end)
		return &t->v[lo - 1];
	return NULL;
}

const char *symtab__demangled(struct symtab *t, struct symtab_sym *s)
{
	if (s->demangled == NULL) {
		char *d = demangle__alloc(symtab__name(t, s));
		s->demangled = d != NULL ? d : symtab__name(t, s);
	}
	return s->demangled;
}
