/*
 * perf report --header-only: the file's header and feature sections as
 * perf 6.1 prints them (perf_session__fprintf_info), line for line, so a
 * recording from another machine says where and how it was made.  The
 * formats are facts of perf's output; the values come from the decoded
 * info (perfdata_features.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfdata/perfdata.h"

/* The features perf 6.1 knows (HEADER_LAST_FEATURE), by their names. */
#define LAST_FEATURE 32

static int has(const struct perfdata_info *in, int feat)
{
	return (int)((in->features[feat / 64] >> (feat % 64)) & 1);
}

/* A feature's name as perf prints it: ours in capitals. */
static void feature_name(FILE *f, int feat)
{
	const char *n = perfdata__feature_name(feat);

	for (; n && *n; n++)
		fputc(*n >= 'a' && *n <= 'z' ? *n - 'a' + 'A' : *n, f);
}

struct bit_name {
	uint64_t bit;
	const char *name;
};

/* A flags word as "A|B|C", the bits perf names, in its order. */
static void bits(FILE *f, uint64_t v, const struct bit_name *b)
{
	const char *sep = "";

	for (; b->name; b++) {
		if (v & b->bit) {
			fprintf(f, "%s%s", sep, b->name);
			sep = "|";
		}
	}
}

#define BIT(p, n) { PERF_##p##n, #n }
static const struct bit_name sample_bits[] = {
	BIT(SAMPLE_, IP), BIT(SAMPLE_, TID), BIT(SAMPLE_, TIME), BIT(SAMPLE_, ADDR),
	BIT(SAMPLE_, READ), BIT(SAMPLE_, CALLCHAIN), BIT(SAMPLE_, ID), BIT(SAMPLE_, CPU),
	BIT(SAMPLE_, PERIOD), BIT(SAMPLE_, STREAM_ID), BIT(SAMPLE_, RAW),
	BIT(SAMPLE_, BRANCH_STACK), BIT(SAMPLE_, REGS_USER), BIT(SAMPLE_, STACK_USER),
	BIT(SAMPLE_, IDENTIFIER), BIT(SAMPLE_, REGS_INTR), BIT(SAMPLE_, DATA_SRC),
	BIT(SAMPLE_, WEIGHT), BIT(SAMPLE_, PHYS_ADDR), BIT(SAMPLE_, AUX),
	BIT(SAMPLE_, CGROUP), BIT(SAMPLE_, DATA_PAGE_SIZE), BIT(SAMPLE_, CODE_PAGE_SIZE),
	BIT(SAMPLE_, WEIGHT_STRUCT), { 0, NULL }
};
static const struct bit_name branch_bits[] = {
	BIT(SAMPLE_BRANCH_, USER), BIT(SAMPLE_BRANCH_, KERNEL), BIT(SAMPLE_BRANCH_, HV),
	BIT(SAMPLE_BRANCH_, ANY), BIT(SAMPLE_BRANCH_, ANY_CALL), BIT(SAMPLE_BRANCH_, ANY_RETURN),
	BIT(SAMPLE_BRANCH_, IND_CALL), BIT(SAMPLE_BRANCH_, ABORT_TX), BIT(SAMPLE_BRANCH_, IN_TX),
	BIT(SAMPLE_BRANCH_, NO_TX), BIT(SAMPLE_BRANCH_, COND), BIT(SAMPLE_BRANCH_, CALL_STACK),
	BIT(SAMPLE_BRANCH_, IND_JUMP), BIT(SAMPLE_BRANCH_, CALL), BIT(SAMPLE_BRANCH_, NO_FLAGS),
	BIT(SAMPLE_BRANCH_, NO_CYCLES), BIT(SAMPLE_BRANCH_, TYPE_SAVE),
	BIT(SAMPLE_BRANCH_, HW_INDEX), BIT(SAMPLE_BRANCH_, PRIV_SAVE), { 0, NULL }
};
static const struct bit_name read_bits[] = {
	BIT(FORMAT_, TOTAL_TIME_ENABLED), BIT(FORMAT_, TOTAL_TIME_RUNNING), BIT(FORMAT_, ID),
	BIT(FORMAT_, GROUP), BIT(FORMAT_, LOST), { 0, NULL }
};
#undef BIT

