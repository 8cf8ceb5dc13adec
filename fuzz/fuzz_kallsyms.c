/* Fuzz target: the /proc/kallsyms parser and lookups in its result. */
#include <stdint.h>
#include "symbol/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kallsyms k;
	uint64_t probe = 0;
	size_t i;

	kallsyms__init(&k);
	if (kallsyms__parse(&k, (const char *)data, size) == 0) {
		/* Every symbol's own start (and just before and after it), where
		 * the two lookups must agree on whether there is a symbol. */
		for (i = 0; i < k.syms.n && i < 256; i++) {
			struct kallsyms_sym ks;
			uint64_t a = k.syms.v[i].start;
			if (kallsyms__find(&k, a, &ks) == 0 && (ks.start > a || ks.end <= a))
				__builtin_trap();
			(void)kallsyms__find(&k, a - 1, &ks);
			(void)kallsyms__find(&k, a + 1, &ks);
		}
		for (i = 0; i < size && i < 64; i++) {
			const struct symtab_sym *s;
			struct kallsyms_sym ks;
			probe = probe * 131 + data[i];
			s = symtab__find(&k.syms, probe);
			if (s != NULL) {
				(void)symtab__name(&k.syms, s)[0];
				(void)kallsyms__dso(&k, s)[0];
			}
			/* the indexed lookup the symbolizer uses, on the same text */
			if (kallsyms__find(&k, probe, &ks) == 0)
				(void)(ks.name[0] + ks.dso[0] + (ks.end > ks.start));
		}
	}
	kallsyms__exit(&k);
	return 0;
}
