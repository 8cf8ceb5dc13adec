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

#include "perfdata.h"

#define PERF_MAGIC2 0x32454c4946524550ULL        /* "PERFILE2" little endian */
#define PERF_MAGIC2_SWAPPED 0x50455246494c4532ULL
#define FILE_HEADER_SIZE 104
#define FILE_HEADER_SIZE_NOFEAT 72
#define PIPE_HEADER_SIZE 16
#define DEFAULT_MAX_QUEUE (64u << 20)
#define MAX_CHUNK (64u << 20)                    /* one COMPRESSED record's output */
#define MAX_STREAM (1ULL << 40)

static const char *const feat_names[] = {
	[PERFDATA_FEAT_TRACING_DATA] = "tracing_data", [PERFDATA_FEAT_BUILD_ID] = "build_id",
	[PERFDATA_FEAT_HOSTNAME] = "hostname", [PERFDATA_FEAT_OSRELEASE] = "osrelease",
	[PERFDATA_FEAT_VERSION] = "version", [PERFDATA_FEAT_ARCH] = "arch",
	[PERFDATA_FEAT_NRCPUS] = "nrcpus", [PERFDATA_FEAT_CPUDESC] = "cpudesc",
	[PERFDATA_FEAT_CPUID] = "cpuid", [PERFDATA_FEAT_TOTAL_MEM] = "total_mem",
	[PERFDATA_FEAT_CMDLINE] = "cmdline", [PERFDATA_FEAT_EVENT_DESC] = "event_desc",
	[PERFDATA_FEAT_CPU_TOPOLOGY] = "cpu_topology",
	[PERFDATA_FEAT_NUMA_TOPOLOGY] = "numa_topology",
	[PERFDATA_FEAT_BRANCH_STACK] = "branch_stack",
	[PERFDATA_FEAT_PMU_MAPPINGS] = "pmu_mappings", [PERFDATA_FEAT_GROUP_DESC] = "group_desc",
	[PERFDATA_FEAT_AUXTRACE] = "auxtrace", [PERFDATA_FEAT_STAT] = "stat",
	[PERFDATA_FEAT_CACHE] = "cache", [PERFDATA_FEAT_SAMPLE_TIME] = "sample_time",
	[PERFDATA_FEAT_MEM_TOPOLOGY] = "mem_topology", [PERFDATA_FEAT_CLOCKID] = "clockid",
	[PERFDATA_FEAT_DIR_FORMAT] = "dir_format", [PERFDATA_FEAT_BPF_PROG_INFO] = "bpf_prog_info",
	[PERFDATA_FEAT_BPF_BTF] = "bpf_btf", [PERFDATA_FEAT_COMPRESSED] = "compressed",
	[PERFDATA_FEAT_CPU_PMU_CAPS] = "cpu_pmu_caps", [PERFDATA_FEAT_CLOCK_DATA] = "clock_data",
	[PERFDATA_FEAT_HYBRID_TOPOLOGY] = "hybrid_topology", [PERFDATA_FEAT_PMU_CAPS] = "pmu_caps",
};

const char *perfdata__feature_name(int feat)
{
	if (feat > 0 && (size_t)feat < sizeof feat_names / sizeof feat_names[0])
		return feat_names[feat];
	return NULL;
}

/* Decompressed bytes: shared by the records queued out of them. */
struct chunk {
	size_t refs;                /* queued or just-delivered records inside */
	int active;                 /* still being read */
	size_t len, pos;
	uint64_t src_offset;        /* the COMPRESSED record it came from */
	uint8_t data[];
};

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

struct id_ent {
	uint64_t id;
	int idx;
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
	struct id_ent *ids;
	size_t nr_ids, cap_ids;
	int ids_sorted;

	void **allocs;              /* strings and arrays of info, freed at close */
	size_t nr_allocs, cap_allocs;

	/* the input stream */
	uint64_t pos, end, first;
	uint64_t prescan_end;       /* pipe mode: user records before it are done */
	ZSTD_DStream *zds;
	struct chunk *chunk;        /* being read */
	struct chunk *held;         /* delivered last: released at the next call */

	/* ordering */
	struct qent *q;
	size_t q_head, q_sorted, q_n, q_cap;
	size_t q_bytes;
	uint64_t seq, max_ts, next_flush, limit, last_flush;
	int flushing;

	uint8_t *bounce;            /* aligned copy of a misaligned record */
	size_t bounce_cap;

	char err[512];
};

