/*
 * perf.ProfileView: a profile symbolized once (profile/profview.h) and the
 * reports that run on it in C (pvreport.h, pvfolded.h).  Lua gets rows,
 * trees and text, never a table per sample or per frame unless it asks
 * for the stack list.
 *
 *   v = p:view{ symbolizer=, lines=, inline=, truncated_marks=, frames= }
 *   v:summary([event])   -> { events = {names in order}, samples=, period=,
 *                             stacks=, has_chains=, comm_width= }
 *   v:report{ by = {"comm","dso","sym",...}, children=, weight="period"|"samples",
 *             percentage="absolute"|"relative", event=, comm=, pid=, tid=,
 *             dso= pattern, sym= pattern }
 *       -> { {key=, self=, total=, samples=, self_pct=, total_pct=, sym=, dso=,
 *             kind=, comm=, pid=, tid=, thread_comm=}, ..., total=, all= }
 *   v:callgraph(rows, {children=, weight=, event=, comm=, pid=, tid=, min=})
 *       -> { [i] = tree of rows[i] } (nodes { name=, w=, kids=, nkids= }:
 *          kids lighter than min left out, nkids counts them all)
 *   v:folded{ annotate=, comm_frame=, weight=, event=, comm=, pid=, tid= }  -> text
 *       (comm_frame = false: no command as the root frame)
 *   v:report_text{ report's options, columns = {"children", "self" | "overhead",
 *                  "comm", "dso", "sym", "pid", "tid", "cpu"}, percent_limit=,
 *                  n=, comm_cut=, graph=, graph_pct= }
 *       -> perf report's table as text (titles, rule, rows, call graphs), rows, all, total
 *   v:list{ event=, merge= }  -> the stack list of lua/perf/stacks.lua
 *       (merge = true: stacks that a flame graph draws alike, the same command
 *       and frame labels and kinds, as one; their frames are the first's)
 *
 * Filters: event, comm (a name or a list), pid and tid (a number or a
 * list) select stacks; dso and sym (Lua patterns) match the leaf's object
 * path and label.  The view holds its profile (which must stay open).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/keytab.h"
#include "binding.h"
#include "profile/profview.h"
#include "profile/pvfolded.h"
#include "profile/pvreport.h"
#include "profile/pvtext.h"
#include "profile/stacktab.h"

#define VIEW "perf.ProfileView"

static char profile_key;   /* weak map: view -> its profile */

struct lview {
	struct profview *pv;
};

static struct lview *check_view(lua_State *L)
{
	struct lview *v = luaL_checkudata(L, 1, VIEW);

	if (!v->pv)
		luaL_error(L, "attempt to use a closed " VIEW);
	/* the profile must still be open: the view reads its entries */
	lua_pushlightuserdata(L, &profile_key);
	lua_rawget(L, LUA_REGISTRYINDEX);
	lua_pushvalue(L, 1);
	lua_rawget(L, -2);
	lperf_checkprofile(L, -1);
	lua_pop(L, 2);
	return v;
}

static int v_close(lua_State *L)
{
	struct lview *v = luaL_checkudata(L, 1, VIEW);

	profview__delete(v->pv);
	v->pv = NULL;
	return 0;
}

static const char *const kind_names[] = { "user", "kernel", "jit", "inline", "lua" };

static int view_fail(lua_State *L, int rc)
{
	return lperf_fail(L, rc == -ENOMEM ? "out of memory" : strerror(-rc), -rc);
}

/* p:view{...} */
static int p_view(lua_State *L)
{
	struct stacktab *st = lperf_checkprofile(L, 1);
	struct profview_opts o;
	struct lview *v;
	int rc;

	memset(&o, 0, sizeof o);
	if (!lua_isnoneornil(L, 2)) {
		luaL_checktype(L, 2, LUA_TTABLE);
		lua_getfield(L, 2, "symbolizer");
		if (!lua_isnil(L, -1)) {
			o.sym = lperf_tosymbolizer(L, -1);
			if (!o.sym)
				luaL_argerror(L, 2, "symbolizer: expected an open perf.symbolizer");
		}
		lua_pop(L, 1);
		o.lines = lperf_optfield_bool(L, 2, "lines", 0);
		o.inlines = lperf_optfield_bool(L, 2, "inline", 0);
		o.truncated_marks = lperf_optfield_bool(L, 2, "truncated_marks", 0);
		o.no_frames = !lperf_optfield_bool(L, 2, "frames", 1);
	}
	v = lua_newuserdatauv(L, sizeof *v, 0);
	v->pv = NULL;
	luaL_setmetatable(L, VIEW);
	rc = profview__new(st, &o, &v->pv);
	if (rc)
		return view_fail(L, rc);
	lperf_weakmap_set(L, &profile_key, -1, 1);
	return 1;
}

