/*
 * perf.open(path[, opts]) -> a perf.data file (perf.File):
 *
 *   f:header()            what the file header says, and the events
 *   f:features()          the decoded feature sections (+ the skipped ones)
 *   f:records{filter}     iterator over the records, time-ordered, each the
 *                         same table a live session yields (l_record.c);
 *                         filter: type = "SAMPLE" | {"SAMPLE", "COMM", ...},
 *                         event=, pid=, tid=, cpu=, user = false (drop perf's
 *                         user-space records); applied in C.
 *                         unwind = true (+ symbolizer = a perf.symbolizer,
 *                         else one of its own): DWARF samples come with
 *                         their user stacks unwound in C, as
 *                         perf.unwound_records{call_sites = true} gives
 *                         them (rec.callchain, callchain_kernel, rec.unwind
 *                         = { kernel=, user=, truncated=, failed=, error= }),
 *                         without regs_user / stack_user; every maps record
 *                         feeds the symbolizer, filtered out or not (which
 *                         becomes offline and learns the file's build ids:
 *                         perfdata__prime_symbolizer)
 *   f:scan()              decodes every record in C: counts per type and
 *                         per event, lost totals (no Lua per record)
 *   f:profile{...}        a profile (stack table) aggregated in C by
 *                         perfdata__profile (profile/perfdata_profile.h), and
 *                         { dwarf=, unwound=, truncated=, failed= }: samples
 *                         of DWARF events (perf record --call-graph dwarf)
 *                         get their user stacks unwound (unwind.h), in time
 *                         order even when the file was opened unordered,
 *                         callers as call sites (return address - 1), as
 *                         perf keeps DWARF chains.
 *                         opts: symbolizer = a perf.symbolizer fed with the
 *                         maps records and the file's build ids, and made
 *                         offline (so a report needs no second pass),
 *                         in time order (a file opened unordered: held and
 *                         fed at the end of the pass, ties in file order),
 *                         comms = a table filled with tid -> comm (in the
 *                         same order: the last in time wins),
 *                         thread_comms = false: stacks keyed by no command
 *                         name (by default each sample is keyed by the name
 *                         its thread had then, perf's rules: threads.h, so
 *                         the pass reads the file time-ordered),
 *                         mark_truncated = true: an unwind that ran off the
 *                         captured stack ends (at its root) with the address
 *                         perf.core.UNWIND_TRUNCATED_ADDR
 *   f:trace_text(raw)     a tracepoint payload printed by its format
 *   f:script_text{...}    perf script's listing, formatted in C and written
 *                         to stdout (l_script.c)
 *   f:warnings()          { "offset N: ...", ... }: what was read around
 *                         (a malformed feature skipped, data cut short and
 *                         read up to the cut); grows while records are read
 *   f:close()
 *
 * opts: unordered = true (file order), max_queue = bytes for time ordering.
 *
 * perf.writer(path) -> a perf.data being written (perf.Writer), fed from a
 * session in C (no Lua per record):
 *
 *   w:add_session(s)      the session's events and their sample ids
 *   w:cmdline{...}        the cmdline feature
 *   w:synthesize([pid])   kernel map, then COMM/MMAP2 of pid's threads
 *                         (-1: every process) that exist already
 *   w:drain(s)            one pass over the rings (+ FINISHED_ROUND)
 *   w:record(s, {duration_ms=, watch_pid=})  drains until the target is
 *                         gone (or the watched pid), SIGINT or the duration;
 *                         returns the stats
 *   w:record_overwrite(s, {...})  the same for overwrite sessions: waits,
 *                         then writes the newest records of every ring
 *   w:stats()             records, bytes, samples, lost, lost_samples, throttled
 *   w:close()             features + header: true | nil, msg, errno
 * A new f:records(), f:scan() or f:profile() starts again from the first
 * record.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "binding.h"
#include "perfdata/perfdata.h"
#include "record/record.h"
#include "profile/stacktab.h"
#include "event/tracefmt.h"
#include "sample/session.h"
#include "symbol/symbolizer.h"
#include "perfdata/perfdata_record.h"
#include "profile/perfdata_profile.h"
#include "unwind/unwind.h"
#include <stdio.h>
#include <signal.h>

#define FILE_T "perf.File"
#define NTYPES 128

struct lfile {
	struct perfdata *pd;
	char *path;                 /* to reopen time-ordered (DWARF profiles) */
	int unordered;
	size_t max_queue;
	struct tracefmt *tf;        /* tracepoint formats, loaded on first use */
	int tf_tried;
	unsigned gen;               /* bumped by each new iteration */
};

struct filter {
	unsigned gen;
	int any_type;
	uint8_t types[NTYPES];
	int no_user;
	int evidx;                  /* -1: any */
	const char *event;          /* resolved to evidx lazily (evtab may grow) */
	int64_t pid, tid, cpu;      /* -1: any */
	int fields;                 /* decode tracepoint fields */
};

static struct lfile *checkfile(lua_State *L, int i)
{
	struct lfile *f = luaL_checkudata(L, i, FILE_T);
	if (!f->pd)
		luaL_error(L, "attempt to use a closed perf.File");
	return f;
}

static int file_close(lua_State *L)
{
	struct lfile *f = luaL_checkudata(L, 1, FILE_T);
	if (f->tf) {
		tracefmt__delete(f->tf);
		f->tf = NULL;
	}
	if (f->pd) {
		perfdata__close(f->pd);
		f->pd = NULL;
	}
	free(f->path);
	f->path = NULL;
	return 0;
}

static int l_open(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct perfdata_opts o;
	struct lfile *f;
	char err[512];
	int e;

	memset(&o, 0, sizeof o);
	if (!lua_isnoneornil(L, 2)) {
		luaL_checktype(L, 2, LUA_TTABLE);
		o.unordered = lperf_optfield_bool(L, 2, "unordered", 0);
		lua_getfield(L, 2, "max_queue");
		if (!lua_isnil(L, -1))
			o.max_queue = (size_t)lperf_checku64(L, -1);
		lua_pop(L, 1);
	}
	f = lua_newuserdatauv(L, sizeof *f, 0);
	memset(f, 0, sizeof *f);
	luaL_setmetatable(L, FILE_T);
	e = perfdata__open(path, &o, &f->pd, err, sizeof err);
	if (e < 0)
		return lperf_fail(L, err, -e);
	f->unordered = o.unordered;
	f->max_queue = o.max_queue;
	f->path = strdup(path);     /* NULL only costs the reopen */
	return 1;
}

/* ------------------------------------------------------------ header */

