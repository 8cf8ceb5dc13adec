/* The listing's address cache (script_cache.h). */
#include "perfdata/script_cache.h"
#include "base/bigmem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static size_t hash2(uint64_t a, uint64_t b)
{
	uint64_t h = (a * 0x9e3779b97f4a7c15u) ^ (b + 0x632be59bd9b4e019u + (a << 6));

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9u;
	h ^= h >> 32;
	return (size_t)h;
}

uint64_t script_cache__gen(const struct script_cache *c, uint64_t space)
{
	size_t i;

	/* a pid's frames with inlines change with its maps */
	if (space != SCRIPT_KSPACE)
		space &= ~SCRIPT_INLINED;
	if (!c->gcap)
		return 0;
	for (i = hash2(space, 0) & (c->gcap - 1); c->g[i].gen; i = (i + 1) & (c->gcap - 1))
		if (c->g[i].space == space)
			return c->g[i].gen;
	return 0;
}

int script_cache__changed(struct script_cache *c, uint64_t space)
{
	size_t i;

	if ((c->ng + 1) * 2 > c->gcap) {
		size_t cap = c->gcap ? c->gcap * 2 : 64, j, k;
		struct script_spacegen *g = calloc(cap, sizeof *g);
		if (!g)
			return -ENOMEM;
		for (j = 0; j < c->gcap; j++) {
			if (!c->g[j].gen)
				continue;
			for (k = hash2(c->g[j].space, 0) & (cap - 1); g[k].gen; k = (k + 1) & (cap - 1))
				;
			g[k] = c->g[j];
		}
		free(c->g);
		c->g = g;
		c->gcap = cap;
	}
	for (i = hash2(space, 0) & (c->gcap - 1); c->g[i].gen; i = (i + 1) & (c->gcap - 1))
		if (c->g[i].space == space)
			break;
	if (!c->g[i].gen)
		c->ng++;
	c->g[i].space = space;
	c->g[i].gen = ++c->next_gen;
	return 0;
}

static int grow(struct script_cache *c)
{
	size_t cap = c->cap ? c->cap * 2 : 8192, i, j;
	uint32_t *slot;

	/* indexes are 32-bit: no file has that many distinct addresses */
	if (cap > ((size_t)1 << 31) || !(slot = bigmem__calloc(cap, sizeof *slot)))
		return -ENOMEM;
	for (i = 0; i < c->n; i++) {
		for (j = hash2(c->f[i].space, c->f[i].addr) & (cap - 1); slot[j];
		     j = (j + 1) & (cap - 1))
			;
		slot[j] = (uint32_t)i + 1;
	}
	bigmem__free(c->slot);
	c->slot = slot;
	c->cap = cap;
	return 0;
}

struct script_frame *script_cache__get(struct script_cache *c, uint64_t space, uint64_t addr,
				       int *fresh)
{
	size_t i;

	*fresh = 0;
	if ((c->n + 1) * 2 > c->cap && grow(c) < 0)
		return NULL;
	for (i = hash2(space, addr) & (c->cap - 1); c->slot[i]; i = (i + 1) & (c->cap - 1)) {
		struct script_frame *f = &c->f[c->slot[i] - 1];
		if (f->addr == addr && f->space == space)
			return f;
	}
	if (c->n == c->fcap) {
		size_t fcap = c->fcap ? c->fcap * 2 : 4096;
		struct script_frame *v = bigmem__realloc(c->f, fcap * sizeof *v);
		if (!v)
			return NULL;
		c->f = v;
		c->fcap = fcap;
	}
	memset(&c->f[c->n], 0, sizeof c->f[0]);
	c->f[c->n].space = space;
	c->f[c->n].addr = addr;
	c->slot[i] = (uint32_t)++c->n;
	*fresh = 1;
	return &c->f[c->n - 1];
}

void *script_cache__keep(struct script_cache *c, void *p)
{
	if (!p)
		return NULL;
	if (c->nowned == c->owned_cap) {
		size_t cap = c->owned_cap ? c->owned_cap * 2 : 16;
		void **v = realloc(c->owned, cap * sizeof *v);
		if (!v) {
			free(p);
			return NULL;
		}
		c->owned = v;
		c->owned_cap = cap;
	}
	return c->owned[c->nowned++] = p;
}

const char *script_cache__keep_name(struct script_cache *c, const char *s)
{
	return script_cache__keep(c, strdup(s));
}

void script_cache__exit(struct script_cache *c)
{
	size_t i;

	for (i = 0; i < c->nowned; i++)
		free(c->owned[i]);
	free(c->owned);
	bigmem__free(c->f);
	bigmem__free(c->slot);
	free(c->g);
}
