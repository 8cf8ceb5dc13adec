/*
 * ELF objects (executables, shared libraries, the vdso) as the symbolizer
 * sees them: load segments, build id, debug file, symbol table and,
 * lazily, DWARF lines.  Internal to the symbolizer.
 */
#ifndef LUAPERF_DSO_H
#define LUAPERF_DSO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "symbol/symtab.h"

struct dwarfline;

struct dso_seg {
	uint64_t vaddr, offset, filesz;
};

struct dso {
	char *path;                   /* the file read */
	char *debug_path;             /* separate debug file, or NULL */
	dev_t dev;
	ino_t ino;
	int64_t mtime_ns;
	uint8_t build_id[20];
	uint8_t build_id_size;
	char build_id_hex[41];
	int is_vdso;
	struct dso_seg *segs;
	size_t nsegs;
	struct symtab syms;
	int lines_state;              /* 0: not tried, 1: loaded, -errno: failed */
	struct dwarfline *lines;
	void *image;                  /* the vdso's bytes (malloc'ed) */
	size_t image_len;
	struct dso *next;             /* cache chain */
};

struct dso_cache;
struct dso_cache *dso_cache__new(void);
void dso_cache__delete(struct dso_cache *c);

/*
 * The object at path (cached by device + inode + mtime, or by build id
 * when want_bid is given and matches).  *err gets a message on failure.
 * Returns NULL and sets *errp to -errno when it cannot be read.
 */
struct dso *dso_cache__get(struct dso_cache *c, const char *path,
			   const uint8_t *want_bid, size_t want_bid_size, int *errp);
/* The vdso of this kernel (read from pid's memory, else from our own). */
struct dso *dso_cache__vdso(struct dso_cache *c, uint32_t pid, uint64_t start,
			    uint64_t len, int *errp);

/*
 * Opens a regular file read-only, or fails (-errno, -EINVAL for a FIFO,
 * a device, ...): paths come from recordings and must not block or poke
 * devices.
 */
int dso__open_regular(const char *path);

/* File offset to the ELF's virtual address; -ENOENT when in no segment. */
int dso__offset_to_vaddr(const struct dso *d, uint64_t off, uint64_t *vaddr);

/* Debug-file lookup order, exposed for tests: writes a path into buf. */
int dso__find_debug_file(const char *path, const uint8_t *bid, size_t bid_size,
			 const char *debuglink, uint32_t crc, char *buf, size_t size);

#endif
