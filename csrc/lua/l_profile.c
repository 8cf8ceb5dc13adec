/*
 * perf.core Profile: a stack table (stacktab.c) as a userdata.  The counting
 * happens in C; Lua sees one table per unique stack only when it iterates.
 *
 *   p = perf.profile()            an empty profile
 *   p:add(rec)                    a record table (SAMPLE: its stack; COMM: the comm)
 *   p:add_stack(addrs, {count=, period=, pid=, tid=, comm=, event=, kernel=})
 *   p:merge(other)
 *   p:total()                     -> samples, period
 *   p:count()                     -> unique stacks
 *   for e in p:stacks() do ... end
 *       e = { addrs = { leaf first }, kernel = n leading kernel addrs,
 *             count=, period=, pid=, tid=, comm=, event=, weights = { name = v },
 *             thread_comm = the thread's last name (a file's profile) }
 *       comm: the name the samples were taken under (a file's profile keys
 *       stacks by it; p:add_stack{comm=} too), else the pid's last COMM
 *       (a named frame, a Lua function or a VM state, is a string in addrs)
 *   p:comm(pid), p:meta() -> { samples=, period=, stacks=, lost=, throttled=, ... }
 *   p:symbolizer()                the symbolizer fed with it (a session's), or nil
 *
 * The methods table is perf.core.Profile, so Lua code can add methods.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include "binding.h"
#include "profile/stacktab.h"

#define PROFILE "perf.Profile"

/* &symbolizer_key: a weak-keyed registry table, profile -> the symbolizer
 * fed by the same records (a session's), so reports name functions of
 * processes that have since exited. */
static char symbolizer_key;

void lperf_profile_set_symbolizer(lua_State *L, int profile, int sym)
{
	lperf_weakmap_set(L, &symbolizer_key, profile, sym);
}

/* p:symbolizer() -> the symbolizer fed alongside the profile, or nil. */
static int p_symbolizer(lua_State *L)
{
	luaL_checkudata(L, 1, PROFILE);
	lua_pushlightuserdata(L, &symbolizer_key);
	lua_rawget(L, LUA_REGISTRYINDEX);
	lua_pushvalue(L, 1);
	lua_rawget(L, -2);
	return 1;
}

struct lprofile {
	struct stacktab *st;
};

struct stacktab **lperf_newprofile(lua_State *L)
{
	struct lprofile *p = lua_newuserdatauv(L, sizeof *p, 0);

	p->st = NULL;
	luaL_setmetatable(L, PROFILE);
	return &p->st;
}

struct stacktab *lperf_checkprofile(lua_State *L, int idx)
{
	struct lprofile *p = luaL_checkudata(L, idx, PROFILE);

	if (!p->st)
		luaL_error(L, "attempt to use a closed " PROFILE);
	return p->st;
}

static int p_close(lua_State *L)
{
	struct lprofile *p = luaL_checkudata(L, 1, PROFILE);

	stacktab__delete(p->st);
	p->st = NULL;
	return 0;
}

static int p_new(lua_State *L)
{
	struct stacktab **slot = lperf_newprofile(L);

	*slot = stacktab__new();
	if (!*slot)
		return lperf_fail(L, "out of memory", ENOMEM);
	return 1;
}

static int p_total(lua_State *L)
{
	struct stacktab_meta m;

	stacktab__meta(lperf_checkprofile(L, 1), &m);
	lperf_pushu64(L, m.samples);
	lperf_pushu64(L, m.period);
	return 2;
}

static int p_count(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)stacktab__count(lperf_checkprofile(L, 1)));
	return 1;
}

static int p_meta(lua_State *L)
{
	struct stacktab *st = lperf_checkprofile(L, 1);
	struct stacktab_meta m;

	stacktab__meta(st, &m);
	lua_createtable(L, 0, 7);
	lperf_setu64(L, "samples", m.samples);
	lperf_setu64(L, "period", m.period);
	lperf_setu64(L, "stacks", stacktab__count(st));
	lperf_setu64(L, "lost", m.lost);
	lperf_setu64(L, "throttled", m.throttled);
	lperf_setu64(L, "unthrottled", m.unthrottled);
	lperf_setu64(L, "errors", m.errors);
	return 1;
}

static int p_comm(lua_State *L)
{
	const char *c = stacktab__comm(lperf_checkprofile(L, 1), (int32_t)luaL_checkinteger(L, 2));

	if (!c)
		return 0;
	lua_pushstring(L, c);
	return 1;
}