/* Whether the table or scalar at idx holds value s (a string) / n. */
static int set_has_str(lua_State *L, int idx, const char *s)
{
	size_t i, n;
	int found = 0;

	if (lua_type(L, idx) != LUA_TTABLE)
		return s && lua_type(L, idx) == LUA_TSTRING && !strcmp(lua_tostring(L, idx), s);
	if (!s)
		return 0;
	n = lua_rawlen(L, idx);
	for (i = 1; i <= n && !found; i++) {
		lua_rawgeti(L, idx, (int)i);
		found = lua_type(L, -1) == LUA_TSTRING && !strcmp(lua_tostring(L, -1), s);
		lua_pop(L, 1);
	}
	return found;
}

static int set_has_int(lua_State *L, int idx, lua_Integer v)
{
	size_t i, n;
	int found = 0;

	if (lua_type(L, idx) != LUA_TTABLE)
		return lua_type(L, idx) == LUA_TNUMBER && lua_tonumber(L, idx) == (lua_Number)v;
	n = lua_rawlen(L, idx);
	for (i = 1; i <= n && !found; i++) {
		lua_rawgeti(L, idx, (int)i);
		found = lua_type(L, -1) == LUA_TNUMBER && lua_tonumber(L, -1) == (lua_Number)v;
		lua_pop(L, 1);
	}
	return found;
}

/* string.find(s, pattern) as a boolean. */
static int lua_find(lua_State *L, int find, const char *s, size_t len, int pattern)
{
	int r;

	lua_pushvalue(L, find);
	lua_pushlstring(L, s, len);
	lua_pushvalue(L, pattern);
	lua_call(L, 2, 1);
	r = !lua_isnil(L, -1);
	lua_pop(L, 1);
	return r;
}

/*
 * The stacks opts (at index t) keeps, as a byte per stack in a userdata
 * left on the stack (NULL and nil: every stack).  leaf_filters: dso and sym
 * apply.  *all gets the weight of the event's stacks (the filters aside).
 */