__attribute__((format(printf, 2, 3)))
static int failf(struct perfdata *pd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(pd->err, sizeof pd->err, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int in_bounds(uint64_t off, uint64_t size, uint64_t len)
{
	return off <= len && size <= len - off;
}

static void *keep(struct perfdata *pd, void *p)
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

static void *kalloc(struct perfdata *pd, size_t n, size_t sz)
{
	return keep(pd, calloc(n ? n : 1, sz));
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* ------------------------------------------------------------ attrs, ids */

static int add_attr(struct perfdata *pd, const uint8_t *p, uint64_t avail, uint64_t off)
{
	struct perf_event_attr a;
	uint32_t asz;

	if (avail < PERF_ATTR_SIZE_VER0)
		return failf(pd, "offset %llu: attr of %llu bytes, expected at least %d",
			     (unsigned long long)off, (unsigned long long)avail, PERF_ATTR_SIZE_VER0);
	memset(&a, 0, sizeof a);
	asz = rd32(p + 4);
	if (asz == 0)
		asz = PERF_ATTR_SIZE_VER0;
	if (asz < PERF_ATTR_SIZE_VER0 || asz > avail)
		return failf(pd, "offset %llu: attr.size %u, expected %d..%llu",
			     (unsigned long long)off, asz, PERF_ATTR_SIZE_VER0,
			     (unsigned long long)avail);
	memcpy(&a, p, asz < sizeof a ? asz : sizeof a);
	a.size = sizeof a;
	if (pd->nr_attrs == pd->cap_attrs) {
		int n = pd->cap_attrs ? pd->cap_attrs * 2 : 8;
		struct attr_ent *t = realloc(pd->attrs, (size_t)n * sizeof *t);
		if (!t)
			return -ENOMEM;
		pd->attrs = t;
		pd->cap_attrs = n;
	}
	pd->attrs[pd->nr_attrs].attr = a;
	pd->attrs[pd->nr_attrs].name = NULL;
	return pd->nr_attrs++;
}

static int add_id(struct perfdata *pd, int idx, uint64_t id)
{
	if (pd->nr_ids == pd->cap_ids) {
		size_t n = pd->cap_ids ? pd->cap_ids * 2 : 64;
		struct id_ent *t = realloc(pd->ids, n * sizeof *t);
		if (!t)
			return -ENOMEM;
		pd->ids = t;
		pd->cap_ids = n;
	}
	pd->ids[pd->nr_ids].id = id;
	pd->ids[pd->nr_ids].idx = idx;
	pd->nr_ids++;
	pd->ids_sorted = 0;
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	const struct id_ent *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int idx_of_id(struct perfdata *pd, uint64_t id)
{
	size_t lo = 0, hi;
	if (!pd->ids_sorted && pd->nr_ids) {
		qsort(pd->ids, pd->nr_ids, sizeof *pd->ids, cmp_id);
		pd->ids_sorted = 1;
	}
	hi = pd->nr_ids;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (pd->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < pd->nr_ids && pd->ids[lo].id == id)
		return pd->ids[lo].idx;
	return -1;
}

static int set_name(struct perfdata *pd, int idx, const char *name, size_t n)
{
	char *s;
	if (idx < 0 || idx >= pd->nr_attrs)
		return 0;
	s = strndup(name, n);
	if (!s)
		return -ENOMEM;
	free(pd->attrs[idx].name);
	pd->attrs[idx].name = s;
	return 0;
}

/* ----------------------------------------------------- feature decoding */

/* A bounded cursor over one feature section. */
struct fcur {
	struct perfdata *pd;
	const uint8_t *p;
	uint64_t off, end;          /* absolute offsets in the input */
	const char *what;
};

static int need(struct fcur *c, uint64_t n, const char *field)
{
	if (c->end - c->off < n)
		return failf(c->pd, "%s feature at offset %llu: %s needs %llu bytes, %llu left",
			     c->what, (unsigned long long)c->off, field,
			     (unsigned long long)n, (unsigned long long)(c->end - c->off));
	return 0;
}

static int f32(struct fcur *c, uint32_t *v, const char *field)
{
	int e = need(c, 4, field);
	if (e)
		return e;
	*v = rd32(c->p + c->off);
	c->off += 4;
	return 0;
}

static int f64(struct fcur *c, uint64_t *v, const char *field)
{
	int e = need(c, 8, field);
	if (e)
		return e;
	*v = rd64(c->p + c->off);
	c->off += 8;
	return 0;
}

/* perf's do_write_string: u32 len (padded), then len bytes, NUL inside. */
static int fstr(struct fcur *c, const char **out, const char *field)
{
	uint32_t len;
	int e = f32(c, &len, field);
	if (e)
		return e;
	if ((e = need(c, len, field)))
		return e;
	*out = keep(c->pd, strndup((const char *)c->p + c->off, len));
	if (!*out)
		return -ENOMEM;
	c->off += len;
	return 0;
}

/* A count of items each at least min bytes: rejects counts the section cannot hold. */
static int fcount(struct fcur *c, uint32_t *n, uint64_t min, const char *field)
{
	int e = f32(c, n, field);
	if (e)
		return e;
	if (min && *n > (c->end - c->off) / min)
		return failf(c->pd, "%s feature at offset %llu: %s count %u does not fit in %llu bytes",
			     c->what, (unsigned long long)c->off, field, *n,
			     (unsigned long long)(c->end - c->off));
	return 0;
}

static int fstrlist(struct fcur *c, unsigned *nr, const char ***out, const char *field)
{
	uint32_t n, i;
	int e = fcount(c, &n, 4, field);
	if (e)
		return e;
	*out = kalloc(c->pd, n, sizeof **out);
	if (!*out)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if ((e = fstr(c, &(*out)[i], field)))
			return e;
	*nr = n;
	return 0;
}

static int feat_build_ids(struct fcur *c)
{
	struct perfdata_info *in = &c->pd->info;
	uint64_t start = c->off;
	unsigned n = 0, cap = 0;

	/* Two passes: count records (bounded by the section), then fill. */
	while (c->end - c->off >= sizeof(struct perf_event_header)) {
		uint16_t sz = (uint16_t)(rd32(c->p + c->off + 4) >> 16);
		if (sz < 8 + 4 + 24 || sz > c->end - c->off)
			return failf(c->pd, "build_id feature at offset %llu: record size %u, expected 36..%llu",
				     (unsigned long long)c->off, sz, (unsigned long long)(c->end - c->off));
		c->off += sz;
		cap++;
	}
	in->build_ids = kalloc(c->pd, cap, sizeof *in->build_ids);
	if (!in->build_ids)
		return -ENOMEM;
	for (c->off = start; n < cap; n++) {
		const uint8_t *r = c->p + c->off;
		struct perfdata_build_id *b = &in->build_ids[n];
		uint16_t misc = (uint16_t)(rd32(r + 4) & 0xffff);
		uint16_t sz = (uint16_t)(rd32(r + 4) >> 16);
		b->cpumode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
		b->pid = (int32_t)rd32(r + 8);
		memcpy(b->id, r + 12, 20);
		/* PERF_RECORD_MISC_BUILD_ID_SIZE: the size byte follows the 20 id bytes. */
		b->size = (misc & (1 << 15)) ? r[32] : 20;
		if (b->size > 20)
			b->size = 20;
		b->filename = keep(c->pd, strndup((const char *)r + 36, sz - 36u));
		if (!b->filename)
			return -ENOMEM;
		c->off += sz;
	}
	in->nr_build_ids = n;
	return 0;
}

static int feat_event_desc(struct fcur *c)
{
	struct perfdata *pd = c->pd;
	uint32_t nr, asz, i, nids, k;
	int e;

	if ((e = f32(c, &nr, "nr_events")) || (e = f32(c, &asz, "attr_size")))
		return e;
	if (asz < PERF_ATTR_SIZE_VER0 || (nr && asz > (c->end - c->off) / nr))
		return failf(pd, "event_desc feature at offset %llu: %u events of %u bytes do not fit",
			     (unsigned long long)c->off, nr, asz);
	for (i = 0; i < nr; i++) {
		const char *name;
		uint64_t id = 0;
		int idx = -1;
		if ((e = need(c, asz, "attr")))
			return e;
		c->off += asz;
		if ((e = fcount(c, &nids, 8, "nr_ids")) || (e = fstr(c, &name, "name")))
			return e;
		if ((e = need(c, (uint64_t)nids * 8, "ids")))
			return e;
		for (k = 0; k < nids && idx < 0; k++) {
			id = rd64(c->p + c->off + 8ull * k);
			idx = idx_of_id(pd, id);
		}
		/* Without ids the order is the attr order (one event files). */
		if (idx < 0 && nids == 0 && (int)i < pd->nr_attrs)
			idx = (int)i;
		if (idx >= 0 && !pd->attrs[idx].name && (e = set_name(pd, idx, name, strlen(name))))
			return e;
		c->off += (uint64_t)nids * 8;
	}
	return 0;
}

static int feat_cpu_topology(struct fcur *c)
{
	struct perfdata_info *in = &c->pd->info;
	uint32_t n, i;
	int e;

	if ((e = fstrlist(c, &in->nr_core_siblings, &in->core_siblings, "core siblings")) ||
	    (e = fstrlist(c, &in->nr_thread_siblings, &in->thread_siblings, "thread siblings")))
		return e;
	if (c->off == c->end)
		return 0;
	/* Per cpu: core_id, socket_id; one entry per available cpu. */
	n = in->nr_cpus_avail;
	if (!n || (uint64_t)n * 8 > c->end - c->off)
		n = (uint32_t)((c->end - c->off) / 8);
	in->core_id = kalloc(c->pd, n, sizeof *in->core_id);
	in->socket_id = kalloc(c->pd, n, sizeof *in->socket_id);
	if (!in->core_id || !in->socket_id)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if ((e = f32(c, &in->core_id[i], "core_id")) ||
		    (e = f32(c, &in->socket_id[i], "socket_id")))
			return e;
	}
	in->nr_cpu_topo = n;
	if (c->off == c->end)
		return 0;
	if ((e = fstrlist(c, &in->nr_die_siblings, &in->die_siblings, "die siblings")))
		return e;
	if ((uint64_t)n * 4 > c->end - c->off)
		return 0;
	in->die_id = kalloc(c->pd, n, sizeof *in->die_id);
	if (!in->die_id)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if ((e = f32(c, &in->die_id[i], "die_id")))
			return e;
	return 0;
}

static int feat_numa(struct fcur *c)
{
	struct perfdata_info *in = &c->pd->info;
	uint32_t n, i;
	int e = fcount(c, &n, 4 + 8 + 8 + 4, "nr_nodes");
	if (e)
		return e;
	in->numa_nodes = kalloc(c->pd, n, sizeof *in->numa_nodes);
	if (!in->numa_nodes)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct perfdata_numa_node *nd = &in->numa_nodes[i];
		if ((e = f32(c, &nd->node, "node")) || (e = f64(c, &nd->mem_total, "mem_total")) ||
		    (e = f64(c, &nd->mem_free, "mem_free")) || (e = fstr(c, &nd->cpus, "cpus")))
			return e;
	}
	in->nr_numa_nodes = n;
	return 0;
}

static int skip_feature(struct perfdata *pd, int id, uint64_t off, uint64_t size)
{
	struct perfdata_info *in = &pd->info;
	struct perfdata_skipped *s;
	if (in->nr_skipped % 16 == 0) {
		s = realloc(in->skipped, (in->nr_skipped + 16) * sizeof *s);
		if (!s)
			return -ENOMEM;
		in->skipped = s;
	}
	s = &in->skipped[in->nr_skipped++];
	s->id = id;
	s->offset = off;
	s->size = size;
	return 0;
}

/* Decodes one feature whose bytes are [off, off+size) of the input. */
static int read_feature(struct perfdata *pd, int id, uint64_t off, uint64_t size)
{
	struct perfdata_info *in = &pd->info;
	struct fcur c = { pd, pd->buf, off, off + size, perfdata__feature_name(id) };
	uint32_t v32;
	int e = 0;

	if (!c.what)
		c.what = "unknown";
	in->features[id / 64] |= 1ULL << (id % 64);
	switch (id) {
	case PERFDATA_FEAT_TRACING_DATA:
		in->tracing_data = pd->buf + off;
		in->tracing_data_size = size;
		break;
	case PERFDATA_FEAT_BUILD_ID: e = feat_build_ids(&c); break;
	case PERFDATA_FEAT_HOSTNAME: e = fstr(&c, &in->hostname, "hostname"); break;
	case PERFDATA_FEAT_OSRELEASE: e = fstr(&c, &in->osrelease, "osrelease"); break;
	case PERFDATA_FEAT_VERSION: e = fstr(&c, &in->version, "version"); break;
	case PERFDATA_FEAT_ARCH: e = fstr(&c, &in->arch, "arch"); break;
	case PERFDATA_FEAT_CPUDESC: e = fstr(&c, &in->cpudesc, "cpudesc"); break;
	case PERFDATA_FEAT_CPUID: e = fstr(&c, &in->cpuid, "cpuid"); break;
	case PERFDATA_FEAT_NRCPUS:
		if (!(e = f32(&c, &in->nr_cpus_avail, "nr_cpus_avail")))
			e = f32(&c, &in->nr_cpus_online, "nr_cpus_online");
		break;
	case PERFDATA_FEAT_TOTAL_MEM: e = f64(&c, &in->total_mem, "total_mem"); break;
	case PERFDATA_FEAT_CMDLINE: e = fstrlist(&c, &in->nr_cmdline, &in->cmdline, "cmdline"); break;
	case PERFDATA_FEAT_EVENT_DESC: e = feat_event_desc(&c); break;
	case PERFDATA_FEAT_CPU_TOPOLOGY: e = feat_cpu_topology(&c); break;
	case PERFDATA_FEAT_NUMA_TOPOLOGY: e = feat_numa(&c); break;
	case PERFDATA_FEAT_CLOCKID: e = f64(&c, &in->clockid_res_ns, "clockid_res_ns"); break;
	case PERFDATA_FEAT_SAMPLE_TIME:
		if (!(e = f64(&c, &in->sample_time.first, "first")))
			e = f64(&c, &in->sample_time.last, "last");
		break;
	case PERFDATA_FEAT_COMPRESSED:
		if (!(e = f32(&c, &in->compressed.version, "version")) &&
		    !(e = f32(&c, &in->compressed.type, "type")) &&
		    !(e = f32(&c, &in->compressed.level, "level")) &&
		    !(e = f32(&c, &in->compressed.ratio, "ratio")))
			e = f32(&c, &in->compressed.mmap_len, "mmap_len");
		break;
	case PERFDATA_FEAT_CLOCK_DATA:
		if (!(e = f32(&c, &in->clock_data.version, "version")) &&
		    !(e = f32(&c, &v32, "clockid")) &&
		    !(e = f64(&c, &in->clock_data.wall_clock_ns, "wall_clock_ns")))
			e = f64(&c, &in->clock_data.clockid_time_ns, "clockid_time_ns");
		in->clock_data.clockid = v32;
		break;
	default:
		return skip_feature(pd, id, off, size);
	}
	return e;
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
		if (s[i - 1].off + s[i - 1].size > s[i].off)
			return failf(pd, "%s section at offset %llu overlaps %s section at %llu..%llu",
				     s[i].what, (unsigned long long)s[i].off, s[i - 1].what,
				     (unsigned long long)s[i - 1].off,
				     (unsigned long long)(s[i - 1].off + s[i - 1].size));
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
		return failf(pd, "offset 8: header size %llu, expected %d",
			     (unsigned long long)hsize, FILE_HEADER_SIZE);
	if (pd->len < hsize)
		return failf(pd, "file is %zu bytes: truncated inside the %llu-byte header",
			     pd->len, (unsigned long long)hsize);
	attr_size = rd64(b + 16);
	aoff = rd64(b + 24); asize = rd64(b + 32);
	doff = rd64(b + 40); dsize = rd64(b + 48);
	toff = rd64(b + 56); tsize = rd64(b + 64);
	if (hsize == FILE_HEADER_SIZE)
		memcpy(pd->info.features, b + 72, sizeof pd->info.features);
	pd->info.attr_size = attr_size;
	if (attr_size < 16 + PERF_ATTR_SIZE_VER0 || attr_size > 4096)
		return failf(pd, "offset 16: attr_size %llu, expected %d..4096",
			     (unsigned long long)attr_size, 16 + PERF_ATTR_SIZE_VER0);
	if (!in_bounds(aoff, asize, pd->len))
		return failf(pd, "offset 24: attrs section %llu+%llu is past the end (%zu bytes)",
			     (unsigned long long)aoff, (unsigned long long)asize, pd->len);
	if (asize % attr_size)
		return failf(pd, "offset 32: attrs section size %llu is not a multiple of attr_size %llu",
			     (unsigned long long)asize, (unsigned long long)attr_size);
	if (!in_bounds(toff, tsize, pd->len))
		return failf(pd, "offset 56: event_types section %llu+%llu is past the end (%zu bytes)",
			     (unsigned long long)toff, (unsigned long long)tsize, pd->len);
	if (doff < hsize || doff > pd->len)
		return failf(pd, "offset 40: data offset %llu, expected %llu..%zu",
			     (unsigned long long)doff, (unsigned long long)hsize, pd->len);
	if (dsize == 0) {
		/* perf record killed before it rewrote the header: the data runs to the end. */
		dsize = pd->len - doff;
		memset(pd->info.features, 0, sizeof pd->info.features);
	}
	if (!in_bounds(doff, dsize, pd->len))
		return failf(pd, "offset 48: data section %llu+%llu is past the end (%zu bytes): truncated file?",
			     (unsigned long long)doff, (unsigned long long)dsize, pd->len);
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
			e = failf(pd, "offset %llu: ids of attr %llu at %llu+%llu are past the end or not u64s",
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
	if (nfeat) {
		if (!in_bounds(ftab, nfeat * 16, pd->len)) {
			e = failf(pd, "offset %llu: feature table of %llu sections is past the end (%zu bytes)",
				  (unsigned long long)ftab, (unsigned long long)nfeat, pd->len);
			goto out;
		}
		spans[nspans++] = (struct span){ ftab, nfeat * 16, "feature table" };
		i = 0;
		for (bit = 1; bit < PERFDATA_FEAT_BITS; bit++) {
			uint64_t foff, fsize;
			if (!(pd->info.features[bit / 64] & (1ULL << (bit % 64))))
				continue;
			foff = rd64(b + ftab + 16 * i);
			fsize = rd64(b + ftab + 16 * i + 8);
			if (!in_bounds(foff, fsize, pd->len)) {
				e = failf(pd, "offset %llu: %s feature section %llu+%llu is past the end (%zu bytes)",
					  (unsigned long long)(ftab + 16 * i),
					  perfdata__feature_name(bit) ? perfdata__feature_name(bit) : "unknown",
					  (unsigned long long)foff, (unsigned long long)fsize, pd->len);
				goto out;
			}
			spans[nspans++] = (struct span){ foff, fsize,
				perfdata__feature_name(bit) ? perfdata__feature_name(bit) : "unknown feature" };
			i++;
		}
	}
	if ((e = check_overlaps(pd, spans, nspans)))
		goto out;
	/* nrcpus before cpu_topology (it sizes the per-cpu arrays): bit order does that. */
	i = 0;
	for (bit = 1; bit < PERFDATA_FEAT_BITS; bit++) {
		if (!(pd->info.features[bit / 64] & (1ULL << (bit % 64))))
			continue;
		if ((e = read_feature(pd, bit, rd64(b + ftab + 16 * i), rd64(b + ftab + 16 * i + 8))))
			goto out;
		i++;
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

static int rec_header(struct perfdata *pd, const uint8_t *base, uint64_t off, uint64_t end,
		      uint64_t abs_off, struct perf_event_header *h)
{
	if (end - off < sizeof *h)
		return failf(pd, "offset %llu: %llu bytes left, expected a record header (8 bytes): truncated?",
			     (unsigned long long)abs_off, (unsigned long long)(end - off));
	memcpy(h, base + off, sizeof *h);
	if (h->size < sizeof *h)
		return failf(pd, "offset %llu: record type %u has size %u, expected at least 8",
			     (unsigned long long)abs_off, h->type, h->size);
	if (h->size > end - off)
		return failf(pd, "offset %llu: %s record of %u bytes runs past the end (%llu bytes left)",
			     (unsigned long long)abs_off, record__type_name(h->type), h->size,
			     (unsigned long long)(end - off));
	return 0;
}

/* Bytes a user record takes in the stream (TRACING_DATA carries its payload after it). */
static int user_extent(struct perfdata *pd, const struct perf_event_header *h, uint64_t off,
		       uint64_t *extent)
{
	*extent = h->size;
	if (h->type == REC_HEADER_TRACING_DATA) {
		uint32_t sz;
		if (h->size < 12)
			return failf(pd, "offset %llu: HEADER_TRACING_DATA record of %u bytes, expected 12",
				     (unsigned long long)off, h->size);
		sz = rd32(pd->buf + off + 8);
		if (!in_bounds(off + h->size, sz, pd->end))
			return failf(pd, "offset %llu: tracing data of %u bytes runs past the end",
				     (unsigned long long)off, sz);
		*extent = h->size + (uint64_t)sz;
	}
	return 0;
}

static int attr_index_for_event_update(struct perfdata *pd, uint64_t id)
{
	return idx_of_id(pd, id);
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
			return failf(pd, "offset %llu: HEADER_ATTR of %u bytes, expected at least %d",
				     (unsigned long long)off, size, 8 + PERF_ATTR_SIZE_VER0);
		asz = rd32(r + 8 + 4);
		if (asz == 0)
			asz = PERF_ATTR_SIZE_VER0;
		if (asz > size - 8u)
			return failf(pd, "offset %llu: HEADER_ATTR attr.size %u exceeds the record (%u bytes)",
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
			return failf(pd, "offset %llu: ID_INDEX of %u bytes, expected at least 16",
				     (unsigned long long)off, size);
		nr = rd64(r + 8);
		if (nr > (size - 16u) / 32)
			return failf(pd, "offset %llu: ID_INDEX says %llu entries, %u bytes hold %u",
				     (unsigned long long)off, (unsigned long long)nr, size, (size - 16u) / 32);
		for (k = 0; k < nr; k++) {
			uint64_t id = rd64(r + 16 + 32 * k), idx = rd64(r + 24 + 32 * k);
			if (idx < (uint64_t)pd->nr_attrs && idx_of_id(pd, id) < 0 &&
			    (e = add_id(pd, (int)idx, id)))
				return e;
		}
		return 0;
	}
	case REC_EVENT_UPDATE: {
		/* { header; u64 type; u64 id; data } with type 2 = NAME */
		if (size >= 24 && rd64(r + 8) == 2) {
			int idx = attr_index_for_event_update(pd, rd64(r + 16));
			return set_name(pd, idx, (const char *)r + 24, strnlen((const char *)r + 24, size - 24u));
		}
		return 0;
	}
	case REC_HEADER_FEATURE: {
		uint64_t feat;
		if (size < 16)
			return failf(pd, "offset %llu: HEADER_FEATURE of %u bytes, expected at least 16",
				     (unsigned long long)off, size);
		feat = rd64(r + 8);
		if (feat == 0 || feat >= PERFDATA_FEAT_BITS)
			return skip_feature(pd, (int)(feat >= PERFDATA_FEAT_BITS ? -1 : 0), off + 16, size - 16u);
		return read_feature(pd, (int)feat, off + 16, size - 16u);
	}
	case REC_HEADER_TRACING_DATA: {
		uint32_t sz = rd32(r + 8);
		pd->info.tracing_data = r + size;
		pd->info.tracing_data_size = sz;
		pd->info.features[0] |= 1ULL << PERFDATA_FEAT_TRACING_DATA;
		return 0;
	}
	case REC_HEADER_BUILD_ID: {
		struct fcur c = { pd, pd->buf, off, off + size, "HEADER_BUILD_ID" };
		struct perfdata_info *in = &pd->info;
		struct perfdata_build_id *old = in->build_ids;
		unsigned n = in->nr_build_ids;
		/* Appends: parse into the info arrays one record at a time. */
		in->build_ids = NULL;
		in->nr_build_ids = 0;
		if ((e = feat_build_ids(&c)))
			return e;
		if (n) {
			struct perfdata_build_id *m = kalloc(pd, n + in->nr_build_ids, sizeof *m);
			if (!m)
				return -ENOMEM;
			memcpy(m, old, n * sizeof *m);
			memcpy(m + n, in->build_ids, in->nr_build_ids * sizeof *m);
			in->build_ids = m;
			in->nr_build_ids += n;
		}
		return 0;
	}
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
		if ((e = rec_header(pd, pd->buf, off, pd->end, off, &h)))
			return e;
		if (h.type < REC_HEADER_ATTR || h.type == REC_FINISHED_INIT || h.type == REC_COMPRESSED)
			break;
		if ((e = user_extent(pd, &h, off, &ext)) || (e = handle_user(pd, pd->buf + off, h.size, off)))
			return e;
		off += ext;
	}
	pd->prescan_end = off;
	return 0;
}

/* ------------------------------------------------------------ the evtab */

static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
	"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
	"bpf-output", "cgroup-switches",
};
static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses", "branches",
	"branch-misses", "bus-cycles", "stalled-cycles-frontend", "stalled-cycles-backend",
	"ref-cycles",
};

static void default_name(const struct perf_event_attr *a, char *buf, size_t n)
{
	if (a->type == PERF_TYPE_SOFTWARE && a->config < sizeof sw_names / sizeof sw_names[0])
		snprintf(buf, n, "%s", sw_names[a->config]);
	else if (a->type == PERF_TYPE_HARDWARE && a->config < sizeof hw_names / sizeof hw_names[0])
		snprintf(buf, n, "%s", hw_names[a->config]);
	else
		snprintf(buf, n, "%u:%llu", a->type, (unsigned long long)a->config);
}

static int build_evtab(struct perfdata *pd)
{
	size_t i;
	int k;
	if (pd->evtab)
		evtab__delete(pd->evtab);
	pd->evtab = evtab__new();
	if (!pd->evtab)
		return -ENOMEM;
	for (k = 0; k < pd->nr_attrs; k++) {
		char buf[64];
		const char *name = pd->attrs[k].name;
		int e;
		if (!name) {
			default_name(&pd->attrs[k].attr, buf, sizeof buf);
			name = buf;
		}
		e = evtab__add(pd->evtab, &pd->attrs[k].attr, name);
		if (e < 0)
			return e;
	}
	for (i = 0; i < pd->nr_ids; i++) {
		int e = evtab__add_id(pd->evtab, pd->ids[i].idx, pd->ids[i].id);
		if (e < 0 && e != -EEXIST)
			return e;
	}
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
	pd->info.file_size = pd->len;
	if (pd->len < 16)
		return failf(pd, "offset 0: %zu bytes, expected a perf.data header (at least 16 bytes)", pd->len);
	magic = rd64(pd->buf);
	if (magic == PERF_MAGIC2_SWAPPED)
		return failf(pd, "offset 0: a big-endian perf.data (byte-swapped magic): not supported");
	if (magic != PERF_MAGIC2) {
		if (!memcmp(pd->buf, "PERFFILE", 8))
			return failf(pd, "offset 0: a version 1 perf.data (magic PERFFILE): not supported");
		return failf(pd, "offset 0: bad magic, expected \"PERFILE2\": not a perf.data file");
	}
	if (rd64(pd->buf + 8) == PIPE_HEADER_SIZE)
		e = open_pipe_mode(pd);
	else
		e = open_file_mode(pd);
	if (e)
		return e;
	if (pd->nr_attrs == 0 && pd->info.pipe)
		return failf(pd, "offset %llu: no HEADER_ATTR record before the first event: not a perf pipe stream",
			     (unsigned long long)pd->prescan_end);
	if (pd->nr_attrs == 0)
		return failf(pd, "offset 24: the attrs section is empty: no events described");
	pd->zds = NULL;
	return build_evtab(pd);
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
	pd->buf = buf;
	pd->len = len;
	return finish_open(pd, setup(pd, opts), out, err, errlen);
}

/* A pipe or FIFO: read it whole (growth doubles, bounded by MAX_STREAM). */
static int slurp(int fd, uint8_t **out, size_t *len)
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
	if (fstat(fd, &st) < 0) {
		e = -errno;
	} else if (S_ISREG(st.st_mode)) {
		pd->len = (size_t)st.st_size;
		if (pd->len == 0) {
			e = failf(pd, "%s: empty file, expected a perf.data header", path);
		} else {
			pd->map = mmap(NULL, pd->len, PROT_READ, MAP_PRIVATE, fd, 0);
			if (pd->map == MAP_FAILED) {
				pd->map = NULL;
				e = -errno;
			} else {
				pd->buf = pd->map;
				madvise(pd->map, pd->len, MADV_SEQUENTIAL);
				e = 0;
			}
		}
	} else if (S_ISDIR(st.st_mode)) {
		e = failf(pd, "%s is a directory (perf's --dir-format): not supported", path);
	} else {
		e = slurp(fd, &pd->owned, &pd->len);
		pd->buf = pd->owned;
	}
	close(fd);
	if (!e)
		e = setup(pd, opts);
	if (e && pd->err[0]) {
		char tmp[sizeof pd->err];
		memcpy(tmp, pd->err, sizeof tmp);
		snprintf(pd->err, sizeof pd->err, "%.200s: %.300s", path, tmp);
	}
	return finish_open(pd, e, out, err, errlen);
}

static void chunk_put(struct chunk *c)
{
	if (c && --c->refs == 0 && !c->active)
		free(c);
}

void perfdata__close(struct perfdata *pd)
{
	size_t i;
	int k;
	if (!pd)
		return;
	for (i = pd->q_head; i < pd->q_n; i++)
		chunk_put(pd->q[i].chunk);
	chunk_put(pd->held);
	if (pd->chunk) {
		pd->chunk->active = 0;
		pd->chunk->refs++;
		chunk_put(pd->chunk);
	}
	free(pd->q);
	free(pd->bounce);
	if (pd->zds)
		ZSTD_freeDStream(pd->zds);
	if (pd->evtab)
		evtab__delete(pd->evtab);
	for (k = 0; k < pd->nr_attrs; k++)
		free(pd->attrs[k].name);
	free(pd->attrs);
	free(pd->ids);
	for (i = 0; i < pd->nr_allocs; i++)
		free(pd->allocs[i]);
	free(pd->allocs);
	free(pd->info.skipped);
	if (pd->map)
		munmap(pd->map, pd->len);
	free(pd->owned);
	free(pd);
}

const struct perfdata_info *perfdata__info(const struct perfdata *pd) { return &pd->info; }
const struct evtab *perfdata__evtab(const struct perfdata *pd) { return pd->evtab; }
const char *perfdata__errmsg(const struct perfdata *pd) { return pd->err; }
const struct perfdata_stats *perfdata__stats(const struct perfdata *pd) { return &pd->stats; }

/* -------------------------------------------------------- timestamps */

/* The attr a kernel record belongs to, found by its sample id like perf does. */
static const struct perf_event_attr *attr_of(struct perfdata *pd, const uint8_t *r, uint32_t size)
{
	const struct perf_event_attr *a0 = &pd->attrs[0].attr;
	uint64_t st = a0->sample_type;
	int idx;

	if (pd->nr_attrs == 1 || !(st & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)))
		return a0;
	if (rd32(r) == PERF_RECORD_SAMPLE) {
		unsigned pos = 8;
		if (!(st & PERF_SAMPLE_IDENTIFIER))
			pos += 8 * (!!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) +
				    !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR));
		if (pos + 8 > size)
			return a0;
		idx = idx_of_id(pd, rd64(r + pos));
	} else {
		unsigned back = 8;
		if (!a0->sample_id_all)
			return a0;
		if (!(st & PERF_SAMPLE_IDENTIFIER))
			back += 8 * (!!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_STREAM_ID));
		if (back + 8 > size)
			return a0;
		idx = idx_of_id(pd, rd64(r + size - back));
	}
	return idx >= 0 ? &pd->attrs[idx].attr : a0;
}

