/*
 * perf.counter, perf.group and perf.workload: counting userdata over
 * csrc/core/count/counter.c and workload.c.  Argument checks raise; machine
 * failures return nil, message, errno (messages from errmsg.c).
 */
#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include "binding.h"
#include "count/counter.h"
#include "event/errmsg.h"
#include "event/evgroup.h"
#include "event/evspec.h"
#include "sample/workload.h"

#define COUNTER_MT "perf.counter"
#define GROUP_MT "perf.group"
#define WORKLOAD_MT "perf.workload"
/* Bounds the temporary arrays built from a Lua table of specs. */
#define GROUP_MAX 256

struct lcounter {
	struct counter *c;           /* NULL = closed */
	int group;
	size_t n;
	struct counter_value *vals;  /* n values, reused by every read */
	char (*names)[EVSPEC_NAME_MAX];   /* canonical names (perf's spelling) */
	char (*specs)[EVSPEC_NAME_MAX];   /* the specs as the user wrote them */
};

/* What perf.counter/perf.group opts say, checked before anything opens. */
struct open_opts {
	pid_t pid;
	int cpu;
	/* Lists (cpu = {...}, pid = {...}); they point into userdata that
	 * read_opts leaves on the stack, or at pid/cpu above.  cpus NULL with
	 * cpu == COUNTER_CPU_ALL = every online CPU. */
	const pid_t *pids;
	size_t npids;
	const int *cpus;
	size_t ncpus;
	int disabled;
	int enable_on_exec;
	int inherit;
	int pinned, exclusive; /* -1 = as the spec says (:D, :e) */
	int excl[6]; /* user kernel hv idle host guest: -1 = as the spec says */
};

static const char *const excl_names[6] = {
	"exclude_user", "exclude_kernel", "exclude_hv",
	"exclude_idle", "exclude_host", "exclude_guest",
};

/* nil -> def; a boolean; anything else raises. */
static int opt_bool(lua_State *L, int t, const char *k, int def)
{
	int v = def;

	lua_getfield(L, t, k);
	if (!lua_isnil(L, -1)) {
		if (!lua_isboolean(L, -1))
			luaL_error(L, "option '%s' must be a boolean, got %s", k,
				   luaL_typename(L, -1));
		v = lua_toboolean(L, -1);
	}
	lua_pop(L, 1);
	return v;
}

static lua_Integer opt_integer(lua_State *L, int t, const char *k, lua_Integer def)
{
	lua_Integer v = def;

	lua_getfield(L, t, k);
	if (!lua_isnil(L, -1)) {
		lua_Number n;
		if (lua_type(L, -1) != LUA_TNUMBER)
			luaL_error(L, "option '%s' must be an integer, got %s", k,
				   luaL_typename(L, -1));
		n = lua_tonumber(L, -1);
		/* pids and CPUs are ints: range first, so the cast is defined. */
		if (!(n >= -2147483648.0 && n <= 2147483647.0) || n != (lua_Number)(lua_Integer)n)
			luaL_error(L, "option '%s' must be an integer", k);
		v = lua_tointeger(L, -1);
	}
	lua_pop(L, 1);
	return v;
}

/*
 * The list at the top of the stack (option k) as ints >= min, in a new
 * userdata left on the stack in its place; raises on a bad element, an
 * empty or too long list, or a repeated number.
 */
static int *opt_list(lua_State *L, const char *k, size_t max, lua_Integer min, size_t *n)
{
	int tab = lua_gettop(L);
	size_t len = (size_t)lua_rawlen(L, tab), i, j;
	int *list;

	if (len == 0 || len > max)
		luaL_error(L, "option '%s' must list 1 to %d numbers", k, (int)max);
	list = lua_newuserdatauv(L, len * sizeof *list, 0);
	for (i = 0; i < len; i++) {
		lua_Number x;

		lua_rawgeti(L, tab, (lua_Integer)i + 1);
		if (lua_type(L, -1) != LUA_TNUMBER)
			luaL_error(L, "option '%s': element %d must be an integer, got %s", k,
				   (int)i + 1, luaL_typename(L, -1));
		x = lua_tonumber(L, -1);
		if (!(x >= (lua_Number)min && x <= 2147483647.0) || x != (lua_Number)(lua_Integer)x)
			luaL_error(L, "option '%s': element %d must be an integer >= %d", k,
				   (int)i + 1, (int)min);
		list[i] = (int)lua_tointeger(L, -1);
		lua_pop(L, 1);
		for (j = 0; j < i; j++)
			if (list[j] == list[i])
				luaL_error(L, "option '%s': %d is listed twice", k, list[i]);
	}
	lua_replace(L, tab);
	*n = len;
	return list;
}

