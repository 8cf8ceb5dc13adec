/*
 * Why a lookup found no symbol, kept as its parts and spelt out only when
 * asked: a view of a system-wide recording misses on hundreds of
 * thousands of addresses, and a message written for each was a tenth of
 * its time.  The strings are the owner's (interned paths, its reasons),
 * alive until its next lookup.  Plain C.
 */
#ifndef LUAPERF_SYM_MISS_H
#define LUAPERF_SYM_MISS_H

#include <stddef.h>
#include <stdint.h>

enum sym_miss_kind {
	MISS_NONE,
	MISS_NO_SYMBOL,      /* no symbol in path at addr */
	MISS_MODULE,         /* no symbol of module path at addr */
	MISS_NO_KERNEL_MAP,  /* addr in no kernel map of the recording */
	MISS_KERNEL,         /* no kernel symbol at addr */
	MISS_OUTSIDE,        /* addr outside the segments of path */
	MISS_JIT,            /* no symbol at addr in pid: path (the reason) */
	MISS_JIT_MAP,        /* no symbol at addr in path/perf-pid.map */
	MISS_NO_MEMORY
};

struct sym_miss {
	enum sym_miss_kind kind;
	const char *path;
	uint64_t addr;
	uint32_t pid;
};

static inline void sym_miss__set(struct sym_miss *m, enum sym_miss_kind kind, const char *path,
				 uint64_t addr, uint32_t pid)
{
	m->kind = kind;
	m->path = path;
	m->addr = addr;
	m->pid = pid;
}

/* The miss written into buf (NUL-terminated; unchanged when there is none
 * to write), and forgotten; buf. */
char *sym_miss__text(struct sym_miss *m, char *buf, size_t size);

#endif
