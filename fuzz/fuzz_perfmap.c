/* Fuzz target: the /tmp/perf-PID.map parser and lookups in its result. */
#include <stdint.h>
#include "symbol/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symtab t;
	uint64_t probe = 0;
	size_t i;

	symtab__init(&t);
	if (perfmap__parse(&t, (const char *)data, size) >= 0) {
		symtab__finish(&t, UINT64_MAX);
		for (i = 0; i < size && i < 64; i++) {
			const struct symtab_sym *s;
			probe = probe * 131 + data[i];
			s = symtab__find(&t, probe);
			if (s != NULL)
				(void)symtab__name(&t, s)[0];
		}
	}
	symtab__exit(&t);
	return 0;
}
