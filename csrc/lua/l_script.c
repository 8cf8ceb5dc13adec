/*
 * f:script_text{...}: perf script's listing of a perf.File, formatted in C
 * (perfdata/script_text.h) and written to the C stdout (Lua's io.stdout),
 * or to the file opts.path, in big chunks; no Lua value per record.  The pass starts from the first
 * record (an iteration of f:records() in progress is superseded).
 *
 *   f:script_text{
 *     symbolizer = sym,            -- a perf.symbolizer readied for f (required)
 *     fields = { [type] = { comm = true, tid = true, ... }, ... },
 *                                  -- per output type 0..5 and 7 (others):
 *                                  -- comm tid pid time cpu event period ip
 *                                  -- sym symoff dso trace; others raise
 *     callchain = bool, ns = bool, max_stack = N,
 *     unwind = bool,               -- DWARF samples' user stacks unwound (the
 *                                  -- file must be read time-ordered)
 *     inlines = bool,              -- their frames' inlined functions (default true)
 *     time = { start = ns, stop = ns },   -- the filters, as sets:
 *     cpus = { [cpu] = true }, pids = { [pid] = true }, tids = {...},
 *     comms = { [name] = true },
 *     path = FILE,                 -- instead of stdout (created, truncated)
 *   } -> { records=, samples=, printed=, resolves=, warnings = {...} }
 *      | nil, msg, errno, warnings
 *
 * warnings: the symbolizer's (an object left unnamed, and why), in order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "binding.h"
#include "perfdata/perfdata.h"
#include "perfdata/script_text.h"
#include "symbol/symbolizer.h"

#define MAX_CPUS ((size_t)1 << 22)

static const struct { const char *name; unsigned bit; } field_names[] = {
	{ "comm", SCRIPT_F_COMM }, { "tid", SCRIPT_F_TID }, { "pid", SCRIPT_F_PID },
	{ "time", SCRIPT_F_TIME }, { "cpu", SCRIPT_F_CPU }, { "event", SCRIPT_F_EVENT },
	{ "period", SCRIPT_F_PERIOD }, { "ip", SCRIPT_F_IP }, { "sym", SCRIPT_F_SYM },
	{ "symoff", SCRIPT_F_SYMOFF }, { "dso", SCRIPT_F_DSO }, { "trace", SCRIPT_F_TRACE },
};

/* The warnings of the pass: owned by a userdata, so a raise leaks none. */
struct warnlist {
	char **v;
	size_t n, cap;
	int oom;
};

static int warnlist_gc(lua_State *L)
{
	struct warnlist *w = lua_touserdata(L, 1);
	size_t i;

	for (i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
	w->v = NULL;
	w->n = w->cap = 0;
	return 0;
}

static void on_warning(void *arg, const char *msg)
{
	struct warnlist *w = arg;
	char *copy;

	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 8;
		char **v = realloc(w->v, cap * sizeof *v);
		if (!v) {
			w->oom = 1;
			return;
		}
		w->v = v;
		w->cap = cap;
	}
	if ((copy = strdup(msg)) != NULL)
		w->v[w->n++] = copy;
	else
		w->oom = 1;
}

static int to_file(void *arg, const void *buf, size_t len)
{
	if (fwrite(buf, 1, len, arg) != len)
		return errno ? -errno : -EIO;
	return 0;
}

static unsigned read_fields(lua_State *L, int t)
{
	unsigned mask = 0;
	size_t i;

	luaL_checktype(L, t, LUA_TTABLE);
	lua_pushnil(L);
	while (lua_next(L, t) != 0) {
		const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
		for (i = 0; k && i < sizeof field_names / sizeof field_names[0]; i++)
			if (!strcmp(k, field_names[i].name))
				break;
		if (!k || i == sizeof field_names / sizeof field_names[0])
			luaL_error(L, "f:script_text: field '%s' is not formatted in C",
				   k ? k : "?");
		if (lua_toboolean(L, -1))
			mask |= field_names[i].bit;
		lua_pop(L, 1);
	}
	return mask;
}