/*
 * Reads opts from the table at t (or defaults when t is 0).  A cpu or pid
 * list leaves a userdata on the stack that must stay until the open.
 */
static void read_opts(lua_State *L, int t, struct open_opts *o)
{
	int pid_nil, cpu_list = 0;
	size_t i;

	memset(o, 0, sizeof *o);
	o->cpu = -1;
	o->pinned = o->exclusive = -1;
	for (i = 0; i < 6; i++)
		o->excl[i] = -1;
	o->pids = &o->pid;
	o->npids = 1;
	o->cpus = &o->cpu;
	o->ncpus = 1;
	if (t == 0)
		return;
	lua_getfield(L, t, "pid");
	pid_nil = lua_isnil(L, -1);
	if (lua_istable(L, -1)) {
		/* Task ids, one fd set each (perf stat --per-thread). */
		o->pids = opt_list(L, "pid", COUNTER_MAX_PIDS, -1, &o->npids);
	} else {
		lua_pop(L, 1);
		o->pid = (pid_t)opt_integer(L, t, "pid", 0);
		if (o->pid < -1)
			luaL_error(L, "option 'pid' must be >= -1");
	}
	lua_getfield(L, t, "cpu");
	if (lua_type(L, -1) == LUA_TSTRING) {
		if (strcmp(lua_tostring(L, -1), "all") != 0)
			luaL_error(L, "option 'cpu' must be a number, a list or \"all\"");
		o->cpu = COUNTER_CPU_ALL;
		o->cpus = NULL;
		o->ncpus = 0;
		lua_pop(L, 1);
	} else if (lua_istable(L, -1)) {
		o->cpus = opt_list(L, "cpu", COUNTER_MAX_CPUS, 0, &o->ncpus);
		cpu_list = 1;
	} else {
		int isnil = lua_isnil(L, -1);
		lua_pop(L, 1);
		if (!isnil) {
			o->cpu = (int)opt_integer(L, t, "cpu", -1);
			if (o->cpu < -1)
				luaL_error(L, "option 'cpu' must be -1, a CPU number, a list or \"all\"");
		}
	}
	/* System-wide on every CPU (or the listed ones) unless a pid was
	 * given, as perf stat -a / -C. */
	if ((o->cpu == COUNTER_CPU_ALL || cpu_list) && pid_nil)
		o->pid = -1;
	o->enable_on_exec = opt_bool(L, t, "enable_on_exec", 0);
	o->disabled = opt_bool(L, t, "disabled", o->enable_on_exec);
	o->inherit = opt_bool(L, t, "inherit", 0);
	o->pinned = opt_bool(L, t, "pinned", -1);
	o->exclusive = opt_bool(L, t, "exclusive", -1);
	for (i = 0; i < 6; i++)
		o->excl[i] = opt_bool(L, t, excl_names[i], -1);
}

static void apply_opts(struct perf_event_attr *a, const struct open_opts *o, int leader)
{
	/* Members follow their leader's enable state. */
	a->disabled = leader ? (unsigned)o->disabled : 0;
	a->enable_on_exec = leader ? (unsigned)o->enable_on_exec : 0;
	a->inherit = (unsigned)o->inherit;
	if (o->pinned >= 0)
		a->pinned = (unsigned)o->pinned;
	if (o->exclusive >= 0)
		a->exclusive = (unsigned)o->exclusive;
	/* Only a group leader may be pinned or exclusive. */
	if (!leader)
		a->pinned = a->exclusive = 0;
	if (o->excl[0] >= 0) a->exclude_user = (unsigned)o->excl[0];
	if (o->excl[1] >= 0) a->exclude_kernel = (unsigned)o->excl[1];
	if (o->excl[2] >= 0) a->exclude_hv = (unsigned)o->excl[2];
	if (o->excl[3] >= 0) a->exclude_idle = (unsigned)o->excl[3];
	if (o->excl[4] >= 0) a->exclude_host = (unsigned)o->excl[4];
	if (o->excl[5] >= 0) a->exclude_guest = (unsigned)o->excl[5];
}

static struct lcounter *to_any(lua_State *L, int i)
{
	struct lcounter *lc = luaL_testudata(L, i, COUNTER_MT);
	if (lc == NULL)
		lc = luaL_testudata(L, i, GROUP_MT);
	if (lc == NULL)
		luaL_argerror(L, i, "expected a perf.counter or perf.group");
	if (lc->c == NULL)
		luaL_error(L, "attempt to use a closed %s", lc->group ? "group" : "counter");
	return lc;
}

static int lcounter_close(lua_State *L)
{
	struct lcounter *lc = lua_touserdata(L, 1);
	if (lc != NULL && lc->c != NULL) {
		counter__close(lc->c);
		lc->c = NULL;
	}
	return 0;
}