/* The record's time, or 0 when it carries none (delivered at once, like perf). */
static uint64_t record_time(struct perfdata *pd, const uint8_t *r, uint32_t size)
{
	const struct perf_event_attr *a = attr_of(pd, r, size);
	uint64_t st = a->sample_type;
	unsigned pos;

	if (!(st & PERF_SAMPLE_TIME))
		return 0;
	if (rd32(r) == PERF_RECORD_SAMPLE) {
		pos = 8 + 8 * (!!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_IP) +
			       !!(st & PERF_SAMPLE_TID));
		return pos + 8 <= size ? rd64(r + pos) : 0;
	}
	if (!a->sample_id_all)
		return 0;
	pos = 8 * (1 + !!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_CPU) +
		   !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_ID));
	return pos + 8 <= size ? rd64(r + size - pos) : 0;
}

/* ------------------------------------------------------------- ordering */

static int qent_less(const struct qent *a, const struct qent *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static int cmp_qent(const void *a, const void *b)
{
	return qent_less(a, b) ? -1 : qent_less(b, a);
}

/* Sorts the entries queued since the last flush and merges them into the sorted run. */
static int sort_queue(struct perfdata *pd)
{
	size_t a = pd->q_sorted - pd->q_head, b = pd->q_n - pd->q_sorted, i, j, k;
	struct qent *base, *tmp;

	if (!b)
		return 0;
	base = pd->q + pd->q_head;
	qsort(pd->q + pd->q_sorted, b, sizeof *pd->q, cmp_qent);
	if (a && qent_less(&base[a], &base[a - 1])) {
		tmp = malloc(a * sizeof *tmp);
		if (!tmp)
			return -ENOMEM;
		memcpy(tmp, base, a * sizeof *tmp);
		for (i = 0, j = a, k = 0; i < a; k++) {
			if (j < a + b && qent_less(&base[j], &tmp[i]))
				base[k] = base[j++];
			else
				base[k] = tmp[i++];
		}
		free(tmp);
	}
	pd->q_sorted = pd->q_n;
	return 0;
}

static int start_flush(struct perfdata *pd, uint64_t limit)
{
	int e = sort_queue(pd);
	if (e)
		return e;
	pd->limit = limit;
	pd->flushing = 1;
	return 0;
}

static int enqueue(struct perfdata *pd, const uint8_t *p, uint32_t size, uint64_t time,
		   uint64_t off, struct chunk *c)
{
	struct qent *e;
	if (pd->q_head && pd->q_head == pd->q_n) {
		pd->q_head = pd->q_sorted = pd->q_n = 0;
	} else if (pd->q_n == pd->q_cap && pd->q_head > pd->q_cap / 2) {
		memmove(pd->q, pd->q + pd->q_head, (pd->q_n - pd->q_head) * sizeof *pd->q);
		pd->q_n -= pd->q_head;
		pd->q_sorted -= pd->q_head;
		pd->q_head = 0;
	}
	if (pd->q_n == pd->q_cap) {
		size_t n = pd->q_cap ? pd->q_cap * 2 : 4096;
		struct qent *q = realloc(pd->q, n * sizeof *q);
		if (!q)
			return -ENOMEM;
		pd->q = q;
		pd->q_cap = n;
	}
	if (time < pd->last_flush)
		pd->stats.unordered++;
	if (time > pd->max_ts)
		pd->max_ts = time;
	e = &pd->q[pd->q_n++];
	e->time = time;
	e->seq = pd->seq++;
	e->offset = off;
	e->p = p;
	e->size = size;
	e->chunk = c;
	if (c)
		c->refs++;
	pd->q_bytes += size + sizeof *e;
	return 0;
}

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
			return failf(pd, "offset %llu: COMPRESSED2 record of %u bytes, expected at least 16",
				     (unsigned long long)off, size);
		hdr = 16;
		if (rd64(r + 8) > size - 16u)
			return failf(pd, "offset %llu: COMPRESSED2 data_size %llu exceeds the record",
				     (unsigned long long)off, (unsigned long long)rd64(r + 8));
		size = (uint32_t)(16 + rd64(r + 8));
	}
	if (cap < (64u << 10))
		cap = 64u << 10;
	if (cap > MAX_CHUNK)
		return failf(pd, "compressed feature: mmap_len %zu exceeds %u bytes", cap, MAX_CHUNK);
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
				return failf(pd, "offset %llu: COMPRESSED record expands past %u bytes",
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
			return failf(pd, "offset %llu: COMPRESSED record: zstd: %s",
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
		chunk_put(old);
	}
	pd->chunk = c;
	return 0;
}