/* Pushes the table at field k of t and counts its entries (*count);
 * 0 and nothing pushed when the field is absent. */
static int set_field(lua_State *L, int t, const char *k, size_t *count)
{
	lua_getfield(L, t, k);
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		return 0;
	}
	luaL_checktype(L, -1, LUA_TTABLE);
	*count = 0;
	lua_pushnil(L);
	while (lua_next(L, -2) != 0) {
		++*count;
		lua_pop(L, 1);
	}
	return 1;
}

/* The integer keys of the set at t into a new array (owned by a userdata
 * left on the stack); NULL when the option is absent. */
static int32_t *int_set(lua_State *L, int t, const char *k, size_t *n)
{
	int32_t *v;
	size_t i = 0;

	*n = 0;
	if (!set_field(L, t, k, &i))
		return NULL;
	v = lua_newuserdatauv(L, (i ? i : 1) * sizeof *v, 0);
	lua_insert(L, -2);           /* the userdata stays below the set */
	lua_pushnil(L);
	while (lua_next(L, -2) != 0) {
		lua_Integer x = luaL_checkinteger(L, -2);
		lua_pop(L, 1);
		/* no pid or tid is out of range: such an entry matches nothing */
		if (*n < i && x >= INT32_MIN && x <= INT32_MAX)
			v[(*n)++] = (int32_t)x;
	}
	lua_pop(L, 1);
	return v;
}

static const uint8_t *cpu_set(lua_State *L, int t, size_t *n)
{
	uint8_t *v;
	lua_Integer max = -1;

	lua_getfield(L, t, "cpus");
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		*n = 0;
		return NULL;
	}
	luaL_checktype(L, -1, LUA_TTABLE);
	lua_pushnil(L);
	while (lua_next(L, -2) != 0) {
		lua_Integer c = luaL_checkinteger(L, -2);
		if (c >= 0 && (size_t)c < MAX_CPUS && c > max)
			max = c;
		lua_pop(L, 1);
	}
	*n = (size_t)(max + 1);
	v = lua_newuserdatauv(L, *n ? *n : 1, 0);
	memset(v, 0, *n ? *n : 1);
	lua_insert(L, -2);
	lua_pushnil(L);
	while (lua_next(L, -2) != 0) {
		lua_Integer c = lua_tointeger(L, -2);
		if (c >= 0 && (size_t)c < *n && lua_toboolean(L, -1))
			v[c] = 1;
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return v;
}

/* opts.time = { start=, stop= } (ns) and opts.cpus = { [c] = true } of the
 * table at t into w (the CPU array owned by a userdata left on the stack). */
void lperf_window(lua_State *L, int t, struct record_window *w)
{
	memset(w, 0, sizeof *w);
	lua_getfield(L, t, "time");
	if (!lua_isnil(L, -1)) {
		luaL_checktype(L, -1, LUA_TTABLE);
		lua_getfield(L, -1, "start");
		if ((w->has_start = !lua_isnil(L, -1)))
			w->start = lperf_checku64(L, lua_gettop(L));
		lua_getfield(L, -2, "stop");
		if ((w->has_stop = !lua_isnil(L, -1)))
			w->stop = lperf_checku64(L, lua_gettop(L));
		lua_pop(L, 2);
	}
	lua_pop(L, 1);
	w->cpus = cpu_set(L, t, &w->nr_cpus);
}

static const char **comm_set(lua_State *L, int t, size_t *n)
{
	const char **v;
	size_t i = 0;

	*n = 0;
	if (!set_field(L, t, "comms", &i))
		return NULL;
	v = lua_newuserdatauv(L, (i ? i : 1) * sizeof *v, 0);
	/* the set stays on the stack above its array: it keeps the names */
	lua_insert(L, -2);
	lua_pushnil(L);
	while (lua_next(L, -2) != 0) {
		if (*n < i && lua_type(L, -2) == LUA_TSTRING && lua_toboolean(L, -1))
			v[(*n)++] = lua_tostring(L, -2);
		lua_pop(L, 1);
	}
	return v;
}