/* f:header_text() -> perf report --header-only's text (perf 6.1's lines),
 * "captured on" the file's modification time, as perf takes it (now for
 * a stream) */
static int file_header_text(lua_State *L)
{
	struct lfile *f = checkfile(L, 1);
	struct stat sb;
	int64_t when = (int64_t)time(NULL);
	char *text;
	size_t len;
	int e;

	if (f->path && strcmp(f->path, "-") && stat(f->path, &sb) == 0)
		when = (int64_t)sb.st_mtime;
	if ((e = perfdata__header_text(f->pd, when, &text, &len)) < 0)
		return lperf_fail(L, strerror(-e), -e);
	lua_pushlstring(L, text, len);
	free(text);
	return 1;
}

static void push_attr_fields(lua_State *L, const struct perf_event_attr *a)
{
	lperf_setint(L, "type", a->type);
	lperf_setu64(L, "config", a->config);
	if (a->freq)
		lperf_setu64(L, "sample_freq", a->sample_freq);
	else
		lperf_setu64(L, "sample_period", a->sample_period);
	lperf_setbool(L, "freq", a->freq);
	lperf_setu64(L, "sample_type", a->sample_type);
	lperf_setu64(L, "read_format", a->read_format);
	lperf_setbool(L, "sample_id_all", a->sample_id_all);
	lperf_setbool(L, "exclude_kernel", a->exclude_kernel);
	lperf_setbool(L, "exclude_user", a->exclude_user);
	lperf_setbool(L, "inherit", a->inherit);
	lperf_setbool(L, "context_switch", a->context_switch);
	lperf_setint(L, "sample_max_stack", a->sample_max_stack);
	lperf_setu64(L, "sample_regs_user", a->sample_regs_user);
	lperf_setint(L, "sample_stack_user", a->sample_stack_user);
}

static int file_header(lua_State *L)
{
	struct lfile *f = checkfile(L, 1);
	const struct perfdata_info *in = perfdata__info(f->pd);
	const struct evtab *t = perfdata__evtab(f->pd);
	int i, n = 1;

	lua_createtable(L, 0, 12);
	lperf_setstr(L, "mode", in->pipe ? "pipe" : "file");
	lperf_setu64(L, "file_size", in->file_size);
	lperf_setu64(L, "data_offset", in->data_offset);
	lperf_setu64(L, "data_size", in->data_size);
	if (!in->pipe)
		lperf_setu64(L, "attr_size", in->attr_size);
	lua_newtable(L);
	for (i = 0; i < evtab__count(t); i++) {
		char attr_name[128];
		lua_createtable(L, 0, 17);
		lperf_setstr(L, "name", evtab__name(t, i));
		perfdata__attr_name(evtab__attr(t, i), attr_name, sizeof attr_name);
		lperf_setstr(L, "attr_name", attr_name);
		push_attr_fields(L, evtab__attr(t, i));
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "events");
	lua_newtable(L);
	for (i = 1; i < PERFDATA_FEAT_BITS; i++) {
		if (!(in->features[i / 64] & (1ULL << (i % 64))))
			continue;
		if (perfdata__feature_name(i))
			lua_pushstring(L, perfdata__feature_name(i));
		else
			lua_pushfstring(L, "feature_%d", i);
		lua_rawseti(L, -2, n++);
	}
	lua_setfield(L, -2, "features");
	return 1;
}

static void push_strlist(lua_State *L, const char *k, const char **v, unsigned n)
{
	unsigned i;
	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		lua_pushstring(L, v[i] ? v[i] : "");
		lua_rawseti(L, -2, (int)i + 1);
	}
	lua_setfield(L, -2, k);
}

static int has(const struct perfdata_info *in, int feat)
{
	return ((in->features[feat / 64] >> (feat % 64)) & 1) != 0;
}

static void push_hex(lua_State *L, const uint8_t *p, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	char buf[64];
	size_t i;
	for (i = 0; i < n && i < 32; i++) {
		buf[2 * i] = hx[p[i] >> 4];
		buf[2 * i + 1] = hx[p[i] & 15];
	}
	lua_pushlstring(L, buf, 2 * i);
}

static void push_topology(lua_State *L, const struct perfdata_info *in)
{
	unsigned i;
	lua_newtable(L);
	push_strlist(L, "core_siblings", in->core_siblings, in->nr_core_siblings);
	push_strlist(L, "thread_siblings", in->thread_siblings, in->nr_thread_siblings);
	if (in->die_siblings)
		push_strlist(L, "die_siblings", in->die_siblings, in->nr_die_siblings);
	lua_createtable(L, (int)in->nr_cpu_topo, 0);
	for (i = 0; i < in->nr_cpu_topo; i++) {
		lua_createtable(L, 0, 3);
		lperf_setint(L, "core_id", in->core_id[i]);
		lperf_setint(L, "socket_id", in->socket_id[i]);
		if (in->die_id)
			lperf_setint(L, "die_id", in->die_id[i]);
		lua_rawseti(L, -2, (int)i + 1);
	}
	lua_setfield(L, -2, "cpus");
	lua_setfield(L, -2, "cpu_topology");
}

