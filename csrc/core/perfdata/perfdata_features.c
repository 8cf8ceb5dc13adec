/*
 * perf.data feature sections: each decoded into struct perfdata_info with a
 * cursor bounded by the section (or HEADER_FEATURE record), so a count or a
 * string length that does not fit is an error naming the offset.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>

#include "perfdata/perfdata.h"
#include "perfdata/perfdata_int.h"

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
		return perfdata__fail(c->pd, "%s feature at offset %llu: %s needs %llu bytes, %llu left",
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
	*out = perfdata__keep(c->pd, strndup((const char *)c->p + c->off, len));
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
		return perfdata__fail(c->pd, "%s feature at offset %llu: %s count %u does not fit in %llu bytes",
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
	*out = perfdata__kalloc(c->pd, n, sizeof **out);
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
			return perfdata__fail(c->pd, "build_id feature at offset %llu: record size %u, expected 36..%llu",
				     (unsigned long long)c->off, sz, (unsigned long long)(c->end - c->off));
		c->off += sz;
		cap++;
	}
	in->build_ids = perfdata__kalloc(c->pd, cap, sizeof *in->build_ids);
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
		b->filename = perfdata__keep(c->pd, strndup((const char *)r + 36, sz - 36u));
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
		return perfdata__fail(pd, "event_desc feature at offset %llu: %u events of %u bytes do not fit",
			     (unsigned long long)c->off, nr, asz);
	pd->info.event_desc = perfdata__kalloc(pd, nr, sizeof *pd->info.event_desc);
	if (!pd->info.event_desc)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		struct perfdata_event_desc *d = &pd->info.event_desc[i];
		const char *name;
		uint64_t id = 0;
		int idx = -1;
		if ((e = need(c, asz, "attr")))
			return e;
		memcpy(&d->attr, c->p + c->off, asz < sizeof d->attr ? asz : sizeof d->attr);
		d->attr_size = asz;
		c->off += asz;
		if ((e = fcount(c, &nids, 8, "nr_ids")) || (e = fstr(c, &name, "name")))
			return e;
		if ((e = need(c, (uint64_t)nids * 8, "ids")))
			return e;
		d->name = name;
		d->nr_ids = nids;
		if (nids) {
			uint64_t *ids = perfdata__kalloc(pd, nids, sizeof *ids);
			if (!ids)
				return -ENOMEM;
			memcpy(ids, c->p + c->off, (size_t)nids * 8);
			d->ids = ids;
		}
		pd->info.nr_event_desc = i + 1;
		for (k = 0; k < nids && idx < 0; k++) {
			id = rd64(c->p + c->off + 8ull * k);
			idx = perfdata__idx_of_id(pd, id);
		}
		/* Without ids the order is the attr order (one event files). */
		if (idx < 0 && nids == 0 && (int)i < pd->nr_attrs)
			idx = (int)i;
		if (idx >= 0 && !pd->attrs[idx].name && (e = perfdata__set_name(pd, idx, name, strlen(name))))
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
	in->core_id = perfdata__kalloc(c->pd, n, sizeof *in->core_id);
	in->socket_id = perfdata__kalloc(c->pd, n, sizeof *in->socket_id);
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
	in->die_id = perfdata__kalloc(c->pd, n, sizeof *in->die_id);
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
	in->numa_nodes = perfdata__kalloc(c->pd, n, sizeof *in->numa_nodes);
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

static int feat_groups(struct fcur *c)
{
	struct perfdata_info *in = &c->pd->info;
	uint32_t n, i;
	int e = fcount(c, &n, 4 + 4 + 4, "nr_groups");
	if (e)
		return e;
	in->groups = perfdata__kalloc(c->pd, n, sizeof *in->groups);
	if (!in->groups)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct perfdata_group *g = &in->groups[i];
		if ((e = fstr(c, &g->name, "group name")) || (e = f32(c, &g->leader, "leader_idx")) ||
		    (e = f32(c, &g->nr_members, "nr_members")))
			return e;
	}
	in->nr_groups = n;
	return 0;
}

static int feat_pmu_mappings(struct fcur *c)
{
	struct perfdata_info *in = &c->pd->info;
	uint32_t n, i;
	int e = fcount(c, &n, 4 + 4, "nr_pmus");

	if (e)
		return e;
	if (!(in->pmus = perfdata__kalloc(c->pd, n, sizeof *in->pmus)))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if ((e = f32(c, &in->pmus[i].type, "pmu type")) ||
		    (e = fstr(c, &in->pmus[i].name, "pmu name")))
			return e;
		in->nr_pmus = i + 1;
	}
	return 0;
}