/* perf_event_attr__fprintf: each field that is not zero, ", name = value". */
static void attr_fields(FILE *f, const struct perf_event_attr *a)
{
#define U(name, v) do { if (v) fprintf(f, ", %s = %" PRIu64, name, (uint64_t)(v)); } while (0)
#define X(name, v) do { if (v) fprintf(f, ", %s = %#" PRIx64, name, (uint64_t)(v)); } while (0)
#define B(name, v, tbl) do { if (v) { fprintf(f, ", %s = ", name); bits(f, v, tbl); } } while (0)
#define F(field) U(#field, a->field)
	U("type", a->type);
	U("size", a->size);
	X("config", a->config);
	U("{ sample_period, sample_freq }", a->sample_period);
	B("sample_type", a->sample_type, sample_bits);
	B("read_format", a->read_format, read_bits);
	F(disabled); F(inherit); F(pinned); F(exclusive); F(exclude_user); F(exclude_kernel);
	F(exclude_hv); F(exclude_idle); F(mmap); F(comm); F(freq); F(inherit_stat);
	F(enable_on_exec); F(task); F(watermark); F(precise_ip); F(mmap_data);
	F(sample_id_all); F(exclude_host); F(exclude_guest); F(exclude_callchain_kernel);
	F(exclude_callchain_user); F(mmap2); F(comm_exec); F(use_clockid); F(context_switch);
	F(write_backward); F(namespaces); F(ksymbol); F(bpf_event); F(aux_output); F(cgroup);
	F(text_poke); F(build_id); F(inherit_thread); F(remove_on_exec); F(sigtrap);
	U("{ wakeup_events, wakeup_watermark }", a->wakeup_events);
	F(bp_type);
	X("{ bp_addr, config1 }", a->bp_addr);
	X("{ bp_len, config2 }", a->bp_len);
	B("branch_sample_type", a->branch_sample_type, branch_bits);
	X("sample_regs_user", a->sample_regs_user);
	F(sample_stack_user);
	if (a->clockid)
		fprintf(f, ", clockid = %" PRId64, (int64_t)a->clockid);
	X("sample_regs_intr", a->sample_regs_intr);
	F(aux_watermark); F(sample_max_stack); F(aux_sample_size); F(sig_data);
#undef F
#undef B
#undef X
#undef U
}

static void event_desc(FILE *f, const struct perfdata_info *in)
{
	unsigned i, k;

	if (!in->nr_event_desc) {
		fputs("# event desc: not available or unable to read\n", f);
		return;
	}
	for (i = 0; i < in->nr_event_desc; i++) {
		const struct perfdata_event_desc *d = &in->event_desc[i];
		struct perf_event_attr a = d->attr;

		a.size = d->attr_size;      /* what the file wrote */
		fprintf(f, "# event : name = %s, ", d->name);
		if (d->nr_ids) {
			fputs(", id = {", f);
			for (k = 0; k < d->nr_ids; k++)
				fprintf(f, "%s %" PRIu64, k ? "," : "", d->ids[k]);
			fputs(" }", f);
		}
		attr_fields(f, &a);
		fputc('\n', f);
	}
}

static void pmu_caps(FILE *f, const struct perfdata_pmu_caps *pc, const char *pmu)
{
	unsigned i;

	if (!pc->nr_caps) {
		fprintf(f, "# %s pmu capabilities: not available\n", pmu);
		return;
	}
	fprintf(f, "# %s pmu capabilities: ", pmu);
	for (i = 0; i < pc->nr_caps; i++)
		fprintf(f, "%s%s", i ? ", " : "", pc->caps[i]);
	fputc('\n', f);
}

/* group_desc: "# group: NAME{a,b}" per group of more than one, its
 * members by their event_desc names. */
static void group_desc(FILE *f, const struct perfdata_info *in)
{
	unsigned i, k;

	for (i = 0; i < in->nr_groups; i++) {
		const struct perfdata_group *g = &in->groups[i];
		const char *name = g->name && strcmp(g->name, "{anon_group}") ? g->name : "";

		if (g->nr_members < 2 || g->leader >= in->nr_event_desc)
			continue;
		fprintf(f, "# group: %s{", name);
		for (k = 0; k < g->nr_members && g->leader + k < in->nr_event_desc; k++)
			fprintf(f, "%s%s", k ? "," : "", in->event_desc[g->leader + k].name);
		fputs("}\n", f);
	}
}

static const char *clockid_name(uint32_t id)
{
	switch (id) {
	case CLOCK_MONOTONIC: return "monotonic";
	case CLOCK_MONOTONIC_RAW: return "monotonic_raw";
	case CLOCK_REALTIME: return "realtime";
	case CLOCK_BOOTTIME: return "boottime";
	case CLOCK_TAI: return "tai";
	default: return "user configured clock";
	}
}