static int file_features(lua_State *L)
{
	struct lfile *f = checkfile(L, 1);
	const struct perfdata_info *in = perfdata__info(f->pd);
	const struct evtab *t = perfdata__evtab(f->pd);
	unsigned i;

	lua_newtable(L);
	if (in->hostname) lperf_setstr(L, "hostname", in->hostname);
	if (in->osrelease) lperf_setstr(L, "osrelease", in->osrelease);
	if (in->version) lperf_setstr(L, "version", in->version);
	if (in->arch) lperf_setstr(L, "arch", in->arch);
	if (in->cpudesc) lperf_setstr(L, "cpudesc", in->cpudesc);
	if (in->cpuid) lperf_setstr(L, "cpuid", in->cpuid);
	if (has(in, PERFDATA_FEAT_NRCPUS)) {
		lua_createtable(L, 0, 2);
		lperf_setint(L, "available", in->nr_cpus_avail);
		lperf_setint(L, "online", in->nr_cpus_online);
		lua_setfield(L, -2, "nrcpus");
	}
	if (has(in, PERFDATA_FEAT_TOTAL_MEM))
		lperf_setu64(L, "total_mem", in->total_mem);
	if (has(in, PERFDATA_FEAT_CMDLINE))
		push_strlist(L, "cmdline", in->cmdline, in->nr_cmdline);
	if (has(in, PERFDATA_FEAT_BUILD_ID) || in->nr_build_ids) {
		lua_createtable(L, (int)in->nr_build_ids, 0);
		for (i = 0; i < in->nr_build_ids; i++) {
			const struct perfdata_build_id *b = &in->build_ids[i];
			lua_createtable(L, 0, 4);
			lperf_setint(L, "pid", b->pid);
			lperf_setstr(L, "filename", b->filename);
			lperf_setstr(L, "cpumode", b->cpumode == PERF_RECORD_MISC_KERNEL ? "kernel" :
				     b->cpumode == PERF_RECORD_MISC_USER ? "user" : "other");
			push_hex(L, b->id, b->size);
			lua_setfield(L, -2, "build_id");
			lua_rawseti(L, -2, (int)i + 1);
		}
		lua_setfield(L, -2, "build_ids");
	}
	if (has(in, PERFDATA_FEAT_EVENT_DESC)) {
		int k;
		lua_newtable(L);
		for (k = 0; k < evtab__count(t); k++) {
			lua_createtable(L, 0, 16);
			lperf_setstr(L, "name", evtab__name(t, k));
			push_attr_fields(L, evtab__attr(t, k));
			lua_rawseti(L, -2, k + 1);
		}
		lua_setfield(L, -2, "event_desc");
	}
	if (has(in, PERFDATA_FEAT_CPU_TOPOLOGY))
		push_topology(L, in);
	if (has(in, PERFDATA_FEAT_NUMA_TOPOLOGY)) {
		lua_createtable(L, (int)in->nr_numa_nodes, 0);
		for (i = 0; i < in->nr_numa_nodes; i++) {
			lua_createtable(L, 0, 4);
			lperf_setint(L, "node", in->numa_nodes[i].node);
			lperf_setu64(L, "mem_total", in->numa_nodes[i].mem_total);
			lperf_setu64(L, "mem_free", in->numa_nodes[i].mem_free);
			lperf_setstr(L, "cpus", in->numa_nodes[i].cpus);
			lua_rawseti(L, -2, (int)i + 1);
		}
		lua_setfield(L, -2, "numa_topology");
	}
	if (has(in, PERFDATA_FEAT_GROUP_DESC)) {
		lua_createtable(L, (int)in->nr_groups, 0);
		for (i = 0; i < in->nr_groups; i++) {
			lua_createtable(L, 0, 3);
			lperf_setstr(L, "name", in->groups[i].name);
			/* 1-based, as f:header().events */
			lperf_setint(L, "leader", (lua_Integer)in->groups[i].leader + 1);
			lperf_setint(L, "members", in->groups[i].nr_members);
			lua_rawseti(L, -2, (int)i + 1);
		}
		lua_setfield(L, -2, "group_desc");
	}
	if (has(in, PERFDATA_FEAT_PMU_MAPPINGS)) {
		lua_createtable(L, (int)in->nr_pmus, 0);
		for (i = 0; i < in->nr_pmus; i++) {
			lua_createtable(L, 0, 2);
			lperf_setint(L, "type", in->pmus[i].type);
			lperf_setstr(L, "name", in->pmus[i].name);
			lua_rawseti(L, -2, (int)i + 1);
		}
		lua_setfield(L, -2, "pmu_mappings");
	}
	if (has(in, PERFDATA_FEAT_CPU_PMU_CAPS))
		push_strlist(L, "cpu_pmu_caps", in->cpu_pmu_caps.caps, in->cpu_pmu_caps.nr_caps);
	if (has(in, PERFDATA_FEAT_PMU_CAPS)) {
		lua_createtable(L, (int)in->nr_pmu_caps, 0);
		for (i = 0; i < in->nr_pmu_caps; i++) {
			lua_createtable(L, 0, 2);
			lperf_setstr(L, "pmu", in->pmu_caps[i].pmu);
			push_strlist(L, "caps", in->pmu_caps[i].caps, in->pmu_caps[i].nr_caps);
			lua_rawseti(L, -2, (int)i + 1);
		}
		lua_setfield(L, -2, "pmu_caps");
	}
	if (has(in, PERFDATA_FEAT_DIR_FORMAT))
		lperf_setu64(L, "dir_format", in->dir_format);
	if (has(in, PERFDATA_FEAT_CLOCKID))
		lperf_setu64(L, "clockid_res_ns", in->clockid_res_ns);
	if (has(in, PERFDATA_FEAT_COMPRESSED)) {
		lua_createtable(L, 0, 5);
		lperf_setint(L, "version", in->compressed.version);
		lperf_setstr(L, "type", in->compressed.type == 1 ? "zstd" : "none");
		lperf_setint(L, "level", in->compressed.level);
		lperf_setint(L, "ratio", in->compressed.ratio);
		lperf_setint(L, "mmap_len", in->compressed.mmap_len);
		lua_setfield(L, -2, "compressed");
	}
	if (has(in, PERFDATA_FEAT_CLOCK_DATA)) {
		lua_createtable(L, 0, 4);
		lperf_setint(L, "version", in->clock_data.version);
		lperf_setint(L, "clockid", in->clock_data.clockid);
		lperf_setu64(L, "wall_clock_ns", in->clock_data.wall_clock_ns);
		lperf_setu64(L, "clockid_time_ns", in->clock_data.clockid_time_ns);
		lua_setfield(L, -2, "clock_data");
	}
	if (has(in, PERFDATA_FEAT_SAMPLE_TIME)) {
		lua_createtable(L, 0, 2);
		lperf_setu64(L, "first", in->sample_time.first);
		lperf_setu64(L, "last", in->sample_time.last);
		lua_setfield(L, -2, "sample_time");
	}
	if (in->tracing_data)
		lperf_setu64(L, "tracing_data", in->tracing_data_size);
	lua_createtable(L, (int)in->nr_skipped, 0);
	for (i = 0; i < in->nr_skipped; i++) {
		const char *name = perfdata__feature_name(in->skipped[i].id);
		lua_createtable(L, 0, 4);
		lperf_setint(L, "id", in->skipped[i].id);
		if (name)
			lperf_setstr(L, "name", name);
		lperf_setu64(L, "offset", in->skipped[i].offset);
		lperf_setu64(L, "size", in->skipped[i].size);
		lua_rawseti(L, -2, (int)i + 1);
	}
	lua_setfield(L, -2, "skipped");
	return 1;
}

static int file_warnings(lua_State *L)
{
	struct lfile *f = checkfile(L, 1);
	const struct perfdata_info *in = perfdata__info(f->pd);
	unsigned i;

	lua_createtable(L, (int)in->nr_warnings, 0);
	for (i = 0; i < in->nr_warnings; i++) {
		lua_pushstring(L, in->warnings[i]);
		lua_rawseti(L, -2, (int)i + 1);
	}
	return 1;
}

