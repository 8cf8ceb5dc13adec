/* Growth of the indexes of slots.h, and of any linear-probing table. */
#include <errno.h>
#include <string.h>
#include "base/slots.h"
#include "base/bigmem.h"

#define MAX_ENTRY 32

static const unsigned char nothing[MAX_ENTRY];

/* Whether an entry is empty (all zero bytes); inlined with a constant
 * size, a word or two compared. */
static inline int empty(const unsigned char *e, size_t size)
{
	uint64_t a, b;

	if (size == 8) {
		memcpy(&a, e, 8);
		return a == 0;
	}
	if (size == 16) {
		memcpy(&a, e, 8);
		memcpy(&b, e + 8, 8);
		return (a | b) == 0;
	}
	return !memcmp(e, nothing, size);
}

/* Entry e (size bytes, hash h) put at the first empty entry from its home
 * in t (n entries); where. */
static inline size_t place(unsigned char *t, size_t n, size_t size, const void *e, uint64_t h)
{
	size_t j;

	for (j = (size_t)h & (n - 1); !empty(t + j * size, size); j = (j + 1) & (n - 1))
		;
	memcpy(t + j * size, e, size);
	return j;
}

/*
 * In place: the array grows to twice its entries and each one is put
 * again, so the old entries' pages serve the new table (a new array each
 * doubling touched as many fresh pages again as the final table has, and
 * held the old and the new together).  An entry's home in twice the
 * entries is its old home or that plus the old count.  Entries are put
 * again in their runs' order, from just after an empty one: when an entry
 * is put, those before it in its old run have been, so what lies on its
 * way to its new place has moved already and stays.  An entry whose way
 * goes round the last entry to the first ones could meet entries not put
 * yet there; the first run is put again, in order, once all is in (a
 * safeguard: none was seen to need it).
 */
static inline int double_in_place(void **table, size_t *n, size_t size,
				   uint64_t (*hash)(const void *entry))
{
	size_t old = *n, e, i, end = 0;
	unsigned char *t, moving[MAX_ENTRY];

	if (size > MAX_ENTRY || old == 0 || (old & (old - 1)))
		return -EINVAL;
	t = *table;
	for (e = 0; e < old && !empty(t + e * size, size); e++)
		;
	if (e == old)
		return -EINVAL;   /* full: no run has a start */
	if (old > SIZE_MAX / 2 / size || !(t = bigmem__recalloc(t, 2 * old * size)))
		return -ENOMEM;
	for (i = 1; i < old; i++) {
		unsigned char *at = t + ((e + i) & (old - 1)) * size;
		uint64_t h;
		size_t q;
		if (empty(at, size))
			continue;
		memcpy(moving, at, size);
		memset(at, 0, size);
		h = hash(moving);
		q = place(t, 2 * old, size, moving, h);
		if (q < ((size_t)h & (2 * old - 1)) && q + 1 > end)   /* went round the end */
			end = q + 1;
	}
	if (end) {
		while (end < 2 * old && !empty(t + end * size, size))
			end++;
		for (i = 0; i < end; i++) {
			unsigned char *at = t + i * size;
			if (empty(at, size))
				continue;
			memcpy(moving, at, size);
			memset(at, 0, size);
			place(t, 2 * old, size, moving, hash(moving));
		}
	}
	*table = t;
	*n = 2 * old;
	return 0;
}

int slots__double(void **table, size_t *n, size_t size, uint64_t (*hash)(const void *entry))
{
	/* the common sizes with their compares inlined */
	if (size == 8)
		return double_in_place(table, n, 8, hash);
	if (size == 16)
		return double_in_place(table, n, 16, hash);
	return double_in_place(table, n, size, hash);
}

/* A slot's hash as slots.h places it: its upper half. */
static uint64_t slot_hash(const void *entry)
{
	uint64_t v;

	memcpy(&v, entry, sizeof v);
	return v >> 32;
}

int slots__grow(uint64_t **slots, size_t *nslots)
{
	void *t = *slots;
	uint64_t *s;
	size_t i, n;
	int rc;

	if (*nslots) {
		if ((rc = slots__double(&t, nslots, sizeof **slots, slot_hash)) != -EINVAL) {
			*slots = t;
			return rc;
		}
	}
	/* none yet, or full: a new array */
	n = *nslots ? *nslots * 2 : 1024;
	if (!(s = bigmem__calloc(n, sizeof *s)))
		return -ENOMEM;
	for (i = 0; i < *nslots; i++)
		if ((*slots)[i])
			place((unsigned char *)s, n, sizeof *s, &(*slots)[i], slot_hash(&(*slots)[i]));
	bigmem__free(*slots);
	*slots = s;
	*nslots = n;
	return 0;
}
