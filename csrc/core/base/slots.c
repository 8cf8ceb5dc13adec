/* Growth of the indexes of slots.h. */
#include <errno.h>
#include "base/slots.h"
#include "base/bigmem.h"

int slots__grow(uint64_t **slots, size_t *nslots)
{
	size_t n = *nslots ? *nslots * 2 : 1024, i, j;
	uint64_t *s = bigmem__calloc(n, sizeof *s);

	if (!s)
		return -ENOMEM;
	for (i = 0; i < *nslots; i++) {
		if (!(*slots)[i])
			continue;
		for (j = SLOTS_HOME((*slots)[i], n); s[j]; j = (j + 1) & (n - 1))
			;
		s[j] = (*slots)[i];
	}
	bigmem__free(*slots);
	*slots = s;
	*nslots = n;
	return 0;
}