/* ------------------------------------------------------------ unwinding */

#define UNWINDER_T "perf.File.unwinder"
#define MAX_CHAIN 1024

/* What records{unwind = true} holds while it iterates: a userdata owns it. */
struct lunwinder {
	struct unwinder *u;
	uint64_t *chain;            /* MAX_CHAIN entries */
};

static int lunwinder_close(lua_State *L)
{
	struct lunwinder *p = luaL_checkudata(L, 1, UNWINDER_T);
	unwinder__delete(p->u);
	p->u = NULL;
	free(p->chain);
	p->chain = NULL;
	return 0;
}

/* ------------------------------------------------------------ records */

static int type_by_name(const char *s)
{
	int i;
	for (i = 0; i < NTYPES; i++)
		if (!strcmp(record__type_name((uint32_t)i), s) && strcmp(s, "UNKNOWN"))
			return i;
	return -1;
}

static void add_type(lua_State *L, struct filter *fl, int idx)
{
	const char *s = luaL_checkstring(L, idx);
	int t = type_by_name(s);
	if (t < 0)
		luaL_error(L, "records filter: unknown record type '%s'", s);
	fl->types[t] = 1;
	fl->any_type = 0;
}

static int64_t opt_int(lua_State *L, int t, const char *k)
{
	int64_t v = -1;
	lua_getfield(L, t, k);
	if (!lua_isnil(L, -1))
		v = (int64_t)luaL_checknumber(L, -1);
	lua_pop(L, 1);
	return v;
}

/* Reads the filter table at index t into fl (raises on a bad argument). */
static void read_filter(lua_State *L, int t, struct filter *fl)
{
	memset(fl, 0, sizeof *fl);
	fl->any_type = 1;
	fl->evidx = -1;
	fl->pid = fl->tid = fl->cpu = -1;
	fl->fields = 1;
	if (lua_isnoneornil(L, t))
		return;
	luaL_checktype(L, t, LUA_TTABLE);
	lua_getfield(L, t, "type");
	if (lua_type(L, -1) == LUA_TSTRING) {
		add_type(L, fl, lua_gettop(L));
	} else if (lua_type(L, -1) == LUA_TTABLE) {
		int i, n = (int)lua_rawlen(L, -1);
		for (i = 1; i <= n; i++) {
			lua_rawgeti(L, -1, i);
			add_type(L, fl, lua_gettop(L));
			lua_pop(L, 1);
		}
	} else if (!lua_isnil(L, -1)) {
		luaL_error(L, "records filter: type must be a string or a list of strings");
	}
	lua_pop(L, 1);
	fl->no_user = !lperf_optfield_bool(L, t, "user", 1);
	fl->fields = lperf_optfield_bool(L, t, "fields", 1);
	fl->pid = opt_int(L, t, "pid");
	fl->tid = opt_int(L, t, "tid");
	fl->cpu = opt_int(L, t, "cpu");
	lua_getfield(L, t, "event");
	if (!lua_isnil(L, -1))
		fl->event = luaL_checkstring(L, -1);
	lua_pop(L, 1);
}

static int pass(const struct filter *fl, const struct record *r, const struct evtab *t)
{
	if (!fl->any_type && (r->type >= NTYPES || !fl->types[r->type]))
		return 0;
	if (fl->no_user && r->type >= REC_HEADER_ATTR)
		return 0;
	if (fl->event && (r->evidx < 0 || strcmp(evtab__name(t, r->evidx), fl->event)))
		return 0;
	if (fl->pid >= 0 && (!(r->s.type & PERF_SAMPLE_TID) || r->s.pid != (uint32_t)fl->pid))
		return 0;
	if (fl->tid >= 0 && (!(r->s.type & PERF_SAMPLE_TID) || r->s.tid != (uint32_t)fl->tid))
		return 0;
	if (fl->cpu >= 0 && (!(r->s.type & PERF_SAMPLE_CPU) || r->s.cpu != (uint32_t)fl->cpu))
		return 0;
	return 1;
}

/* The tracepoint formats of the file, parsed once, or NULL. */
static struct tracefmt *file_tracefmt(struct lfile *f)
{
	const struct perfdata_info *in = perfdata__info(f->pd);
	char err[256];
	if (!f->tf_tried) {
		f->tf_tried = 1;
		/* Unparseable formats leave tracepoint samples with raw bytes only. */
		if (in->tracing_data)
			tracefmt__parse(in->tracing_data, in->tracing_data_size, &f->tf, err, sizeof err);
	}
	return f->tf;
}

static void set_field(void *arg, const struct tracefmt_field *fld)
{
	lua_State *L = arg;
	if (fld->kind == TRACEFMT_INT) {
		if (fld->is_signed)
			lperf_pushi64(L, (int64_t)fld->u);
		else
			lperf_pushu64(L, fld->u);
	} else {
		lua_pushlstring(L, fld->str, fld->len);
	}
	lua_setfield(L, -2, fld->name);
}

/* Pushes a table of the tracepoint's fields; 0 (nothing pushed) when unknown. */
static int push_tracefields(lua_State *L, struct tracefmt *tf, const void *raw, size_t size)
{
	lua_newtable(L);
	if (tracefmt__decode(tf, raw, size, NULL, NULL, set_field, L) < 0) {
		lua_pop(L, 1);
		return 0;
	}
	return 1;
}

/* A bad file is no bug of the caller's: the message goes without the
 * Lua position luaL_error would put first. */
static void decode_error(lua_State *L, const struct perfdata_rec *pr, const char *msg)
{
	char buf[512];

	snprintf(buf, sizeof buf, "perf.data: %soffset %llu: %s",
		 pr->compressed ? "in the COMPRESSED record at " : "",
		 (unsigned long long)pr->offset, msg);
	lua_pushstring(L, buf);
	lua_error(L);
}

/* rec.unwind of a sample unwound by records{unwind = true}: chain[0..n-1]
 * in the kernel's format, counted apart from its context markers */
static void push_unwind_info(lua_State *L, const struct unwinder *u, const uint64_t *chain,
			     int n, unsigned status)
{
	int i, user = -1, nk = 0;

	for (i = 0; i < n; i++) {
		if (chain[i] == (uint64_t)PERF_CONTEXT_USER)
			user = i;
		else if (chain[i] < (uint64_t)PERF_CONTEXT_MAX && user < 0)
			nk++;
	}
	lua_createtable(L, 0, 5);
	lperf_setint(L, "kernel", nk);
	lperf_setint(L, "user", user < 0 ? 0 : n - user - 1);
	lperf_setbool(L, "truncated", (status & UNWIND_TRUNCATED) != 0);
	lperf_setbool(L, "failed", (status & UNWIND_FAILED) != 0);
	if ((status & UNWIND_FAILED) && unwinder__last_error(u)[0])
		lperf_setstr(L, "error", unwinder__last_error(u));
	lua_setfield(L, -2, "unwind");
}

