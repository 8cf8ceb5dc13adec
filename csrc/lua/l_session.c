/*
 * perf.session{...}: a sampling session (session.c) as a userdata.
 *
 *   s = perf.session{ events={"cpu-clock"}, freq=999 | period=N,
 *                     sample={"addr", "raw", ...}, callchain=true|"fp"|"dwarf"|"lbr"
 *                     | {"dwarf", 16384} | "dwarf,16384", max_stack=,
 *                     pid= | tids={...} | cmd={argv} | cgroup=, cpu= | cpus={...},
 *                     inherit=, pages=, wakeup_events= | watermark=,
 *                     context_switch=, overwrite=, read_group=, user_only=,
 *                     offcpu=true, offcpu_thresh=MICROSECONDS }
 *   s:start()  s:stop()  s:poll(ms) -> ready, done   s:wait() -> exit status
 *   for rec in s:records{type=, pid=, tid=, cpu=, event=} do ... end
 *   s:profile() -> the session's Profile (drains into it)
 *   s:snapshot() -> { rec, ... } newest records (overwrite sessions)
 *   s:stats() s:events() s:pid() s:close()
 *
 * The records iterator drains what is in the rings now and ends; records
 * the filter rejects are consumed in C and never reach Lua.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "binding.h"
#include "record/record.h"
#include "sample/session.h"
#include "profile/stacktab.h"
#include "symbol/symbolizer.h"
#include "count/syscount.h"
#include "unwind/unwind.h"

#define SESSION "perf.session"
#define FILTER "perf.RecordFilter"

struct lsession {
	struct session *s;
	int profile_ref;          /* registry ref of its Profile, or LUA_NOREF */
	uint64_t *rec;            /* the record handed to Lua, copied out of the ring */
	pid_t pid;                /* the pid target (0: this process; -1: none) */
	/* The perf.symbolizer fed by the records that enter the profile, so
	 * the profile can be symbolized after its processes are gone. */
	int sym_ref;
	/* DWARF sessions: samples are unwound as they enter the profile. */
	struct unwinder *unw;
	/* s:syscalls(): enter/exit pairs summed as they drain (l_syscount.c). */
	struct syscount *sc;
};

struct filter {
	uint64_t types;           /* bit per kernel type; 0: any */
	int other;                /* types >= 64 */
	int pid, tid, cpu, ev;    /* -1 (or -2 for ev) : any */
	int have_pid, have_tid, have_cpu, have_ev;
};

struct session *lperf_checksession(lua_State *L, int idx)
{
	struct lsession *ls = luaL_checkudata(L, idx, SESSION);

	if (!ls->s)
		luaL_error(L, "attempt to use a closed " SESSION);
	return ls->s;
}

static struct lsession *check(lua_State *L)
{
	lperf_checksession(L, 1);
	return lua_touserdata(L, 1);
}

static int s_close(lua_State *L)
{
	struct lsession *ls = luaL_checkudata(L, 1, SESSION);

	session__close(ls->s);
	ls->s = NULL;
	unwinder__delete(ls->unw);
	ls->unw = NULL;
	syscount__delete(ls->sc);
	ls->sc = NULL;
	if (ls->sym_ref != LUA_NOREF) {
		luaL_unref(L, LUA_REGISTRYINDEX, ls->sym_ref);
		ls->sym_ref = LUA_NOREF;
	}
	free(ls->rec);
	ls->rec = NULL;
	if (ls->profile_ref != LUA_NOREF) {
		luaL_unref(L, LUA_REGISTRYINDEX, ls->profile_ref);
		ls->profile_ref = LUA_NOREF;
	}
	return 0;
}