static void clock_data(FILE *f, const struct perfdata_info *in)
{
	uint64_t tod = in->clock_data.wall_clock_ns, clk = in->clock_data.clockid_time_ns;
	time_t sec = (time_t)(tod / 1000000000);
	unsigned usec = (unsigned)(tod % 1000000000 / 1000);
	char date[64] = "<error>";
	struct tm tm;

	if (in->clock_data.version != 1) {
		fputs("# reference time disabled\n", f);
		return;
	}
	if (localtime_r(&sec, &tm)) {
		char day[48];
		strftime(day, sizeof day, "%F %T", &tm);
		snprintf(date, sizeof date, "%s.%06u", day, usec);
	}
	fprintf(f, "# clockid: %s (%u)\n", clockid_name(in->clock_data.clockid),
		in->clock_data.clockid);
	fprintf(f, "# reference time: %s = %ld.%06u (TOD) = %ld.%09ld (%s)\n", date, (long)sec,
		usec, (long)(clk / 1000000000), (long)(clk % 1000000000),
		clockid_name(in->clock_data.clockid));
}

/* The name of BTF type id in btf (NULL: no such type or name), walking
 * the type section as libbpf indexes it: each type's record, then its
 * kind's extra bytes. */
struct btf_layout {
	uint32_t types, types_end;      /* the type section, from the data's start */
	uint32_t strs, strs_len;
};

/* Where a BTF object's sections are; 0, or -1 for a header that does not
 * hold (perf's libbpf refuses such an object: no BTF names then). */
static int btf_layout(const struct perfdata_btf *btf, struct btf_layout *l)
{
	const uint8_t *d = btf->data;
	uint32_t hdr, toff, tlen, soff, slen;

	if (btf->size < 24 || (d[0] | d[1] << 8) != 0xeb9f)
		return -1;
	memcpy(&hdr, d + 4, 4);
	memcpy(&toff, d + 8, 4);
	memcpy(&tlen, d + 12, 4);
	memcpy(&soff, d + 16, 4);
	memcpy(&slen, d + 20, 4);
	if (hdr < 24 || hdr > btf->size || toff > btf->size - hdr ||
	    tlen > btf->size - hdr - toff || soff > btf->size - hdr || slen > btf->size - hdr - soff)
		return -1;
	l->types = hdr + toff;
	l->types_end = l->types + tlen;
	l->strs = hdr + soff;
	l->strs_len = slen;
	return 0;
}

static const char *btf_type_name(const struct perfdata_btf *btf, uint32_t id)
{
	const uint8_t *d = btf->data;
	struct btf_layout l;
	uint32_t pos, n = 1;

	if (btf_layout(btf, &l))
		return NULL;
	pos = l.types;
	while (id && pos + 12 <= l.types_end) {
		uint32_t name_off, info, vlen, extra;
		memcpy(&name_off, d + pos, 4);
		memcpy(&info, d + pos + 4, 4);
		if (n == id) {
			if (name_off >= l.strs_len || !memchr(d + l.strs + name_off, '\0', l.strs_len - name_off))
				return NULL;
			return (const char *)d + l.strs + name_off;
		}
		vlen = info & 0xffff;
		switch ((info >> 24) & 0x1f) {
		case 1: case 14: case 17: extra = 4; break;            /* int, var, decl_tag */
		case 3: extra = 12; break;                             /* array */
		case 4: case 5: case 15: case 19: extra = 12 * vlen; break; /* struct, union, datasec, enum64 */
		case 6: case 13: extra = 8 * vlen; break;              /* enum, func_proto */
		default: extra = 0; break;
		}
		pos += 12 + extra;
		n++;
	}
	return NULL;
}

