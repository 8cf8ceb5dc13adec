/*
 * Arrays that grow to many megabytes: a profile's stack table, a view's
 * frames, hash slots.  On a VM every first touch of a 4 KiB page is a
 * fault that costs microseconds, and a report over a system-wide
 * recording touches a few hundred MB of them.  Blocks of BIGMEM_MIN and
 * more get mappings of their own, advised for transparent huge pages (THP
 * in its madvise mode, Debian's default: one fault per 2 MiB) and grown by
 * mremap, which moves pages instead of copying them.  Smaller blocks, and
 * every block in a sanitizer build (so that it still sees overflows), come
 * from malloc.  Only bigmem__free frees what these return.
 */
#ifndef LUAPERF_BIGMEM_H
#define LUAPERF_BIGMEM_H

#include <stddef.h>

#define BIGMEM_MIN ((size_t)2 << 20)

void *bigmem__calloc(size_t n, size_t size);
/* bytes from p's first (p: NULL or a block of bigmem's); NULL on failure,
 * p untouched.  The bytes beyond the old size are undefined (zero for a
 * block that has its own mapping). */
void *bigmem__realloc(void *p, size_t bytes);
/* bigmem__realloc, and the bytes beyond the old size are zero (a grown
 * mapping's new pages are not written: they are zero, and untouched). */
void *bigmem__recalloc(void *p, size_t bytes);
void *bigmem__malloc(size_t bytes);
void bigmem__free(void *p);
/*
 * on: a helper thread faults in the pages of every mapping made from now
 * on (and of a grown mapping's new bytes) ahead of the caller, so that its
 * first touches do not wait for the kernel to zero them; the blocks'
 * contents are never changed.  0: stops and joins the helper (before the
 * code is unloaded).  Process-wide; a forked child has none.  Nothing in a
 * sanitizer build (no mappings).  0 or -errno (pthread_create's).
 */
int bigmem__prefault(int on);
/* Whether p has a mapping of its own (the specs check the advice). */
int bigmem__mapped(const void *p);

#endif
