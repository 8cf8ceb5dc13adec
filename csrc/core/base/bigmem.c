/* Big growable blocks: see bigmem.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "base/bigmem.h"

#define HUGE_SIZE ((size_t)2 << 20)

#if defined(__SANITIZE_ADDRESS__)
#define USE_MAPS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define USE_MAPS 0
#endif
#endif
#ifndef USE_MAPS
#define USE_MAPS 1
#endif

/* Before each block: its mapping's length (0: malloc's) and its size. */
struct hdr {
	size_t map, size;
};

static size_t map_len(size_t bytes)
{
	size_t n = bytes + sizeof(struct hdr);

	if (n < bytes || n > SIZE_MAX - HUGE_SIZE)
		return 0;
	return (n + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1);
}

static int wants_map(size_t bytes)
{
	return USE_MAPS && bytes >= BIGMEM_MIN;
}

/* A mapping of len bytes, advised for huge pages (the advice may fail:
 * a kernel without THP maps small pages, as malloc would). */
static struct hdr *map_new(size_t len)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(m, len, MADV_HUGEPAGE);
#endif
	return m;
}

static void *alloc(size_t bytes, int zero)
{
	struct hdr *h;

	if (wants_map(bytes)) {
		size_t len = map_len(bytes);
		if (!len || !(h = map_new(len)))
			return NULL;
		h->map = len;
	} else {
		if (bytes > SIZE_MAX - sizeof *h)
			return NULL;
		h = zero ? calloc(1, sizeof *h + bytes) : malloc(sizeof *h + bytes);
		if (!h)
			return NULL;
		h->map = 0;
	}
	h->size = bytes;
	return h + 1;
}

void *bigmem__calloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	return alloc(n * size, 1);
}

void *bigmem__malloc(size_t bytes)
{
	return alloc(bytes, 0);
}

void *bigmem__realloc(void *p, size_t bytes)
{
	struct hdr *h = p ? (struct hdr *)p - 1 : NULL, *n;
	size_t len;

	if (!h)
		return alloc(bytes, 0);
	if (h->map) {
		if (bytes + sizeof *h <= h->map && bytes + sizeof *h > bytes) {
			h->size = bytes;
			return p;
		}
		len = map_len(bytes);
		if (!len)
			return NULL;
		n = mremap(h, h->map, len, MREMAP_MAYMOVE);
		if (n == MAP_FAILED)
			return NULL;
		n->map = len;
	} else if (wants_map(bytes)) {
		void *q = alloc(bytes, 0);
		if (!q)
			return NULL;
		memcpy(q, p, h->size < bytes ? h->size : bytes);
		free(h);
		return q;
	} else {
		if (bytes > SIZE_MAX - sizeof *h || !(n = realloc(h, sizeof *h + bytes)))
			return NULL;
		n->map = 0;
	}
	n->size = bytes;
	return n + 1;
}

void bigmem__free(void *p)
{
	struct hdr *h;

	if (!p)
		return;
	h = (struct hdr *)p - 1;
	if (h->map)
		munmap(h, h->map);
	else
		free(h);
}

int bigmem__mapped(const void *p)
{
	return p && ((const struct hdr *)p - 1)->map != 0;
}