/* Pushes a DWARF sample with its unwound chain in place of the kernel's and
 * without its register and stack bytes; 0 (nothing pushed) when it has no
 * unwound chain. */
static int push_unwound(lua_State *L, struct lunwinder *p, struct symbolizer *sym,
			const struct record *r, const struct evtab *t)
{
	struct record copy;
	unsigned status;
	int n;

	n = unwind__chain(p->u, sym, r, t, p->chain, MAX_CHAIN - 1, &status);
	if (n <= 0)
		return 0;
	copy = *r;
	copy.s.type |= PERF_SAMPLE_CALLCHAIN;
	copy.s.type &= ~(uint64_t)(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
	copy.s.callchain = p->chain;
	copy.s.nr_callchain = (uint64_t)n;
	lperf_push_record(L, &copy, t);
	push_unwind_info(L, p->u, p->chain, n, status);
	return 1;
}

/* upvalues: the file, the filter, the event name (kept alive) or nil, and
 * with unwind = true the symbolizer and the unwinder (else nil, nil) */
static int records_iter(lua_State *L)
{
	struct lfile *f = checkfile(L, lua_upvalueindex(1));
	struct filter *fl = lua_touserdata(L, lua_upvalueindex(2));
	struct lunwinder *p = luaL_testudata(L, lua_upvalueindex(5), UNWINDER_T);
	struct symbolizer *sym = NULL;
	struct perfdata_rec pr;
	struct record r;
	char err[256];
	int n;

	if (fl->gen != f->gen)
		return luaL_error(L, "perf.File: this records() iteration was superseded by a newer one");
	if (p && !(sym = lperf_tosymbolizer(L, lua_upvalueindex(4))))
		return luaL_error(L, "attempt to use a closed symbolizer");
	while ((n = perfdata__next(f->pd, &pr)) > 0) {
		const struct evtab *t = perfdata__evtab(f->pd);
		uint32_t type = pr.hdr->type;
		/* A type the filter drops is not even decoded (the unwinder
		 * alone needs every record). */
		if (!p && !fl->any_type && (type >= NTYPES || !fl->types[type]))
			continue;
		if (record__decode(t, pr.hdr, pr.hdr->size, &r, err, sizeof err) < 0)
			decode_error(L, &pr, err);
		/* the unwinder needs every map, whatever the filter keeps */
		if (p && r.type != PERF_RECORD_SAMPLE && unwind__feed(p->u, sym, &r) < 0)
			return luaL_error(L, "perf.File: out of memory");
		if (!pass(fl, &r, t))
			continue;
		if (!p || r.type != PERF_RECORD_SAMPLE || !push_unwound(L, p, sym, &r, t))
			lperf_push_record(L, &r, t);
		lperf_setu64(L, "offset", pr.offset);
		if (fl->fields && r.type == PERF_RECORD_SAMPLE && r.s.raw && r.evidx >= 0 &&
		    evtab__attr(t, r.evidx)->type == PERF_TYPE_TRACEPOINT) {
			struct tracefmt *tf = file_tracefmt(f);
			if (tf && push_tracefields(L, tf, r.s.raw, r.s.raw_size))
				lua_setfield(L, -2, "fields");
		}
		return 1;
	}
	if (n < 0) {
		lua_pushstring(L, perfdata__errmsg(f->pd));
		return lua_error(L);
	}
	return 0;
}

/* Pushes the symbolizer (opts.symbolizer, or a new one), readied for f's
 * addresses, and an unwinder; returns NULL, or why it could not (out of
 * memory). */
static const char *push_unwinding(lua_State *L, struct lfile *f, int opts)
{
	struct lunwinder *p;

	lua_getfield(L, opts, "symbolizer");
	if (!lua_isnil(L, -1)) {
		if (!lperf_tosymbolizer(L, -1))
			luaL_error(L, "f:records: symbolizer must be an open perf.symbolizer");
	} else {
		lua_pop(L, 1);
		if (!lperf_newsymbolizer(L))
			return "cannot create a symbolizer: out of memory";
	}
	if (perfdata__prime_symbolizer(f->pd, lperf_tosymbolizer(L, -1)) < 0)
		return "cannot ready the symbolizer: out of memory";
	p = lua_newuserdatauv(L, sizeof *p, 0);
	memset(p, 0, sizeof *p);
	luaL_setmetatable(L, UNWINDER_T);
	p->chain = malloc(MAX_CHAIN * sizeof *p->chain);
	if (!p->chain || unwinder__new(&p->u) < 0)
		return "cannot create an unwinder: out of memory";
	return NULL;
}

static int file_records(lua_State *L)
{
	struct lfile *f = checkfile(L, 1);
	struct filter *fl;

	lua_settop(L, 2);
	lua_pushvalue(L, 1);
	fl = lua_newuserdatauv(L, sizeof *fl, 0);
	read_filter(L, 2, fl);
	if (fl->event) {
		/* keep the string alive with the iterator */
		lua_getfield(L, 2, "event");
		fl->event = lua_tostring(L, -1);
	} else {
		lua_pushnil(L);
	}
	if (!lua_isnil(L, 2) && lperf_optfield_bool(L, 2, "unwind", 0)) {
		if (f->unordered)
			return luaL_error(L, "f:records{unwind = true}: the file was opened unordered; "
					  "unwinding needs the maps before the samples (open it ordered)");
		const char *msg = push_unwinding(L, f, 2);
		if (msg)
			return lperf_fail(L, msg, ENOMEM);
	} else {
		lua_pushnil(L);
		lua_pushnil(L);
	}
	lua_pushcclosure(L, records_iter, 5);
	perfdata__rewind(f->pd);
	fl->gen = ++f->gen;
	return 1;
}

struct perfdata *lperf_file_pass(lua_State *L, int idx)
{
	struct lfile *f = checkfile(L, idx);

	perfdata__rewind(f->pd);
	f->gen++;
	return f->pd;
}

struct tracefmt *lperf_file_tracefmt(lua_State *L, int idx)
{
	return file_tracefmt(checkfile(L, idx));
}

/* ------------------------------------------------------------ scan */

static int file_scan(lua_State *L)
{
	struct lfile *f = checkfile(L, 1);
	uint64_t by_type[NTYPES] = { 0 }, other = 0, lost = 0, lost_samples = 0;
	uint64_t *by_event = NULL, records = 0, bad = 0;
	struct perfdata_rec pr;
	struct record r;
	char err[256], first_err[300] = "";
	int n, k, nev = 0;

	perfdata__rewind(f->pd);
	f->gen++;
	while ((n = perfdata__next(f->pd, &pr)) > 0) {
		const struct evtab *t = perfdata__evtab(f->pd);
		records++;
		if (record__decode(t, pr.hdr, pr.hdr->size, &r, err, sizeof err) < 0) {
			if (!bad++)
				snprintf(first_err, sizeof first_err, "offset %llu: %s",
					 (unsigned long long)pr.offset, err);
			continue;
		}
		if (r.type < NTYPES)
			by_type[r.type]++;
		else
			other++;
		if (r.type == PERF_RECORD_LOST)
			lost += r.u.lost.lost;
		else if (r.type == PERF_RECORD_LOST_SAMPLES)
			lost_samples += r.u.lost_samples.lost;
		else if (r.type == PERF_RECORD_SAMPLE && r.evidx >= 0) {
			if (r.evidx >= nev) {
				int m = evtab__count(t);
				uint64_t *b = realloc(by_event, (size_t)m * sizeof *b);
				if (!b)
					break;
				memset(b + nev, 0, (size_t)(m - nev) * sizeof *b);
				by_event = b;
				nev = m;
			}
			by_event[r.evidx]++;
		}
	}
	if (n < 0) {
		free(by_event);
		return lperf_fail(L, perfdata__errmsg(f->pd), EINVAL);
	}
	lua_createtable(L, 0, 11);
	lperf_setu64(L, "records", records);
	lperf_setu64(L, "samples", by_type[PERF_RECORD_SAMPLE]);
	lperf_setu64(L, "lost", lost);
	lperf_setu64(L, "lost_samples", lost_samples);
	lperf_setu64(L, "bytes", perfdata__stats(f->pd)->bytes);
	lperf_setu64(L, "decompressed_bytes", perfdata__stats(f->pd)->decompressed_bytes);
	lperf_setu64(L, "compressed_records", perfdata__stats(f->pd)->compressed_records);
	lperf_setu64(L, "unordered", perfdata__stats(f->pd)->unordered);
	lperf_setu64(L, "forced_flushes", perfdata__stats(f->pd)->forced_flushes);
	lperf_setu64(L, "errors", bad);
	if (bad)
		lperf_setstr(L, "first_error", first_err);
	lua_newtable(L);
	for (k = 0; k < NTYPES; k++)
		if (by_type[k])
			lperf_setu64(L, record__type_name((uint32_t)k), by_type[k]);
	if (other)
		lperf_setu64(L, "UNKNOWN", other);
	lua_setfield(L, -2, "by_type");
	lua_newtable(L);
	for (k = 0; k < nev; k++)
		if (by_event[k])
			lperf_setu64(L, evtab__name(perfdata__evtab(f->pd), k), by_event[k]);
	lua_setfield(L, -2, "by_event");
	free(by_event);
	return 1;
}

/* ------------------------------------------------------------ profile */

/* opts.comms of f:profile: the table, and the function that fills it under
 * pcall (no Lua error may unwind through the core) */
struct comm_sink {
	lua_State *L;
	int fn, tbl;
	uint32_t tid;
	const char *comm;
};

static int comm_set(lua_State *L)
{
	const struct comm_sink *c = lua_touserdata(L, 2);
	lua_pushinteger(L, (lua_Integer)c->tid);
	lua_pushstring(L, c->comm);
	lua_rawset(L, 1);
	return 0;
}

/* opts.progress(done, total) of f:profile, at index fn of the stack; an
 * error in it ends the pass. */
struct progress_sink {
	lua_State *L;
	int fn;
};

static int progress_to_lua(void *arg, uint64_t done, uint64_t total)
{
	struct progress_sink *c = arg;
	lua_State *L = c->L;

	lua_pushvalue(L, c->fn);
	lperf_pushu64(L, done);
	lperf_pushu64(L, total);
	if (lua_pcall(L, 2, 0, 0) != 0) {
		lua_pop(L, 1);
		return -ECANCELED;
	}
	return 0;
}

static int comm_to_table(void *arg, uint32_t pid, uint32_t tid, const char *comm)
{
	struct comm_sink *c = arg;
	lua_State *L = c->L;

	(void)pid;
	c->tid = tid;
	c->comm = comm;
	lua_pushvalue(L, c->fn);
	lua_pushvalue(L, c->tbl);
	lua_pushlightuserdata(L, c);
	if (lua_pcall(L, 2, 0, 0) != 0) {
		lua_pop(L, 1);
		return -ENOMEM;
	}
	return 0;
}

/* f:profile{symbolizer=, comms=, mark_truncated=, thread_comms=, max_stack=,
 *            progress = function(done, total)} -> profile, info
 * (max_stack = N: each stack's N addresses nearest the leaf, perf's
 * --max-stack; frames = false: none, the samples of a thread summed;
 * objects = true with max_stack = 1: each leaf is the object it was in
 * when sampled, a frame with a dso and no symbol; symbols = true with
 * max_stack = 1: each leaf is the symbol it was in, one place of it;
 * threads = false with either: such stacks keyed by command name, not by
 * thread: pid and tid -1; keep_comms = { names }: a hint for a report
 * filtered by those command names, threads__keep; time = { start=, stop= }
 * and cpus = { [c] = true }: perf's --time and -C, lperf_window)
 * (perfdata__profile: the core builds it).  Without a symbolizer, one made
 * here serves the file (p:symbolizer()); symbolizer = false: none. */
static int file_profile(lua_State *L)
{
	struct lfile *f = checkfile(L, 1);
	struct perfdata_profile_opts o;
	struct perfdata_profile_stats stats;
	struct comm_sink sink;
	struct progress_sink prog;
	struct record_window window;
	struct stacktab *st;
	char err[512];
	int e;

	memset(&o, 0, sizeof o);
	lua_settop(L, 2);
	if (!lua_isnil(L, 2))
		luaL_checktype(L, 2, LUA_TTABLE);
	/* 3: the symbolizer: opts.symbolizer, none for false, else a new one,
	 * so that the profile's reports name what the file's objects hold */
	if (lua_isnil(L, 2))
		lua_pushnil(L);
	else
		lua_getfield(L, 2, "symbolizer");
	if (lua_isnil(L, 3)) {
		lua_pop(L, 1);
		if (!lperf_newsymbolizer(L))
			return lperf_fail(L, "cannot create a symbolizer: out of memory", ENOMEM);
	}
	if (lua_toboolean(L, 3) && !(o.sym = lperf_tosymbolizer(L, 3)))
		return luaL_error(L, "f:profile: symbolizer must be an open perf.symbolizer");
	if (!lua_isnil(L, 2)) {
		o.mark_truncated = lperf_optfield_bool(L, 2, "mark_truncated", 0);
		o.leaf_objects = lperf_optfield_bool(L, 2, "objects", 0);
		o.leaf_symbols = lperf_optfield_bool(L, 2, "symbols", 0);
		o.merge_threads = !lperf_optfield_bool(L, 2, "threads", 1);
		o.no_thread_comms = !lperf_optfield_bool(L, 2, "thread_comms", 1);
		lua_getfield(L, 2, "comms");
		if (!lua_isnil(L, -1)) {
			luaL_checktype(L, -1, LUA_TTABLE);
			sink.L = L;
			sink.tbl = lua_gettop(L);
			lua_pushcfunction(L, comm_set);
			sink.fn = lua_gettop(L);
			o.comm = comm_to_table;
			o.comm_arg = &sink;
		}
		lua_getfield(L, 2, "keep_comms");
		if (!lua_isnil(L, -1)) {
			size_t i, n;
			const char **names;
			luaL_checktype(L, -1, LUA_TTABLE);
			n = lua_rawlen(L, -1);
			/* a userdata, so the array goes with the call's stack; the
			 * strings stay in the table, which stays there too */
			names = lua_newuserdata(L, (n ? n : 1) * sizeof *names);
			for (i = 0; i < n; i++) {
				lua_rawgeti(L, -2, (lua_Integer)i + 1);
				if (lua_type(L, -1) != LUA_TSTRING)
					return luaL_error(L, "f:profile: keep_comms must be a list of names");
				names[i] = lua_tostring(L, -1);
				lua_pop(L, 1);
			}
			o.keep_comms = names;
			o.nkeep_comms = n;
		}
		lperf_window(L, 2, &window);
		if (window.has_start || window.has_stop || window.cpus)
			o.window = &window;
		lua_getfield(L, 2, "progress");
		if (!lua_isnil(L, -1)) {
			luaL_checktype(L, -1, LUA_TFUNCTION);
			prog.L = L;
			prog.fn = lua_gettop(L);
			o.progress = progress_to_lua;
			o.progress_arg = &prog;
		}
	}
	st = *lperf_newprofile(L) = stacktab__new();
	if (!st)
		return lperf_fail(L, "out of memory", ENOMEM);
	if (!lua_isnil(L, 2)) {
		int depth = lperf_optfield_int(L, 2, "max_stack", 0);
		if (depth < 0)
			return luaL_error(L, "f:profile: max_stack must be >= 0");
		stacktab__set_max_depth(st, (unsigned)depth);
		stacktab__set_frames(st, lperf_optfield_bool(L, 2, "frames", 1));
		lua_getfield(L, 2, "split");
		if (!lua_isnil(L, -1)) {
			const char *how = luaL_checkstring(L, -1);
			double b = 0;
			if (!strcmp(how, "time")) {
				lua_getfield(L, 2, "bucket");
				b = luaL_checknumber(L, -1) * 1e9;
				lua_pop(L, 1);
				if (!(b >= 1 && b < 1e18))
					return luaL_error(L, "f:profile: bucket must be a positive "
							  "number of seconds");
			} else if (strcmp(how, "cpu")) {
				return luaL_error(L, "f:profile: split must be 'cpu' or 'time', "
						  "got '%s'", how);
			}
			stacktab__set_split(st, b > 0 ? STACKTAB_SPLIT_TIME : STACKTAB_SPLIT_CPU,
					    (uint64_t)b);
		}
		lua_pop(L, 1);
	}
	f->gen++;
	e = perfdata__profile(f->pd, &o, st, &stats, err, sizeof err);
	if (e < 0)
		return lperf_fail(L, err, -e);
	if (o.sym != NULL)
		lperf_profile_set_symbolizer(L, -1, 3);
	lua_createtable(L, 0, 5);
	lperf_setbool(L, "dwarf", stats.unwind.samples > 0);
	lperf_setu64(L, "unwound", stats.unwind.samples);
	lperf_setu64(L, "truncated", stats.unwind.truncated);
	lperf_setu64(L, "failed", stats.unwind.failed);
	lperf_setu64(L, "frames", stats.unwind.frames);
	if (stacktab__split(st, NULL) == STACKTAB_SPLIT_TIME)
		lperf_setu64(L, "origin", stacktab__split_origin(st));
	return 2;
}

/* f:trace_text(raw[, cpu]) -> the tracepoint's printed form (perf script's) | nil, msg */
static int file_trace_text(lua_State *L)
{
	struct lfile *f = checkfile(L, 1);
	size_t n;
	const char *raw = luaL_checklstring(L, 2, &n);
	int cpu = (int)luaL_optinteger(L, 3, 0);
	struct tracefmt *tf = file_tracefmt(f);
	char buf[4096];
	int e;

	if (!tf)
		return lperf_fail(L, "no tracepoint formats in this file", ENOENT);
	e = tracefmt__format(tf, raw, n, cpu, buf, sizeof buf);
	if (e < 0)
		return lperf_fail(L, e == -ENOENT ? "tracepoint id not in the file's formats" :
				  "malformed tracepoint payload", -e);
	lua_pushlstring(L, buf, (size_t)e);
	return 1;
}

static int file_tostring(lua_State *L)
{
	struct lfile *f = luaL_checkudata(L, 1, FILE_T);
	lua_pushfstring(L, "perf.File (%s)", f->pd ? "open" : "closed");
	return 1;
}

/* ------------------------------------------------------------ writer */

#define WRITER_T "perf.Writer"

struct lwriter {
	struct perfdata_writer *w;
	int has_events;
};

static struct lwriter *checkwriter(lua_State *L, int i)
{
	struct lwriter *lw = luaL_checkudata(L, i, WRITER_T);
	if (!lw->w)
		luaL_error(L, "attempt to use a closed perf.Writer");
	return lw;
}

static int l_writer(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct lwriter *lw = lua_newuserdatauv(L, sizeof *lw, 0);
	int e;

	memset(lw, 0, sizeof *lw);
	luaL_setmetatable(L, WRITER_T);
	e = perfdata_writer__open(path, &lw->w);
	if (e < 0) {
		lua_pushfstring(L, "%s: %s", path, strerror(-e));
		return lperf_fail(L, lua_tostring(L, -1), -e);
	}
	return 1;
}

static int writer_add_session(lua_State *L)
{
	struct lwriter *lw = checkwriter(L, 1);
	struct session *s = lperf_checksession(L, 2);
	int e = perfdata_writer__add_session(lw->w, s);

	if (e < 0)
		return lperf_fail(L, e == -EBUSY ? "events must be added before the first record"
				  : strerror(-e), -e);
	lw->has_events = 1;
	lua_pushboolean(L, 1);
	return 1;
}

static int writer_cmdline(lua_State *L)
{
	struct lwriter *lw = checkwriter(L, 1);
	const char **argv;
	int i, n, e;

	luaL_checktype(L, 2, LUA_TTABLE);
	n = (int)lua_rawlen(L, 2);
	argv = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *argv, 0);
	for (i = 0; i < n; i++) {
		lua_rawgeti(L, 2, i + 1);
		argv[i] = luaL_checkstring(L, -1);
		lua_pop(L, 1);     /* the table keeps the string alive */
	}
	e = perfdata_writer__set_cmdline(lw->w, n, argv);
	if (e < 0)
		return lperf_fail(L, strerror(-e), -e);
	lua_pushboolean(L, 1);
	return 1;
}

