/*
 * A sorted symbol table: what ELF objects, kallsyms and perf maps all turn
 * into, so one binary search serves them all.  Internal to the symbolizer.
 */
#ifndef LUAPERF_SYMTAB_H
#define LUAPERF_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct symtab_sym {
	uint64_t start, end;          /* [start, end) */
	uint32_t name;                /* offset in the string pool */
	uint16_t prio;                /* for duplicates: higher wins */
	uint16_t aux;                 /* caller's tag (kernel module index) */
	const char *demangled;        /* filled on first use; NULL: not yet */
};

struct symtab {
	struct symtab_sym *v;
	size_t n, cap;
	uint64_t *starts;             /* v[i].start, dense for the binary search */
	char *str;
	size_t str_len, str_cap;
};

/* Priorities that mirror perf's choice among symbols at one address:
 * any non-weak symbol before a weak one, then global before local
 * (libc's LOCAL __brk names its address, not the WEAK brk alias). */
enum { SYMTAB_WEAK = 0, SYMTAB_LOCAL = 1, SYMTAB_GLOBAL = 2 };

void symtab__init(struct symtab *t);
void symtab__exit(struct symtab *t);
/* size 0: the symbol ends where the next one starts.  -ENOMEM or 0. */
int symtab__add(struct symtab *t, uint64_t start, uint64_t size, const char *name,
		size_t name_len, unsigned prio, unsigned aux);
/*
 * Sorts, keeps one symbol per address (sized over unsized, global over
 * weak over local, fewer leading underscores, then the longer name, as
 * perf does) and gives unsized symbols the next symbol's start as their end
 * (limit for the last one).  0, or -ENOMEM (then lookups find nothing).
 */
int symtab__finish(struct symtab *t, uint64_t limit);
const struct symtab_sym *symtab__find(const struct symtab *t, uint64_t addr);
static inline const char *symtab__name(const struct symtab *t, const struct symtab_sym *s)
{
	return t->str + s->name;
}
/* The demangled name, computed once and kept (t owns it). */
const char *symtab__demangled(struct symtab *t, struct symtab_sym *s);

#endif