static const struct { const char *name; uint64_t bit; } fields[] = {
	{ "ip", PERF_SAMPLE_IP }, { "tid", PERF_SAMPLE_TID }, { "time", PERF_SAMPLE_TIME },
	{ "addr", PERF_SAMPLE_ADDR }, { "read", PERF_SAMPLE_READ },
	{ "callchain", PERF_SAMPLE_CALLCHAIN }, { "id", PERF_SAMPLE_ID },
	{ "cpu", PERF_SAMPLE_CPU }, { "period", PERF_SAMPLE_PERIOD },
	{ "stream_id", PERF_SAMPLE_STREAM_ID }, { "raw", PERF_SAMPLE_RAW },
	{ "branch_stack", PERF_SAMPLE_BRANCH_STACK }, { "regs_user", PERF_SAMPLE_REGS_USER },
	{ "regs", PERF_SAMPLE_REGS_USER },  /* a probe's arguments: rec.regs_user.di, ... */
	{ "stack_user", PERF_SAMPLE_STACK_USER }, { "weight", PERF_SAMPLE_WEIGHT },
	{ "data_src", PERF_SAMPLE_DATA_SRC }, { "identifier", PERF_SAMPLE_IDENTIFIER },
	{ "transaction", PERF_SAMPLE_TRANSACTION }, { "regs_intr", PERF_SAMPLE_REGS_INTR },
	{ "phys_addr", PERF_SAMPLE_PHYS_ADDR }, { "aux", PERF_SAMPLE_AUX },
	{ "cgroup", PERF_SAMPLE_CGROUP }, { "data_page_size", PERF_SAMPLE_DATA_PAGE_SIZE },
	{ "code_page_size", PERF_SAMPLE_CODE_PAGE_SIZE },
	{ "weight_struct", PERF_SAMPLE_WEIGHT_STRUCT },
};

/* clockid = "monotonic" | "monotonic_raw" | "realtime" | "boottime" | "tai" | number */
static void read_clockid(lua_State *L, struct session_opts *o)
{
	static const struct { const char *name; int id; } clocks[] = {
		{ "monotonic", CLOCK_MONOTONIC }, { "monotonic_raw", CLOCK_MONOTONIC_RAW },
		{ "realtime", CLOCK_REALTIME }, { "boottime", CLOCK_BOOTTIME },
		{ "tai", CLOCK_TAI },
	};
	size_t i;

	lua_getfield(L, 1, "clockid");
	if (lua_type(L, -1) == LUA_TNUMBER) {
		o->use_clockid = 1;
		o->clockid = (int)lua_tointeger(L, -1);
	} else if (lua_type(L, -1) == LUA_TSTRING) {
		const char *c = lua_tostring(L, -1);
		for (i = 0; i < sizeof clocks / sizeof clocks[0]; i++)
			if (!strcmp(clocks[i].name, c))
				break;
		if (i == sizeof clocks / sizeof clocks[0])
			luaL_error(L, "unknown clockid '%s' (monotonic, monotonic_raw, realtime, "
				   "boottime, tai)", c);
		o->use_clockid = 1;
		o->clockid = clocks[i].id;
	} else if (!lua_isnil(L, -1)) {
		luaL_error(L, "clockid must be a clock name or number");
	}
	lua_pop(L, 1);
}

static uint64_t sample_bits(lua_State *L, int t)
{
	uint64_t bits = 0;
	size_t i, n;

	lua_getfield(L, t, "sample");
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		return 0;
	}
	luaL_argcheck(L, lua_istable(L, -1), 1, "sample must be a list of field names");
	n = lua_rawlen(L, -1);
	for (i = 1; i <= n; i++) {
		const char *f;
		size_t j;
		lua_rawgeti(L, -1, (int)i);
		f = luaL_checkstring(L, -1);
		for (j = 0; j < sizeof fields / sizeof fields[0]; j++)
			if (!strcmp(fields[j].name, f))
				break;
		if (j == sizeof fields / sizeof fields[0])
			luaL_error(L, "unknown sample field '%s'", f);
		bits |= fields[j].bit;
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return bits;
}