/*
 * The next raw record from the input: from the current decompressed chunk
 * first, then the main stream.  Returns 1, 0 at the end, or -errno.
 */
static int next_raw(struct perfdata *pd, const uint8_t **p, uint32_t *size, uint64_t *ext,
		    uint64_t *off, struct chunk **from)
{
	struct perf_event_header h;
	int e;

	for (;;) {
		struct chunk *c = pd->chunk;
		if (c && c->len - c->pos >= sizeof h) {
			memcpy(&h, c->data + c->pos, sizeof h);
			if (h.size < sizeof h)
				return failf(pd, "offset %llu: inside COMPRESSED data at %zu: record size %u, expected at least 8",
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
		if (pd->pos >= pd->end) {
			if (c && c->pos < c->len)
				return failf(pd, "offset %llu: COMPRESSED data ends inside a record (%zu bytes left over)",
					     (unsigned long long)c->src_offset, c->len - c->pos);
			return 0;
		}
		if ((e = rec_header(pd, pd->buf, pd->pos, pd->end, pd->pos, &h)))
			return e;
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
				chunk_put(c);
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
	out->compressed = c != NULL;
	pd->held = c;
	pd->stats.records++;
	if (!c)
		pd->stats.bytes += ext;
	(void)size;
	return 1;
}

int perfdata__next(struct perfdata *pd, struct perfdata_rec *out)
{
	int e;

	chunk_put(pd->held);
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
				pd->last_flush = q->time;
				/* the delivered record's chunk ref moves to held */
				return deliver(pd, out, q->p, q->size, q->size, q->offset, q->time, q->chunk);
			}
			pd->flushing = 0;
		}
		e = next_raw(pd, &p, &size, &ext, &off, &c);
		if (e < 0)
			return e;
		if (e == 0) {
			if (pd->q_head < pd->q_n) {
				if ((e = start_flush(pd, UINT64_MAX)))
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
				if ((e = start_flush(pd, lim)))
					return e;
			} else if (!c && off >= pd->prescan_end) {
				/* A description arriving mid-stream (each handled once, even after a rewind). */
				pd->prescan_end = off + ext;
				if ((e = handle_user(pd, p, size, off)))
					return e;
				if ((type == REC_HEADER_ATTR || type == REC_EVENT_UPDATE ||
				     type == REC_ID_INDEX) && (e = build_evtab(pd)))
					return e;
			}
			if (c)
				c->refs++;
			return deliver(pd, out, p, size, ext, off, 0, c);
		}
		time = pd->opts.unordered ? 0 : record_time(pd, p, size);
		if (time == 0 || time == UINT64_MAX) {
			if (c)
				c->refs++;
			return deliver(pd, out, p, size, ext, off,
				       pd->opts.unordered ? record_time(pd, p, size) : 0, c);
		}
		if (pd->q_bytes + size > pd->opts.max_queue && pd->q_head < pd->q_n) {
			/* perf's OE_FLUSH__HALF: flush up to the middle of the queued time span. */
			uint64_t first, last;
			if ((e = sort_queue(pd)))
				return e;
			first = pd->q[pd->q_head].time;
			last = pd->q[pd->q_n - 1].time;
			pd->stats.forced_flushes++;
			if ((e = enqueue(pd, p, size, time, off, c)))
				return e;
			if ((e = start_flush(pd, first + (last - first) / 2)))
				return e;
			continue;
		}
		if ((e = enqueue(pd, p, size, time, off, c)))
			return e;
	}
}

int perfdata__rewind(struct perfdata *pd)
{
	size_t i;
	for (i = pd->q_head; i < pd->q_n; i++)
		chunk_put(pd->q[i].chunk);
	chunk_put(pd->held);
	pd->held = NULL;
	if (pd->chunk) {
		pd->chunk->active = 0;
		pd->chunk->refs++;
		chunk_put(pd->chunk);
		pd->chunk = NULL;
	}
	if (pd->zds)
		ZSTD_initDStream(pd->zds);
	pd->q_head = pd->q_sorted = pd->q_n = 0;
	pd->q_bytes = 0;
	pd->seq = pd->max_ts = pd->next_flush = pd->limit = pd->last_flush = 0;
	pd->flushing = 0;
	pd->pos = pd->first;
	memset(&pd->stats, 0, sizeof pd->stats);
	return 0;
}
