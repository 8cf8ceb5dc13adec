/*
 * The mmap ring of one perf event fd.  Forward rings follow the kernel's
 * protocol (acquire-load data_head, copy out, release-store data_tail once
 * per drain); backward (overwrite) rings are read while paused, from
 * data_head forward over at most one ring's worth of bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "sample/ring.h"

struct ring {
	int fd, overwrite;
	size_t page, data_size, mask;
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t *bounce;          /* one record of up to 64 KiB, u64-aligned */
	size_t *offs;              /* overwrite rings: record offsets of a snapshot */
	uint64_t head, tail;       /* a drain in steps: what ring__begin took, where it is */
};

int ring__mmap(int fd, size_t data_pages, int overwrite, struct ring **out)
{
	struct ring *r;
	void *m;
	long page = sysconf(_SC_PAGESIZE);

	*out = NULL;
	if (page <= 0)
		return -EINVAL;
	if (!data_pages || (data_pages & (data_pages - 1)) ||
	    data_pages > ((size_t)1 << 30) / (size_t)page)
		return -EINVAL;
	r = calloc(1, sizeof *r);
	if (!r)
		return -ENOMEM;
	r->fd = fd;
	r->overwrite = overwrite;
	r->page = (size_t)page;
	r->data_size = data_pages * r->page;
	r->mask = r->data_size - 1;
	r->bounce = malloc(65536);
	if (overwrite)
		r->offs = malloc(r->data_size / 8 * sizeof *r->offs);
	if (!r->bounce || (overwrite && !r->offs)) {
		ring__unmap(r);
		return -ENOMEM;
	}
	/* A read-only mapping tells the kernel we never write data_tail. */
	m = mmap(NULL, r->page + r->data_size,
		 overwrite ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		int e = errno;
		ring__unmap(r);
		return -e;
	}
	r->meta = m;
	r->data = (uint8_t *)m + r->page;
	*out = r;
	return 0;
}

void ring__unmap(struct ring *r)
{
	if (!r)
		return;
	if (r->meta)
		munmap(r->meta, r->page + r->data_size);
	free(r->bounce);
	free(r->offs);
	free(r);
}

/* The record at ring offset pos, contiguous: in place or copied whole. */
static const struct perf_event_header *at(struct ring *r, uint64_t pos, size_t size)
{
	size_t off = (size_t)(pos & r->mask);

	if (off + size <= r->data_size)
		return (const struct perf_event_header *)(const void *)(r->data + off);
	memcpy(r->bounce, r->data + off, r->data_size - off);
	memcpy((uint8_t *)r->bounce + (r->data_size - off), r->data, size - (r->data_size - off));
	return (const struct perf_event_header *)(const void *)r->bounce;
}

static uint16_t size_at(const struct ring *r, uint64_t pos)
{
	const struct perf_event_header *h =
		(const void *)(r->data + (size_t)(pos & r->mask));
	return h->size;  /* headers never straddle: sizes are u64 multiples */
}

int ring__begin(struct ring *r)
{
	if (r->overwrite)
		return -EINVAL;
	r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	r->tail = r->meta->data_tail;
	return 0;
}

const struct perf_event_header *ring__peek(struct ring *r, int *err)
{
	size_t size;

	if (r->head - r->tail < sizeof(struct perf_event_header))
		return NULL;
	size = size_at(r, r->tail);
	if (size < sizeof(struct perf_event_header) || (size & 7) || size > r->head - r->tail) {
		/* Where the next record starts cannot be known: what the
		 * kernel published is dropped, so the ring goes on with what
		 * comes next instead of stalling here. */
		r->tail = r->head;
		*err = -EIO;
		return NULL;
	}
	return at(r, r->tail, size);
}

void ring__next(struct ring *r)
{
	if (r->head - r->tail >= sizeof(struct perf_event_header))
		r->tail += size_at(r, r->tail);
}

void ring__end(struct ring *r)
{
	__atomic_store_n(&r->meta->data_tail, r->tail, __ATOMIC_RELEASE);
}

int ring__drain(struct ring *r,
		int (*fn)(void *arg, const struct perf_event_header *rec),
		void *arg)
{
	const struct perf_event_header *h;
	int n = 0, err = 0;

	if ((err = ring__begin(r)) < 0)
		return err;
	while ((h = ring__peek(r, &err))) {
		int v = fn(arg, h);
		if (v < 0)
			break;
		ring__next(r);
		n++;
		if (v > 0)
			break;
	}
	ring__end(r);
	return err ? err : n;
}

size_t ring__pending(const struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);

	if (r->overwrite)
		return 0;
	return (size_t)(head - r->meta->data_tail);
}

int ring__snapshot(struct ring *r,
		   int (*fn)(void *arg, const struct perf_event_header *rec),
		   void *arg)
{
	uint64_t head, pos;
	size_t n = 0, i;
	int rc = 0;

	if (!r->overwrite)
		return -EINVAL;
	if (ioctl(r->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1) < 0)
		return -errno;
	head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	/* Newest first from head; the ring starts zeroed, so size 0 marks
	 * space never written. */
	for (pos = head; pos - head < r->data_size; ) {
		size_t size = size_at(r, pos);
		if (size < sizeof(struct perf_event_header) || (size & 7) ||
		    pos - head + size > r->data_size)
			break;
		r->offs[n++] = (size_t)(pos - head);
		pos += size;
	}
	for (i = n; i-- > 0; ) {
		uint64_t p = head + r->offs[i];
		int v = fn(arg, at(r, p, size_at(r, p)));
		if (v) {
			rc = (int)(n - 1 - i) + (v > 0);
			break;
		}
		rc = (int)(n - i);
	}
	if (ioctl(r->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0) < 0 && rc >= 0)
		rc = -errno;
	return rc;
}

size_t ring__data_size(const struct ring *r)
{
	return r->data_size;
}

int ring__fd(const struct ring *r)
{
	return r->fd;
}

const struct perf_event_mmap_page *ring__meta(const struct ring *r)
{
	return r->meta;
}