static void push_entry(lua_State *L, struct stacktab *st, size_t i)
{
	struct stacktab_entry e;
	const char *comm;
	unsigned j;

	stacktab__get(st, i, &e);
	lua_createtable(L, 0, 8);
	lua_createtable(L, (int)e.nr, 0);
	for (j = 0; j < e.nr; j++) {
		/* a named frame (a Lua function, a VM state) is its name, an
		 * object frame its object's path */
		const char *name = stacktab__is_named(e.addrs[j]) ? stacktab__name(st, e.addrs[j]) :
				   stacktab__object(st, e.addrs[j]);
		struct stacktab_place pl;
		if (name != NULL)
			lua_pushstring(L, name);
		else if (stacktab__symbol(st, e.addrs[j], &pl) == 0)
			lperf_pushu64(L, pl.addr);   /* a symbol frame: its place */
		else
			lperf_pushu64(L, e.addrs[j]);
		lua_rawseti(L, -2, (int)j + 1);
	}
	lua_setfield(L, -2, "addrs");
	if (e.weights != NULL) {
		unsigned k, nw = stacktab__nweights(st);
		lua_createtable(L, 0, (int)nw);
		for (k = 0; k < nw; k++)
			lperf_setu64(L, stacktab__weight_name(st, k), e.weights[k]);
		lua_setfield(L, -2, "weights");
	}
	lperf_setint(L, "kernel", e.nkernel);
	/* a chain perf discards: no addresses, the sample's own ip (a report's) */
	if (e.own) {
		lperf_setu64(L, "own", e.own_ip);
		lperf_setbool(L, "own_kernel", e.own == 2);
	}
	/* the generation of the pid's mappings its samples were taken in */
	if (e.gen > 0)
		lperf_setint(L, "gen", (int32_t)(e.gen - 1));
	lperf_setu64(L, "count", e.count);
	lperf_setu64(L, "period", e.period);
	lperf_setint(L, "pid", e.pid);
	lperf_setint(L, "tid", e.tid);
	if (e.event[0])
		lperf_setstr(L, "event", e.event);
	/* the name the samples had (a file's profile), else the pid's last */
	comm = e.comm ? e.comm : stacktab__comm(st, e.pid);
	if (comm)
		lperf_setstr(L, "comm", comm);
	comm = stacktab__thread_comm(st, e.tid);
	if (comm)
		lperf_setstr(L, "thread_comm", comm);
}

static int p_stacks_next(lua_State *L)
{
	struct stacktab *st = lperf_checkprofile(L, lua_upvalueindex(1));
	size_t i = (size_t)lua_tointeger(L, lua_upvalueindex(2));

	if (i >= stacktab__count(st))
		return 0;
	lua_pushinteger(L, (lua_Integer)i + 1);
	lua_replace(L, lua_upvalueindex(2));
	push_entry(L, st, i);
	return 1;
}

static int p_stacks(lua_State *L)
{
	lperf_checkprofile(L, 1);
	lua_pushvalue(L, 1);
	lua_pushinteger(L, 0);
	lua_pushcclosure(L, p_stacks_next, 2);
	return 1;
}

static int p_merge(lua_State *L)
{
	struct stacktab *dst = lperf_checkprofile(L, 1);
	struct stacktab *src = lperf_checkprofile(L, 2);
	int rc = stacktab__merge(dst, src);

	if (rc)
		return lperf_fail(L, "out of memory merging profiles", -rc);
	lua_settop(L, 1);
	return 1;
}

/* An address written as a string ("0x7f..." or decimal: how 64-bit values
 * travel on LuaJIT), not a name. */
static int is_addr_string(lua_State *L, int idx)
{
	const char *s = lua_tostring(L, idx);
	size_t i = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		for (i = 2; isxdigit((unsigned char)s[i]); i++)
			;
	else
		while (isdigit((unsigned char)s[i]))
			i++;
	return i > 0 && s[i] == '\0' && !(i == 2 && s[0] == '0');
}

/* Reads addrs (a Lua array: addresses, or strings for named frames, which
 * st interns) into buf; returns the count, or -errno. */
static int read_addrs(lua_State *L, struct stacktab *st, int t, uint64_t *buf, unsigned cap)
{
	unsigned n = (unsigned)lua_rawlen(L, t), i;
	int rc;

	if (n > cap)
		luaL_error(L, "stack of %u addresses exceeds %u", n, cap);
	for (i = 0; i < n; i++) {
		lua_rawgeti(L, t, (int)i + 1);
		if (lua_type(L, -1) == LUA_TSTRING && !is_addr_string(L, -1)) {
			if ((rc = stacktab__intern(st, lua_tostring(L, -1), &buf[i])) < 0)
				return rc;
		} else {
			buf[i] = lperf_checku64(L, -1);
		}
		lua_pop(L, 1);
	}
	return (int)n;
}

#define MAX_ADDRS 4096

static uint64_t opt_u64_field(lua_State *L, int t, const char *k, uint64_t def)
{
	uint64_t v = def;

	lua_getfield(L, t, k);
	if (!lua_isnil(L, -1))
		v = lperf_checku64(L, -1);
	lua_pop(L, 1);
	return v;
}