static const uint8_t *keep_mask(lua_State *L, struct profview *pv, int t, int leaf_filters,
				int by_period, uint64_t *all)
{
	const struct stacktab *st = profview__table(pv);
	size_t ns = profview__nstacks(pv), i, nf = profview__nframes(pv);
	int top = lua_gettop(L), ev, comm, pid, tid, dso, sym, find = 0, any;
	uint32_t event = PV_NONE;
	uint8_t *keep, *leaf = NULL;

	t = lua_absindex(L, t);
	lua_getfield(L, t, "event");
	ev = lua_gettop(L);
	lua_getfield(L, t, "comm");
	comm = lua_gettop(L);
	lua_getfield(L, t, "pid");
	pid = lua_gettop(L);
	lua_getfield(L, t, "tid");
	tid = lua_gettop(L);
	if (leaf_filters) {
		lua_getfield(L, t, "dso");
		dso = lua_gettop(L);
		lua_getfield(L, t, "sym");
		sym = lua_gettop(L);
	} else {
		lua_pushnil(L);
		dso = lua_gettop(L);
		lua_pushnil(L);
		sym = lua_gettop(L);
	}
	if (!lua_isnil(L, ev)) {
		size_t len;
		const char *s = luaL_checklstring(L, ev, &len);
		if (profview__intern(pv, s, len, &event))
			luaL_error(L, "out of memory");
	}
	any = !lua_isnil(L, ev) || !lua_isnil(L, comm) || !lua_isnil(L, pid) ||
	      !lua_isnil(L, tid) || !lua_isnil(L, dso) || !lua_isnil(L, sym);
	if (!lua_isnil(L, dso) || !lua_isnil(L, sym)) {
		if (!lua_isnil(L, dso))
			luaL_checkstring(L, dso);
		if (!lua_isnil(L, sym))
			luaL_checkstring(L, sym);
		lua_getglobal(L, "string");
		lua_getfield(L, -1, "find");
		find = lua_gettop(L);
		leaf = lua_newuserdatauv(L, nf ? nf : 1, 0);
		memset(leaf, 0, nf ? nf : 1);
	}
	keep = lua_newuserdatauv(L, ns ? ns : 1, 0);
	*all = 0;
	for (i = 0; i < ns; i++) {
		struct stacktab_entry e;
		int k = 1;

		stacktab__get(st, i, &e);
		if (event != PV_NONE && profview__event(pv, i) != event) {
			keep[i] = 0;
			continue;
		}
		*all += by_period ? e.period : e.count;
		if (!lua_isnil(L, comm)) {
			uint32_t c = profview__comm(pv, i);
			k = set_has_str(L, comm, c == PV_NONE ? NULL : profview__str(pv, c));
		}
		if (k && !lua_isnil(L, pid))
			k = set_has_int(L, pid, e.pid);
		if (k && !lua_isnil(L, tid))
			k = set_has_int(L, tid, e.tid);
		if (k && leaf) {
			const uint32_t *ids;
			unsigned n;
			profview__stack(pv, i, &ids, &n);
			if (n == 0) {
				k = 0;
			} else {
				uint32_t id = ids[n - 1];
				if (!leaf[id]) {
					const struct pv_frame *f = profview__frame(pv, id);
					int ok = 1;
					if (!lua_isnil(L, dso))
						ok = f->dso != PV_NONE &&
						     lua_find(L, find, profview__str(pv, f->dso),
							      profview__strlen(pv, f->dso), dso);
					if (ok && !lua_isnil(L, sym))
						ok = lua_find(L, find, profview__str(pv, f->label),
							      profview__strlen(pv, f->label), sym);
					leaf[id] = ok ? 1 : 2;
				}
				k = leaf[id] == 1;
			}
		}
		keep[i] = (uint8_t)k;
	}
	/* leave only the mask on the stack */
	lua_replace(L, top + 1);
	lua_settop(L, top + 1);
	return any ? keep : NULL;
}

static int by_period(lua_State *L, int t)
{
	const char *w = lperf_optfield_str(L, t, "weight", "samples");

	if (strcmp(w, "samples") && strcmp(w, "period"))
		luaL_error(L, "weight: expected samples or period, got '%s'", w);
	return !strcmp(w, "period");
}

static void push_str(lua_State *L, struct profview *pv, uint32_t id)
{
	if (id == PV_NONE)
		lua_pushnil(L);
	else
		lua_pushlstring(L, profview__str(pv, id), profview__strlen(pv, id));
}

static void set_str(lua_State *L, struct profview *pv, const char *k, uint32_t id)
{
	if (id == PV_NONE)
		return;
	push_str(L, pv, id);
	lua_setfield(L, -2, k);
}

/* v:summary([event]) */
static int v_summary(lua_State *L)
{
	struct profview *pv = check_view(L)->pv;
	const struct stacktab *st = profview__table(pv);
	size_t ns = profview__nstacks(pv), i, nev = 0, width = 0;
	uint64_t samples = 0, period = 0;
	uint32_t event = PV_NONE;
	int chains = 0, seen;

	if (!lua_isnoneornil(L, 2)) {
		size_t len;
		const char *s = luaL_checklstring(L, 2, &len);
		if (profview__intern(pv, s, len, &event))
			return luaL_error(L, "out of memory");
	}
	lua_createtable(L, 0, 6);
	lua_newtable(L);             /* events, in order */
	lua_newtable(L);             /* seen events */
	seen = lua_gettop(L);
	for (i = 0; i < ns; i++) {
		struct stacktab_entry e;
		uint32_t ev = profview__event(pv, i), c;

		lua_rawgeti(L, seen, (int)ev + 1);
		if (lua_isnil(L, -1)) {
			lua_pushboolean(L, 1);
			lua_rawseti(L, seen, (int)ev + 1);
			push_str(L, pv, ev);
			lua_rawseti(L, seen - 1, (int)++nev);
		}
		lua_pop(L, 1);
		if (event != PV_NONE && ev != event)
			continue;
		stacktab__get(st, i, &e);
		samples += e.count;
		period += e.period;
		if (profview__depth(pv, i) > 1)
			chains = 1;
		c = profview__thread_comm(pv, i);
		if (c == PV_NONE)
			c = profview__comm(pv, i);
		if (c != PV_NONE && profview__strlen(pv, c) > width)
			width = profview__strlen(pv, c);
	}
	lua_pop(L, 1);
	lua_setfield(L, -2, "events");
	lperf_setu64(L, "samples", samples);
	lperf_setu64(L, "period", period);
	lperf_setu64(L, "stacks", ns);
	lperf_setbool(L, "has_chains", chains);
	lperf_setint(L, "comm_width", (lua_Integer)width);
	lperf_setu64(L, "bytes", profview__bytes(pv));
	return 1;
}