/* A PMU's capabilities: u32 count, then (name, value) strings. */
static int pmu_caps(struct fcur *c, struct perfdata_pmu_caps *pc)
{
	uint32_t n, i;
	int e = fcount(c, &n, 8, "nr_caps");

	if (e)
		return e;
	if (!(pc->caps = perfdata__kalloc(c->pd, n, sizeof *pc->caps)))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const char *name, *value;
		size_t len;
		char *cap;
		if ((e = fstr(c, &name, "cap name")) || (e = fstr(c, &value, "cap value")))
			return e;
		len = strlen(name) + strlen(value) + 2;
		if (!(cap = perfdata__keep(c->pd, malloc(len))))
			return -ENOMEM;
		snprintf(cap, len, "%s=%s", name, value);
		pc->caps[i] = cap;
		pc->nr_caps = i + 1;
	}
	return 0;
}

/* pmu_caps: u32 count of PMUs, each its caps then its name. */
static int feat_pmu_caps(struct fcur *c)
{
	struct perfdata_info *in = &c->pd->info;
	uint32_t n, i;
	int e = fcount(c, &n, 4 + 4, "nr_pmu");

	if (e)
		return e;
	if (!(in->pmu_caps = perfdata__kalloc(c->pd, n, sizeof *in->pmu_caps)))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if ((e = pmu_caps(c, &in->pmu_caps[i])) ||
		    (e = fstr(c, &in->pmu_caps[i].pmu, "pmu name")))
			return e;
		in->nr_pmu_caps = i + 1;
	}
	return 0;
}

/* bpf_btf: u32 count, each a u32 id, a u32 size and the data. */
static int feat_bpf_btf(struct fcur *c)
{
	struct perfdata_info *in = &c->pd->info;
	uint32_t n, i;
	int e = fcount(c, &n, 8, "nr_btf");

	if (e)
		return e;
	if (!(in->btfs = perfdata__kalloc(c->pd, n, sizeof *in->btfs)))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct perfdata_btf *b = &in->btfs[i];
		if ((e = f32(c, &b->id, "btf id")) || (e = f32(c, &b->size, "btf size")) ||
		    (e = need(c, b->size, "btf data")))
			return e;
		b->data = c->p + c->off;
		c->off += b->size;
		in->nr_btfs = i + 1;
	}
	return 0;
}

/* An array of n items of size bytes at offset off of a program's data
 * (perf writes the info's pointers as offsets), copied; NULL when it
 * does not fit or is empty. */
static void *bpf_array(struct perfdata *pd, const uint8_t *data, uint32_t len, uint64_t off,
		       uint32_t n, size_t size)
{
	void *a;

	if (!n || off > len || (uint64_t)n * size > len - off)
		return NULL;
	if (!(a = perfdata__kalloc(pd, n, size)))
		return NULL;
	memcpy(a, data + off, (size_t)n * size);
	return a;
}

/* perf's bpil array bits: which info fields are offsets into the data */
#define BPIL_JITED_KSYMS 3
#define BPIL_JITED_FUNC_LENS 4
#define BPIL_FUNC_INFO 5
#define BPIL_PROG_TAGS 8

/*
 * bpf_prog_info: u32 count, each program a u32 info_len, a u32 data_len,
 * a u64 bit mask of the arrays in the data, the kernel's bpf_prog_info
 * (info_len bytes), the data.  What perf prints: each function's address,
 * length, tag and BTF function.  A longer info than ours stops the list,
 * as perf stops it.
 */
