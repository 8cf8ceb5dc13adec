/*
 * Internals of the perf.data reader, shared by its files:
 *   perfdata_read.c      framing (file and pipe mode), attrs + ids, the stream
 *   perfdata_features.c  feature sections
 *   perfdata_order.c     record times and the time-ordering queue
 * Not a public header: only the reader's files include it.
 */
#ifndef LUAPERF_PERFDATA_INT_H
#define LUAPERF_PERFDATA_INT_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <zstd.h>
#include "perfdata/perfdata.h"

#define DEFAULT_MAX_QUEUE (64u << 20)
#define MAX_CHUNK (64u << 20)                    /* one COMPRESSED record's output */
#define MAX_STREAM (1ULL << 40)

/* Decompressed bytes, or a window of a file's records read in: shared by
 * the records queued out of them. */
struct chunk {
	size_t refs;                /* queued or just-delivered records inside */
	int active;                 /* still being read */
	int window;                 /* file bytes from src_offset (a window) */
	size_t len, pos;
	uint64_t src_offset;        /* the COMPRESSED record it came from; a
				       window's first byte in the file */
	struct chunk **pool;        /* a window: the spares it goes back to */
	struct chunk *next;         /* in the pool */
	uint8_t data[];
};

/* A window's bytes (records are at most 64 KiB, a u16 size; one that does
 * not fit is read through the mapping).  The fuzzer builds it small. */
#ifndef PERFDATA_WINDOW_SIZE
#define PERFDATA_WINDOW_SIZE (512u << 10)
#endif

struct qent {
	uint64_t time, seq, offset;
	const uint8_t *p;
	uint32_t size;
	struct chunk *chunk;
};

struct attr_ent {
	struct perf_event_attr attr;
	char *name;
};

struct perfdata {
	const uint8_t *buf;
	size_t len;
	void *map;                  /* mmap of a regular file */
	uint8_t *owned;             /* a stream read into memory */
	struct perfdata_info info;
	struct perfdata_opts opts;
	struct perfdata_stats stats;
	struct evtab *evtab;

	struct attr_ent *attrs;
	int nr_attrs, cap_attrs;

	void **allocs;              /* strings and arrays of info, freed at close */
	size_t nr_allocs, cap_allocs;

	/* the input stream */
	uint64_t pos, end, first;
	uint64_t released;               /* map bytes [0, released) given back (release_behind) */
	uint64_t prescan_end;       /* pipe mode: user records before it are done */
	ZSTD_DStream *zds;
	struct chunk *chunk;        /* being read */
	struct chunk *held;         /* delivered last: released at the next call */
	int fd;                     /* a regular file's, read through windows; -1 */
	struct chunk *spare_windows;

	/* ordering */
	struct qent *q;
	size_t q_head, q_sorted, q_n, q_cap;
	/* the sort's scratch (run bounds, merge buffer), kept between rounds */
	size_t *sort_bound;
	struct qent *sort_tmp;
	size_t sort_cap;
	size_t q_bytes;
	uint64_t seq, max_ts, next_flush, limit;
	uint64_t last_flush;         /* the newest time delivered so far */
	int flushing;

	uint8_t *bounce;            /* aligned copy of a misaligned record */
	size_t bounce_cap;

	char err[512];
	char cut[256];              /* where the input ended inside a record */
	const char *warnings[PERFDATA_MAX_WARNINGS];   /* info.warnings */
};

static inline int in_bounds(uint64_t off, uint64_t size, uint64_t len)
{
	return off <= len && size <= len - off;
}

static inline uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* perfdata_read.c */
__attribute__((format(printf, 2, 3)))
void perfdata__set_error(struct perfdata *pd, const char *fmt, ...);
/* Sets the message and evaluates to -EINVAL (visible to the analyzers). */
#define perfdata__fail(pd, ...) (perfdata__set_error((pd), __VA_ARGS__), -EINVAL)
/* Adds a line to info.warnings (dropped past PERFDATA_MAX_WARNINGS). */
__attribute__((format(printf, 2, 3)))
void perfdata__warn(struct perfdata *pd, const char *fmt, ...);
void *perfdata__keep(struct perfdata *pd, void *p);   /* freed at close; frees p on failure */
void *perfdata__kalloc(struct perfdata *pd, size_t n, size_t sz);
int perfdata__idx_of_id(struct perfdata *pd, uint64_t id);
int perfdata__set_name(struct perfdata *pd, int idx, const char *name, size_t n);

/* perfdata_features.c */
int perfdata__read_feature(struct perfdata *pd, int id, uint64_t off, uint64_t size);
int perfdata__skip_feature(struct perfdata *pd, int id, uint64_t off, uint64_t size);
int perfdata__append_build_ids(struct perfdata *pd, uint64_t off, uint64_t size);

/* perfdata_order.c */
void perfdata__chunk_put(struct chunk *c);
int perfdata__sort_queue(struct perfdata *pd);
int perfdata__start_flush(struct perfdata *pd, uint64_t limit);
int perfdata__enqueue(struct perfdata *pd, const uint8_t *p, uint32_t size, uint64_t time,
		      uint64_t off, struct chunk *c);

#endif
