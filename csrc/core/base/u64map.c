/* Linear probing, at most half full; the table doubles when it would not be. */
#include <stdlib.h>
#include "base/u64map.h"
#include "base/bigmem.h"
#include "base/slots.h"

void u64map__exit(struct u64map *m)
{
	bigmem__free(m->slots);
	u64map__init(m);
}

static uint64_t slot_hash(const void *entry)
{
	return u64map__hash(((const struct u64map_slot *)entry)->key);
}

static int grow(struct u64map *m)
{
	void *t = m->slots;

	if (!m->nslots) {
		if (!(m->slots = bigmem__calloc(256, sizeof *m->slots)))
			return -1;
		m->nslots = 256;
		return 0;
	}
	if (slots__double(&t, &m->nslots, sizeof *m->slots, slot_hash))
		return -1;
	m->slots = t;
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
