/*
 * Source lines and inline chains of one ELF file's DWARF, through libdw.
 * Opened only when a caller asks for lines.  Internal to the symbolizer.
 */
#ifndef LUAPERF_DWARFLINE_H
#define LUAPERF_DWARFLINE_H

#include <stddef.h>
#include <stdint.h>

struct sym_inline;
struct dwarfline;

/* -ENODATA when the file has no DWARF. */
struct dwarfline *dwarfline__open(const char *path, int *errp);
void dwarfline__delete(struct dwarfline *dl);

/* file:line for an address in the ELF's address space; -ENOENT if none.
 * Strings live as long as dl. */
int dwarfline__lookup(struct dwarfline *dl, uint64_t addr, const char **file,
		      unsigned *line);

/*
 * The frames addr2line -f -i prints for addr, innermost first: inlined
 * functions, then the function they are inlined into, each with the file
 * and line inside it.  Writes up to max frames; returns how many, 0 when
 * DWARF has no function there, or -errno.
 */
int dwarfline__frames(struct dwarfline *dl, uint64_t addr, struct sym_inline *out,
		      size_t max);

#endif
