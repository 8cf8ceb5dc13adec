/*
 * Kernel symbols from /proc/kallsyms (core kernel and modules).  Internal.
 *
 * A kernel has over 100k symbols and a report needs a few hundred: loading
 * keeps the text as it is (a copy in perf's build-id cache is mapped, not
 * read) and an index of 16 bytes per text symbol; a name is copied out of
 * the text the first time a lookup returns it.
 */
#ifndef LUAPERF_KALLSYMS_H
#define LUAPERF_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>
#include "symbol/symtab.h"

/* One text symbol of the index: where its line starts in the text. */
struct kallsyms_ent {
	uint64_t start;
	uint32_t line;
	uint16_t aux;                 /* module index + 1, 0: the kernel */
	uint8_t prio;                 /* SYMTAB_GLOBAL / WEAK / LOCAL */
	uint8_t func;                 /* a function (t, T, w, W), not data */
};

struct kallsyms_name {
	uint32_t ent;                 /* index + 1; 0: empty slot */
	char *name;
};

struct kallsyms {
	const char *text;             /* the file's bytes */
	size_t len;
	void *map;                    /* text mapped (a regular file) ... */
	char *owned;                  /* ... or read (procfs) */
	struct kallsyms_ent *e;       /* sorted by start, file order within */
	size_t n;
	uint64_t limit;               /* where the last symbol ends */
	struct kallsyms_name *names;  /* names copied out, by entry */
	size_t nnames, name_slots;
	char **modules;               /* "[ext4]" */
	size_t nmod;
	int hidden;                   /* every address read as 0 */
	struct symtab syms;           /* kallsyms__parse only: the whole table,
					 each address's chosen symbol */
};

/* A symbol kallsyms__find returns; strings live until kallsyms__exit. */
struct kallsyms_sym {
	uint64_t start, end;          /* [start, end) */
	const char *name;
	const char *dso;              /* "[kernel.kallsyms]" or "[module]" */
	int module;                   /* a module's symbol */
};

void kallsyms__init(struct kallsyms *k);
void kallsyms__exit(struct kallsyms *k);
/* Reads path (mapped when it is a regular file with a size) and indexes
 * it.  0 or -errno. */
int kallsyms__load(struct kallsyms *k, const char *path);
/*
 * Indexes kallsyms text (bytes; need not be NUL-terminated; copied), and
 * also fills k->syms with every address's symbol, for callers that want a
 * symtab.  0 or -errno.
 */
int kallsyms__parse(struct kallsyms *k, const char *buf, size_t len);
/*
 * The text symbol covering addr, with perf's choice among symbols at one
 * address (global over weak over local, fewer leading underscores, the
 * longer name, the first listed), ending where the next one starts.
 * 0, -ENOENT, or -ENOMEM (the name could not be copied).
 */
int kallsyms__find(struct kallsyms *k, uint64_t addr, struct kallsyms_sym *out);
/*
 * Where the first function listed as name starts (perf's
 * kallsyms__get_function_start: the reference symbol of a relocation).
 * 0 or -ENOENT.
 */
int kallsyms__function_start(const struct kallsyms *k, const char *name, uint64_t *addr);
/*
 * The kernel's own symbols (not modules') span [*start, *end): where perf
 * moves the kernel map once it has read kallsyms.  0 or -ENOENT.
 */
int kallsyms__kernel_extent(const struct kallsyms *k, uint64_t *start, uint64_t *end);
/* "[kernel.kallsyms]" or "[module]" for a symbol of k->syms. */
const char *kallsyms__dso(const struct kallsyms *k, const struct symtab_sym *s);

#endif
