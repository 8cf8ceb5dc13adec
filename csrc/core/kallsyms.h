/* Kernel symbols from /proc/kallsyms (core kernel and modules).  Internal. */
#ifndef LUAPERF_KALLSYMS_H
#define LUAPERF_KALLSYMS_H

#include <stddef.h>
#include "symtab.h"

struct kallsyms {
	struct symtab syms;           /* text symbols; aux = module index + 1 */
	char **modules;               /* "[ext4]" */
	size_t nmod;
	int hidden;                   /* every address read as 0 */
};

void kallsyms__init(struct kallsyms *k);
void kallsyms__exit(struct kallsyms *k);
/* Parses kallsyms text (bytes; need not be NUL-terminated).  0 or -errno. */
int kallsyms__parse(struct kallsyms *k, const char *buf, size_t len);
int kallsyms__load(struct kallsyms *k, const char *path);
/* "[kernel.kallsyms]" or "[module]". */
const char *kallsyms__dso(const struct kallsyms *k, const struct symtab_sym *s);

#endif