static int writer_synthesize(lua_State *L)
{
	struct lwriter *lw = checkwriter(L, 1);
	int e;

	if (!lw->has_events)
		return luaL_error(L, "perf.Writer: add_session() first");
	if (lua_isnoneornil(L, 2))
		e = perfdata_writer__synthesize_kernel(lw->w);
	else
		e = perfdata_writer__synthesize(lw->w, (pid_t)luaL_checkinteger(L, 2));
	if (e < 0)
		return lperf_fail(L, strerror(-e), -e);
	lua_pushboolean(L, 1);
	return 1;
}

static void push_wstats(lua_State *L, const struct perfdata_writer_stats *st)
{
	lua_createtable(L, 0, 8);
	lperf_setu64(L, "records", st->records);
	lperf_setu64(L, "bytes", st->bytes);
	lperf_setu64(L, "samples", st->samples);
	lperf_setu64(L, "lost", st->lost);
	lperf_setu64(L, "lost_samples", st->lost_samples);
	lperf_setu64(L, "throttled", st->throttled);
}

static int writer_drain(lua_State *L)
{
	struct lwriter *lw = checkwriter(L, 1);
	struct session *s = lperf_checksession(L, 2);
	uint64_t n = 0;
	int e;

	if (!lw->has_events)
		return luaL_error(L, "perf.Writer: add_session() first");
	e = session__write(s, lw->w, &n);
	if (e < 0)
		return lperf_fail(L, strerror(-e), -e);
	lperf_pushu64(L, n);
	return 1;
}

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* w:record(s, opts) and w:record_overwrite(s, opts): session__record with
 * SIGINT and SIGTERM ending the recording, not the process, so the file
 * gets finished; the handlers before are back on return. */