/*
 * Parses spec into m (a userdata the caller keeps on the stack); returns 0
 * or pushes nil, message, errno and returns their count.
 */
static int parse_one(lua_State *L, const char *spec, struct lperf_member *m)
{
	char err[512];
	int r = evspec__parse(spec, &m->ev, err, sizeof err);

	if (r < 0)
		return lperf_fail(L, err, -r);
	snprintf(m->text, sizeof m->text, "%s", spec);
	return 0;
}

/*
 * Opens the parsed events m[0..n-1].  The userdata at ud owns every
 * buffer (lua-allocated), so raising here leaks nothing; the core's fds
 * exist only once counter__open_on succeeded.
 */
static int open_counter(lua_State *L, int ud, const struct lperf_member *m, size_t n,
			int group, const struct open_opts *o)
{
	struct lcounter *lc = lua_touserdata(L, ud);
	struct perf_event_attr *attrs;
	struct counter_failure fail;
	char err[1024];
	size_t i;
	int r;

	attrs = lua_newuserdatauv(L, n * sizeof *attrs, 0);
	memset(attrs, 0, n * sizeof *attrs);
	for (i = 0; i < n; i++) {
		attrs[i] = m[i].ev.attr;
		/* :P asks for the best precision that opens; counting has no
		 * skid to reduce, so the lowest level (0) always qualifies. */
		if (m[i].ev.precise_max)
			attrs[i].precise_ip = 0;
		apply_opts(&attrs[i], o, i == 0);
		/* A probe's attr points at its path (config1) in our memory: the
		 * kernel reads it again in every task that forks with the event
		 * inherited, and after an exec it is not there, so the fork fails.
		 * Probes count the task they are opened on. */
		if (m[i].ev.kind == EVSPEC_UPROBE || m[i].ev.kind == EVSPEC_KPROBE)
			attrs[i].inherit = 0;
		snprintf(lc->names[i], EVSPEC_NAME_MAX, "%s",
			 m[i].ev.name[0] ? m[i].ev.name : m[i].text);
		snprintf(lc->specs[i], EVSPEC_NAME_MAX, "%s", m[i].text);
	}
	r = counter__open_on(attrs, n, group, o->pids, o->npids, o->cpus, o->ncpus,
			     &lc->c, &fail);
	/* As perf does: a PMU that cannot tell guest from host (msr, uncore)
	 * refuses the exclude_guest the parser sets by default; drop it. */
	if (r == -EINVAL && o->excl[5] < 0) {
		int retry = 0;
		for (i = 0; i < n; i++) {
			retry |= attrs[i].exclude_guest;
			attrs[i].exclude_guest = 0;
		}
		if (retry)
			r = counter__open_on(attrs, n, group, o->pids, o->npids, o->cpus, o->ncpus,
			     &lc->c, &fail);
	}
	if (r < 0) {
		errmsg__open(err, sizeof err, -r, lc->specs[fail.index], &attrs[fail.index],
			     fail.pid, fail.cpu);
		lua_pop(L, 1);
		return lperf_fail(L, err, -r);
	}
	lua_pop(L, 1);
	lua_pushvalue(L, ud);
	return 1;
}

/* A closed userdata with room for n events; buffers live inside it. */
static struct lcounter *new_lcounter(lua_State *L, size_t n, int group)
{
	size_t head = (sizeof(struct lcounter) + 15) & ~(size_t)15;
	size_t sz = head + n * (sizeof(struct counter_value) + (size_t)2 * EVSPEC_NAME_MAX);
	struct lcounter *lc = lua_newuserdatauv(L, sz, 0);
	char *p = (char *)lc + head;

	memset(lc, 0, sz);
	lc->group = group;
	lc->n = n;
	lc->vals = (struct counter_value *)(void *)p;
	p += n * sizeof(struct counter_value);
	lc->names = (char (*)[EVSPEC_NAME_MAX])(void *)p;
	p += n * EVSPEC_NAME_MAX;
	lc->specs = (char (*)[EVSPEC_NAME_MAX])(void *)p;
	luaL_setmetatable(L, group ? GROUP_MT : COUNTER_MT);
	return lc;
}

/* perf.counter(spec [, opts]) */
static int l_counter(lua_State *L)
{
	struct lperf_member *m;
	struct open_opts o;
	int ud, r;

	if (lua_type(L, 1) != LUA_TSTRING)
		return luaL_argerror(L, 1, "expected an event spec string");
	if (!lua_isnoneornil(L, 2))
		luaL_checktype(L, 2, LUA_TTABLE);
	read_opts(L, lua_istable(L, 2) ? 2 : 0, &o);
	m = lua_newuserdatauv(L, sizeof *m, 0);
	if ((r = parse_one(L, lua_tostring(L, 1), m)) != 0)
		return r;
	new_lcounter(L, 1, 0);
	ud = lua_gettop(L);
	return open_counter(L, ud, m, 1, 0, &o);
}

