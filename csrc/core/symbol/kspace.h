/*
 * The kernel's address space, as perf sees it in a recording: the kernel
 * map and the module maps from its MMAP records, the kernel's build id from
 * its header, and perf's choice of the symbols (dso__load_kernel_sym): the
 * kallsyms or vmlinux file the user named; else this machine's kallsyms
 * when the recording names no kernel or this one; else the copy in perf's
 * build-id cache (~/.debug/[kernel.kallsyms]/ID/kallsyms); else none, and
 * kernel frames are [unknown].  A recorded address is looked up shifted by
 * how far the reference symbol ("_text" of a "[kernel.kallsyms]_text" map,
 * recorded at the map's pgoff) moved between the recording and the symbols
 * (KASLR, another build).
 *
 * Without MMAP records (a live session) every kernel address is the
 * kernel's and the symbols are /proc/kallsyms (or the file named), unmoved.
 * Internal to the symbolizer.
 */
#ifndef LUAPERF_KSPACE_H
#define LUAPERF_KSPACE_H

#include <stddef.h>
#include <stdint.h>
#include "symbol/kallsyms.h"
#include "symbol/miss.h"

struct dso;
struct dso_cache;

struct kmodule {
	uint64_t start, end;          /* end may wrap, as perf's does */
	char *name;                   /* "[mac80211]" */
	char *path;                   /* as recorded */
	const char *dso;              /* what reports call it; NULL: not decided yet */
};

struct kspace {
	int recorded;                 /* a recording's kernel: its maps only */
	int have_map;                 /* a kernel map came in the records */
	uint64_t start, end;          /* the kernel map */
	char *ref_name;               /* "_text", "_stext"; NULL: none */
	uint64_t ref_addr;            /* where it was when recorded */
	struct kmodule *mods;         /* module maps */
	size_t nmods, mods_cap;
	int mods_sorted;              /* by start, for lookups */
	struct kmodule *named;        /* modules of the build-id table (name, path) */
	size_t nnamed, named_cap;
	uint8_t bid[20];
	uint8_t bid_size;             /* 0: the recording names no kernel */
	char *kallsyms_path;          /* the user's (perf's --kallsyms) */
	char *vmlinux_path;           /* the user's (perf's --vmlinux) */
	int state;                    /* 0: not loaded, 1: loaded, -errno */
	const char *src;              /* the file the symbols came from */
	char src_buf[4200];
	struct kallsyms ks;
	struct dso *vmlinux;          /* owned by the dso cache */
	uint64_t delta;               /* recorded address + delta = address in src */
	int hidden;                   /* src shows every address as 0 */
	char why[512];                /* why the last lookup found nothing */
	struct sym_miss miss;         /* the last lookup's, for kspace__why */
};

/* A kernel address looked up: the symbol (name NULL: none) and its object. */
struct kspace_hit {
	const char *name;
	uint64_t start, end;          /* as recorded */
	const char *dso;              /* "[kernel.kallsyms]", a module; NULL: no map */
	int module;                   /* dso is a module of the recording's maps, */
	uint64_t module_start;        /* mapped from there */
};

void kspace__init(struct kspace *k);
void kspace__exit(struct kspace *k);

/* A kernel MMAP record (pid -1 or cpumode kernel): the kernel's map, or a
 * module's.  0 or -ENOMEM. */
int kspace__feed_mmap(struct kspace *k, uint64_t start, uint64_t len, uint64_t pgoff,
		      const char *filename);
/* A kernel-mode entry of the recording's build-id table.  0 or -ENOMEM. */
int kspace__set_build_id(struct kspace *k, const char *path, const uint8_t *id, size_t n);
/* The user's symbols (replacing any choice); checked when first used. */
int kspace__use_kallsyms(struct kspace *k, const char *path);
int kspace__use_vmlinux(struct kspace *k, const char *path);

/* The object of a kernel address (a module or "[kernel.kallsyms]"), or NULL. */
const char *kspace__object(struct kspace *k, struct dso_cache *dsos, uint64_t addr);

/*
 * Looks addr up: 0 and a symbol, or -ENOENT with hit->dso still naming the
 * map when there is one, and kspace__why saying why there is no symbol.
 */
int kspace__lookup(struct kspace *k, struct dso_cache *dsos, uint64_t addr,
		   struct kspace_hit *hit);

/*
 * The name perf gives a kernel map's path (kmod_path__parse_name): a
 * module's "[name]" ('-' read as '_', without .ko[.gz|.xz]), else the base
 * name.  *kmod: whether it is a module.  Malloc'ed; NULL: out of memory.
 */
char *kspace__module_name(const char *path, int *kmod);

/* Why the last lookup found nothing ("" when it did): k->why, the miss
 * written into it now. */
const char *kspace__why(struct kspace *k);

#endif