static int prog_order(const void *a, const void *b)
{
	const struct perfdata_bpf_prog *x = *(const struct perfdata_bpf_prog *const *)a;
	const struct perfdata_bpf_prog *y = *(const struct perfdata_bpf_prog *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* perf's synthesized name of a program's function k: bpf_prog_TAG, then
 * its BTF function's name, or the program's short name, or "F". */
static void prog_name(FILE *f, const struct perfdata_bpf_prog *p, const struct perfdata_btf *btf,
		      uint32_t k)
{
	const char *short_name = NULL;
	unsigned i;

	fputs("bpf_prog_", f);
	for (i = 0; i < 8; i++)
		fprintf(f, "%02x", p->tags[k * 8 + i]);
	if (btf) {
		short_name = p->func_types ? btf_type_name(btf, p->func_types[k]) : NULL;
		if (!short_name)
			short_name = "(null)";
	} else if (p->nr_subs == 1) {
		short_name = p->name[0] ? p->name : NULL;
	} else {
		short_name = "F";
	}
	if (short_name)
		fprintf(f, "_%s", short_name);
}

/* bpf_prog_info: each program by id (perf keeps them in a tree by id, a
 * repeated id once), its functions' names, addresses and lengths. */
static void bpf_progs(FILE *f, const struct perfdata_info *in)
{
	const struct perfdata_bpf_prog **v;
	unsigned i, k;

	if (!in->nr_bpf_progs || !(v = malloc(in->nr_bpf_progs * sizeof *v)))
		return;
	for (i = 0; i < in->nr_bpf_progs; i++)
		v[i] = &in->bpf_progs[i];
	qsort(v, in->nr_bpf_progs, sizeof *v, prog_order);
	for (i = 0; i < in->nr_bpf_progs; i++) {
		const struct perfdata_bpf_prog *p = v[i];
		const struct perfdata_btf *btf = NULL;

		if ((i && p->id == v[i - 1]->id) || !p->nr_subs)
			continue;
		for (k = 0; p->btf_id && k < in->nr_btfs; k++) {
			struct btf_layout l;
			if (in->btfs[k].id == p->btf_id && !btf_layout(&in->btfs[k], &l))
				btf = &in->btfs[k];
		}
		if (p->nr_subs == 1) {
			fprintf(f, "# bpf_prog_info %u: ", p->id);
			prog_name(f, p, btf, 0);
			fprintf(f, " addr 0x%" PRIx64 " size %u\n", p->addrs[0], p->lens[0]);
			continue;
		}
		fprintf(f, "# bpf_prog_info %u:\n", p->id);
		for (k = 0; k < p->nr_subs; k++) {
			fprintf(f, "# \tsub_prog %u: ", k);
			prog_name(f, p, btf, k);
			fprintf(f, " addr 0x%" PRIx64 " size %u\n", p->addrs[k], p->lens[k]);
		}
	}
	free(v);
}

/* One feature section as perf 6.1 prints it (nothing for build ids and
 * tracing data, a pointer to -I for the topologies). */
static void feature(FILE *f, const struct perfdata_info *in, int feat)
{
	unsigned i;

	switch (feat) {
	case PERFDATA_FEAT_HOSTNAME: fprintf(f, "# hostname : %s\n", in->hostname); break;
	case PERFDATA_FEAT_OSRELEASE: fprintf(f, "# os release : %s\n", in->osrelease); break;
	case PERFDATA_FEAT_VERSION: fprintf(f, "# perf version : %s\n", in->version); break;
	case PERFDATA_FEAT_ARCH: fprintf(f, "# arch : %s\n", in->arch); break;
	case PERFDATA_FEAT_NRCPUS:
		fprintf(f, "# nrcpus online : %u\n# nrcpus avail : %u\n", in->nr_cpus_online,
			in->nr_cpus_avail);
		break;
	case PERFDATA_FEAT_CPUDESC: fprintf(f, "# cpudesc : %s\n", in->cpudesc); break;
	case PERFDATA_FEAT_CPUID: fprintf(f, "# cpuid : %s\n", in->cpuid); break;
	case PERFDATA_FEAT_TOTAL_MEM: fprintf(f, "# total memory : %" PRIu64 " kB\n", in->total_mem); break;
	case PERFDATA_FEAT_CMDLINE:
		fputs("# cmdline : ", f);
		for (i = 0; i < in->nr_cmdline; i++)
			fprintf(f, "%s ", in->cmdline[i]);
		fputc('\n', f);
		break;
	case PERFDATA_FEAT_EVENT_DESC: event_desc(f, in); break;
	case PERFDATA_FEAT_CPU_TOPOLOGY:
	case PERFDATA_FEAT_NUMA_TOPOLOGY:
	case PERFDATA_FEAT_CACHE:
	case PERFDATA_FEAT_MEM_TOPOLOGY:
		/* full_only in perf: said, shown with -I */
		fputs("# ", f);
		feature_name(f, feat);
		fputs(" info available, use -I to display\n", f);
		break;
	case PERFDATA_FEAT_BRANCH_STACK: fputs("# contains samples with branch stack\n", f); break;
	case PERFDATA_FEAT_PMU_MAPPINGS:
		if (!in->nr_pmus) {
			fputs("# pmu mappings: not available\n", f);
			break;
		}
		for (i = 0; i < in->nr_pmus; i++)
			fprintf(f, "%s%s = %" PRIu32, i ? ", " : "# pmu mappings: ", in->pmus[i].name,
				in->pmus[i].type);
		fputc('\n', f);
		break;
	case PERFDATA_FEAT_GROUP_DESC: group_desc(f, in); break;
	case PERFDATA_FEAT_AUXTRACE: fputs("# contains AUX area data (e.g. instruction trace)\n", f); break;
	case PERFDATA_FEAT_STAT: fputs("# contains stat data\n", f); break;
	case PERFDATA_FEAT_SAMPLE_TIME: {
		/* a pipe's are not known when perf prints them */
		uint64_t a = in->pipe ? 0 : in->sample_time.first;
		uint64_t b = in->pipe ? 0 : in->sample_time.last;
		fprintf(f, "# time of first sample : %" PRIu64 ".%06" PRIu64 "\n", a / 1000000000,
			a % 1000000000 / 1000);
		fprintf(f, "# time of last sample : %" PRIu64 ".%06" PRIu64 "\n", b / 1000000000,
			b % 1000000000 / 1000);
		fprintf(f, "# sample duration : %10.3f ms\n", (double)(b - a) / 1e6);
		break;
	}
	case PERFDATA_FEAT_CLOCKID:
		fprintf(f, "# clockid frequency: %" PRIu64 " MHz\n", in->clockid_res_ns * 1000);
		break;
	case PERFDATA_FEAT_DIR_FORMAT:
		fprintf(f, "# directory data version : %" PRIu64 "\n", in->dir_format);
		break;
	case PERFDATA_FEAT_BPF_PROG_INFO: bpf_progs(f, in); break;
	case PERFDATA_FEAT_BPF_BTF:
		for (i = 0; i < in->nr_btfs; i++)
			fprintf(f, "# btf info of id %u\n", in->btfs[i].id);
		break;
	case PERFDATA_FEAT_COMPRESSED:
		fprintf(f, "# compressed : %s, level = %u, ratio = %u\n",
			in->compressed.type == 1 ? "Zstd" : "Unknown", in->compressed.level,
			in->compressed.ratio);
		break;
	case PERFDATA_FEAT_CPU_PMU_CAPS: pmu_caps(f, &in->cpu_pmu_caps, "cpu"); break;
	case PERFDATA_FEAT_CLOCK_DATA: clock_data(f, in); break;
	case PERFDATA_FEAT_PMU_CAPS:
		for (i = 0; i < in->nr_pmu_caps; i++)
			pmu_caps(f, &in->pmu_caps[i], in->pmu_caps[i].pmu);
		break;
	default:
		break;                  /* build ids, tracing data, hybrid topology */
	}
}

int perfdata__header_text(const struct perfdata *pd, int64_t captured, char **out, size_t *len)
{
	const struct perfdata_info *in = perfdata__info(pd);
	time_t when = (time_t)captured;
	char *buf = NULL;
	size_t n = 0;
	FILE *f;
	int feat;

	*out = NULL;
	*len = 0;
	if (!(f = open_memstream(&buf, &n)))
		return -errno;
	fputs("# ========\n", f);
	fprintf(f, "# captured on    : %s", ctime(&when));
	fputs("# header version : 1\n", f);
	fprintf(f, "# data offset    : %" PRIu64 "\n", in->pipe ? 0 : in->data_offset);
	fprintf(f, "# data size      : %" PRIu64 "\n", in->pipe ? 0 : in->data_size);
	fprintf(f, "# feat offset    : %" PRIu64 "\n",
		in->pipe ? 0 : in->data_offset + in->data_size);
	/* a pipe's features come in the stream, after perf has closed the block */
	if (in->pipe)
		fputs("# ========\n#\n", f);
	for (feat = 1; feat < LAST_FEATURE; feat++)
		if (has(in, feat))
			feature(f, in, feat);
	if (!in->pipe) {
		fputs("# missing features: ", f);
		for (feat = 1; feat < LAST_FEATURE; feat++) {
			if (has(in, feat) || !perfdata__feature_name(feat))
				continue;
			feature_name(f, feat);
			fputc(' ', f);
		}
		fputs("\n# ========\n#\n", f);
	}
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	*len = n;
	return 0;
}
