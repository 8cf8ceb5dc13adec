/*
 * Open-addressing indexes of ids: a power-of-two array of 64-bit slots,
 * each the key's hash's upper half over its id + 1 (0: empty).  The upper
 * half also gives the slot's home, so an index grows from its slots
 * alone, and a probe reads a key only when the halves agree.  The keys
 * live with their owner (keytab's bytes, a stack table's entries, a view's
 * frames).  Plain C.
 */
#ifndef LUAPERF_SLOTS_H
#define LUAPERF_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#define SLOTS_TAG(h) ((h) & UINT64_C(0xffffffff00000000))
#define SLOTS_HOME(h, n) ((size_t)((h) >> 32) & ((n) - 1))

/* One step of a key's hash over its words (multiply, xorshift): the
 * upper half must vary, it places the slot. */
static inline uint64_t slots__mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * UINT64_C(0x9e3779b97f4a7c15);
	return h ^ (h >> 29);
}

/* Twice as many slots (1024 for none), each put again at its home, in
 * the same array grown (slots__double).  0, or -ENOMEM with *slots
 * untouched. */
int slots__grow(uint64_t **slots, size_t *nslots);

/* Doubles in place any linear-probing table (a bigmem block) of *n
 * entries, a power of two with at least one empty, of size bytes each (at
 * most 32), the empty ones all zero bytes, an entry's home in n entries
 * hash(entry) & (n - 1): the array grown by bigmem__realloc, every entry
 * put again.  0; -ENOMEM, or -EINVAL when the table is not such a one,
 * with *table and *n untouched. */
int slots__double(void **table, size_t *n, size_t size, uint64_t (*hash)(const void *entry));

#endif
