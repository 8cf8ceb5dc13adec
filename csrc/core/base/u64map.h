/*
 * A map from uint64_t keys to uint32_t values, open addressing with keys
 * and values side by side: a lookup touches one slot, usually one cache
 * line.  For the hot loops of the report engine (an address of a space, a
 * row of a stack and frame), where keytab.h's byte keys cost a second and
 * a third memory access.  Plain C; -errno returns.
 */
#ifndef LUAPERF_U64MAP_H
#define LUAPERF_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map_slot {
	uint64_t key;
	uint32_t value;
	uint32_t used;
};

struct u64map {
	struct u64map_slot *slots;
	size_t n, nslots;
};

static inline void u64map__init(struct u64map *m)
{
	m->slots = NULL;
	m->n = m->nslots = 0;
}

void u64map__exit(struct u64map *m);

/* MurmurHash3's 64-bit finalizer: every key bit reaches the low bits a
 * mask keeps (keys that differ in their high bits alone, an id over an
 * address, spread as well as those that differ low). */
static inline size_t u64map__hash(uint64_t k)
{
	k ^= k >> 33;
	k *= UINT64_C(0xff51afd7ed558ccd);
	k ^= k >> 33;
	k *= UINT64_C(0xc4ceb9fe1a85ec53);
	k ^= k >> 33;
	return (size_t)k;
}

/* The value of key, or NULL. */
static inline uint32_t *u64map__find(const struct u64map *m, uint64_t key)
{
	size_t mask, j;

	if (!m->nslots)
		return NULL;
	mask = m->nslots - 1;
	for (j = u64map__hash(key) & mask; m->slots[j].used; j = (j + 1) & mask)
		if (m->slots[j].key == key)
			return &m->slots[j].value;
	return NULL;
}

/* The value slot of key, added (set to value) when new: *added = 1.
 * NULL when out of memory. */
uint32_t *u64map__insert(struct u64map *m, uint64_t key, uint32_t value, int *added);

#endif
