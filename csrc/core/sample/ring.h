/*
 * The mmap ring buffer of one perf event fd: one metadata page and a
 * power-of-two number of data pages.  Draining follows the kernel's
 * protocol: acquire-load data_head, copy records out (a record that wraps
 * is copied whole into a bounce buffer), release-store data_tail once per
 * drain.  No pointer into ring memory outlives a drain.  Implemented in
 * ring.c.  Plain C, no Lua.
 */
#ifndef LUAPERF_RING_H
#define LUAPERF_RING_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct ring;

/* Maps data_pages (a power of two) over fd; overwrite maps read-only
 * (backward ring, flight recorder).  Returns 0 or -errno. */
int ring__mmap(int fd, size_t data_pages, int overwrite, struct ring **out);
void ring__unmap(struct ring *r);

/*
 * Calls fn once per complete record available, with the record contiguous
 * and 8-byte aligned (valid only during the call); fn returns 0 to go on,
 * > 0 to stop after this record (it is consumed), < 0 to stop before it
 * (it stays, with the records after it, for the next drain).  Returns the
 * number of records consumed or -errno (-EIO: a record whose size is 0,
 * not a multiple of 8 or larger than the data the kernel published: the
 * ring is corrupt; the bytes from it to data_head are dropped, so the next
 * drain starts with the next record the kernel writes).  Not for overwrite
 * rings (see ring__snapshot).
 */
int ring__drain(struct ring *r,
		int (*fn)(void *arg, const struct perf_event_header *rec),
		void *arg);

/*
 * The same drain in steps, for merging rings by time: ring__begin takes
 * data_head; ring__peek gives the next whole record before it (NULL at the
 * end, or NULL with *err = -EIO when the ring is corrupt, as ring__drain);
 * ring__next consumes it; ring__end publishes data_tail.  A peeked record
 * stays valid until this ring's next ring__next or ring__end (each ring
 * has its own bounce buffer).  Not for overwrite rings (-EINVAL).
 */
int ring__begin(struct ring *r);
const struct perf_event_header *ring__peek(struct ring *r, int *err);
void ring__next(struct ring *r);
void ring__end(struct ring *r);

/*
 * Overwrite (backward) rings: pauses the kernel's output
 * (PERF_EVENT_IOC_PAUSE_OUTPUT), walks from data_head over at most one
 * ring's worth of whole records, calls fn on them oldest first (same
 * contract as ring__drain, except that nothing is consumed), and resumes.
 * Returns the number of records passed to fn or -errno.
 */
int ring__snapshot(struct ring *r,
		   int (*fn)(void *arg, const struct perf_event_header *rec),
		   void *arg);

/* Bytes the kernel has published and we have not consumed yet. */
size_t ring__pending(const struct ring *r);

size_t ring__data_size(const struct ring *r);
int ring__fd(const struct ring *r);
/* The metadata page, for time conversion (time_zero etc.). */
const struct perf_event_mmap_page *ring__meta(const struct ring *r);

#endif
