/*
 * DWARF lines and inline chains with libdw.  libdw finds the CU by
 * .debug_aranges and the row by binary search in the CU's line table
 * (both cached inside libdw); a direct-mapped cache in front makes repeated
 * addresses cost one compare.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <libelf.h>
#include "symbol/dwarfline.h"
#include "symbol/dso.h"
#include "symbol/demangle.h"
#include "symbol/symbolizer.h"

#define LINE_CACHE 16384
#define NAME_BUCKETS 1024

struct line_slot {
	uint64_t addr;
	const char *file;
	unsigned line;
	int state;                    /* 0: empty, 1: found, -1: no line */
};

/* Demangled DWARF names, keyed by the raw string's address in .debug_str. */
struct name_ent {
	const char *raw;
	char *demangled;
	struct name_ent *next;
};

struct dwarfline {
	int fd;
	Elf *elf;
	Dwarf *dw;
	struct line_slot cache[LINE_CACHE];
	struct name_ent *names[NAME_BUCKETS];
};

struct dwarfline *dwarfline__open(const char *path, int *errp)
{
	struct dwarfline *dl = calloc(1, sizeof(*dl));

	if (dl == NULL) {
		*errp = -ENOMEM;
		return NULL;
	}
	dl->fd = dso__open_regular(path);
	if (dl->fd < 0) {
		*errp = dl->fd;
		free(dl);
		return NULL;
	}
	/*
	 * Read, not mapped: the Dwarf stays open across lookups, and a file
	 * truncated under a mapping (a binary rebuilt in place) would kill the
	 * process with SIGBUS; a read fails with an error instead.
	 */
	dl->elf = elf_begin(dl->fd, ELF_C_READ, NULL);
	dl->dw = dl->elf != NULL ? dwarf_begin_elf(dl->elf, DWARF_C_READ, NULL) : NULL;
	if (dl->dw == NULL) {
		*errp = -ENODATA;
		if (dl->elf != NULL)
			elf_end(dl->elf);
		close(dl->fd);
		free(dl);
		return NULL;
	}
	return dl;
}

void dwarfline__delete(struct dwarfline *dl)
{
	size_t i;

	if (dl == NULL)
		return;
	for (i = 0; i < NAME_BUCKETS; i++) {
		struct name_ent *e = dl->names[i], *n;
		for (; e != NULL; e = n) {
			n = e->next;
			free(e->demangled);
			free(e);
		}
	}
	dwarf_end(dl->dw);
	elf_end(dl->elf);
	close(dl->fd);
	free(dl);
}

static int lookup_uncached(struct dwarfline *dl, uint64_t addr, const char **file,
			   unsigned *line)
{
	Dwarf_Die cu;
	Dwarf_Line *l;
	int ln = 0;
	const char *f;

	if (dwarf_addrdie(dl->dw, addr, &cu) == NULL)
		return -ENOENT;
	l = dwarf_getsrc_die(&cu, addr);
	if (l == NULL || dwarf_lineno(l, &ln) != 0 || ln <= 0)
		return -ENOENT;
	f = dwarf_linesrc(l, NULL, NULL);
	if (f == NULL)
		return -ENOENT;
	*file = f;
	*line = (unsigned)ln;
	return 0;
}

int dwarfline__lookup(struct dwarfline *dl, uint64_t addr, const char **file,
		      unsigned *line)
{
	struct line_slot *s = &dl->cache[(addr ^ (addr >> 12)) & (LINE_CACHE - 1)];

	if (s->state == 0 || s->addr != addr) {
		s->addr = addr;
		s->state = lookup_uncached(dl, addr, &s->file, &s->line) == 0 ? 1 : -1;
	}
	if (s->state < 0)
		return -ENOENT;
	*file = s->file;
	*line = s->line;
	return 0;
}

/* The demangled name of a raw DWARF string, made once per string. */
static const char *demangled(struct dwarfline *dl, const char *raw)
{
	size_t h = ((uintptr_t)raw >> 3) & (NAME_BUCKETS - 1);
	struct name_ent *e;

	for (e = dl->names[h]; e != NULL; e = e->next)
		if (e->raw == raw)
			return e->demangled != NULL ? e->demangled : raw;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return raw;
	e->raw = raw;
	e->demangled = demangle__alloc(raw);
	e->next = dl->names[h];
	dl->names[h] = e;
	return e->demangled != NULL ? e->demangled : raw;
}

/* A function's name as addr2line -C prints it: the linkage name demangled. */
static const char *die_name(struct dwarfline *dl, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *s = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) != NULL ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a) != NULL)
		s = dwarf_formstring(&a);
	if (s != NULL)
		return demangled(dl, s);
	s = dwarf_diename(die);
	return s != NULL ? s : "??";
}

/*
 * Collects the subprogram and inlined-subroutine DIEs whose ranges hold
 * addr, outermost first.  (dwarf_getscopes would give the abstract
 * definition's scopes past the first inlined instance, not the chain.)
 * level bounds the recursion on hostile DWARF.
 */
static size_t walk(Dwarf_Die *parent, uint64_t addr, Dwarf_Die *chain, size_t depth,
		   size_t max, int level)
{
	Dwarf_Die child;

	if (level > 64 || dwarf_child(parent, &child) != 0)
		return depth;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			if (dwarf_haspc(&child, addr) == 1) {
				if (dwarf_tag(&child) != DW_TAG_lexical_block &&
				    dwarf_tag(&child) != DW_TAG_try_block &&
				    dwarf_tag(&child) != DW_TAG_catch_block && depth < max)
					chain[depth++] = child;
				return walk(&child, addr, chain, depth, max, level + 1);
			}
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type: {
			/* No ranges of their own, but functions can live inside. */
			size_t d = walk(&child, addr, chain, depth, max, level + 1);
			if (d > depth)
				return d;
			break;
		}
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return depth;
}

int dwarfline__frames(struct dwarfline *dl, uint64_t addr, struct sym_inline *out,
		      size_t max)
{
	Dwarf_Die cu, chain[64];
	Dwarf_Files *files = NULL;
	const char *file = NULL;
	unsigned line = 0;
	size_t n, k = 0;

	if (max == 0 || dwarf_addrdie(dl->dw, addr, &cu) == NULL)
		return 0;
	if (dwarfline__lookup(dl, addr, &file, &line) != 0) {
		file = NULL;
		line = 0;
	}
	n = walk(&cu, addr, chain, 0, sizeof(chain) / sizeof(chain[0]), 0);
	if (n == 0)
		return 0;
	dwarf_getsrcfiles(&cu, &files, NULL);
	/* Innermost first: each frame's position is where the next one in was called. */
	while (n > 0 && k < max) {
		Dwarf_Die *d = &chain[--n];
		Dwarf_Attribute a;
		Dwarf_Word cf = 0, cl = 0;

		out[k].name = die_name(dl, d);
		out[k].plain = dwarf_hasattr_integrate(d, DW_AT_linkage_name) == 0 &&
			       dwarf_hasattr_integrate(d, DW_AT_MIPS_linkage_name) == 0;
		out[k].file = file;
		out[k].line = line;
		k++;
		if (dwarf_tag(d) != DW_TAG_inlined_subroutine)
			break;
		file = NULL;
		line = 0;
		if (dwarf_formudata(dwarf_attr(d, DW_AT_call_line, &a), &cl) == 0)
			line = (unsigned)cl;
		if (files != NULL &&
		    dwarf_formudata(dwarf_attr(d, DW_AT_call_file, &a), &cf) == 0)
			file = dwarf_filesrc(files, cf, NULL, NULL);
	}
	return (int)k;
}