/*
 * perf.group{spec1, spec2, ... [, pid=, cpu=, ...]}, perf.group(specs, opts),
 * or perf's group syntax as the only spec: perf.group("{a,b}:u" [, opts]),
 * perf.group{"{a,b}:u", ...opts}.
 */
static int l_group(lua_State *L)
{
	struct lperf_member *m;
	struct open_opts o;
	size_t n, i;
	int ud, r;

	if (lua_type(L, 1) != LUA_TSTRING)
		luaL_checktype(L, 1, LUA_TTABLE);
	if (!lua_isnoneornil(L, 2))
		luaL_checktype(L, 2, LUA_TTABLE);
	lua_settop(L, 2);
	n = lua_istable(L, 1) ? (size_t)lua_rawlen(L, 1) : 1;
	if (n == 0)
		return luaL_argerror(L, 1, "a group needs at least one event spec");
	if (n > GROUP_MAX)
		return luaL_argerror(L, 1, "too many events in one group");
	read_opts(L, lua_istable(L, 2) ? 2 : (lua_istable(L, 1) ? 1 : 0), &o);
	if (lua_istable(L, 1)) {
		for (i = 1; i <= n; i++) {
			lua_rawgeti(L, 1, (lua_Integer)i);
			if (lua_type(L, -1) != LUA_TSTRING)
				return luaL_error(L, "group event %d must be a spec string, got %s",
						  (int)i, luaL_typename(L, -1));
			if (evgroup__is_group(lua_tostring(L, -1)) && n > 1)
				return luaL_error(L, "group event %d is a group ('%s'): a group "
						  "spec must be perf.group's only event", (int)i,
						  lua_tostring(L, -1));
			lua_pop(L, 1);
		}
		lua_rawgeti(L, 1, 1);
	} else {
		lua_pushvalue(L, 1);
	}
	/* The first spec is on top: a group spec expands into its members. */
	if (evgroup__is_group(lua_tostring(L, -1))) {
		char err[512];
		int k = lperf_parse_group(L, lua_tostring(L, -1), &m, err, sizeof err);
		if (k < 0)
			return lperf_fail(L, err, -k);
		n = (size_t)k;
	} else {
		m = lua_newuserdatauv(L, n * sizeof *m, 0);
		for (i = 0; i < n; i++) {
			if (lua_istable(L, 1))
				lua_rawgeti(L, 1, (lua_Integer)i + 1);
			else
				lua_pushvalue(L, 1);
			r = parse_one(L, lua_tostring(L, -1), &m[i]);
			if (r != 0)
				return r;
			lua_pop(L, 1);
		}
	}
	new_lcounter(L, n, 1);
	ud = lua_gettop(L);
	return open_counter(L, ud, m, n, 1, &o);
}

static int result_ok(lua_State *L, int r)
{
	if (r < 0)
		return lperf_fail(L, NULL, -r);
	lua_pushboolean(L, 1);
	return 1;
}

static int m_enable(lua_State *L)
{
	return result_ok(L, counter__enable(to_any(L, 1)->c));
}

static int m_disable(lua_State *L)
{
	return result_ok(L, counter__disable(to_any(L, 1)->c));
}

static int m_reset(lua_State *L)
{
	return result_ok(L, counter__reset(to_any(L, 1)->c));
}

/*
 * read() is the hot path (a loop of reads must cost little more than the
 * read(2) itself), so its closures carry the field names as upvalues and
 * set them with lua_rawset: no string lookups per call.
 */
enum { UV_VALUE = 1, UV_RAW, UV_ENABLED, UV_RUNNING, UV_COUNTED, UV_NAME, UV_MT, UV_COUNT = UV_MT };
static const char *const uv_keys[UV_COUNT - 1] = {
	"value", "raw", "enabled", "running", "counted", "name",
};

/* Pushes the field name held in upvalue uv; set_field then stores under it. */
#define push_key(L, uv) lua_pushvalue((L), lua_upvalueindex(uv))

static void set_field(lua_State *L)
{
	/* stack: table, key, value */
	lua_rawset(L, -3);
}

/* check_counter without the registry lookup: the metatable is an upvalue. */
static struct lcounter *check_fast(lua_State *L, const char *what)
{
	struct lcounter *lc = lua_touserdata(L, 1);