/* callchain = true | "fp" | "dwarf" | "dwarf,SIZE" | "lbr" | {"dwarf", SIZE} */
static void callchain_opt(lua_State *L, int t, struct session_opts *o)
{
	const char *mode;

	lua_getfield(L, t, "callchain");
	if (lua_isnil(L, -1) || (lua_isboolean(L, -1) && !lua_toboolean(L, -1))) {
		lua_pop(L, 1);
		return;
	}
	if (lua_isboolean(L, -1)) {
		o->callchain = SESSION_CALLCHAIN_FP;
		lua_pop(L, 1);
		return;
	}
	if (lua_istable(L, -1)) {
		lua_rawgeti(L, -1, 2);
		if (!lua_isnil(L, -1))
			o->stack_size = (uint32_t)luaL_checkinteger(L, -1);
		lua_pop(L, 1);
		lua_rawgeti(L, -1, 1);
		lua_replace(L, -2);
	}
	mode = luaL_checkstring(L, -1);
	if (!strcmp(mode, "fp")) {
		o->callchain = SESSION_CALLCHAIN_FP;
	} else if (!strncmp(mode, "dwarf", 5) && (mode[5] == 0 || mode[5] == ',')) {
		o->callchain = SESSION_CALLCHAIN_DWARF;
		if (mode[5] == ',') {
			char *end;
			long v = strtol(mode + 6, &end, 0);
			if (*end || v <= 0)
				luaL_error(L, "callchain '%s': the dwarf stack size must be a number", mode);
			o->stack_size = (uint32_t)v;
		}
	} else if (!strcmp(mode, "lbr")) {
		o->callchain = SESSION_CALLCHAIN_LBR;
	} else {
		luaL_error(L, "callchain must be true, \"fp\", \"dwarf\"[,size] or \"lbr\" (got '%s')",
			   mode);
	}
	lua_pop(L, 1);
}

/* A list of integers into a userdata array (collected with the call). */
static int *int_list(lua_State *L, int t, const char *k, int *n)
{
	int *a, i;

	lua_getfield(L, t, k);
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		*n = 0;
		return NULL;
	}
	if (lua_isnumber(L, -1)) {
		a = lua_newuserdatauv(L, sizeof *a, 0);
		a[0] = (int)lua_tointeger(L, -2);
		lua_replace(L, -2);
		*n = 1;
		return a;
	}
	luaL_argcheck(L, lua_istable(L, -1), 1, "expected a list of integers");
	*n = (int)lua_rawlen(L, -1);
	a = lua_newuserdatauv(L, (size_t)(*n ? *n : 1) * sizeof *a, 0);
	for (i = 0; i < *n; i++) {
		lua_rawgeti(L, -2, i + 1);
		a[i] = (int)luaL_checkinteger(L, -1);
		lua_pop(L, 1);
	}
	lua_replace(L, -2);  /* the array stays on the stack, anchored */
	return a;
}

static uint64_t optu64_field(lua_State *L, int t, const char *k)
{
	uint64_t v = 0;

	lua_getfield(L, t, k);
	if (!lua_isnil(L, -1))
		v = lperf_checku64(L, -1);
	lua_pop(L, 1);
	return v;
}

