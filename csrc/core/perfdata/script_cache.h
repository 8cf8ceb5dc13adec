/*
 * The address cache of perf script's listing in C (script_text.c): what
 * a frame prints for each (address space, address), resolved once and
 * kept until the maps of its space change.  Each space has a generation
 * (0 until its maps first change); a frame holds the generation it was
 * resolved in, so a map change makes one space's frames stale without a
 * sweep.  The listing's own helper, plain C, no Lua.  Implemented in
 * script_cache.c.
 */
#ifndef LUAPERF_SCRIPT_CACHE_H
#define LUAPERF_SCRIPT_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define SCRIPT_KSPACE UINT64_MAX           /* the kernel's address space */
#define SCRIPT_INLINED (UINT64_C(1) << 32) /* | pid: its frames with their inlines */

/* What a frame prints for an address of a space. */
struct script_frame {
	uint64_t space, addr;
	uint64_t gen;               /* the space's generation when resolved */
	uint64_t offset;
	uint64_t shown;             /* the address a chain line shows */
	const char *name;           /* NULL: [unknown] */
	const char *dso;            /* NULL: [unknown] */
	const char **inl;           /* SCRIPT_INLINED spaces: the functions
				       inlined at addr, innermost first (ninl) */
	const char *func;           /* and the DWARF name of its function, or NULL */
	uint32_t ninl;
	uint8_t has_offset, jit;
};

struct script_spacegen {
	uint64_t space, gen;
};

/* Frames in the order made (a stale one is resolved again in place),
 * found through an open-addressing table of their indexes + 1.  Zeroed
 * is empty. */
struct script_cache {
	struct script_frame *f;
	size_t n, fcap;
	uint32_t *slot;
	size_t cap;
	struct script_spacegen *g;  /* the spaces that changed */
	size_t ng, gcap;
	uint64_t next_gen;
	void **owned;               /* copies the cache frees: JIT names (a perf
				       map reloads), inline chains */
	size_t nowned, owned_cap;
};

/* The generation of space (a pid's SCRIPT_INLINED space shares the pid's). */
uint64_t script_cache__gen(const struct script_cache *c, uint64_t space);
/* The maps of space changed: a new generation.  0 or -ENOMEM. */
int script_cache__changed(struct script_cache *c, uint64_t space);
/* The frame of (space, addr), made (*fresh set, zeroed but for the key)
 * when there is none; NULL: no memory.  Valid until the next call. */
struct script_frame *script_cache__get(struct script_cache *c, uint64_t space, uint64_t addr,
				       int *fresh);
/* p (malloc'd), freed with the cache; NULL (p freed) when out of memory. */
void *script_cache__keep(struct script_cache *c, void *p);
/* A copy of s freed with the cache, or NULL. */
const char *script_cache__keep_name(struct script_cache *c, const char *s);
void script_cache__exit(struct script_cache *c);

#endif