	if (lc == NULL || !lua_getmetatable(L, 1) || !lua_rawequal(L, -1, lua_upvalueindex(UV_MT)))
		luaL_argerror(L, 1, what);
	lua_pop(L, 1);
	if (lc->c == NULL)
		luaL_error(L, "attempt to use a closed %s", lc->group ? "group" : "counter");
	return lc;
}

/* Sets the fields of the table on top; reusing a table allocates nothing. */
static void fill_value(lua_State *L, const struct counter_value *v)
{
	int counted = v->running != 0;

	push_key(L, UV_VALUE);
	if (counted)
		lperf_pushu64(L, v->value);
	else
		lua_pushnil(L);
	set_field(L);
	push_key(L, UV_RAW);
	if (counted)
		lperf_pushu64(L, v->raw);
	else
		lua_pushnil(L);
	set_field(L);
	push_key(L, UV_ENABLED);
	lperf_pushu64(L, v->enabled);
	set_field(L);
	push_key(L, UV_RUNNING);
	lperf_pushu64(L, v->running);
	set_field(L);
	push_key(L, UV_COUNTED);
	lua_pushboolean(L, counted);
	set_field(L);
}

/* c:read([t]) -> t | nil, msg, errno */
static int m_read(lua_State *L)
{
	struct lcounter *lc = check_fast(L, "expected a perf.counter");
	int r;

	if (lua_type(L, 2) != LUA_TTABLE && !lua_isnoneornil(L, 2))
		luaL_checktype(L, 2, LUA_TTABLE);
	r = counter__read(lc->c, lc->vals);
	if (r < 0)
		return lperf_fail(L, NULL, -r);
	if (lua_type(L, 2) == LUA_TTABLE)
		lua_settop(L, 2);
	else
		lua_createtable(L, 0, 5);
	fill_value(L, &lc->vals[0]);
	return 1;
}


/*
 * The member tables r[1..n] of the group result on top of the stack (also
 * reachable as r[spec] and r[name]), created on first use, then refilled
 * from lc->vals: a loop of reads allocates nothing.
 */
static void fill_members(lua_State *L, struct lcounter *lc)
{
	size_t i;

	for (i = 0; i < lc->n; i++) {
		lua_rawgeti(L, -1, (lua_Integer)i + 1);
		if (!lua_istable(L, -1)) {
			lua_pop(L, 1);
			lua_createtable(L, 0, 7);
			push_key(L, UV_NAME);
			lua_pushstring(L, lc->names[i]);
			set_field(L);
			lua_pushvalue(L, -1);
			lua_rawseti(L, -3, (lua_Integer)i + 1);
			lua_pushvalue(L, -1);
			lua_setfield(L, -3, lc->specs[i]);
			if (strcmp(lc->specs[i], lc->names[i]) != 0) {
				lua_pushvalue(L, -1);
				lua_setfield(L, -3, lc->names[i]);
			}
		}
		fill_value(L, &lc->vals[i]);
		lua_pop(L, 1);
	}
}

/* g:read([t]) -> { [spec] = r, [name] = r, r1, r2, ... } | nil, msg, errno */
static int g_read(lua_State *L)
{
	struct lcounter *lc = check_fast(L, "expected a perf.group");
	int r;

	if (!lua_isnoneornil(L, 2))
		luaL_checktype(L, 2, LUA_TTABLE);
	r = counter__read(lc->c, lc->vals);
	if (r < 0)
		return lperf_fail(L, NULL, -r);
	if (lua_istable(L, 2))
		lua_settop(L, 2);
	else
		lua_createtable(L, (int)lc->n, (int)lc->n);
	fill_members(L, lc);
	return 1;
}

/*
 * c:read_each([t]) -> { {cpu=, pid=, value=, raw=, enabled=, running=,
 * counted=}, ... } for a counter, { {cpu=, pid=, r1, r2, ..., [spec]=r}, ... }
 * for a group: one entry per fd set (CPU-major, as c:cpus() x c:pids()),
 * each scaled by its own times, as perf stat -A and --per-thread show them.
 * Passing the previous result back refills its tables.
 */
