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
void *bigmem__malloc(size_t bytes);
void bigmem__free(void *p);
/* Whether p has a mapping of its own (the specs check the advice). */
int bigmem__mapped(const void *p);

#endif
