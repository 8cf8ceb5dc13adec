/* Growth of the indexes of slots.h. */
#include <errno.h>
#include <string.h>
#include "base/slots.h"
#include "base/bigmem.h"

/* v put at the first empty slot from its home in s (n slots); where. */
static size_t place(uint64_t *s, size_t n, uint64_t v)
{
	size_t j;

	for (j = SLOTS_HOME(v, n); s[j]; j = (j + 1) & (n - 1))
		;
	s[j] = v;
	return j;
}

/* Into a new array (a full index has no empty slot to start from). */
static int grow_copy(uint64_t **slots, size_t *nslots, size_t n)
{
	uint64_t *s = bigmem__calloc(n, sizeof *s);
	size_t i;

	if (!s)
		return -ENOMEM;
	for (i = 0; i < *nslots; i++)
		if ((*slots)[i])
			place(s, n, (*slots)[i]);
	bigmem__free(*slots);
	*slots = s;
	*nslots = n;
	return 0;
}

/*
 * In place: the array grows to twice its slots and each one is put again,
 * so the old slots' pages serve the new index (a new array each doubling
 * touched as many fresh pages again as the final index has, and held the
 * old and the new together).  A slot's home in twice the slots is its old
 * home or that plus the old count.  Slots are put again in their runs'
 * order, from just after an empty one: when a slot is put, the slots
 * before it in its old run have been, so what lies on its way to its new
 * place has moved already and stays.  Except for a slot whose way passes
 * the last slot and goes on from the first ones: those may not have been
 * put yet, and leave holes on its way when they are.  Such slots are few
 * (the end of the top half's last run); the first run is put again once
 * all is in, in order, up to the end of the run holding the last of them.
 */
int slots__grow(uint64_t **slots, size_t *nslots)
{
	size_t old = *nslots, n = old ? old * 2 : 1024, e, i, end = 0;
	uint64_t *s;

	if (!old)
		return grow_copy(slots, nslots, n);
	for (e = 0; e < old && (*slots)[e]; e++)
		;
	if (e == old)
		return grow_copy(slots, nslots, n);
	if (!(s = bigmem__realloc(*slots, n * sizeof *s)))
		return -ENOMEM;
	memset(s + old, 0, old * sizeof *s);
	for (i = 1; i < old; i++) {
		size_t p = (e + i) & (old - 1), q;
		uint64_t v = s[p];
		if (!v)
			continue;
		s[p] = 0;
		q = place(s, n, v);
		if (q < SLOTS_HOME(v, n) && q + 1 > end)   /* went round the end */
			end = q + 1;
	}
	if (end) {
		while (end < n && s[end])
			end++;
		for (i = 0; i < end; i++) {
			uint64_t v = s[i];
			if (!v)
				continue;
			s[i] = 0;
			place(s, n, v);
		}
	}
	*slots = s;
	*nslots = n;
	return 0;
}