static int m_read_each(lua_State *L)
{
	struct lcounter *lc = check_fast(L, "expected a perf.counter or perf.group");
	size_t s, nset = counter__nr_sets(lc->c), npid = counter__nr_pids(lc->c);
	int r;

	if (!lua_isnoneornil(L, 2))
		luaL_checktype(L, 2, LUA_TTABLE);
	lua_settop(L, 2);
	if (lua_isnil(L, 2)) {
		lua_createtable(L, (int)nset, 0);
		lua_replace(L, 2);
	}
	for (s = 0; s < nset; s++) {
		r = counter__read_set(lc->c, s, lc->vals);
		if (r < 0)
			return lperf_fail(L, NULL, -r);
		lua_rawgeti(L, 2, (lua_Integer)s + 1);
		if (!lua_istable(L, -1)) {
			lua_pop(L, 1);
			lua_createtable(L, lc->group ? (int)lc->n : 0, 7);
			lua_pushinteger(L, counter__cpu(lc->c, s / npid));
			lua_setfield(L, -2, "cpu");
			lua_pushinteger(L, counter__pid(lc->c, s % npid));
			lua_setfield(L, -2, "pid");
			lua_pushvalue(L, -1);
			lua_rawseti(L, 2, (lua_Integer)s + 1);
		}
		if (!lc->group) {
			fill_value(L, &lc->vals[0]);
			lua_pop(L, 1);
			continue;
		}
		fill_members(L, lc);
		lua_pop(L, 1);
	}
	return 1;
}

/* c:fd([set_index [, event_index]]) -> fd (1-based indexes; with one pid
 * the set index is the CPU index) */
static int m_fd(lua_State *L)
{
	struct lcounter *lc = to_any(L, 1);
	lua_Integer cpu = luaL_optinteger(L, 2, 1), ev = luaL_optinteger(L, 3, 1);
	int fd;

	if (cpu < 1 || (size_t)cpu > counter__nr_sets(lc->c))
		return luaL_argerror(L, 2, "no such CPU index");
	if (ev < 1 || (size_t)ev > lc->n)
		return luaL_argerror(L, 3, "no such event index");
	fd = counter__fd(lc->c, (size_t)ev - 1, (size_t)cpu - 1);
	lua_pushinteger(L, fd);
	return 1;
}

/* c:id([event_index]) -> the kernel's event id */
static int m_id(lua_State *L)
{
	struct lcounter *lc = to_any(L, 1);
	lua_Integer ev = luaL_optinteger(L, 2, 1);

	if (ev < 1 || (size_t)ev > lc->n)
		return luaL_argerror(L, 2, "no such event index");
	lperf_pushu64(L, counter__id(lc->c, (size_t)ev - 1));
	return 1;
}

/* c:name([event_index]) -> perf's name for the event */
static int m_name(lua_State *L)
{
	struct lcounter *lc = to_any(L, 1);
	lua_Integer ev = luaL_optinteger(L, 2, 1);

	if (ev < 1 || (size_t)ev > lc->n)
		return luaL_argerror(L, 2, "no such event index");
	lua_pushstring(L, lc->names[ev - 1]);
	return 1;
}

