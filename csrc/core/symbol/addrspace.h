/*
 * Per-process address spaces: sorted, non-overlapping executable mappings
 * per pid, following mmap (a new mapping replaces what it overlaps), fork
 * (the child gets a copy) and exec (the old image goes).  Internal.
 *
 * A fork's copy is shared until one side changes its maps: then that side
 * copies first (a shell's children that map nothing never copy).  Binding
 * a map to its object writes through to every space sharing it, as perf's
 * cloned maps share their dso.
 *
 * A space has generations: one begins when a mapping replaces addresses
 * another object (or the same at another offset) held, and the replaced
 * mappings are kept with the generations they were valid in, so that an
 * address is looked up as it was at a generation (a profile resolved after
 * its pass, each stack at its samples' generation).
 */
#ifndef LUAPERF_ADDRSPACE_H
#define LUAPERF_ADDRSPACE_H

#include <stddef.h>
#include <stdint.h>
#include "symbol/perfmap.h"

struct dso;

enum map_kind { MAP_FILE = 0, MAP_VDSO, MAP_ANON };

struct map {
	uint64_t start, end, pgoff;
	const char *path;             /* interned: lives as long as the pool */
	struct dso *dso;              /* bound on first use */
	int dso_err;                  /* -errno when binding failed */
	uint8_t kind;                 /* enum map_kind */
	uint8_t bid_size;
	uint8_t bid[20];
	uint32_t born;                /* the first generation it is valid in */
};

/* A replaced mapping: valid in generations [m.born, died). */
struct old_map {
	struct map m;
	uint32_t died;
};

/* A block of map slots, shared by the spaces of a fork until one writes. */
struct mapblock {
	size_t refs;
	struct map slot[];
};

struct addrspace {
	uint32_t pid;
	int exited;
	struct map *maps;             /* base + front: n maps, sorted by start */
	struct map *base;             /* blk's cap slots, room kept at both ends */
	struct mapblock *blk;
	size_t n, cap, front;
	/* Shared from a fork, not written since: every map is born at
	 * inherited_born here, whatever the block says (the parent's). */
	int inherited;
	uint32_t inherited_born;
	struct perfmap *perfmap;      /* JIT names, read on demand */
	uint32_t gen;                 /* the current generation */
	struct old_map *old;          /* replaced mappings, oldest first */
	size_t nold, oldcap;
	struct addrspace *next;
};

struct addrspaces {
	struct addrspace **b;
	size_t nb, count;
};

void addrspaces__init(struct addrspaces *a);
void addrspaces__exit(struct addrspaces *a);
/* NULL when absent (create=0) or out of memory. */
struct addrspace *addrspaces__get(struct addrspaces *a, uint32_t pid, int create);

/* Adds m, cutting whatever it overlaps.  0 or -ENOMEM. */
int addrspace__insert(struct addrspace *as, const struct map *m);
void addrspace__clear(struct addrspace *as);
/* Replaces dst's maps with a copy of src's (shared until either writes). */
int addrspace__copy(struct addrspace *dst, const struct addrspace *src);
struct map *addrspace__find(struct addrspace *as, uint64_t addr);
/* The mapping that held addr in generation gen (UINT32_MAX: now), or NULL. */
struct map *addrspace__find_at(struct addrspace *as, uint64_t addr, uint32_t gen);

/* Interned strings (paths): shared by maps, freed together. */
struct strpool;
struct strpool *strpool__new(void);
void strpool__delete(struct strpool *p);
const char *strpool__intern(struct strpool *p, const char *s);

#endif