static int feat_bpf_prog_info(struct fcur *c)
{
	struct perfdata_info *in = &c->pd->info;
	uint32_t n, i;
	int e = fcount(c, &n, 16, "nr_progs");

	if (e)
		return e;
	if (!(in->bpf_progs = perfdata__kalloc(c->pd, n, sizeof *in->bpf_progs)))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct perfdata_bpf_prog *bp = &in->bpf_progs[in->nr_bpf_progs];
		struct bpf_prog_info info;
		uint32_t info_len, data_len, subs, k;
		uint64_t arrays;
		const uint8_t *data;
		uint32_t *types;

		if ((e = f32(c, &info_len, "info_len")) || (e = f32(c, &data_len, "data_len")) ||
		    (e = f64(c, &arrays, "arrays")))
			return e;
		if (info_len > sizeof info)
			break;
		if ((e = need(c, info_len, "bpf_prog_info")))
			return e;
		memset(&info, 0, sizeof info);
		memcpy(&info, c->p + c->off, info_len);
		c->off += info_len;
		if ((e = need(c, data_len, "bpf_prog_info data")))
			return e;
		data = c->p + c->off;
		c->off += data_len;
		memset(bp, 0, sizeof *bp);
		bp->id = info.id;
		bp->btf_id = info.btf_id;
		memcpy(bp->name, info.name, sizeof bp->name);
		bp->name[sizeof bp->name - 1] = '\0';
		in->nr_bpf_progs++;
		subs = info.nr_jited_ksyms;
		if (subs != info.nr_prog_tags || subs != info.nr_jited_func_lens ||
		    (~arrays & (1u << BPIL_JITED_KSYMS | 1u << BPIL_JITED_FUNC_LENS |
				1u << BPIL_PROG_TAGS)))
			continue;
		bp->addrs = bpf_array(c->pd, data, data_len, info.jited_ksyms, subs, 8);
		bp->lens = bpf_array(c->pd, data, data_len, info.jited_func_lens, subs, 4);
		bp->tags = bpf_array(c->pd, data, data_len, info.prog_tags, subs, 8);
		if (!bp->addrs || !bp->lens || !bp->tags)
			continue;
		bp->nr_subs = subs;
		/* each function's record of func_info: its type id, 4 bytes in */
		if (!(arrays & (1u << BPIL_FUNC_INFO)) || info.nr_func_info < subs ||
		    info.func_info_rec_size < 8 || info.func_info > data_len ||
		    (uint64_t)subs * info.func_info_rec_size > data_len - info.func_info)
			continue;
		if (!(types = perfdata__kalloc(c->pd, subs, sizeof *types)))
			return -ENOMEM;
		for (k = 0; k < subs; k++)
			types[k] = rd32(data + info.func_info + (uint64_t)k * info.func_info_rec_size + 4);
		bp->func_types = types;
	}
	return 0;
}

int perfdata__skip_feature(struct perfdata *pd, int id, uint64_t off, uint64_t size)
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
static int decode_feature(struct perfdata *pd, int id, uint64_t off, uint64_t size)
{
	struct perfdata_info *in = &pd->info;
	struct fcur c = { pd, pd->buf, off, off + size, perfdata__feature_name(id) };
	uint32_t v32 = 0;
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
	case PERFDATA_FEAT_GROUP_DESC: e = feat_groups(&c); break;
	case PERFDATA_FEAT_PMU_MAPPINGS: e = feat_pmu_mappings(&c); break;
	case PERFDATA_FEAT_CPU_PMU_CAPS: e = pmu_caps(&c, &in->cpu_pmu_caps); break;
	case PERFDATA_FEAT_PMU_CAPS: e = feat_pmu_caps(&c); break;
	case PERFDATA_FEAT_DIR_FORMAT: e = f64(&c, &in->dir_format, "version"); break;
	case PERFDATA_FEAT_BPF_BTF: e = feat_bpf_btf(&c); break;
	case PERFDATA_FEAT_BPF_PROG_INFO: e = feat_bpf_prog_info(&c); break;
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
		return perfdata__skip_feature(pd, id, off, size);
	}
	return e;
}

/*
 * A feature that does not decode is skipped with a warning naming where
 * and why: the records do not depend on it (perf reads around a malformed
 * cpudesc the same way).  Only running out of memory fails.
 */
int perfdata__read_feature(struct perfdata *pd, int id, uint64_t off, uint64_t size)
{
	int e = decode_feature(pd, id, off, size);

	if (e == -ENOMEM || e >= 0)
		return e;
	perfdata__warn(pd, "%s: feature skipped", pd->err);
	pd->err[0] = '\0';
	pd->info.features[id / 64] &= ~(1ULL << (id % 64));
	return perfdata__skip_feature(pd, id, off, size);
}

/* A HEADER_BUILD_ID record (pipe mode): its build id joins the list. */
int perfdata__append_build_ids(struct perfdata *pd, uint64_t off, uint64_t size)
{
	int e;
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
		struct perfdata_build_id *m = perfdata__kalloc(pd, n + in->nr_build_ids, sizeof *m);
		if (!m)
			return -ENOMEM;
		memcpy(m, old, n * sizeof *m);
		memcpy(m + n, in->build_ids, in->nr_build_ids * sizeof *m);
		in->build_ids = m;
		in->nr_build_ids += n;
	}
	return 0;
}