static int record_loop(lua_State *L, int overwrite)
{
	struct lwriter *lw = checkwriter(L, 1);
	struct session *s = lperf_checksession(L, 2);
	struct session_record_opts o;
	struct session_record_summary sum;
	struct sigaction sa, old_int, old_term;
	int e;

	if (!lw->has_events)
		return luaL_error(L, "perf.Writer: add_session() first");
	memset(&o, 0, sizeof o);
	if (!lua_isnoneornil(L, 3)) {
		luaL_checktype(L, 3, LUA_TTABLE);
		o.duration_ms = (uint64_t)lperf_optfield_int(L, 3, "duration_ms", 0);
		o.watch_pid = lperf_optfield_int(L, 3, "watch_pid", 0);
	}
	o.overwrite = overwrite;
	o.stop = &interrupted;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	interrupted = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	e = session__record(s, lw->w, &o, &sum);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (e < 0)
		return lperf_fail(L, strerror(-e), -e);
	push_wstats(L, perfdata_writer__stats(lw->w));
	lperf_setbool(L, "interrupted", interrupted);
	lperf_setbool(L, "done", sum.done);
	return 1;
}

static int writer_record(lua_State *L)
{
	return record_loop(L, 0);
}

static int writer_record_overwrite(lua_State *L)
{
	return record_loop(L, 1);
}

