/*
 * perf.data reader: framing (file header, attrs + ids, data, features; or
 * the pipe-mode stream), feature decoding, COMPRESSED expansion, and time
 * ordering across CPUs.  Records themselves are decoded by record.c.
 *
 * Everything read from the input is untrusted: each offset/size is checked
 * against the bytes that exist before it is used, and allocations are sized
 * by counts already proven to fit in the input.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "perfdata/perfdata.h"
#include "perfdata/perfdata_int.h"

#define PERF_MAGIC2 0x32454c4946524550ULL        /* "PERFILE2" little endian */
#define PERF_MAGIC2_SWAPPED 0x50455246494c4532ULL
#define FILE_HEADER_SIZE 104
#define FILE_HEADER_SIZE_NOFEAT 72
#define PIPE_HEADER_SIZE 16

void perfdata__set_error(struct perfdata *pd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(pd->err, sizeof pd->err, fmt, ap);
	va_end(ap);
}

void perfdata__warn(struct perfdata *pd, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	unsigned i;
	char *w;

	if (pd->info.nr_warnings >= PERFDATA_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	/* a second pass over the data meets the same cut */
	for (i = 0; i < pd->info.nr_warnings; i++)
		if (!strcmp(pd->warnings[i], buf))
			return;
	/* out of memory loses the line, not the file */
	w = perfdata__keep(pd, strdup(buf));
	if (!w)
		return;
	pd->warnings[pd->info.nr_warnings++] = w;
	pd->info.warnings = pd->warnings;
}

void *perfdata__keep(struct perfdata *pd, void *p)
{
	if (!p)
		return NULL;
	if (pd->nr_allocs == pd->cap_allocs) {
		size_t n = pd->cap_allocs ? pd->cap_allocs * 2 : 32;
		void **a = realloc(pd->allocs, n * sizeof *a);
		if (!a) {
			free(p);
			return NULL;
		}
		pd->allocs = a;
		pd->cap_allocs = n;
	}
	pd->allocs[pd->nr_allocs++] = p;
	return p;
}

void *perfdata__kalloc(struct perfdata *pd, size_t n, size_t sz)
{
	return perfdata__keep(pd, calloc(n ? n : 1, sz));
}

/* ------------------------------------------------------------ attrs, ids */

/*
 * The events and their ids go straight into pd->evtab as they are read (a
 * hash: ID_INDEX records can map hundreds of thousands of ids, and user
 * records arrive all along the stream), under a default name until a
 * feature or EVENT_UPDATE names them.
 */
static int add_attr(struct perfdata *pd, const uint8_t *p, uint64_t avail, uint64_t off)
{
	struct perf_event_attr a;
	char name[96];
	uint32_t asz;
	int e;

	if (avail < PERF_ATTR_SIZE_VER0)
		return perfdata__fail(pd, "offset %llu: attr of %llu bytes, expected at least %d",
			     (unsigned long long)off, (unsigned long long)avail, PERF_ATTR_SIZE_VER0);
	memset(&a, 0, sizeof a);
	asz = rd32(p + 4);
	if (asz == 0)
		asz = PERF_ATTR_SIZE_VER0;
	if (asz < PERF_ATTR_SIZE_VER0 || asz > avail)
		return perfdata__fail(pd, "offset %llu: attr.size %u, expected %d..%llu",
			     (unsigned long long)off, asz, PERF_ATTR_SIZE_VER0,
			     (unsigned long long)avail);
	memcpy(&a, p, asz < sizeof a ? asz : sizeof a);
	a.size = sizeof a;
	perfdata__attr_name(&a, name, sizeof name);
	if (pd->nr_attrs == pd->cap_attrs) {
		int n = pd->cap_attrs ? pd->cap_attrs * 2 : 8;
		struct attr_ent *t = realloc(pd->attrs, (size_t)n * sizeof *t);
		if (!t)
			return -ENOMEM;
		pd->attrs = t;
		pd->cap_attrs = n;
	}
	/* The evtab's index is the attr's: both grow together or not at all. */
	e = evtab__add(pd->evtab, &a, name);
	if (e < 0)
		return e;
	pd->attrs[pd->nr_attrs].attr = a;
	pd->attrs[pd->nr_attrs].name = NULL;
	return pd->nr_attrs++;
}

/* A later id of the same value maps to its event, as in perf (whose
 * lookup finds the id added last). */
static int add_id(struct perfdata *pd, int idx, uint64_t id)
{
	return evtab__add_id(pd->evtab, idx, id);
}

int perfdata__idx_of_id(struct perfdata *pd, uint64_t id)
{
	return evtab__find_id(pd->evtab, id);
}

int perfdata__set_name(struct perfdata *pd, int idx, const char *name, size_t n)
{
	char *s;
	if (idx < 0 || idx >= pd->nr_attrs)
		return 0;
	s = strndup(name, n);
	if (!s)
		return -ENOMEM;
	free(pd->attrs[idx].name);
	pd->attrs[idx].name = s;
	return evtab__set_name(pd->evtab, idx, s);
}

/* ------------------------------------------------------------ file mode */

struct span {
	uint64_t off, size;
	const char *what;
};

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Sections must not overlap: a file whose sections share bytes is corrupt. */
static int check_overlaps(struct perfdata *pd, struct span *s, size_t n)
{
	size_t i, k = 0;
	for (i = 0; i < n; i++)
		if (s[i].size)
			s[k++] = s[i];
	qsort(s, k, sizeof *s, cmp_span);
	for (i = 1; i < k; i++)
	{
		uint64_t prev_end = s[i - 1].off + s[i - 1].size;
		if (prev_end > s[i].off)
			return perfdata__fail(pd, "%s section at offset %llu overlaps %s section at %llu..%llu",
				     s[i].what, (unsigned long long)s[i].off, s[i - 1].what,
				     (unsigned long long)s[i - 1].off, (unsigned long long)prev_end);
	}
	return 0;
}

static int open_file_mode(struct perfdata *pd)
{
	const uint8_t *b = pd->buf;
	uint64_t hsize = rd64(b + 8), attr_size, aoff, asize, doff, dsize, toff, tsize;
	uint64_t nattrs, i, nfeat = 0, ftab;
	struct span *spans = NULL;
	size_t nspans = 0;
	int e, bit;

	if (hsize != FILE_HEADER_SIZE && hsize != FILE_HEADER_SIZE_NOFEAT)
		return perfdata__fail(pd, "offset 8: header size %llu, expected %d",
			     (unsigned long long)hsize, FILE_HEADER_SIZE);
	if (pd->len < hsize)
		return perfdata__fail(pd, "file is %zu bytes: truncated inside the %llu-byte header",
			     pd->len, (unsigned long long)hsize);
	attr_size = rd64(b + 16);
	aoff = rd64(b + 24); asize = rd64(b + 32);
	doff = rd64(b + 40); dsize = rd64(b + 48);
	toff = rd64(b + 56); tsize = rd64(b + 64);
	if (hsize == FILE_HEADER_SIZE)
		memcpy(pd->info.features, b + 72, sizeof pd->info.features);
	pd->info.attr_size = attr_size;
	if (attr_size < 16 + PERF_ATTR_SIZE_VER0 || attr_size > 4096)
		return perfdata__fail(pd, "offset 16: attr_size %llu, expected %d..4096",
			     (unsigned long long)attr_size, 16 + PERF_ATTR_SIZE_VER0);
	if (!in_bounds(aoff, asize, pd->len))
		return perfdata__fail(pd, "offset 24: attrs section %llu+%llu is past the end (%zu bytes)",
			     (unsigned long long)aoff, (unsigned long long)asize, pd->len);
	if (asize % attr_size)
		return perfdata__fail(pd, "offset 32: attrs section size %llu is not a multiple of attr_size %llu",
			     (unsigned long long)asize, (unsigned long long)attr_size);
	if (!in_bounds(toff, tsize, pd->len))
		return perfdata__fail(pd, "offset 56: event_types section %llu+%llu is past the end (%zu bytes)",
			     (unsigned long long)toff, (unsigned long long)tsize, pd->len);
	if (doff < hsize || doff > pd->len)
		return perfdata__fail(pd, "offset 40: data offset %llu, expected %llu..%zu",
			     (unsigned long long)doff, (unsigned long long)hsize, pd->len);
	if (dsize == 0) {
		/* perf record killed before it rewrote the header: the data runs to the end. */
		dsize = pd->len - doff;
		memset(pd->info.features, 0, sizeof pd->info.features);
	}
	if (!in_bounds(doff, dsize, pd->len)) {
		/* Cut short (copied while being written, truncated): the
		 * records up to the end are there, the features were not. */
		perfdata__warn(pd, "offset 48: the data section %llu+%llu runs past the end of the file "
			       "(%zu bytes): truncated file? reading the records up to the end",
			       (unsigned long long)doff, (unsigned long long)dsize, pd->len);
		dsize = pd->len - doff;
		memset(pd->info.features, 0, sizeof pd->info.features);
	}
	nattrs = asize / attr_size;
	for (bit = 1; bit < PERFDATA_FEAT_BITS; bit++)
		if (pd->info.features[bit / 64] & (1ULL << (bit % 64)))
			nfeat++;
	/* bit 0 is HEADER_RESERVED: perf never sets it. */
	pd->info.features[0] &= ~1ULL;
	spans = calloc(nattrs + nfeat + 6, sizeof *spans);
	if (!spans)
		return -ENOMEM;
	spans[nspans++] = (struct span){ 0, hsize, "header" };
	spans[nspans++] = (struct span){ aoff, asize, "attrs" };
	spans[nspans++] = (struct span){ doff, dsize, "data" };
	spans[nspans++] = (struct span){ toff, tsize, "event_types" };
	for (i = 0; i < nattrs; i++) {
		const uint8_t *a = b + aoff + i * attr_size;
		uint64_t ioff = rd64(a + attr_size - 16), isize = rd64(a + attr_size - 8), k;
		int idx = add_attr(pd, a, attr_size - 16, aoff + i * attr_size);
		if (idx < 0) {
			e = idx;
			goto out;
		}
		if (!in_bounds(ioff, isize, pd->len) || isize % 8) {
			e = perfdata__fail(pd, "offset %llu: ids of attr %llu at %llu+%llu are past the end or not u64s",
				  (unsigned long long)(aoff + (i + 1) * attr_size - 16),
				  (unsigned long long)i, (unsigned long long)ioff,
				  (unsigned long long)isize);
			goto out;
		}
		spans[nspans++] = (struct span){ ioff, isize, "attr ids" };
		for (k = 0; k < isize / 8; k++)
			if ((e = add_id(pd, idx, rd64(b + ioff + 8 * k))))
				goto out;
	}
	ftab = doff + dsize;
	if (nfeat && !in_bounds(ftab, nfeat * 16, pd->len)) {
		perfdata__warn(pd, "offset %llu: the feature table (%llu sections) runs past the end "
			       "of the file (%zu bytes): features skipped",
			       (unsigned long long)ftab, (unsigned long long)nfeat, pd->len);
		memset(pd->info.features, 0, sizeof pd->info.features);
		nfeat = 0;
	}
	if (nfeat)
		spans[nspans++] = (struct span){ ftab, nfeat * 16, "feature table" };
	if ((e = check_overlaps(pd, spans, nspans)))
		goto out;
	/*
	 * Each feature is read inside its own bounds: one past the end or
	 * malformed is skipped with a warning, as perf reads around a bad
	 * cpudesc.  nrcpus before cpu_topology (it sizes the per-cpu
	 * arrays): bit order does that.
	 */
	i = 0;
	for (bit = 1; bit < PERFDATA_FEAT_BITS; bit++) {
		uint64_t entry = ftab + 16 * i, foff, fsize;
		const char *name = perfdata__feature_name(bit);
		if (!(pd->info.features[bit / 64] & (1ULL << (bit % 64))))
			continue;
		i++;
		foff = rd64(b + entry);
		fsize = rd64(b + entry + 8);
		if (!in_bounds(foff, fsize, pd->len)) {
			perfdata__warn(pd, "offset %llu: %s feature section %llu+%llu is past the end "
				       "(%zu bytes): skipped", (unsigned long long)entry,
				       name ? name : "unknown", (unsigned long long)foff,
				       (unsigned long long)fsize, pd->len);
			pd->info.features[bit / 64] &= ~(1ULL << (bit % 64));
			continue;
		}
		if ((e = perfdata__read_feature(pd, bit, foff, fsize)))
			goto out;
	}
	pd->info.data_offset = doff;
	pd->info.data_size = dsize;
	pd->first = pd->pos = doff;
	pd->end = doff + dsize;
	e = 0;
out:
	free(spans);
	return e;
}

/* ------------------------------------------------------------ pipe mode */

/*
 * Reads the record header at off: 0, or 1 when the input ends inside the
 * record (cut: pd->cut says where), or -EINVAL for a header no record can
 * have (perf's "bad event header size").
 */
static int rec_header(struct perfdata *pd, const uint8_t *base, uint64_t off, uint64_t end,
		      uint64_t abs_off, struct perf_event_header *h)
{
	if (end - off < sizeof *h) {
		snprintf(pd->cut, sizeof pd->cut, "offset %llu: %llu bytes left, too few for a record header",
			 (unsigned long long)abs_off, (unsigned long long)(end - off));
		return 1;
	}
	memcpy(h, base + off, sizeof *h);
	if (h->size < sizeof *h)
		return perfdata__fail(pd, "offset %llu: record type %u has size %u, expected at least 8: "
			     "a corrupt file (bad record header)",
			     (unsigned long long)abs_off, h->type, h->size);
	if (h->size > end - off) {
		snprintf(pd->cut, sizeof pd->cut, "offset %llu: %s record of %u bytes runs past the end (%llu bytes left)",
			 (unsigned long long)abs_off, record__type_name(h->type), h->size,
			 (unsigned long long)(end - off));
		return 1;
	}
	return 0;
}

/* The input ends inside a record: what came before is read, with a warning. */
static void cut_here(struct perfdata *pd)
{
	perfdata__warn(pd, "%s: truncated file? records read up to there", pd->cut);
	pd->pos = pd->end;
}

/* Bytes a user record takes in the stream (TRACING_DATA and AUXTRACE carry a payload after it). */
static int user_extent(struct perfdata *pd, const struct perf_event_header *h, uint64_t off,
		       uint64_t *extent)
{
	*extent = h->size;
	if (h->type == REC_HEADER_TRACING_DATA) {
		uint32_t sz;
		if (h->size < 12)
			return perfdata__fail(pd, "offset %llu: HEADER_TRACING_DATA record of %u bytes, expected 12",
				     (unsigned long long)off, h->size);
		sz = rd32(pd->buf + off + 8);
		if (!in_bounds(off + h->size, sz, pd->end))
			return perfdata__fail(pd, "offset %llu: tracing data of %u bytes runs past the end",
				     (unsigned long long)off, sz);
		*extent = h->size + (uint64_t)sz;
	} else if (h->type == REC_AUXTRACE) {
		/* { header; u64 size; offset, reference; u32 idx, tid, cpu, pad }
		 * then size bytes of AUX data, skipped whole */
		uint64_t sz;
		if (h->size < 16)
			return perfdata__fail(pd, "offset %llu: AUXTRACE record of %u bytes, expected at least 16",
				     (unsigned long long)off, h->size);
		sz = rd64(pd->buf + off + 8);
		if (!in_bounds(off + h->size, sz, pd->end))
			return perfdata__fail(pd, "offset %llu: AUXTRACE data of %llu bytes runs past the end",
				     (unsigned long long)off, (unsigned long long)sz);
		*extent = h->size + sz;
	}
	return 0;
}

static int attr_index_for_event_update(struct perfdata *pd, uint64_t id)
{
	return perfdata__idx_of_id(pd, id);
}

/* The user records that describe the stream (pipe mode, or anywhere in a file). */
static int handle_user(struct perfdata *pd, const uint8_t *r, uint32_t size, uint64_t off)
{
	uint32_t type = rd32(r);
	int e;

	switch (type) {
	case REC_HEADER_ATTR: {
		uint32_t asz;
		uint64_t k, nids;
		int idx;
		if (size < 8 + PERF_ATTR_SIZE_VER0)
			return perfdata__fail(pd, "offset %llu: HEADER_ATTR of %u bytes, expected at least %d",
				     (unsigned long long)off, size, 8 + PERF_ATTR_SIZE_VER0);
		asz = rd32(r + 8 + 4);
		if (asz == 0)
			asz = PERF_ATTR_SIZE_VER0;
		if (asz > size - 8u)
			return perfdata__fail(pd, "offset %llu: HEADER_ATTR attr.size %u exceeds the record (%u bytes)",
				     (unsigned long long)off, asz, size);
		idx = add_attr(pd, r + 8, asz, off + 8);
		if (idx < 0)
			return idx;
		nids = (size - 8u - asz) / 8;
		for (k = 0; k < nids; k++)
			if ((e = add_id(pd, idx, rd64(r + 8 + asz + 8 * k))))
				return e;
		return 0;
	}
	case REC_ID_INDEX: {
		uint64_t nr, k;
		if (size < 16)
			return perfdata__fail(pd, "offset %llu: ID_INDEX of %u bytes, expected at least 16",
				     (unsigned long long)off, size);
		nr = rd64(r + 8);
		if (nr > (size - 16u) / 32)
			return perfdata__fail(pd, "offset %llu: ID_INDEX says %llu entries, %u bytes hold %u",
				     (unsigned long long)off, (unsigned long long)nr, size, (size - 16u) / 32);
		/* An id already mapped keeps its event (the attrs say first). */
		for (k = 0; k < nr; k++) {
			uint64_t id = rd64(r + 16 + 32 * k), idx = rd64(r + 24 + 32 * k);
			if (idx < (uint64_t)pd->nr_attrs && perfdata__idx_of_id(pd, id) < 0 &&
			    (e = add_id(pd, (int)idx, id)))
				return e;
		}
		return 0;
	}
	case REC_EVENT_UPDATE: {
		/* { header; u64 type; u64 id; data } with type 2 = NAME */
		if (size >= 24 && rd64(r + 8) == 2) {
			int idx = attr_index_for_event_update(pd, rd64(r + 16));
			return perfdata__set_name(pd, idx, (const char *)r + 24, strnlen((const char *)r + 24, size - 24u));
		}
		return 0;
	}
	case REC_HEADER_FEATURE: {
		uint64_t feat;
		if (size < 16)
			return perfdata__fail(pd, "offset %llu: HEADER_FEATURE of %u bytes, expected at least 16",
				     (unsigned long long)off, size);
		feat = rd64(r + 8);
		if (feat == 0 || feat >= PERFDATA_FEAT_BITS)
			return perfdata__skip_feature(pd, (int)(feat >= PERFDATA_FEAT_BITS ? -1 : 0), off + 16, size - 16u);
		return perfdata__read_feature(pd, (int)feat, off + 16, size - 16u);
	}
	case REC_HEADER_TRACING_DATA: {
		uint32_t sz = rd32(r + 8);
		pd->info.tracing_data = r + size;
		pd->info.tracing_data_size = sz;
		pd->info.features[0] |= 1ULL << PERFDATA_FEAT_TRACING_DATA;
		return 0;
	}
	case REC_HEADER_BUILD_ID:
		return perfdata__append_build_ids(pd, off, size);
	default:
		return 0;
	}
}

static int open_pipe_mode(struct perfdata *pd)
{
	uint64_t off = PIPE_HEADER_SIZE;
	struct perf_event_header h;
	int e;

	pd->info.pipe = 1;
	pd->first = pd->pos = off;
	pd->end = pd->len;
	pd->info.data_offset = off;
	pd->info.data_size = pd->len - off;
	/* The description (attrs, features, tracing data) precedes the first kernel record. */
	while (off < pd->end) {
		uint64_t ext;
		if ((e = rec_header(pd, pd->buf, off, pd->end, off, &h)) < 0)
			return e;
		if (e > 0) {
			/* cut inside the description: the records (if any) follow nowhere */
			cut_here(pd);
			pd->end = off;
			break;
		}
		if (h.type < REC_HEADER_ATTR || h.type == REC_FINISHED_INIT || h.type == REC_COMPRESSED)
			break;
		if ((e = user_extent(pd, &h, off, &ext)) || (e = handle_user(pd, pd->buf + off, h.size, off)))
			return e;
		off += ext;
	}
	pd->prescan_end = off;
	return 0;
}

/* --------------------------------------------------------------- open */

static int setup(struct perfdata *pd, const struct perfdata_opts *opts)
{
	uint64_t magic;
	int e;

	if (opts)
		pd->opts = *opts;
	if (!pd->opts.max_queue)
		pd->opts.max_queue = DEFAULT_MAX_QUEUE;
	pd->evtab = evtab__new();
	if (!pd->evtab)
		return -ENOMEM;
	pd->info.file_size = pd->len;
	if (!pd->buf || pd->len < 16)
		return perfdata__fail(pd, "offset 0: %zu bytes, expected a perf.data header (at least 16 bytes)", pd->len);
	magic = rd64(pd->buf);
	if (magic == PERF_MAGIC2_SWAPPED)
		return perfdata__fail(pd, "offset 0: a big-endian perf.data (byte-swapped magic): not supported");
	if (magic != PERF_MAGIC2) {
		if (!memcmp(pd->buf, "PERFFILE", 8))
			return perfdata__fail(pd, "offset 0: a version 1 perf.data (magic PERFFILE): not supported");
		return perfdata__fail(pd, "offset 0: bad magic, expected \"PERFILE2\": not a perf.data file");
	}
	if (rd64(pd->buf + 8) == PIPE_HEADER_SIZE)
		e = open_pipe_mode(pd);
	else
		e = open_file_mode(pd);
	if (e)
		return e;
	if (pd->nr_attrs == 0 && pd->info.pipe)
		return perfdata__fail(pd, "offset %llu: no HEADER_ATTR record before the first event: not a perf pipe stream",
			     (unsigned long long)pd->prescan_end);
	if (pd->nr_attrs == 0)
		return perfdata__fail(pd, "offset 24: the attrs section is empty: no events described");
	pd->zds = NULL;
	return 0;
}

/* The chunk being read is done with: it goes when its records do. */
static void chunk_retire(struct perfdata *pd)
{
	if (pd->chunk) {
		pd->chunk->active = 0;
		pd->chunk->refs++;
		perfdata__chunk_put(pd->chunk);
		pd->chunk = NULL;
	}
}

static int finish_open(struct perfdata *pd, int e, struct perfdata **out, char *err, size_t errlen)
{
	if (e) {
		if (err && errlen)
			snprintf(err, errlen, "%s", pd->err[0] ? pd->err : strerror(-e));
		perfdata__close(pd);
		return e;
	}
	*out = pd;
	return 0;
}

int perfdata__read_buffer(const void *buf, size_t len, const struct perfdata_opts *opts,
			  struct perfdata **out, char *err, size_t errlen)
{
	struct perfdata *pd = calloc(1, sizeof *pd);
	*out = NULL;
	if (!pd) {
		if (err && errlen)
			snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	pd->fd = -1;
	pd->buf = buf;
	pd->len = len;
	return finish_open(pd, setup(pd, opts), out, err, errlen);
}

/* A pipe or FIFO: read it whole (growth doubles, bounded by MAX_STREAM). */
static int read_stream(int fd, uint8_t **out, size_t *len)
{
	size_t cap = 1 << 20, n = 0;
	uint8_t *b = malloc(cap);

	if (!b)
		return -ENOMEM;
	for (;;) {
		ssize_t r;
		if (n == cap) {
			uint8_t *nb;
			if (cap >= MAX_STREAM) {
				free(b);
				return -EFBIG;
			}
			nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;
			free(b);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*out = b;
	*len = n;
	return 0;
}

int perfdata__open(const char *path, const struct perfdata_opts *opts,
		   struct perfdata **out, char *err, size_t errlen)
{
	struct perfdata *pd;
	struct stat st;
	int fd, e;

	*out = NULL;
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(0);
	if (fd < 0) {
		e = -errno;
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(-e));
		return e;
	}
	pd = calloc(1, sizeof *pd);
	if (!pd) {
		close(fd);
		return -ENOMEM;
	}
	pd->fd = -1;
	if (fstat(fd, &st) < 0) {
		e = -errno;
	} else if (S_ISREG(st.st_mode)) {
		pd->len = (size_t)st.st_size;
		if (pd->len == 0) {
			e = perfdata__fail(pd, "zero-sized data (%s), nothing to do!", path);
		} else {
			/*
			 * Mapped, as perf does: reading a 200 MB file into memory
			 * costs more than decoding it.  The records themselves
			 * are read through windows (window_next), the rest of
			 * the file through the mapping.  (A file truncated while
			 * its header or sections are read faults through the
			 * mapping, as it does in perf; one cut while its records
			 * are read ends there, window_fill.)
			 */
			pd->map = mmap(NULL, pd->len, PROT_READ, MAP_PRIVATE, fd, 0);
			if (pd->map == MAP_FAILED) {
				pd->map = NULL;
				e = -errno;
			} else {
				pd->buf = pd->map;
				madvise(pd->map, pd->len, MADV_SEQUENTIAL);
				/* the records are read through windows (window_next) */
				pd->fd = fd;
				fd = -1;
				e = 0;
			}
		}
	} else if (S_ISDIR(st.st_mode)) {
		e = perfdata__fail(pd, "%s: is a directory, not a perf.data file (perf's --dir-format "
				   "is not read)", path);
	} else {
		e = read_stream(fd, &pd->owned, &pd->len);
		pd->buf = pd->owned;
	}
	if (fd >= 0)
		close(fd);
	if (!e)
		e = setup(pd, opts);
	/* Every message names the file, once. */
	if (e && pd->err[0] && !strstr(pd->err, path)) {
		char tmp[sizeof pd->err];
		memcpy(tmp, pd->err, sizeof tmp);
		snprintf(pd->err, sizeof pd->err, "%.200s: %.300s", path, tmp);
	}
	return finish_open(pd, e, out, err, errlen);
}

void perfdata__close(struct perfdata *pd)
{
	size_t i;
	int k;
	if (!pd)
		return;
	for (i = pd->q_head; i < pd->q_n; i++)
		perfdata__chunk_put(pd->q[i].chunk);
	perfdata__chunk_put(pd->held);
	chunk_retire(pd);
	free(pd->q);
	free(pd->sort_bound);
	free(pd->sort_tmp);
	free(pd->bounce);
	if (pd->zds)
		ZSTD_freeDStream(pd->zds);
	if (pd->evtab)
		evtab__delete(pd->evtab);
	for (k = 0; k < pd->nr_attrs; k++)
		free(pd->attrs[k].name);
	free(pd->attrs);
	for (i = 0; i < pd->nr_allocs; i++)
		free(pd->allocs[i]);
	free(pd->allocs);
	free(pd->info.skipped);
	while (pd->spare_windows) {
		struct chunk *c = pd->spare_windows;
		pd->spare_windows = c->next;
		free(c);
	}
	if (pd->fd >= 0)
		close(pd->fd);
	if (pd->map)
		munmap(pd->map, pd->len);
	free(pd->owned);
	free(pd);
}

const struct perfdata_info *perfdata__info(const struct perfdata *pd) { return &pd->info; }
const struct evtab *perfdata__evtab(const struct perfdata *pd) { return pd->evtab; }
const char *perfdata__errmsg(const struct perfdata *pd) { return pd->err; }
const struct perfdata_stats *perfdata__stats(const struct perfdata *pd) { return &pd->stats; }

/* ----------------------------------------------------------- the stream */

static int decompress(struct perfdata *pd, const uint8_t *r, uint32_t size, uint64_t off)
{
	struct chunk *old = pd->chunk, *c;
	size_t left = old ? old->len - old->pos : 0;
	size_t cap = pd->info.compressed.mmap_len;
	ZSTD_inBuffer in;
	ZSTD_outBuffer outb;
	size_t hdr = 8;

	if (rd32(r) != REC_COMPRESSED) {
		/* COMPRESSED2: { header; u64 data_size; data } */
		if (size < 16)
			return perfdata__fail(pd, "offset %llu: COMPRESSED2 record of %u bytes, expected at least 16",
				     (unsigned long long)off, size);
		hdr = 16;
		if (rd64(r + 8) > size - 16u)
			return perfdata__fail(pd, "offset %llu: COMPRESSED2 data_size %llu exceeds the record",
				     (unsigned long long)off, (unsigned long long)rd64(r + 8));
		size = (uint32_t)(16 + rd64(r + 8));
	}
	if (cap < (64u << 10))
		cap = 64u << 10;
	if (cap > MAX_CHUNK)
		return perfdata__fail(pd, "compressed feature: mmap_len %zu exceeds %u bytes", cap, MAX_CHUNK);
	if (!pd->zds) {
		pd->zds = ZSTD_createDStream();
		if (!pd->zds || ZSTD_isError(ZSTD_initDStream(pd->zds)))
			return -ENOMEM;
	}
	cap += left;
	c = malloc(sizeof *c + cap);
	if (!c)
		return -ENOMEM;
	c->refs = 0;
	c->active = 1;
	c->window = 0;
	c->pool = NULL;
	c->next = NULL;
	c->pos = 0;
	c->len = left;
	c->src_offset = off;
	/* A record may straddle two COMPRESSED records: carry the start over. */
	if (left)
		memcpy(c->data, old->data + old->pos, left);
	in = (ZSTD_inBuffer){ r + hdr, size - hdr, 0 };
	while (in.pos < in.size) {
		size_t rc;
		if (c->len == cap) {
			struct chunk *nc;
			if (cap * 2 > MAX_CHUNK) {
				free(c);
				return perfdata__fail(pd, "offset %llu: COMPRESSED record expands past %u bytes",
					     (unsigned long long)off, MAX_CHUNK);
			}
			cap *= 2;
			nc = realloc(c, sizeof *c + cap);
			if (!nc) {
				free(c);
				return -ENOMEM;
			}
			c = nc;
		}
		outb = (ZSTD_outBuffer){ c->data, cap, c->len };
		rc = ZSTD_decompressStream(pd->zds, &outb, &in);
		if (ZSTD_isError(rc)) {
			free(c);
			return perfdata__fail(pd, "offset %llu: COMPRESSED record: zstd: %s",
				     (unsigned long long)off, ZSTD_getErrorName(rc));
		}
		c->len = outb.pos;
		if (rc == 0 && in.pos < in.size)
			ZSTD_initDStream(pd->zds);       /* next frame in the same record */
	}
	pd->stats.compressed_records++;
	pd->stats.decompressed_bytes += c->len - left;
	if (old) {
		old->active = 0;
		old->refs++;
		perfdata__chunk_put(old);
	}
	pd->chunk = c;
	return 0;
}

/* A window of the file's bytes from pd->pos as pd->chunk (the one before
 * retired).  0, or -errno (then there is none). */
static int window_fill(struct perfdata *pd)
{
	size_t want = pd->end - pd->pos < PERFDATA_WINDOW_SIZE ? (size_t)(pd->end - pd->pos) : PERFDATA_WINDOW_SIZE;
	size_t n = 0;
	struct chunk *c;

	chunk_retire(pd);       /* first: it may be the spare taken next */
	if ((c = pd->spare_windows))
		pd->spare_windows = c->next;
	else if (!(c = malloc(sizeof *c + PERFDATA_WINDOW_SIZE)))
		return -ENOMEM;
	while (n < want) {
		ssize_t r = pread(pd->fd, c->data + n, want - n, (off_t)(pd->pos + n));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	if (n < want) {
		/* cut (or unreadable) under us: the data ends there, as a cut
		 * file's does, before the mapping's pages past the end fault */
		uint64_t cut = pd->pos + (uint64_t)n;
		perfdata__warn(pd, "offset %llu: the file ends %llu bytes before its data did "
			       "when it was opened (cut while being read?)",
			       (unsigned long long)cut, (unsigned long long)(pd->end - cut));
		pd->end = cut;
	}
	c->refs = 0;
	c->active = 1;
	c->window = 1;
	c->len = n;
	c->pos = 0;
	c->src_offset = pd->pos;
	c->pool = &pd->spare_windows;
	c->next = NULL;
	pd->chunk = c;
	return 0;
}

/*
 * A regular file's kernel records (and FINISHED_ROUND) are read through
 * windows, read(2) into buffers used again and again, not through the
 * mapping: on a VM a mapped page costs microseconds when first touched
 * (bench/first_touch.c file: a 91 MB file read 3.6-4.9 GB/s by read(2) in
 * 512 KiB pieces, 1.1-1.5 GB/s through a mapping).
 * Anything else (user records, COMPRESSED ones, a short or cut record)
 * goes the mapped way, which says what is wrong with it.  1: a record;
 * 0: take the mapped way at pd->pos; -errno.
 */
static int window_next(struct perfdata *pd, const uint8_t **p, uint32_t *size, uint64_t *ext,
		       uint64_t *off, struct chunk **from)
{
	struct chunk *c = pd->chunk;
	struct perf_event_header h;
	int filled = 0;

	if (pd->fd < 0 || pd->pos >= pd->end)
		return 0;
	if (c && !c->window && c->pos < c->len)
		return 0;               /* a COMPRESSED record's bytes go on */
	if (c && (!c->window || pd->pos != c->src_offset + c->pos)) {
		chunk_retire(pd);
		c = NULL;
	}
	for (;;) {
		/* (pd->pos is the window's c->pos: src_offset + pos) */
		if (c) {
			if (c->len - c->pos >= sizeof h) {
				memcpy(&h, c->data + c->pos, sizeof h);
				/* user records (COMPRESSED ones among them) but rounds
				 * go the mapped way */
				if (h.size < sizeof h || h.size > pd->end - pd->pos ||
				    (h.type >= REC_HEADER_ATTR && h.type != REC_FINISHED_ROUND))
					break;
				if (h.size <= c->len - c->pos) {
					*p = c->data + c->pos;
					*size = h.size;
					*ext = h.size;
					*off = pd->pos;
					*from = c;
					c->pos += h.size;
					pd->pos += h.size;
					return 1;
				}
			}
			if (filled)
				break;  /* not all there: the mapped way */
		}
		if (window_fill(pd) < 0)
			break;
		c = pd->chunk;
		filled = 1;
	}
	chunk_retire(pd);
	return 0;
}

/*
 * The next raw record from the input: from the current decompressed chunk
 * first, then the main stream (through a window, or the mapping).
 * Returns 1, 0 at the end, or -errno.
 */
static int next_raw(struct perfdata *pd, const uint8_t **p, uint32_t *size, uint64_t *ext,
		    uint64_t *off, struct chunk **from)
{
	struct perf_event_header h;
	int e;

	for (;;) {
		struct chunk *c = pd->chunk;
		if (c && !c->window && c->len - c->pos >= sizeof h) {
			memcpy(&h, c->data + c->pos, sizeof h);
			if (h.size < sizeof h)
				return perfdata__fail(pd, "offset %llu: inside COMPRESSED data at %zu: record size %u, expected at least 8",
					     (unsigned long long)c->src_offset, c->pos, h.size);
			if (h.size <= c->len - c->pos) {
				*p = c->data + c->pos;
				*size = h.size;
				*ext = h.size;
				*off = c->src_offset;
				*from = c;
				c->pos += h.size;
				return 1;
			}
		}
		if ((e = window_next(pd, p, size, ext, off, from)) != 0)
			return e;
		c = pd->chunk;
		if (pd->pos >= pd->end) {
			if (c && !c->window && c->pos < c->len)
				return perfdata__fail(pd, "offset %llu: COMPRESSED data ends inside a record (%zu bytes left over)",
					     (unsigned long long)c->src_offset, c->len - c->pos);
			return 0;
		}
		if ((e = rec_header(pd, pd->buf, pd->pos, pd->end, pd->pos, &h)) < 0)
			return e;
		if (e > 0) {
			cut_here(pd);
			continue;
		}
		if (h.type == REC_COMPRESSED || h.type == 83) {
			if ((e = decompress(pd, pd->buf + pd->pos, h.size, pd->pos)))
				return e;
			pd->stats.bytes += h.size;
			pd->pos += h.size;
			continue;
		}
		*ext = h.size;
		if (h.type >= REC_HEADER_ATTR && (e = user_extent(pd, &h, pd->pos, ext)))
			return e;
		*p = pd->buf + pd->pos;
		*size = h.size;
		*off = pd->pos;
		*from = NULL;
		pd->pos += *ext;
		return 1;
	}
}

static int deliver(struct perfdata *pd, struct perfdata_rec *out, const uint8_t *p, uint32_t size,
		   uint64_t ext, uint64_t off, uint64_t time, struct chunk *c)
{
	/* Pipe streams and COMPRESSED records leave records at any offset:
	 * decoders read u64s, so hand out an aligned copy. */
	if ((uintptr_t)p & 7) {
		if (ext > pd->bounce_cap) {
			size_t n = ext < 65536 ? 65536 : (size_t)ext;
			uint8_t *b = realloc(pd->bounce, n);
			if (!b) {
				perfdata__chunk_put(c);
				return -ENOMEM;
			}
			pd->bounce = b;
			pd->bounce_cap = n;
		}
		memcpy(pd->bounce, p, ext);
		p = pd->bounce;
	}
	out->hdr = (const struct perf_event_header *)(const void *)p;
	out->size = ext;
	out->offset = off;
	out->time = time;
	out->compressed = c && !c->window;
	pd->held = c;
	pd->stats.records++;
	if (!c || c->window)
		pd->stats.bytes += ext;
	(void)size;
	return 1;
}

/*
 * The mapped pages wholly before every record still to be delivered go
 * back to the kernel, a few MB at a time: reading a long file then holds
 * the span of its queue, not the file (perf's reader maps a window at a
 * time).  They are the file's: a rewind reads them in again.
 */
#define RELEASE_STEP ((uint64_t)8 << 20)
static void release_behind(struct perfdata *pd)
{
	uint64_t low = pd->pos, page = 4096;
	size_t i;

	if (!pd->map || low < pd->released + RELEASE_STEP)
		return;
	for (i = pd->q_head; i < pd->q_n; i++)
		if (pd->q[i].offset < low)
			low = pd->q[i].offset;
	low &= ~(page - 1);
	if (low < pd->released + RELEASE_STEP)
		return;
	madvise((uint8_t *)pd->map + pd->released, (size_t)(low - pd->released), MADV_DONTNEED);
	pd->released = low;
}

int perfdata__next(struct perfdata *pd, struct perfdata_rec *out)
{
	int e;

	perfdata__chunk_put(pd->held);
	pd->held = NULL;
	for (;;) {
		const uint8_t *p = NULL;
		uint32_t size = 0, type;
		uint64_t ext = 0, off = 0, time;
		struct chunk *c = NULL;

		if (pd->flushing) {
			if (pd->q_head < pd->q_n && pd->q[pd->q_head].time <= pd->limit) {
				struct qent *q = &pd->q[pd->q_head++];
				pd->q_bytes -= q->size + sizeof *q;
				/* A high-water mark (perf keeps the last time, which an
				 * unordered record lowers): then "unordered" counts exactly
				 * the records delivered older than one delivered before. */
				if (q->time > pd->last_flush)
					pd->last_flush = q->time;
				/* the delivered record's chunk ref moves to held */
				return deliver(pd, out, q->p, q->size, q->size, q->offset, q->time, q->chunk);
			}
			pd->flushing = 0;
			release_behind(pd);
		}
		if (pd->opts.unordered)
			release_behind(pd);
		e = next_raw(pd, &p, &size, &ext, &off, &c);
		if (e < 0)
			return e;
		if (e == 0) {
			if (pd->q_head < pd->q_n) {
				if ((e = perfdata__start_flush(pd, UINT64_MAX)))
					return e;
				continue;
			}
			return 0;
		}
		type = rd32(p);
		if (type >= REC_HEADER_ATTR) {
			if (type == REC_FINISHED_ROUND && !pd->opts.unordered) {
				uint64_t lim = pd->next_flush;
				pd->next_flush = pd->max_ts;
				if ((e = perfdata__start_flush(pd, lim)))
					return e;
			} else if (!c && off >= pd->prescan_end) {
				/* A description arriving mid-stream (each handled once, even after a rewind). */
				pd->prescan_end = off + ext;
				if ((e = handle_user(pd, p, size, off)))
					return e;
			}
			if (c)
				c->refs++;
			return deliver(pd, out, p, size, ext, off, 0, c);
		}
		time = pd->opts.unordered ? 0 : record__time(pd->evtab, p, size);
		if (time == 0 || time == UINT64_MAX) {
			if (c)
				c->refs++;
			/* in file order nothing sorts by time: not looked up */
			return deliver(pd, out, p, size, ext, off, 0, c);
		}
		if (pd->q_bytes + size > pd->opts.max_queue && pd->q_head < pd->q_n) {
			/* perf's OE_FLUSH__HALF: flush up to the middle of the queued time span. */
			uint64_t first, last;
			if ((e = perfdata__sort_queue(pd)))
				return e;
			first = pd->q[pd->q_head].time;
			last = pd->q[pd->q_n - 1].time;
			pd->stats.forced_flushes++;
			if ((e = perfdata__enqueue(pd, p, size, time, off, c)))
				return e;
			if ((e = perfdata__start_flush(pd, first + (last - first) / 2)))
				return e;
			continue;
		}
		if ((e = perfdata__enqueue(pd, p, size, time, off, c)))
			return e;
	}
}

int perfdata__rewind(struct perfdata *pd)
{
	size_t i;
	for (i = pd->q_head; i < pd->q_n; i++)
		perfdata__chunk_put(pd->q[i].chunk);
	perfdata__chunk_put(pd->held);
	pd->held = NULL;
	chunk_retire(pd);
	if (pd->zds)
		ZSTD_initDStream(pd->zds);
	pd->q_head = pd->q_sorted = pd->q_n = 0;
	pd->q_bytes = 0;
	pd->seq = pd->max_ts = pd->next_flush = pd->limit = pd->last_flush = 0;
	pd->flushing = 0;
	pd->pos = pd->first;
	pd->released = 0;
	memset(&pd->stats, 0, sizeof pd->stats);
	return 0;
}

int perfdata__unordered(const struct perfdata *pd)
{
	return pd->opts.unordered != 0;
}

uint64_t perfdata__progress(const struct perfdata *pd, uint64_t *total)
{
	*total = pd->end > pd->first ? pd->end - pd->first : 0;
	return pd->pos > pd->first ? pd->pos - pd->first : 0;
}

int perfdata__rewind_order(struct perfdata *pd, int unordered)
{
	int e = perfdata__rewind(pd);

	pd->opts.unordered = unordered != 0;
	return e;
}
