/* Linear probing, at most half full; the table doubles when it would not be. */
#include <stdlib.h>
#include "base/u64map.h"
#include "base/bigmem.h"

void u64map__exit(struct u64map *m)
{
	bigmem__free(m->slots);
	u64map__init(m);
}

static int grow(struct u64map *m)
{
	size_t n = m->nslots ? m->nslots * 2 : 256, i;
	struct u64map_slot *s = bigmem__calloc(n, sizeof *s);

	if (!s)
		return -1;
	for (i = 0; i < m->nslots; i++) {
		size_t j;
		if (!m->slots[i].used)
			continue;
		for (j = u64map__hash(m->slots[i].key) & (n - 1); s[j].used; j = (j + 1) & (n - 1))
			;
		s[j] = m->slots[i];
	}
	bigmem__free(m->slots);
	m->slots = s;
	m->nslots = n;
	return 0;
}

uint32_t *u64map__insert(struct u64map *m, uint64_t key, uint32_t value, int *added)
{
	size_t mask, j;

	*added = 0;
	if (2 * (m->n + 1) > m->nslots && grow(m))
		return NULL;
	mask = m->nslots - 1;
	for (j = u64map__hash(key) & mask; m->slots[j].used; j = (j + 1) & mask)
		if (m->slots[j].key == key)
			return &m->slots[j].value;
	m->slots[j].key = key;
	m->slots[j].value = value;
	m->slots[j].used = 1;
	m->n++;
	*added = 1;
	return &m->slots[j].value;
}