static int writer_stats(lua_State *L)
{
	struct lwriter *lw = checkwriter(L, 1);
	push_wstats(L, perfdata_writer__stats(lw->w));
	return 1;
}

/* close, __gc and __close: finishes the file (a dropped writer still leaves a valid one). */
static int writer_close(lua_State *L)
{
	struct lwriter *lw = luaL_checkudata(L, 1, WRITER_T);
	int e = 0;
	if (lw->w)
		e = perfdata_writer__close(lw->w);
	lw->w = NULL;
	if (e < 0)
		return lperf_fail(L, strerror(-e), -e);
	lua_pushboolean(L, 1);
	return 1;
}

static void open_writer(lua_State *L)
{
	static const luaL_Reg methods[] = {
		{ "add_session", writer_add_session },
		{ "cmdline", writer_cmdline },
		{ "synthesize", writer_synthesize },
		{ "drain", writer_drain },
		{ "record", writer_record },
		{ "record_overwrite", writer_record_overwrite },
		{ "stats", writer_stats },
		{ "close", writer_close },
		{ NULL, NULL },
	};
	lperf_newclass(L, WRITER_T, methods, writer_close);
	lua_pushcfunction(L, l_writer);
	lua_setfield(L, -2, "writer");
}

void lperf_open_file(lua_State *L)
{
	static const luaL_Reg methods[] = {
		{ "header", file_header },
		{ "header_text", file_header_text },
		{ "features", file_features },
		{ "records", file_records },
		{ "scan", file_scan },
		{ "profile", file_profile },
		{ "trace_text", file_trace_text },
		{ "script_text", lperf_file_script_text },
		{ "warnings", file_warnings },
		{ "close", file_close },
		{ NULL, NULL },
	};
	static const luaL_Reg no_methods[] = { { NULL, NULL } };
	lperf_newclass(L, FILE_T, methods, file_close);
	lperf_newclass(L, UNWINDER_T, no_methods, lunwinder_close);
	lperf_pushu64(L, PERFDATA_PROFILE_TRUNCATED_ADDR);
	lua_setfield(L, -2, "UNWIND_TRUNCATED_ADDR");
	luaL_getmetatable(L, FILE_T);
	lua_pushcfunction(L, file_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);
	lua_pushcfunction(L, l_open);
	lua_setfield(L, -2, "open");
	/* perf.core.File: the methods table, which lua/perf/query.lua extends */
	lperf_exportclass(L, -1, FILE_T, "File");
	open_writer(L);
}