int lperf_file_script_text(lua_State *L)
{
	struct perfdata *pd = lperf_file_pass(L, 1);
	struct script_text_opts o;
	struct script_text_stats st;
	struct symbolizer *sym;
	struct warnlist *w;
	const char *path;
	FILE *out = stdout;
	char err[512];
	size_t i;
	int rc;

	luaL_checktype(L, 2, LUA_TTABLE);
	lua_settop(L, 2);
	memset(&o, 0, sizeof o);
	lua_getfield(L, 2, "symbolizer");
	if (!(sym = lperf_tosymbolizer(L, -1)))
		return luaL_error(L, "f:script_text: symbolizer must be an open perf.symbolizer");
	lua_getfield(L, 2, "fields");
	luaL_checktype(L, -1, LUA_TTABLE);
	for (i = 0; i < SCRIPT_NTYPES; i++) {
		lua_rawgeti(L, -1, (int)i);
		if (!lua_isnil(L, -1))
			o.fields[i] = read_fields(L, lua_gettop(L));
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	o.callchain = lperf_optfield_bool(L, 2, "callchain", 0);
	o.ns = lperf_optfield_bool(L, 2, "ns", 0);
	o.unwind = lperf_optfield_bool(L, 2, "unwind", 0);
	o.inlines = lperf_optfield_bool(L, 2, "inlines", 1);
	if (o.unwind && perfdata__unordered(pd))
		return luaL_error(L, "f:script_text{unwind = true}: the file was opened unordered; "
				  "unwinding needs the maps before the samples (open it ordered)");
	o.max_stack = (unsigned)lperf_optfield_int(L, 2, "max_stack", 0);
	lperf_window(L, 2, &o.window);
	o.pids = int_set(L, 2, "pids", &o.nr_pids);
	o.tids = int_set(L, 2, "tids", &o.nr_tids);
	o.comms = comm_set(L, 2, &o.nr_comms);
	o.tracefmt = lperf_file_tracefmt(L, 1);
	w = lua_newuserdatauv(L, sizeof *w, 0);
	memset(w, 0, sizeof *w);
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, warnlist_gc);
	lua_setfield(L, -2, "__gc");
	lua_setmetatable(L, -2);
	path = lperf_optfield_str(L, 2, "path", NULL);
	o.write = to_file;
	o.warn = on_warning;
	o.warn_arg = w;
	/* Nothing below raises until the file is closed. */
	if (path && !(out = fopen(path, "we"))) {
		rc = errno;
		lua_pushfstring(L, "cannot create %s: %s", path, strerror(rc));
		return lperf_fail(L, lua_tostring(L, -1), rc);
	}
	/* Lua's io.stdout may hold text written before */
	fflush(out);
	o.write_arg = out;
	errno = 0;
	rc = perfdata__script_text(pd, sym, &o, &st, err, sizeof err);
	if (rc == 0 && fflush(out) != 0) {
		rc = errno ? -errno : -EIO;
		snprintf(err, sizeof err, "%s", strerror(-rc));
	}
	if (path && fclose(out) != 0 && rc == 0) {
		rc = errno ? -errno : -EIO;
		snprintf(err, sizeof err, "%s", strerror(-rc));
	}
	lua_createtable(L, (int)w->n, 0);
	for (i = 0; i < w->n; i++) {
		lua_pushstring(L, w->v[i]);
		lua_rawseti(L, -2, (int)i + 1);
	}
	if (rc < 0) {
		lua_pushnil(L);
		lua_pushstring(L, err);
		lua_pushinteger(L, -rc);
		lua_pushvalue(L, -4);
		return 4;
	}
	lua_createtable(L, 0, 5);
	lua_pushvalue(L, -2);
	lua_setfield(L, -2, "warnings");
	lperf_setu64(L, "records", st.records);
	lperf_setu64(L, "samples", st.samples);
	lperf_setu64(L, "printed", st.printed);
	lperf_setu64(L, "resolves", st.resolves);
	return 1;
}