/* c:cpus() -> { cpu numbers the fds are on } (-1 = any CPU) */
static int m_cpus(lua_State *L)
{
	struct lcounter *lc = to_any(L, 1);
	size_t i, n = counter__nr_cpus(lc->c);

	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		lua_pushinteger(L, counter__cpu(lc->c, i));
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/* c:pids() -> { task ids the fds are on } (-1 = every task) */
static int m_pids(lua_State *L)
{
	struct lcounter *lc = to_any(L, 1);
	size_t i, n = counter__nr_pids(lc->c);

	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		lua_pushinteger(L, counter__pid(lc->c, i));
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/* perf.threads(pid) -> { tid, ... } ascending | nil, msg, errno */
static int l_threads(lua_State *L)
{
	lua_Integer pid = luaL_checkinteger(L, 1);
	size_t max = 256;
	pid_t *tids;
	int n;

	if (pid < 1 || pid > 0x7fffffff)
		return luaL_argerror(L, 1, "expected a process id");
	for (;;) {
		int i;

		tids = lua_newuserdatauv(L, max * sizeof *tids, 0);
		n = counter__threads((pid_t)pid, tids, max);
		if (n < 0) {
			char err[128];
			snprintf(err, sizeof err, "process %d: %s", (int)pid,
				 n == -ESRCH ? "no such process" : strerror(-n));
			return lperf_fail(L, err, -n);
		}
		/* Threads started between the two reads: read again, bigger. */
		if ((size_t)n <= max || max >= COUNTER_MAX_PIDS) {
			if ((size_t)n > max)
				n = (int)max;
			lua_createtable(L, n, 0);
			for (i = 0; i < n; i++) {
				lua_pushinteger(L, tids[i]);
				lua_rawseti(L, -2, (lua_Integer)i + 1);
			}
			return 1;
		}
		lua_pop(L, 1);
		max = (size_t)n * 2 > COUNTER_MAX_PIDS ? COUNTER_MAX_PIDS : (size_t)n * 2;
	}
}

/* g:names() -> { spec1, spec2, ... } as perf names them */
static int g_names(lua_State *L)
{
	struct lcounter *lc = to_any(L, 1);
	size_t i;

	lua_createtable(L, (int)lc->n, 0);
	for (i = 0; i < lc->n; i++) {
		lua_pushstring(L, lc->names[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

static int m_tostring(lua_State *L)
{
	struct lcounter *lc = lua_touserdata(L, 1);

	if (lc->c == NULL)
		lua_pushfstring(L, "perf.%s (closed)", lc->group ? "group" : "counter");
	else
		lua_pushfstring(L, "perf.%s (%s%s)", lc->group ? "group" : "counter",
				lc->names[0], lc->n > 1 ? ", ..." : "");
	return 1;
}

/* ---- workloads ---- */

struct lworkload {
	struct workload *w;  /* NULL = closed */
	char cmd[128];       /* argv[0], for messages */
};

static struct lworkload *check_workload(lua_State *L)
{
	struct lworkload *lw = luaL_checkudata(L, 1, WORKLOAD_MT);
	if (lw->w == NULL)
		luaL_error(L, "attempt to use a closed workload");
	return lw;
}

static int lworkload_close(lua_State *L)
{
	struct lworkload *lw = lua_touserdata(L, 1);
	if (lw != NULL && lw->w != NULL) {
		workload__delete(lw->w);
		lw->w = NULL;
	}
	return 0;
}

/* perf.workload{argv...} -> a forked child blocked before execvp */
static int l_workload(lua_State *L)
{
	struct lworkload *lw;
	const char **argv;
	size_t n, i;
	char err[512];
	int r;

	luaL_checktype(L, 1, LUA_TTABLE);
	n = (size_t)lua_rawlen(L, 1);
	if (n == 0)
		return luaL_argerror(L, 1, "empty command");
	if (n > 65536)
		return luaL_argerror(L, 1, "too many arguments");
	argv = lua_newuserdatauv(L, (n + 1) * sizeof *argv, 0);
	/* A table of the arguments as strings keeps them alive until the fork. */
	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		lua_rawgeti(L, 1, (lua_Integer)i + 1);
		if (lua_type(L, -1) != LUA_TSTRING && lua_type(L, -1) != LUA_TNUMBER)
			return luaL_error(L, "command argument %d must be a string", (int)i + 1);
		argv[i] = lua_tostring(L, -1); /* converts a number in place */
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	argv[n] = NULL;
	lw = lua_newuserdatauv(L, sizeof *lw, 0);
	lw->w = NULL;
	snprintf(lw->cmd, sizeof lw->cmd, "%s", argv[0]);
	luaL_setmetatable(L, WORKLOAD_MT);
	r = workload__prepare((char *const *)argv, &lw->w);
	if (r < 0) {
		snprintf(err, sizeof err, "cannot start '%s': %s", argv[0], strerror(-r));
		return lperf_fail(L, err, -r);
	}
	return 1;
}

static int w_pid(lua_State *L)
{
	lua_pushinteger(L, workload__pid(check_workload(L)->w));
	return 1;
}

/* w:start() -> true | nil, msg, errno (e.g. no such command) */
static int w_start(lua_State *L)
{
	struct lworkload *lw = check_workload(L);
	int r = workload__start(lw->w);
	char err[512];

	if (r < 0) {
		snprintf(err, sizeof err, "cannot exec '%s': %s", lw->cmd, strerror(-r));
		return lperf_fail(L, err, -r);
	}
	lua_pushboolean(L, 1);
	return 1;
}

/* Shell-style status (code, or 128+signal), then "exited"/"signaled" and n. */
static int push_status(lua_State *L, int st)
{
	if (WIFSIGNALED(st)) {
		lua_pushinteger(L, 128 + WTERMSIG(st));
		lua_pushliteral(L, "signaled");
		lua_pushinteger(L, WTERMSIG(st));
	} else {
		lua_pushinteger(L, WEXITSTATUS(st));
		lua_pushliteral(L, "exited");
		lua_pushinteger(L, WEXITSTATUS(st));
	}
	return 3;
}

/*
 * w:wait([timeout_ms [, catch_sigint]]) -> status, "exited"|"signaled", n
 *   | false (still running at the timeout) | nil, msg, errno (EINTR: ^C)
 */
static int w_wait(lua_State *L)
{
	struct lworkload *lw = check_workload(L);
	int st = 0, r;

	if (lua_isnoneornil(L, 2) && !lua_toboolean(L, 3)) {
		r = workload__wait(lw->w, &st);
	} else {
		lua_Integer ms = luaL_optinteger(L, 2, -1);
		if (ms < -1 || ms > 0x7fffffff)
			return luaL_argerror(L, 2, "timeout out of range");
		r = workload__wait_timeout(lw->w, (int)ms, lua_toboolean(L, 3), &st);
		if (r == 0) {
			lua_pushboolean(L, 0);
			return 1;
		}
	}
	if (r == -EINTR)
		return lperf_fail(L, "interrupted", EINTR);
	if (r < 0)
		return lperf_fail(L, NULL, -r);
	return push_status(L, st);
}

/* w:rusage() -> user_seconds, sys_seconds of the reaped child */
static int w_rusage(lua_State *L)
{
	struct lworkload *lw = check_workload(L);
	unsigned long long u, s;
	int r = workload__rusage(lw->w, &u, &s);

	if (r < 0)
		return lperf_fail(L, "the command has not been waited for", -r);
	lua_pushnumber(L, (lua_Number)u / 1e9);
	lua_pushnumber(L, (lua_Number)s / 1e9);
	return 2;
}

/*
 * perf.core.sleep(ms [, pid [, catch_sigint]]) -> "timeout" | "exited"
 *   | "interrupted" | nil, msg, errno.  ms -1 waits without limit.
 */
static int l_sleep(lua_State *L)
{
	lua_Integer ms = luaL_checkinteger(L, 1);
	lua_Integer pid = luaL_optinteger(L, 2, 0);
	int r;

	if (ms < -1 || ms > 0x7fffffff)
		return luaL_argerror(L, 1, "timeout out of range");
	if (pid < 0 || pid > 0x7fffffff)
		return luaL_argerror(L, 2, "bad pid");
	r = workload__sleep((pid_t)pid, (int)ms, lua_toboolean(L, 3));
	if (r == -EINTR) {
		lua_pushliteral(L, "interrupted");
		return 1;
	}
	if (r < 0)
		return lperf_fail(L, NULL, -r);
	if (r == 1)
		lua_pushliteral(L, "exited");
	else
		lua_pushliteral(L, "timeout");
	return 1;
}

/* perf.core.clock() -> CLOCK_MONOTONIC in seconds (for elapsed times) */
static int l_clock(lua_State *L)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec / 1e9);
	return 1;
}

static const luaL_Reg counter_methods[] = {
	{ "enable", m_enable }, { "disable", m_disable }, { "reset", m_reset },
	{ "close", lcounter_close }, { "fd", m_fd },
	{ "id", m_id }, { "name", m_name }, { "cpus", m_cpus }, { "pids", m_pids },
	{ NULL, NULL },
};

static const luaL_Reg group_methods[] = {
	{ "enable", m_enable }, { "disable", m_disable }, { "reset", m_reset },
	{ "close", lcounter_close }, { "fd", m_fd },
	{ "id", m_id }, { "name", m_name }, { "names", g_names }, { "cpus", m_cpus },
	{ "pids", m_pids },
	{ NULL, NULL },
};

static const luaL_Reg workload_methods[] = {
	{ "pid", w_pid }, { "start", w_start }, { "wait", w_wait }, { "rusage", w_rusage },
	{ "close", lworkload_close },
	{ NULL, NULL },
};

static const luaL_Reg functions[] = {
	{ "counter", l_counter }, { "group", l_group }, { "workload", l_workload },
	{ "sleep", l_sleep }, { "clock", l_clock }, { "threads", l_threads },
	{ NULL, NULL },
};

/* Adds method name, with the field names as upvalues, to tname's methods. */
static void add_read(lua_State *L, const char *tname, const char *name, lua_CFunction fn)
{
	int i;

	luaL_getmetatable(L, tname);
	lua_getfield(L, -1, "__index");
	for (i = 0; i < UV_COUNT - 1; i++)
		lua_pushstring(L, uv_keys[i]);
	lua_pushvalue(L, -1 - (UV_COUNT - 1) - 1); /* the metatable */
	lua_pushcclosure(L, fn, UV_COUNT);
	lua_setfield(L, -2, name);
	lua_pop(L, 2);
}

void lperf_open_counter(lua_State *L)
{
	lperf_newclass(L, COUNTER_MT, counter_methods, lcounter_close);
	lperf_newclass(L, GROUP_MT, group_methods, lcounter_close);
	add_read(L, COUNTER_MT, "read", m_read);
	add_read(L, GROUP_MT, "read", g_read);
	add_read(L, COUNTER_MT, "read_each", m_read_each);
	add_read(L, GROUP_MT, "read_each", m_read_each);
	lperf_newclass(L, WORKLOAD_MT, workload_methods, lworkload_close);
	luaL_getmetatable(L, COUNTER_MT);
	lua_pushcfunction(L, m_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);
	luaL_getmetatable(L, GROUP_MT);
	lua_pushcfunction(L, m_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);
	luaL_setfuncs(L, functions, 0);
}