static enum pvr_key key_of(lua_State *L, const char *k)
{
	if (!strcmp(k, "sym") || !strcmp(k, "symbol"))
		return PVR_SYM;
	if (!strcmp(k, "dso") || !strcmp(k, "shared_object"))
		return PVR_DSO;
	if (!strcmp(k, "comm"))
		return PVR_COMM;
	if (!strcmp(k, "pid"))
		return PVR_PID;
	if (!strcmp(k, "tid") || !strcmp(k, "thread"))
		return PVR_TID;
	if (!strcmp(k, "cpu"))
		return PVR_CPU;
	luaL_error(L, "report: unknown sort key '%s' (sym, dso, comm, pid, tid, thread, cpu)", k);
	return PVR_SYM;
}

static void report_opts(lua_State *L, int t, struct pvreport_opts *o)
{
	memset(o, 0, sizeof *o);
	o->children = lperf_optfield_bool(L, t, "children", 0);
	o->by_period = by_period(L, t);
	lua_getfield(L, t, "by");
	if (lua_isnil(L, -1)) {
		o->keys[o->nkeys++] = PVR_SYM;
	} else if (lua_type(L, -1) == LUA_TSTRING) {
		const char *s = lua_tostring(L, -1);
		while (*s) {
			char k[32];
			size_t n = strcspn(s, ", \t");
			if (n > 0) {
				if (n >= sizeof k || o->nkeys == PVR_MAX_KEYS)
					luaL_error(L, "report: too many or too long sort keys");
				memcpy(k, s, n);
				k[n] = '\0';
				o->keys[o->nkeys++] = key_of(L, k);
			}
			s += n;
			while (*s == ',' || *s == ' ' || *s == '\t')
				s++;
		}
	} else {
		size_t i, n;
		luaL_checktype(L, -1, LUA_TTABLE);
		n = lua_rawlen(L, -1);
		for (i = 1; i <= n; i++) {
			lua_rawgeti(L, -1, (int)i);
			if (o->nkeys == PVR_MAX_KEYS)
				luaL_error(L, "report: at most %d sort keys", PVR_MAX_KEYS);
			o->keys[o->nkeys++] = key_of(L, luaL_checkstring(L, -1));
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
	if (o->nkeys == 0)
		luaL_error(L, "report: no sort key");
}

/* v:report{...} */
static int v_report(lua_State *L)
{
	struct profview *pv = check_view(L)->pv;
	const struct stacktab *st = profview__table(pv);
	struct pvreport_opts o;
	struct pvreport *r;
	uint64_t all, total;
	double base;
	size_t i, n;
	int rc, absolute;

	luaL_checktype(L, 2, LUA_TTABLE);
	report_opts(L, 2, &o);
	absolute = !strcmp(lperf_optfield_str(L, 2, "percentage", "relative"), "absolute");
	o.keep = keep_mask(L, pv, 2, 1, o.by_period, &all);
	rc = pvreport__new(pv, &o, &r);
	if (rc)
		return view_fail(L, rc);
	n = pvreport__count(r);
	total = pvreport__total(r);
	base = (double)(absolute ? all : total);
	lua_createtable(L, (int)n, 2);
	for (i = 0; i < n; i++) {
		const struct pvreport_row *row = pvreport__row(r, i);
		struct stacktab_entry e;
		uint32_t c;

		stacktab__get(st, row->stack, &e);
		lua_createtable(L, 0, 16);
		lua_pushlstring(L, row->key, row->keylen);
		lua_setfield(L, -2, "key");
		lperf_setu64(L, "self", row->self);
		lperf_setu64(L, "total", row->total);
		lperf_setu64(L, "samples", row->samples);
		lperf_setnum(L, "self_pct", base > 0 ? 100.0 * (double)row->self / base : 0);
		lperf_setnum(L, "total_pct", base > 0 ? 100.0 * (double)row->total / base : 0);
		if (row->frame != PV_NONE) {
			set_str(L, pv, "sym", row->symname);
			set_str(L, pv, "dso", row->dsoname);
			lperf_setstr(L, "kind", kind_names[row->kind]);
			/* the handle v:callgraph matches frames by */
			lperf_setint(L, "symid", (lua_Integer)row->symname);
		}
		c = profview__comm(pv, row->stack);
		set_str(L, pv, "comm", c);
		lperf_setint(L, "pid", e.pid);
		lperf_setint(L, "tid", e.tid);
		set_str(L, pv, "thread_comm", profview__thread_comm(pv, row->stack));
		lua_rawseti(L, -2, (int)i + 1);
	}
	lperf_setu64(L, "total", total);
	lperf_setu64(L, "all", all);
	pvreport__delete(r);
	return 1;
}

static enum pvt_col col_of(lua_State *L, const char *k)
{
	static const char *const names[] = { "children", "self", "overhead", "comm", "dso",
					      "sym", "pid", "tid", "cpu", NULL };
	int i;

	for (i = 0; names[i]; i++)
		if (!strcmp(k, names[i]))
			return (enum pvt_col)i;
	luaL_error(L, "report_text: unknown column '%s'", k);
	return PVT_SYM;
}

/* v:report_text{...} */
static int v_report_text(lua_State *L)
{
	struct profview *pv = check_view(L)->pv;
	struct pvreport_opts o, go;
	struct pvtext_opts t;
	struct pvreport *r;
	uint64_t all, gall;
	size_t i, n, len;
	char *text;
	int rc, absolute;

	luaL_checktype(L, 2, LUA_TTABLE);
	lua_settop(L, 2);
	report_opts(L, 2, &o);
	memset(&t, 0, sizeof t);
	absolute = !strcmp(lperf_optfield_str(L, 2, "percentage", "relative"), "absolute");
	lua_getfield(L, 2, "columns");
	luaL_checktype(L, -1, LUA_TTABLE);
	n = lua_rawlen(L, -1);
	if (n == 0 || n > PVT_MAX_COLS)
		return luaL_error(L, "report_text: 1 to %d columns", PVT_MAX_COLS);
	for (i = 1; i <= n; i++) {
		lua_rawgeti(L, -1, (int)i);
		t.cols[t.ncols++] = col_of(L, luaL_checkstring(L, -1));
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	lua_getfield(L, 2, "percent_limit");
	t.percent_limit = luaL_optnumber(L, -1, 0);
	lua_getfield(L, 2, "graph_pct");
	t.graph_pct = luaL_optnumber(L, -1, 0.5);
	lua_getfield(L, 2, "n");
	t.max_rows = lua_isnil(L, -1) ? 0 : (size_t)luaL_checkinteger(L, -1);
	lua_getfield(L, 2, "comm_cut");
	t.comm_cut = lua_isnil(L, -1) ? 0 : (size_t)luaL_checkinteger(L, -1);
	lua_pop(L, 4);
	t.children = o.children;
	t.graph = lperf_optfield_bool(L, 2, "graph", 0);
	o.keep = keep_mask(L, pv, 2, 1, o.by_period, &all);        /* index 3 */
	go = o;
	go.keep = keep_mask(L, pv, 2, 0, o.by_period, &gall);      /* index 4 */
	rc = pvreport__new(pv, &o, &r);
	if (rc)
		return view_fail(L, rc);
	t.base = (double)(absolute ? all : pvreport__total(r));
	t.graph_opts = &go;
	t.graph_total = t.base;
	rc = pvreport__text(pv, r, &t, &text, &len);
	n = pvreport__count(r);
	pvreport__delete(r);
	if (rc)
		return view_fail(L, rc);
	lua_pushlstring(L, text, len);
	free(text);
	lua_pushinteger(L, (lua_Integer)n);
	lperf_pushu64(L, all);
	return 3;
}

/* A tree as nested tables, kids under min left out. */
static void push_tree(lua_State *L, struct profview *pv, const struct pvgraph *g, uint32_t id,
		      uint64_t min, int depth)
{
	const struct pvgraph_node *n = pvgraph__node(g, id);
	uint32_t j;
	int k = 0;

	if (depth > 4000)
		luaL_error(L, "callgraph: too deep");
	luaL_checkstack(L, 4, "callgraph");
	lua_createtable(L, 0, 4);
	set_str(L, pv, "name", n->name);
	lperf_setu64(L, "w", n->w);
	lperf_setint(L, "nkids", n->nkids);
	lua_createtable(L, 0, 0);
	for (j = 0; j < n->nkids; j++) {
		uint32_t kid = pvgraph__kid(g, n, j);
		if (pvgraph__node(g, kid)->w < min)
			continue;
		push_tree(L, pv, g, kid, min, depth + 1);
		lua_rawseti(L, -2, ++k);
	}
	lua_setfield(L, -2, "kids");
}

/* v:callgraph(rows, opts) */
static int v_callgraph(lua_State *L)
{
	struct profview *pv = check_view(L)->pv;
	struct pvreport_opts o;
	struct pvgraph_key *keys;
	struct pvgraph *g;
	size_t n, i, nk = 0;
	uint64_t all, min;
	int rc;

	luaL_checktype(L, 2, LUA_TTABLE);
	luaL_checktype(L, 3, LUA_TTABLE);
	memset(&o, 0, sizeof o);
	o.children = lperf_optfield_bool(L, 3, "children", 0);
	o.by_period = by_period(L, 3);
	min = 0;
	lua_getfield(L, 3, "min");
	if (lua_type(L, -1) == LUA_TNUMBER) {
		lua_Number m = lua_tonumber(L, -1);
		/* weights are integers: w >= m is w >= ceil(m) */
		min = m <= 0 ? 0 : (uint64_t)m + ((lua_Number)(uint64_t)m < m);
	}
	lua_pop(L, 1);
	o.keep = keep_mask(L, pv, 3, 0, o.by_period, &all);
	n = lua_rawlen(L, 2);
	keys = lua_newuserdatauv(L, (n ? n : 1) * sizeof *keys, 0);
	for (i = 1; i <= n; i++) {
		lua_rawgeti(L, 2, (int)i);
		luaL_checktype(L, -1, LUA_TTABLE);
		lua_getfield(L, -1, "symid");
		lua_getfield(L, -2, "kind");
		if (lua_isnumber(L, -2)) {
			lua_Integer id = lua_tointeger(L, -2);
			if (id < 0 || (size_t)id >= profview__nstrs(pv))
				luaL_error(L, "callgraph: a row of another view");
			keys[nk].symname = (uint32_t)id;
			keys[nk].kernel = lua_isstring(L, -1) && !strcmp(lua_tostring(L, -1), "kernel");
			nk++;
		}
		lua_pop(L, 3);
	}
	rc = pvgraph__new(pv, &o, keys, nk, 0, &g);
	if (rc)
		return view_fail(L, rc);
	lua_createtable(L, (int)n, 0);
	for (i = 1, nk = 0; i <= n; i++) {
		int has;
		lua_rawgeti(L, 2, (int)i);
		lua_getfield(L, -1, "symid");
		has = lua_isnumber(L, -1);
		lua_pop(L, 2);
		if (!has)
			continue;
		push_tree(L, pv, g, pvgraph__root(g, nk++), min, 0);
		lua_rawseti(L, -2, (int)i);
	}
	pvgraph__delete(g);
	return 1;
}

/* v:folded{...} */
static int v_folded(lua_State *L)
{
	struct profview *pv = check_view(L)->pv;
	struct pvfolded_opts o;
	uint64_t all;
	char *text;
	size_t len;
	int rc;

	memset(&o, 0, sizeof o);
	if (lua_isnoneornil(L, 2))
		lua_newtable(L);
	else
		luaL_checktype(L, 2, LUA_TTABLE);
	lua_settop(L, 2);
	o.annotate = lperf_optfield_bool(L, 2, "annotate", 0);
	o.with_comm = lperf_optfield_bool(L, 2, "comm_frame", 1);
	o.by_period = by_period(L, 2);
	o.keep = keep_mask(L, pv, 2, 0, o.by_period, &all);
	rc = profview__folded(pv, &o, &text, &len);
	if (rc)
		return view_fail(L, rc);
	lua_pushlstring(L, text, len);
	free(text);
	return 1;
}

static void push_frame(lua_State *L, struct profview *pv, const struct pv_frame *f)
{
	lua_createtable(L, 0, 8);
	if (f->has_addr)
		lperf_setu64(L, "addr", f->addr);
	lperf_setstr(L, "kind", kind_names[f->kind]);
	set_str(L, pv, "name", f->name);
	set_str(L, pv, "mangled", f->mangled);
	set_str(L, pv, "dso", f->dso);
	if (f->file != PV_NONE) {
		set_str(L, pv, "file", f->file);
		lperf_setint(L, "line", f->line);
	}
	set_str(L, pv, "build_id", f->build_id);
	if (f->has_offset)
		lperf_setu64(L, "offset", f->offset);
	if (f->has_rel)
		lperf_setu64(L, "rel", f->rel);
}

/* Stack i into the list's table at -1 (frames from the frame tables at
 * index frames), counting as count, period; merged stacks have no pid. */
static void push_stack(lua_State *L, struct profview *pv, size_t i, int frames, int empty,
		       uint64_t count, uint64_t period, const uint64_t *weights, int merged)
{
	const struct stacktab *st = profview__table(pv);
	struct stacktab_entry e;
	const uint32_t *ids;
	unsigned n, j;

	stacktab__get(st, i, &e);
	profview__stack(pv, i, &ids, &n);
	lua_createtable(L, 0, 10);
	if (n == 0 && profview__depth(pv, i) > 0) {
		lua_pushvalue(L, empty);
		lua_setfield(L, -2, "frames");
		lperf_setint(L, "depth", profview__depth(pv, i));
	} else {
		lua_createtable(L, (int)n, 0);
		for (j = 0; j < n; j++) {
			lua_rawgeti(L, frames, (int)ids[j] + 1);
			if (lua_isnil(L, -1)) {
				lua_pop(L, 1);
				push_frame(L, pv, profview__frame(pv, ids[j]));
				lua_pushvalue(L, -1);
				lua_rawseti(L, frames, (int)ids[j] + 1);
			}
			lua_rawseti(L, -2, (int)j + 1);
		}
		lua_setfield(L, -2, "frames");
	}
	lperf_setu64(L, "count", count);
	lperf_setu64(L, "period", period);
	if (!merged) {
		lperf_setint(L, "pid", e.pid);
		lperf_setint(L, "tid", e.tid);
		set_str(L, pv, "thread_comm", profview__thread_comm(pv, i));
	}
	set_str(L, pv, "comm", profview__comm(pv, i));
	if (e.event && e.event[0])
		lperf_setstr(L, "event", e.event);
	if (weights) {
		unsigned w, nw = stacktab__nweights(st);
		lua_createtable(L, 0, (int)nw);
		for (w = 0; w < nw; w++)
			lperf_setu64(L, stacktab__weight_name(st, w), weights[w]);
		lua_setfield(L, -2, "weights");
	}
}

/* The merged stacks: one per (event, command, frames), first seen first. */
struct merged {
	size_t first;
	uint64_t count, period, w[STACKTAB_MAX_WEIGHTS];
	int has_w;
};

/* v:list{event=, merge=} -> a stack list (lua/perf/stacks.lua's shape);
 * merge = true: stacks of one command whose frames have the same labels
 * and kinds are one (flame graphs draw them alike), without pid or tid. */
static int v_list(lua_State *L)
{
	struct profview *pv = check_view(L)->pv;
	const struct stacktab *st = profview__table(pv);
	size_t ns = profview__nstacks(pv), nf = profview__nframes(pv), i, k = 0, nm = 0;
	uint64_t samples = 0, period = 0, all;
	const uint8_t *keep;
	struct merged *m = NULL;
	int frames, empty, merge;

	if (lua_isnoneornil(L, 2))
		lua_newtable(L);
	else
		luaL_checktype(L, 2, LUA_TTABLE);
	lua_settop(L, 2);
	merge = lperf_optfield_bool(L, 2, "merge", 0);
	keep = keep_mask(L, pv, 2, 0, 0, &all);
	if (merge) {
		/* the merged stacks' sums, in a userdata so an error frees them */
		struct keytab *kt = keytab__new();
		size_t keycap = 256;
		uint32_t *key = malloc(keycap * sizeof *key);
		int rc = kt && key ? 0 : -ENOMEM;
		m = lua_newuserdatauv(L, (ns ? ns : 1) * sizeof *m, 0);
		for (i = 0; i < ns && !rc; i++) {
			struct stacktab_entry e;
			const uint32_t *ids;
			unsigned n, j, nw;
			uint32_t id;
			int added;

			if (keep && !keep[i])
				continue;
			profview__stack(pv, i, &ids, &n);
			if (n + 3 > keycap) {
				uint32_t *nk = realloc(key, (n + 3) * sizeof *nk);
				if (!nk) { rc = -ENOMEM; break; }
				key = nk;
				keycap = n + 3;
			}
			key[0] = profview__event(pv, i);
			key[1] = profview__comm(pv, i);
			key[2] = n ? 0 : profview__depth(pv, i);
			/* a flame graph's node is a frame's label and kind */
			for (j = 0; j < n; j++) {
				const struct pv_frame *f = profview__frame(pv, ids[j]);
				key[3 + j] = f->label << 3 | f->kind;
			}
			if ((rc = keytab__intern(kt, key, (n + 3) * sizeof *key, &id, &added)))
				break;
			stacktab__get(st, i, &e);
			if (added) {
				memset(&m[id], 0, sizeof m[id]);
				m[id].first = i;
				nm++;
			}
			m[id].count += e.count;
			m[id].period += e.period;
			if (e.weights) {
				m[id].has_w = 1;
				nw = stacktab__nweights(st);
				for (j = 0; j < nw; j++)
					m[id].w[j] += e.weights[j];
			}
		}
		free(key);
		keytab__delete(kt);
		if (rc)
			return view_fail(L, rc);
	}
	/* each frame's table made once, when a stack first holds it, and
	 * shared by the stacks that hold it */
	lua_createtable(L, (int)nf, 0);
	frames = lua_gettop(L);
	lua_newtable(L);
	empty = lua_gettop(L);
	lua_createtable(L, (int)(merge ? nm : ns), 1);
	if (merge) {
		for (i = 0; i < nm; i++) {
			push_stack(L, pv, m[i].first, frames, empty, m[i].count, m[i].period,
				   m[i].has_w ? m[i].w : NULL, 1);
			lua_rawseti(L, -2, (int)++k);
			samples += m[i].count;
			period += m[i].period;
		}
	} else {
		for (i = 0; i < ns; i++) {
			struct stacktab_entry e;
			if (keep && !keep[i])
				continue;
			stacktab__get(st, i, &e);
			push_stack(L, pv, i, frames, empty, e.count, e.period, e.weights, 0);
			lua_rawseti(L, -2, (int)++k);
			samples += e.count;
			period += e.period;
		}
	}
	lua_createtable(L, 0, 4);
	lperf_setu64(L, "samples", samples);
	lperf_setu64(L, "period", period);
	lperf_setint(L, "lost", 0);
	lperf_setint(L, "throttled", 0);
	lua_setfield(L, -2, "meta");
	return 1;
}

static const luaL_Reg methods[] = {
	{ "summary", v_summary },
	{ "report", v_report },
	{ "report_text", v_report_text },
	{ "callgraph", v_callgraph },
	{ "folded", v_folded },
	{ "list", v_list },
	{ "close", v_close },
	{ NULL, NULL },
};

void lperf_open_profview(lua_State *L)
{
	lperf_newclass(L, VIEW, methods, v_close);
	lperf_weakmap_new(L, &profile_key);
	/* p:view() on profiles */
	luaL_getmetatable(L, "perf.Profile");
	lua_getfield(L, -1, "__index");
	lua_pushcfunction(L, p_view);
	lua_setfield(L, -2, "view");
	lua_pop(L, 2);
}