static int s_new(lua_State *L)
{
	struct session_opts o;
	struct lsession *ls;
	const char **events;
	char **argv = NULL;
	int nev, i, rc;
	char err[1024];

	luaL_checktype(L, 1, LUA_TTABLE);
	memset(&o, 0, sizeof o);
	lua_settop(L, 1);

	/* Everything Lua is read first, into GC-owned memory, so an argument
	 * error raised here leaks nothing. */
	o.offcpu = lperf_optfield_bool(L, 1, "offcpu", 0);
	lua_getfield(L, 1, "events");
	if (o.offcpu && lua_isnil(L, -1)) {
		/* off-CPU samples alone */
		nev = 0;
		events = NULL;
	} else if (lua_isstring(L, -1)) {
		nev = 1;
		events = lua_newuserdatauv(L, sizeof *events, 0);
		events[0] = lua_tostring(L, -2);
	} else {
		luaL_argcheck(L, lua_istable(L, -1), 1, "events must be a list of event specs");
		nev = (int)lua_rawlen(L, -1);
		luaL_argcheck(L, nev > 0 || o.offcpu, 1, "events is empty");
		events = lua_newuserdatauv(L, (size_t)(nev ? nev : 1) * sizeof *events, 0);
		for (i = 0; i < nev; i++) {
			lua_rawgeti(L, -2, i + 1);
			events[i] = luaL_checkstring(L, -1);
			lua_pop(L, 1);  /* the string stays alive in the events table */
		}
	}
	o.events = events;
	o.nr_events = nev;
	o.period = optu64_field(L, 1, "period");
	o.freq = optu64_field(L, 1, "freq");
	if (o.period && o.freq)
		luaL_error(L, "give freq or period, not both");
	o.sample_type = sample_bits(L, 1);
	callchain_opt(L, 1, &o);
	o.max_stack = (uint16_t)lperf_optfield_int(L, 1, "max_stack", 0);
	o.read_group = lperf_optfield_bool(L, 1, "read_group", 0);
	o.pid = (pid_t)lperf_optfield_int(L, 1, "pid", 0);
	o.tids = (const pid_t *)int_list(L, 1, "tids", &o.nr_tids);
	o.cpus = int_list(L, 1, "cpus", &o.nr_cpus);
	if (!o.cpus)
		o.cpus = int_list(L, 1, "cpu", &o.nr_cpus);
	o.cgroup = lperf_optfield_str(L, 1, "cgroup", NULL);
	lua_getfield(L, 1, "cmd");
	if (!lua_isnil(L, -1)) {
		int n;
		luaL_argcheck(L, lua_istable(L, -1), 1, "cmd must be an argv list");
		n = (int)lua_rawlen(L, -1);
		luaL_argcheck(L, n > 0, 1, "cmd is empty");
		argv = lua_newuserdatauv(L, (size_t)(n + 1) * sizeof *argv, 0);
		for (i = 0; i < n; i++) {
			lua_rawgeti(L, -2, i + 1);
			argv[i] = (char *)luaL_checkstring(L, -1);
			lua_pop(L, 1);
		}
		argv[n] = NULL;
		o.argv = argv;
	}
	o.inherit = lperf_optfield_bool(L, 1, "inherit", 1);
	o.pages = (size_t)lperf_optfield_int(L, 1, "pages", 0);
	if (o.pages && (o.pages & (o.pages - 1)))
		luaL_error(L, "pages must be a power of two (got %d)", (int)o.pages);
	o.wakeup_events = (uint32_t)lperf_optfield_int(L, 1, "wakeup_events", 0);
	o.watermark = (uint32_t)lperf_optfield_int(L, 1, "watermark", 0);
	o.context_switch = lperf_optfield_bool(L, 1, "context_switch", 0);
	o.overwrite = lperf_optfield_bool(L, 1, "overwrite", 0);
	o.exclude_kernel = lperf_optfield_bool(L, 1, "user_only", 0);
	lua_getfield(L, 1, "offcpu_thresh");   /* microseconds, as perf's --off-cpu-thresh */
	if (!lua_isnil(L, -1)) {
		lua_Number us = luaL_checknumber(L, -1);
		luaL_argcheck(L, us >= 0, 1, "offcpu_thresh must be >= 0 (microseconds)");
		o.offcpu_thresh_ns = (uint64_t)(us * 1000);
	}
	lua_pop(L, 1);
	read_clockid(L, &o);

	ls = lua_newuserdatauv(L, sizeof *ls, 0);
	ls->s = NULL;
	ls->rec = NULL;
	ls->profile_ref = LUA_NOREF;
	ls->pid = o.argv || o.tids ? -1 : o.pid;
	ls->unw = NULL;
	ls->sc = NULL;
	ls->sym_ref = LUA_NOREF;
	luaL_setmetatable(L, SESSION);
	ls->rec = malloc(65536);
	if (!ls->rec)
		return lperf_fail(L, "out of memory", ENOMEM);
	rc = session__open(&o, &ls->s, err, sizeof err);
	if (rc)
		return lperf_fail(L, err[0] ? err : strerror(-rc), -rc);
	return 1;
}