static int add_common(lua_State *L, struct stacktab *st, int addrs_idx, int t,
		      unsigned nkernel, uint64_t count, uint64_t period)
{
	uint64_t *buf = lua_newuserdatauv(L, MAX_ADDRS * sizeof(uint64_t), 0);
	uint64_t w[STACKTAB_MAX_WEIGHTS];
	int n = read_addrs(L, st, addrs_idx, buf, MAX_ADDRS);
	int pid = lperf_optfield_int(L, t, "pid", -1);
	int tid = lperf_optfield_int(L, t, "tid", -1);
	const char *ev = lperf_optfield_str(L, t, "event", "");
	const char *cname = lperf_optfield_str(L, t, "comm", NULL);
	uint32_t comm = 0;
	int rc = n < 0 ? n : 0, has_w = 0;

	if (rc == 0 && cname)
		rc = stacktab__comm_intern(st, cname, &comm);

	/* weights = { name = value }: declared as they come */
	memset(w, 0, sizeof w);
	lua_getfield(L, t, "weights");
	if (rc == 0 && lua_istable(L, -1)) {
		lua_pushnil(L);
		while (rc == 0 && lua_next(L, -2)) {
			int k = lua_type(L, -2) == LUA_TSTRING
				? stacktab__weight(st, lua_tostring(L, -2)) : -EINVAL;
			if (k < 0)
				rc = k;
			else
				w[k] = lperf_checku64(L, -1);
			has_w = 1;
			lua_pop(L, 1);
		}
		if (rc != 0)
			lua_pop(L, 1);
	}
	lua_pop(L, 1);
	if (rc == 0)
		rc = stacktab__add_stack_cw(st, buf, (unsigned)n, nkernel, pid, tid, comm, ev, count,
					    period, has_w ? w : NULL);

	lua_pop(L, 1);
	if (rc)
		return lperf_fail(L, "cannot add the stack", -rc);
	lua_settop(L, 1);
	return 1;
}

/* p:add_stack(addrs, {count=, period=, pid=, tid=, event=, kernel=, weights=}):
 * a string in addrs is a named frame; weights = { name = value }. */
static int p_add_stack(lua_State *L)
{
	struct stacktab *st = lperf_checkprofile(L, 1);
	uint64_t count, period;

	luaL_checktype(L, 2, LUA_TTABLE);
	if (lua_isnoneornil(L, 3)) {
		lua_settop(L, 2);
		lua_newtable(L);
	}
	luaL_checktype(L, 3, LUA_TTABLE);
	count = opt_u64_field(L, 3, "count", 1);
	period = opt_u64_field(L, 3, "period", count);
	return add_common(L, st, 2, 3, (unsigned)lperf_optfield_int(L, 3, "kernel", 0),
			  count, period);
}

/* p:add(rec): a record table as lperf_push_record makes them. */
static int p_add(lua_State *L)
{
	struct stacktab *st = lperf_checkprofile(L, 1);
	const char *type;
	int rc;

	luaL_checktype(L, 2, LUA_TTABLE);
	type = lperf_optfield_str(L, 2, "type", "SAMPLE");
	if (!strcmp(type, "COMM")) {
		const char *comm = lperf_optfield_str(L, 2, "comm", NULL);
		if (!comm)
			return luaL_error(L, "COMM record without comm");
		rc = stacktab__set_comm(st, lperf_optfield_int(L, 2, "pid", -1), comm);
		if (rc)
			return lperf_fail(L, "out of memory", -rc);
		lua_settop(L, 1);
		return 1;
	}
	if (strcmp(type, "SAMPLE")) {
		lua_settop(L, 1);
		return 1;  /* other records carry no stack */
	}
	lua_getfield(L, 2, "callchain");
	if (lua_isnil(L, -1) || lua_rawlen(L, -1) == 0) {
		lua_pop(L, 1);
		lua_createtable(L, 1, 0);
		lua_getfield(L, 2, "ip");
		if (!lua_isnil(L, -1))
			lua_rawseti(L, -2, 1);
		else
			lua_pop(L, 1);
	}
	{
		int chain = lua_gettop(L);
		unsigned nk = (unsigned)lperf_optfield_int(L, 2, "callchain_kernel", 0);
		uint64_t period = opt_u64_field(L, 2, "period", 1);
		if (lua_rawlen(L, chain) == 1 && !nk) {
			const char *mode = lperf_optfield_str(L, 2, "cpumode", "");
			nk = !strcmp(mode, "kernel");
		}
		return add_common(L, st, chain, 2, nk, 1, period);
	}
}

static const luaL_Reg methods[] = {
	{ "total", p_total },
	{ "count", p_count },
	{ "meta", p_meta },
	{ "comm", p_comm },
	{ "stacks", p_stacks },
	{ "merge", p_merge },
	{ "add", p_add },
	{ "add_stack", p_add_stack },
	{ "close", p_close },
	{ "symbolizer", p_symbolizer },
	{ NULL, NULL },
};

void lperf_open_profile(lua_State *L)
{
	lperf_newclass(L, PROFILE, methods, p_close);
	lperf_exportclass(L, -1, PROFILE, "Profile");
	lperf_weakmap_new(L, &symbolizer_key);
	lua_pushcfunction(L, p_new);
	lua_setfield(L, -2, "profile");
}
