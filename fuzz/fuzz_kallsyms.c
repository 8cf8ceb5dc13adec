/* Fuzz target: the /proc/kallsyms parser and lookups in its result. */
#include <stdint.h>
#include "kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kallsyms k;
	uint64_t probe = 0;
	size_t i;

	kallsyms__init(&k);
	if (kallsyms__parse(&k, (const char *)data, size) == 0) {
		for (i = 0; i < size && i < 64; i++) {
			const struct symtab_sym *s;
			probe = probe * 131 + data[i];
			s = symtab__find(&k.syms, probe);
			if (s != NULL) {
				(void)symtab__name(&k.syms, s)[0];
				(void)kallsyms__dso(&k, s)[0];
			}
		}
	}
	kallsyms__exit(&k);
	return 0;
}