static int result(lua_State *L, int rc, const char *what)
{
	if (rc < 0) {
		lua_pushnil(L);
		lua_pushfstring(L, "%s: %s", what, strerror(-rc));
		lua_pushinteger(L, -rc);
		return 3;
	}
	lua_pushboolean(L, 1);
	return 1;
}

static int s_start(lua_State *L)
{
	return result(L, session__start(check(L)->s), "start");
}

static int s_stop(lua_State *L)
{
	return result(L, session__stop(check(L)->s), "stop");
}

static int s_poll(lua_State *L)
{
	struct lsession *ls = check(L);
	int done = 0;
	int rc = session__poll(ls->s, (int)luaL_optinteger(L, 2, -1), &done);

	if (rc < 0)
		return result(L, rc, "poll");
	lua_pushinteger(L, rc);
	lua_pushboolean(L, done);
	return 2;
}

static int s_wait(lua_State *L)
{
	struct lsession *ls = check(L);
	int status = 0, rc = session__workload_wait(ls->s, &status);

	if (rc < 0)
		return result(L, rc, "wait");
	if (WIFEXITED(status)) {
		lua_pushinteger(L, WEXITSTATUS(status));
		return 1;
	}
	lua_pushnil(L);
	lua_pushfstring(L, "killed by signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return 2;
}

static int s_pid(lua_State *L)
{
	pid_t p = session__workload_pid(check(L)->s);

	if (p < 0)
		return 0;
	lua_pushinteger(L, p);
	return 1;
}

static int s_stats(lua_State *L)
{
	struct session_stats st;

	session__stats(check(L)->s, &st);
	lua_createtable(L, 0, 10);
	lperf_setu64(L, "records", st.records);
	lperf_setu64(L, "samples", st.samples);
	lperf_setu64(L, "bytes", st.bytes);
	lperf_setu64(L, "wakeups", st.wakeups);
	lperf_setu64(L, "lost", st.lost);
	lperf_setu64(L, "lost_records", st.lost_records);
	lperf_setu64(L, "throttled", st.throttled);
	lperf_setu64(L, "unthrottled", st.unthrottled);
	lperf_setu64(L, "errors", st.errors);
	if (st.offcpu_switch_outs || st.offcpu_samples) {
		/* off-CPU sessions: what the switch-out filter kept and dropped */
		lua_createtable(L, 0, 6);
		lperf_setu64(L, "switch_outs", st.offcpu_switch_outs);
		lperf_setu64(L, "samples", st.offcpu_samples);
		lperf_setu64(L, "ns", st.offcpu_ns);
		lperf_setu64(L, "preempted", st.offcpu_preempted);
		lperf_setu64(L, "short", st.offcpu_short);
		lperf_setu64(L, "unmatched", st.offcpu_unmatched);
		lua_setfield(L, -2, "offcpu");
	}
	if (session__last_error(lperf_checksession(L, 1)))
		lperf_setstr(L, "last_error", session__last_error(lperf_checksession(L, 1)));
	return 1;
}

static int s_events(lua_State *L)
{
	const struct evtab *t = session__evtab(check(L)->s);
	int i, n = evtab__count(t);

	lua_createtable(L, n, 0);
	for (i = 0; i < n; i++) {
		lua_pushstring(L, evtab__name(t, i));
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* ---- records ---- */

static int type_id(const char *name)
{
	int i;

	for (i = 1; i < 128; i++)
		if (!strcmp(record__type_name((uint32_t)i), name))
			return i;
	return -1;
}

static void filter_types(lua_State *L, int t, struct filter *f)
{
	int n, i;

	lua_getfield(L, t, "type");
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		return;
	}
	if (lua_isstring(L, -1)) {
		lua_createtable(L, 1, 0);
		lua_insert(L, -2);
		lua_rawseti(L, -2, 1);
	}
	luaL_argcheck(L, lua_istable(L, -1), 2, "type must be a record type name or a list");
	n = (int)lua_rawlen(L, -1);
	for (i = 1; i <= n; i++) {
		const char *name;
		int id;
		lua_rawgeti(L, -1, i);
		name = luaL_checkstring(L, -1);
		id = type_id(name);
		if (id < 0)
			luaL_error(L, "unknown record type '%s'", name);
		if (id < 64)
			f->types |= UINT64_C(1) << id;
		else
			f->other = 1;
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
}

static int filter_ok(const struct filter *f, const struct record *r)
{
	int has_tid = (r->s.type & PERF_SAMPLE_TID) != 0;

	if (f->types || f->other) {
		if (r->type < 64 ? !(f->types & (UINT64_C(1) << r->type)) : !f->other)
			return 0;
	}
	if (f->have_pid && (!has_tid || (int)r->s.pid != f->pid))
		return 0;
	if (f->have_tid && (!has_tid || (int)r->s.tid != f->tid))
		return 0;
	if (f->have_cpu && (!(r->s.type & PERF_SAMPLE_CPU) || (int)r->s.cpu != f->cpu))
		return 0;
	if (f->have_ev && r->evidx != f->ev)
		return 0;
	return 1;
}

struct pick {
	struct lsession *ls;
	const struct filter *f;
	int got;
};

/* A decoded record that passes the filter is copied out whole and stops the
 * drain (records that fail to decode are counted by session__drain). */
static int pick_one(void *arg, const struct record *r)
{
	struct pick *p = arg;

	if (!filter_ok(p->f, r))
		return 0;
	memcpy(p->ls->rec, r->data, r->size);
	p->got = 1;
	return 1;
}

static int records_next(lua_State *L)
{
	struct lsession *ls = luaL_checkudata(L, lua_upvalueindex(1), SESSION);
	const struct filter *f = lua_touserdata(L, lua_upvalueindex(2));
	struct pick p = { ls, f, 0 };
	struct record r;
	char err[256];
	int rc;

	if (!ls->s)
		return luaL_error(L, "attempt to use a closed " SESSION);
	rc = session__drain(ls->s, pick_one, &p);
	if (rc < 0)
		return luaL_error(L, "%s", session__last_error(ls->s) ? session__last_error(ls->s)
				  : strerror(-rc));
	if (!p.got)
		return 0;
	if (record__decode(session__evtab(ls->s), ls->rec, 65536, &r, err, sizeof err))
		return luaL_error(L, "%s", err);
	lperf_push_record(L, &r, session__evtab(ls->s));
	return 1;
}

static int s_records(lua_State *L)
{
	struct lsession *ls = check(L);
	struct filter *f;
	const char *ev;

	lua_settop(L, 2);
	f = lua_newuserdatauv(L, sizeof *f, 0);
	memset(f, 0, sizeof *f);
	f->ev = -1;
	if (!lua_isnil(L, 2)) {
		luaL_checktype(L, 2, LUA_TTABLE);
		filter_types(L, 2, f);
		lua_getfield(L, 2, "pid");
		if ((f->have_pid = !lua_isnil(L, -1)))
			f->pid = (int)luaL_checkinteger(L, -1);
		lua_getfield(L, 2, "tid");
		if ((f->have_tid = !lua_isnil(L, -1)))
			f->tid = (int)luaL_checkinteger(L, -1);
		lua_getfield(L, 2, "cpu");
		if ((f->have_cpu = !lua_isnil(L, -1)))
			f->cpu = (int)luaL_checkinteger(L, -1);
		lua_pop(L, 3);
		ev = lperf_optfield_str(L, 2, "event", NULL);
		if (ev) {
			const struct evtab *t = session__evtab(ls->s);
			int i;
			f->have_ev = 1;
			f->ev = -2;
			for (i = 0; i < evtab__count(t); i++)
				if (!strcmp(evtab__name(t, i), ev))
					f->ev = i;
			if (f->ev == -2)
				luaL_error(L, "no event '%s' in this session", ev);
		}
	}
	lua_pushvalue(L, 1);
	lua_pushvalue(L, 3);
	lua_pushcclosure(L, records_next, 2);
	return 1;
}

/* ---- profile ---- */

struct profile_feed {
	struct stacktab *st;
	const struct evtab *t;
	struct unwinder *unw;
	struct symbolizer *sym;   /* NULL when the user closed it */
};

static int add_rec(void *arg, const struct record *r)
{
	struct profile_feed *f = arg;
	int rc;

	/* A failure (out of memory) stops the drain with it: the record
	 * stays in its ring and s:profile() returns the error. */
	if (f->unw && f->sym)  /* feeds the symbolizer itself */
		return unwind__add_record(f->unw, f->sym, f->st, r, f->t, NULL);
	switch (r->type) {
	case PERF_RECORD_MMAP: case PERF_RECORD_MMAP2: case PERF_RECORD_COMM:
	case PERF_RECORD_FORK: case PERF_RECORD_EXIT:
		if (f->sym && (rc = symbolizer__feed(f->sym, r)) < 0)
			return rc;
		break;
	default:
		break;
	}
	return stacktab__add_record(f->st, r, f->t);
}

/*
 * Pushes the session's symbolizer, made on first use: the maps of a pid
 * target come from /proc (they existed before the session), the others
 * from the records.  Returns its core object, NULL if the user closed it.
 */
static struct symbolizer *push_symbolizer(lua_State *L, struct lsession *ls)
{
	struct symbolizer *sym;

	if (ls->sym_ref != LUA_NOREF) {
		lua_rawgeti(L, LUA_REGISTRYINDEX, ls->sym_ref);
		return lperf_tosymbolizer(L, -1);
	}
	sym = lperf_newsymbolizer(L);
	if (sym == NULL)
		return NULL;
	if (ls->pid >= 0)
		symbolizer__load_proc(sym, (uint32_t)(ls->pid ? ls->pid : getpid()));
	/* processes that ran before the session (system-wide) have no
	 * records of their maps: read on first use */
	symbolizer__set_proc_fallback(sym, 1);
	lua_pushvalue(L, -1);
	ls->sym_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	return sym;
}

static int s_symbolizer(lua_State *L)
{
	struct lsession *ls = check(L);

	if (push_symbolizer(L, ls) == NULL && ls->sym_ref == LUA_NOREF)
		return lperf_fail(L, "cannot create a symbolizer: out of memory", ENOMEM);
	return 1;
}

/* A session with DWARF events unwinds its samples as they enter the profile. */
static int dwarf_setup(struct lsession *ls)
{
	const struct evtab *t = session__evtab(ls->s);
	int i, wants = 0;

	for (i = 0; i < evtab__count(t); i++)
		wants |= unwind__wants(evtab__attr(t, i));
	if (!wants || ls->unw)
		return 0;
	return unwinder__new(&ls->unw);
}

static int s_profile(lua_State *L)
{
	struct lsession *ls = check(L);
	struct profile_feed feed;
	int rc;

	if (dwarf_setup(ls))
		return lperf_fail(L, "out of memory", ENOMEM);
	feed.sym = push_symbolizer(L, ls);
	/* s:profile{ reset = true }: a new profile from here on (the one
	 * returned before stays whole for whoever holds it) */
	if (lua_istable(L, 2) && ls->profile_ref != LUA_NOREF) {
		lua_getfield(L, 2, "reset");
		if (lua_toboolean(L, -1)) {
			luaL_unref(L, LUA_REGISTRYINDEX, ls->profile_ref);
			ls->profile_ref = LUA_NOREF;
		}
		lua_pop(L, 1);
	}
	if (ls->profile_ref == LUA_NOREF) {
		struct stacktab **slot = lperf_newprofile(L);
		*slot = stacktab__new();
		if (!*slot)
			return lperf_fail(L, "out of memory", ENOMEM);
		ls->profile_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	}
	lua_rawgeti(L, LUA_REGISTRYINDEX, ls->profile_ref);
	feed.st = lperf_checkprofile(L, -1);
	if (feed.sym != NULL)
		lperf_profile_set_symbolizer(L, -1, -2);
	feed.t = session__evtab(ls->s);
	feed.unw = ls->unw;
	rc = session__drain(ls->s, add_rec, &feed);
	if (rc < 0)
		return lperf_fail(L, session__last_error(ls->s) ? session__last_error(ls->s)
				  : "draining the session failed", -rc);
	return 1;
}

static int s_syscalls(lua_State *L)
{
	struct lsession *ls = check(L);

	return lperf_session_syscalls(L, ls->s, &ls->sc);
}

/* ---- snapshot ---- */

struct snap {
	lua_State *L;
	const struct evtab *t;
	uint64_t *buf;     /* copies of the records: offsets into one block */
	size_t len, cap;
	int oom;
};

static int snap_one(void *arg, const struct record *r)
{
	struct snap *sn = arg;

	if (sn->len + r->size > sn->cap) {
		size_t cap = sn->cap ? sn->cap * 2 : 65536;
		uint64_t *b;
		while (cap < sn->len + r->size)
			cap *= 2;
		b = realloc(sn->buf, cap);
		if (!b) {
			sn->oom = 1;
			return -1;
		}
		sn->buf = b;
		sn->cap = cap;
	}
	memcpy((uint8_t *)sn->buf + sn->len, r->data, r->size);
	sn->len += r->size;
	return 0;
}

static int snap_gc(lua_State *L)
{
	struct snap *sn = lua_touserdata(L, 1);

	free(sn->buf);
	sn->buf = NULL;
	return 0;
}

static int s_snapshot(lua_State *L)
{
	struct lsession *ls = check(L);
	struct snap *sn;
	size_t off;
	int rc, n = 0;

	/* The copies belong to a userdata, so nothing leaks if a push raises. */
	sn = lua_newuserdatauv(L, sizeof *sn, 0);
	memset(sn, 0, sizeof *sn);
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, snap_gc);
	lua_setfield(L, -2, "__gc");
	lua_setmetatable(L, -2);
	sn->t = session__evtab(ls->s);
	rc = session__snapshot(ls->s, snap_one, sn);
	if (rc < 0 || sn->oom)
		return lperf_fail(L, rc == -EINVAL ? "snapshot needs an overwrite session"
				  : "snapshot failed", rc < 0 ? -rc : ENOMEM);
	lua_newtable(L);
	for (off = 0; off < sn->len; ) {
		struct record r;
		const struct perf_event_header *h =
			(const void *)((const uint8_t *)sn->buf + off);
		if (!record__decode(sn->t, h, h->size, &r, NULL, 0)) {
			lperf_push_record(L, &r, sn->t);
			lua_rawseti(L, -2, ++n);
		}
		off += h->size;
	}
	return 1;
}

static const luaL_Reg methods[] = {
	{ "start", s_start },
	{ "stop", s_stop },
	{ "poll", s_poll },
	{ "wait", s_wait },
	{ "pid", s_pid },
	{ "stats", s_stats },
	{ "events", s_events },
	{ "records", s_records },
	{ "profile", s_profile },
	{ "syscalls", s_syscalls },
	{ "symbolizer", s_symbolizer },
	{ "snapshot", s_snapshot },
	{ "close", s_close },
	{ NULL, NULL },
};

void lperf_open_session(lua_State *L)
{
	lperf_newclass(L, SESSION, methods, s_close);
	lperf_exportclass(L, -1, SESSION, "Session");
	lua_pushcfunction(L, s_new);
	lua_setfield(L, -2, "session");
}
