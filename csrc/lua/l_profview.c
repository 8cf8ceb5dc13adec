/*
 * perf.ProfileView: a profile symbolized once (profile/profview.h) and the
 * reports that run on it in C (pvreport.h, pvfolded.h).  Lua gets rows,
 * trees and text, never a table per sample or per frame unless it asks
 * for the stack list.
 *
 *   v = p:view{ symbolizer=, lines=, inline=, truncated_marks=, frames=, by_label=,
 *               by_symbol= }
 *     (by_label: a frame per label and kind, for folded stacks and flame
 *     graphs; such a view makes no reports.  by_symbol: a frame per symbol
 *     as reports tell it apart, for reports and their call graphs without
 *     lines)
 *   v:summary([event])   -> { events = {names in order}, samples=, period=,
 *                             stacks=, frames=, has_chains=, comm_width= }
 *   v:report{ by = {"comm","dso","sym","srcline","parent",...}, parent = regex,
 *             children=, weight="period"|"samples",
 *             percentage="absolute"|"relative", event=, comm=, pid=, tid=,
 *             dso= pattern, sym= pattern }
 *       -> { {key=, self=, total=, samples=, self_pct=, total_pct=, sym=, dso=,
 *             kind=, comm=, pid=, tid=, thread_comm=}, ..., total=, all= }
 *   v:callgraph(rows, {children=, caller=, weight=, event=, comm=, pid=, tid=, min=})
 *       -> { [i] = tree of rows[i] } (nodes { name=, w=, kids=, nkids= }:
 *          kids lighter than min left out, nkids counts them all)
 *   v:folded{ annotate=, comm_frame=, weight=, event=, comm=, pid=, tid= }  -> text
 *       (comm_frame = false: no command as the root frame)
 *   v:report_text{ report's options, columns = {"children", "self" | "overhead",
 *                  "samples", "period", "comm", "dso", "sym", "pid", "tid", "cpu"},
 *                  percent_limit=, quiet=, comms=, dsos=, syms= {names},
 *                  pids=, tids= {numbers}, comm_of_rows=,
 *                  n=, comm_cut=, graph=, graph_pct=, out=, head= }
 *       -> perf report's table as text (titles, rule, rows, call graphs), rows, all, total
 *          (out = an open Lua file: the table is written there as it is
 *          made, after head, once the options are known good, and out is
 *          returned in place of the text)
 *   v:list{ event=, merge= }  -> the stack list of lua/perf/stacks.lua
 *       (merge = true: stacks that a flame graph draws alike, the same command
 *       and frame labels and kinds, as one; their frames are the first's)
 *
 * Filters: event, comm (a name or a list), pid and tid (a number or a
 * list) select stacks; dso and sym (Lua patterns) match the leaf's object
 * path and label.  The view holds its profile (which must stay open).
 */
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include "base/keytab.h"
#include "binding.h"
#include "profile/profview.h"
#include "profile/pvflame.h"
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

/* (-EOPNOTSUPP: the engine wanted symbol names, which a by_label view's
 * frames, not one per address, do not have) */
static int view_fail(lua_State *L, int rc)
{
	if (rc == -EOPNOTSUPP)
		return lperf_fail(L, "this view was made by_label (for folded stacks and flame "
				  "graphs): it makes no reports", EOPNOTSUPP);
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
		o.by_label = lperf_optfield_bool(L, 2, "by_label", 0);
		o.by_symbol = lperf_optfield_bool(L, 2, "by_symbol", 0);
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
	lua_getfield(L, t, "where");
	if (!lua_isnil(L, -1)) {
		lperf_where_mask(L, pv, -1, keep);
		any = 1;
	}
	lua_pop(L, 1);
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
	int chains = 0, seen, folded;

	if (!lua_isnoneornil(L, 2)) {
		size_t len;
		const char *s = luaL_checklstring(L, 2, &len);
		if (profview__intern(pv, s, len, &event))
			return luaL_error(L, "out of memory");
	}
	/* stacks keyed by command name: their threads' names, noted apart */
	folded = stacktab__comm_width(st, event == PV_NONE ? NULL : profview__str(pv, event),
				      &width);
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
		if (folded && e.pid == -1 && e.tid == -1 && e.comm)
			continue;
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
	lperf_setu64(L, "frames", profview__nframes(pv));
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
	if (!strcmp(k, "event"))
		return PVR_EVENT;
	if (!strcmp(k, "time"))
		return PVR_TIME;
	if (!strcmp(k, "srcline"))
		return PVR_SRCLINE;
	if (!strcmp(k, "parent"))
		return PVR_PARENT;
	luaL_error(L, "report: unknown sort key '%s' (sym, dso, srcline, comm, pid, tid, thread, "
		   "cpu, event, parent, time)", k);
	return PVR_SYM;
}

static void report_opts(lua_State *L, int t, struct pvreport_opts *o)
{
	const char *order;

	memset(o, 0, sizeof *o);
	o->children = lperf_optfield_bool(L, t, "children", 0);
	o->caller = lperf_optfield_bool(L, t, "caller", 0);
	o->callee = lperf_optfield_bool(L, t, "callee", 0);
	{
		int max = lperf_optfield_int(L, t, "max_stack", 0);
		if (max < 0)
			luaL_error(L, "report: max_stack must be >= 0");
		o->max_stack = (unsigned)max;
	}
	order = lperf_optfield_str(L, t, "order", "value");
	if (strcmp(order, "value") && strcmp(order, "keys"))
		luaL_error(L, "report: order must be 'value' or 'keys', got '%s'", order);
	o->keys_only = !strcmp(order, "keys");
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
	lua_getfield(L, t, "parent");
	if (!lua_isnil(L, -1)) {
		if (lua_type(L, -1) != LUA_TSTRING)
			luaL_error(L, "parent: expected a regular expression (a string), got %s",
				   luaL_typename(L, -1));
		o->parent = lua_tostring(L, -1);   /* the options table keeps it */
		if (pvreport__check_parent(o->parent))
			luaL_error(L, "parent: '%s' is not a POSIX extended regular expression",
				   o->parent);
	}
	lua_pop(L, 1);
}

/* The keys a view must be able to answer: srcline needs its lines,
 * parent call chains (perf refuses --sort parent without them too). */
static void check_keys_answerable(lua_State *L, struct profview *pv,
				  const struct pvreport_opts *o)
{
	size_t i, ns = profview__nstacks(pv);
	unsigned k;

	for (k = 0; k < o->nkeys; k++) {
		if (o->keys[k] == PVR_SRCLINE && !profview__has_lines(pv))
			luaL_error(L, "report: by srcline needs a view made with lines "
				   "(p:view{ lines = true })");
		if (o->keys[k] != PVR_PARENT)
			continue;
		for (i = 0; i < ns; i++)
			if (profview__depth(pv, i) > 1)
				break;
		if (i == ns && ns > 0)
			luaL_error(L, "report: by parent needs call chains, and these samples "
				   "have none (record with -g, or callchain = \"fp\")");
	}
}

/* Whether a query's keys read a row's stack entry (its thread or split):
 * only then is it fetched (10^5 rows: the entries are random in memory). */
static int keys_read_entry(const struct pvreport_opts *o)
{
	unsigned k;

	for (k = 0; k < o->nkeys; k++)
		if (o->keys[k] == PVR_PID || o->keys[k] == PVR_TID || o->keys[k] == PVR_CPU ||
		    o->keys[k] == PVR_TIME)
			return 1;
	return 0;
}

/* A query's row (lua/perf/query.lua): the keys asked for, value (total
 * in children mode, else self), pct of base, samples; with children also
 * self and self_pct.  Nothing else: a report can have 100k rows. */
static void push_query_row(lua_State *L, struct profview *pv, const struct pvreport_opts *o,
			   const struct pvreport_row *row, enum stacktab_split split, double base,
			   int read_entry)
{
	struct stacktab_entry e;
	uint64_t v = o->children ? row->total : row->self;
	unsigned k;

	memset(&e, 0, sizeof e);
	if (read_entry)
		stacktab__get(profview__table(pv), row->stack, &e);
	lua_createtable(L, 0, 8);
	for (k = 0; k < o->nkeys; k++) {
		switch (o->keys[k]) {
		case PVR_SYM:
			if (row->frame != PV_NONE) {
				set_str(L, pv, "sym", row->symname);
				lperf_setstr(L, "kind", kind_names[row->kind]);
			}
			break;
		case PVR_DSO:
			if (row->frame != PV_NONE)
				set_str(L, pv, "dso", row->dsoname);
			break;
		case PVR_COMM:
			set_str(L, pv, "comm", row->comm);
			break;
		case PVR_PID:
			lperf_setint(L, "pid", e.pid);
			break;
		case PVR_TID:
			lperf_setint(L, "tid", e.tid);
			set_str(L, pv, "thread_comm", profview__thread_comm(pv, row->stack));
			break;
		case PVR_EVENT:
			set_str(L, pv, "event", profview__event(pv, row->stack));
			break;
		case PVR_SRCLINE:
			if (row->frame != PV_NONE)
				set_str(L, pv, "srcline", row->srcline);
			break;
		case PVR_PARENT:
			set_str(L, pv, "parent", row->parent);
			break;
		case PVR_CPU:
			lperf_setint(L, "cpu", split == STACKTAB_SPLIT_CPU ? (int32_t)e.tag : -1);
			break;
		case PVR_TIME:
			lperf_setint(L, "time", split == STACKTAB_SPLIT_TIME ? e.tag : 0);
			break;
		}
	}
	lperf_setu64(L, "value", v);
	lperf_setnum(L, "pct", base > 0 ? 100.0 * (double)v / base : 0);
	lperf_setu64(L, "samples", row->samples);
	if (o->children) {
		lperf_setu64(L, "self", row->self);
		lperf_setnum(L, "self_pct", base > 0 ? 100.0 * (double)row->self / base : 0);
	}
}

/* List field k of table t on the stack and its length in *n: 1; 0 (nil
 * pushed, *n = 0) when there is none. */
static int list_field(lua_State *L, int t, const char *k, size_t *n)
{
	*n = 0;
	lua_getfield(L, t, k);
	if (lua_isnil(L, -1))
		return 0;
	luaL_checktype(L, -1, LUA_TTABLE);
	*n = lua_rawlen(L, -1);
	return 1;
}

/* The strings of list field k of table t (none: NULL, 0), in a userdata
 * left on the stack (the table keeps the strings). */
static const char *const *string_list(lua_State *L, int t, const char *k, size_t *n)
{
	const char **v;
	size_t i;

	if (!list_field(L, t, k, n))
		return NULL;
	v = lua_newuserdata(L, (*n ? *n : 1) * sizeof *v);
	for (i = 0; i < *n; i++) {
		lua_rawgeti(L, -2, (int)i + 1);
		v[i] = luaL_checkstring(L, -1);
		lua_pop(L, 1);
	}
	lua_remove(L, -2);
	return v;
}

/* The integers of list field k of table t, as string_list. */
static const int32_t *int_list(lua_State *L, int t, const char *k, size_t *n)
{
	int32_t *v;
	size_t i;

	if (!list_field(L, t, k, n))
		return NULL;
	v = lua_newuserdata(L, (*n ? *n : 1) * sizeof *v);
	for (i = 0; i < *n; i++) {
		lua_rawgeti(L, -2, (int)i + 1);
		v[i] = (int32_t)luaL_checkinteger(L, -1);
		lua_pop(L, 1);
	}
	lua_remove(L, -2);
	return v;
}

/* perf's filters of rows (pvreport_filter) from table t's comms, pids,
 * tids, dsos and syms; five values left on the stack keep the lists. */
static void row_filter(lua_State *L, int t, struct pvreport_filter *f)
{
	memset(f, 0, sizeof *f);
	f->comms = string_list(L, t, "comms", &f->ncomms);
	f->dsos = string_list(L, t, "dsos", &f->ndsos);
	f->syms = string_list(L, t, "syms", &f->nsyms);
	f->pids = int_list(L, t, "pids", &f->npids);
	f->tids = int_list(L, t, "tids", &f->ntids);
}

/* v:report{...} */
static int v_report(lua_State *L)
{
	struct profview *pv = check_view(L)->pv;
	const struct stacktab *st = profview__table(pv);
	struct pvreport_opts o;
	struct pvreport_filter filter;
	struct pvreport *r;
	uint64_t all, total;
	double base;
	size_t i, n;
	int rc, absolute, query, top, read_entry;
	enum stacktab_split split;

	luaL_checktype(L, 2, LUA_TTABLE);
	report_opts(L, 2, &o);
	query = lperf_optfield_bool(L, 2, "query", 0);
	o.self_only = query;    /* query rows show no total without children */
	top = lperf_optfield_int(L, 2, "top", 0);
	if (top < 0)
		return luaL_error(L, "report: top must be >= 0");
	split = stacktab__split(st, NULL);
	for (i = 0; i < o.nkeys; i++)
		if ((o.keys[i] == PVR_CPU && split != STACKTAB_SPLIT_CPU) ||
		    (o.keys[i] == PVR_TIME && split != STACKTAB_SPLIT_TIME))
			return luaL_error(L, "report: this profile keeps no %s (perf.open's "
					  "queries split a file's samples by it when asked)",
					  o.keys[i] == PVR_CPU ? "CPU" : "time");
	check_keys_answerable(L, pv, &o);
	absolute = !strcmp(lperf_optfield_str(L, 2, "percentage", "relative"), "absolute");
	row_filter(L, 2, &filter);
	o.keep = keep_mask(L, pv, 2, 1, o.by_period, &all);
	rc = pvreport__new(pv, &o, &r);
	if (rc)
		return view_fail(L, rc);
	n = pvreport__count(r);
	total = pvreport__total(r);
	base = (double)(absolute ? all : total);
	if (top > 0 && (size_t)top < n)
		n = (size_t)top;
	read_entry = keys_read_entry(&o);
	lua_createtable(L, (int)n, 2);
	for (i = 0; i < n && query; i++) {
		const struct pvreport_row *row = pvreport__row(r, i);
		push_query_row(L, pv, &o, row, split, base, read_entry);
		lua_rawseti(L, -2, (int)i + 1);
	}
	for (i = 0; i < n && !query; i++) {
		const struct pvreport_row *row = pvreport__row(r, i);
		struct stacktab_entry e;

		stacktab__get(st, row->stack, &e);
		lua_createtable(L, 0, 16);
		lua_pushlstring(L, row->key, row->keylen);
		lua_setfield(L, -2, "key");
		lperf_setu64(L, "self", row->self);
		lperf_setu64(L, "total", row->total);
		lperf_setu64(L, "samples", row->samples);
		lperf_setu64(L, "period", row->period);
		lperf_setnum(L, "self_pct", base > 0 ? 100.0 * (double)row->self / base : 0);
		lperf_setnum(L, "total_pct", base > 0 ? 100.0 * (double)row->total / base : 0);
		if (row->frame != PV_NONE) {
			set_str(L, pv, "sym", row->symname);
			set_str(L, pv, "dso", row->dsoname);
			lperf_setstr(L, "kind", kind_names[row->kind]);
			/* the handle v:callgraph matches frames by */
			lperf_setint(L, "symid", (lua_Integer)row->symname);
			lperf_setint(L, "frameid", (lua_Integer)row->frame);
			set_str(L, pv, "srcline", row->srcline);
		}
		set_str(L, pv, "parent", row->parent);
		set_str(L, pv, "comm", row->comm);
		lperf_setint(L, "pid", e.pid);
		lperf_setint(L, "tid", e.tid);
		set_str(L, pv, "event", profview__event(pv, row->stack));
		if (split == STACKTAB_SPLIT_CPU)
			lperf_setint(L, "cpu", (int32_t)e.tag);
		else if (split == STACKTAB_SPLIT_TIME)
			lperf_setint(L, "time", e.tag);
		set_str(L, pv, "thread_comm", profview__thread_comm(pv, row->stack));
		if (!pvreport__row_passes(pv, row, &filter))
			lperf_setbool(L, "shown", 0);
		/* what perf sizes its object and symbol columns by */
		if (row->frame == PV_NONE || !profview__frame(pv, row->frame)->has_dso)
			lperf_setbool(L, "unmapped", 1);
		if (row->frame == PV_NONE || profview__frame(pv, row->frame)->name == PV_NONE)
			lperf_setbool(L, "unnamed", 1);
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
					      "sym", "pid", "tid", "cpu", "srcline", "parent",
					      "samples", "period", NULL };
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
	struct pvreport_opts o;
	struct pvtext_opts t;
	struct pvreport *r;
	uint64_t all;
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
	t.quiet = lperf_optfield_bool(L, 2, "quiet", 0);
	t.comm_of_rows = lperf_optfield_bool(L, 2, "comm_of_rows", 0);
	row_filter(L, 2, &t.filter);                         /* indices 3-7 */
	lua_getfield(L, 2, "out");
	if (!lua_isnil(L, -1))
		t.out = lperf_checkfile(L, -1);
	lua_pop(L, 1);
	lua_getfield(L, 2, "head");
	t.head = luaL_optlstring(L, -1, NULL, &t.headlen);
	lua_pop(L, 1);    /* the options table keeps the string */
	t.children = o.children;
	t.graph = lperf_optfield_bool(L, 2, "graph", 0);
	o.self_only = 1;
	for (i = 0; i < t.ncols; i++)
		if (t.cols[i] == PVT_CHILDREN)
			o.self_only = 0;         /* totals shown */
	o.keep = keep_mask(L, pv, 2, 1, o.by_period, &all);        /* index 8 */
	/* a row's graph: the chains of the stacks counted in it; rows
	 * ordered as perf orders them when it shows graphs */
	o.entry_rows = t.graph;
	o.graph_ties = t.graph;
	rc = pvreport__new(pv, &o, &r);
	if (rc)
		return view_fail(L, rc);
	t.base = (double)(absolute ? all : pvreport__total(r));
	t.graph_opts = &o;
	t.graph_total = t.base;
	rc = pvreport__text(pv, r, &t, &text, &len);
	n = pvreport__count(r);
	pvreport__delete(r);
	if (rc)
		return view_fail(L, rc);
	if (t.out)
		lua_getfield(L, 2, "out");
	else
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
	struct pvreport *r;
	struct pvgraph *g;
	struct keytab *keys;
	uint32_t *which, *found, id;
	size_t n, i, nk = 0, nr;
	uint64_t all, min;
	int rc;

	luaL_checktype(L, 2, LUA_TTABLE);
	luaL_checktype(L, 3, LUA_TTABLE);
	lua_settop(L, 3);
	/* the report the rows came from, made again with its stacks' entries */
	report_opts(L, 3, &o);
	o.entry_rows = 1;
	min = 0;
	lua_getfield(L, 3, "min");
	if (lua_type(L, -1) == LUA_TNUMBER) {
		lua_Number m = lua_tonumber(L, -1);
		/* weights are integers: w >= m is w >= ceil(m) */
		min = m <= 0 ? 0 : (uint64_t)m + ((lua_Number)(uint64_t)m < m);
	}
	lua_pop(L, 1);
	o.keep = keep_mask(L, pv, 3, 1, o.by_period, &all);      /* index 4 */
	n = lua_rawlen(L, 2);
	which = lua_newuserdatauv(L, (n ? n : 1) * sizeof *which, 0);   /* index 5 */
	found = lua_newuserdatauv(L, (n ? n : 1) * sizeof *found, 0);   /* index 6 */
	rc = pvreport__new(pv, &o, &r);
	if (rc)
		return view_fail(L, rc);
	/* each row by its key */
	nr = pvreport__count(r);
	if (!(keys = keytab__new())) {
		pvreport__delete(r);
		return view_fail(L, -ENOMEM);
	}
	for (i = 0; i < nr && !rc; i++) {
		const struct pvreport_row *row = pvreport__row_at(r, i);
		rc = keytab__intern(keys, row->key, row->keylen, &id, NULL);
	}
	for (i = 1; i <= n && !rc; i++) {
		const char *k;
		size_t klen;
		lua_rawgeti(L, 2, (int)i);
		if (lua_type(L, -1) != LUA_TTABLE) {
			rc = -EINVAL;
			break;
		}
		lua_getfield(L, -1, "key");
		k = lua_tolstring(L, -1, &klen);
		/* keys are interned in row order (distinct rows, distinct
		 * keys): id i is row i */
		found[i - 1] = k && keytab__find(keys, k, klen, &id) == 0;
		if (found[i - 1])
			which[nk++] = id;
		lua_pop(L, 2);
	}
	keytab__delete(keys);
	if (!rc)
		rc = pvgraph__new(pv, &o, r, which, nk, 0, &g);
	pvreport__delete(r);
	if (rc == -EINVAL)
		return luaL_error(L, "callgraph: rows must be the rows of v:report with these options");
	if (rc)
		return view_fail(L, rc);
	lua_createtable(L, (int)n, 0);
	for (i = 1, nk = 0; i <= n; i++) {
		if (!found[i - 1])
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
	if (f->has_offset) {
		lperf_setu64(L, "offset", f->offset);
		lperf_setu64(L, "sym_start", f->sym_start);
	}
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
		/* the groups and their sums, in userdata so an error frees them */
		uint32_t *group = lua_newuserdatauv(L, (ns ? ns : 1) * sizeof *group, 0);
		size_t seen = 0;
		int rc;
		m = lua_newuserdatauv(L, (ns ? ns : 1) * sizeof *m, 0);
		if ((rc = profview__flame_groups(pv, keep, group, &nm)))
			return view_fail(L, rc);
		for (i = 0; i < ns; i++) {
			struct stacktab_entry e;
			uint32_t g = group[i];
			unsigned j, nw;

			if (g == PV_NONE)
				continue;
			if (g == seen) {
				memset(&m[g], 0, sizeof m[g]);
				m[g].first = i;
				seen++;
			}
			stacktab__get(st, i, &e);
			m[g].count += e.count;
			m[g].period += e.period;
			if (e.weights) {
				m[g].has_w = 1;
				nw = stacktab__nweights(st);
				for (j = 0; j < nw; j++)
					m[g].w[j] += e.weights[j];
			}
		}
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

/* ---------------------------------------------------------------- paths */

struct path_acc {
	uint64_t value, samples;
	uint32_t id;           /* key id in the path keytab */
};

static int path_cmp(const void *pa, const void *pb)
{
	const struct path_acc *a = pa, *b = pb;

	if (a->value != b->value)
		return a->value > b->value ? -1 : 1;
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* Whether frame id passes the condition at idx, cached in c (NULL: no
 * condition, always). */
static int frame_passes(lua_State *L, struct profview *pv, int idx, uint8_t *c, uint32_t id)
{
	const struct pv_frame *f;

	if (c == NULL)
		return 1;
	if (!c[id]) {
		f = profview__frame(pv, id);
		c[id] = lperf_where_match(L, idx, profview__str(pv, f->label),
					  profview__strlen(pv, f->label)) ? 1 : 2;
	}
	return c[id] == 1;
}

/* v:paths{ ending=, starting=, through=, top=, weight=, where=, ... } */
static int v_paths(lua_State *L)
{
	struct profview *pv = check_view(L)->pv;
	const struct stacktab *st = profview__table(pv);
	size_t ns = profview__nstacks(pv), nf = profview__nframes(pv), i, npaths = 0, cap = 0;
	int top, byp, idx[3], k, rc = 0;
	uint64_t all, total = 0;
	const uint8_t *keep;
	uint8_t *cache[3];
	struct path_acc *acc = NULL;
	uint32_t *labels = NULL;
	unsigned lcap = 0;
	struct keytab *kt;
	static const char *const conds[3] = { "ending", "starting", "through" };

	luaL_checktype(L, 2, LUA_TTABLE);
	top = lperf_optfield_int(L, 2, "top", 0);
	if (top < 0)
		return luaL_error(L, "paths: top must be >= 0");
	byp = by_period(L, 2);
	keep = keep_mask(L, pv, 2, 1, byp, &all);                   /* index 3 */
	for (k = 0; k < 3; k++) {
		lua_getfield(L, 2, conds[k]);
		idx[k] = lua_gettop(L);
		cache[k] = NULL;
		if (lua_isnil(L, -1))
			continue;
		if (lua_type(L, -1) != LUA_TSTRING && lua_type(L, -1) != LUA_TTABLE)
			return luaL_error(L, "paths: %s must be a name, a '^' pattern or a list",
					  conds[k]);
		cache[k] = lua_newuserdatauv(L, nf ? nf : 1, 0);
		memset(cache[k], 0, nf ? nf : 1);
		lua_insert(L, idx[k]);      /* keep it below the condition */
		idx[k]++;
	}
	cap = 256;
	acc = calloc(cap, sizeof *acc);
	if (!acc || !(kt = keytab__new())) {
		free(acc);
		return luaL_error(L, "out of memory");
	}
	for (i = 0; i < ns && !rc; i++) {
		struct stacktab_entry e;
		const uint32_t *ids;
		unsigned n, j;
		uint32_t pid;
		int added, ok;

		if (keep && !keep[i])
			continue;
		profview__stack(pv, i, &ids, &n);
		if (n == 0)
			continue;
		ok = frame_passes(L, pv, idx[0], cache[0], ids[n - 1]) &&
		     frame_passes(L, pv, idx[1], cache[1], ids[0]);
		if (ok && cache[2]) {
			for (ok = 0, j = 0; j < n && !ok; j++)
				ok = frame_passes(L, pv, idx[2], cache[2], ids[j]);
		}
		if (!ok)
			continue;
		if (n > lcap) {
			uint32_t *nl = realloc(labels, n * sizeof *nl);
			if (!nl) {
				rc = -ENOMEM;
				break;
			}
			labels = nl;
			lcap = n;
		}
		for (j = 0; j < n; j++)
			labels[j] = profview__frame(pv, ids[j])->label;
		if ((rc = keytab__intern(kt, labels, n * sizeof *labels, &pid, &added)))
			break;
		if (added) {
			if (npaths == cap) {
				size_t nc = cap ? cap * 2 : 256;
				struct path_acc *na = realloc(acc, nc * sizeof *na);
				if (!na) {
					rc = -ENOMEM;
					break;
				}
				memset(na + cap, 0, (nc - cap) * sizeof *na);
				acc = na;
				cap = nc;
			}
			acc[npaths].id = pid;
			npaths++;
		}
		if (acc == NULL || pid >= npaths) {   /* keytab ids are dense: never */
			rc = -EINVAL;
			break;
		}
		stacktab__get(st, i, &e);
		acc[pid].value += byp ? e.period : e.count;
		acc[pid].samples += e.count;
		total += byp ? e.period : e.count;
	}
	free(labels);
	if (rc) {
		free(acc);
		keytab__delete(kt);
		return luaL_error(L, "out of memory");
	}
	if (npaths)
		qsort(acc, npaths, sizeof *acc, path_cmp);
	if (top > 0 && (size_t)top < npaths)
		npaths = (size_t)top;
	lua_createtable(L, (int)npaths, 2);
	for (i = 0; i < npaths; i++) {
		size_t len, j;
		const uint32_t *l = keytab__key(kt, acc[i].id, &len);
		len /= sizeof *l;
		lua_createtable(L, 0, 4);
		lua_createtable(L, (int)len, 0);
		for (j = 0; j < len; j++) {
			lua_pushlstring(L, profview__str(pv, l[j]), profview__strlen(pv, l[j]));
			lua_rawseti(L, -2, (int)j + 1);
		}
		lua_setfield(L, -2, "stack");
		lperf_setu64(L, "value", acc[i].value);
		lperf_setu64(L, "samples", acc[i].samples);
		lperf_setnum(L, "pct", total ? 100.0 * (double)acc[i].value / (double)total : 0);
		lua_rawseti(L, -2, (int)i + 1);
	}
	lperf_setu64(L, "total", total);
	lperf_setu64(L, "all", all);
	free(acc);
	keytab__delete(kt);
	return 1;
}

static lua_Number opt_num(lua_State *L, int t, const char *k, lua_Number def)
{
	lua_Number v;

	lua_getfield(L, t, k);
	v = lua_isnil(L, -1) ? def : luaL_checknumber(L, -1);
	lua_pop(L, 1);
	return v;
}

/* v:flame{ event=, comm=, pid=, tid=, comm_frame=, weight=, width=, xpad=,
 *          minwidth=, maxboxes= } -> the boxes a flame graph draws
 * (pvflame.h), as arrays: { names=, kinds=, starts=, values=, depths=,
 * total=, omitted=, omitted_weight=, nodes=, maxdepth=, capped= } */
static int v_flame(lua_State *L)
{
	struct profview *pv = check_view(L)->pv;
	struct pvflame_opts o;
	struct pvflame_info info;
	struct pvflame_box *boxes;
	struct pvflame *fl;
	lua_Number maxboxes;
	uint64_t all;
	size_t i, nb;
	int rc, t;

	memset(&o, 0, sizeof o);
	if (lua_isnoneornil(L, 2))
		lua_newtable(L);
	else
		luaL_checktype(L, 2, LUA_TTABLE);
	lua_settop(L, 2);
	o.with_comm = lperf_optfield_bool(L, 2, "comm_frame", 1);
	o.by_period = by_period(L, 2);
	o.width = opt_num(L, 2, "width", 1200);
	o.xpad = opt_num(L, 2, "xpad", 10);
	o.minwidth = opt_num(L, 2, "minwidth", 0.1);
	maxboxes = opt_num(L, 2, "maxboxes", 10000);
	if (!(maxboxes >= 1))
		luaL_argerror(L, 2, "maxboxes: expected a positive number");
	o.maxboxes = maxboxes > 1e15 ? (size_t)1e15 : (size_t)maxboxes;
	o.keep = keep_mask(L, pv, 2, 0, o.by_period, &all);
	rc = profview__flame(pv, &o, &fl);
	if (rc)
		return view_fail(L, rc);
	/* copied out to a userdata, so no Lua error leaves fl behind */
	nb = pvflame__nboxes(fl);
	info = *pvflame__info(fl);
	boxes = lua_newuserdatauv(L, nb ? nb * sizeof *boxes : 1, 0);
	if (nb)
		memcpy(boxes, pvflame__box(fl, 0), nb * sizeof *boxes);
	pvflame__delete(fl);
	lua_createtable(L, 0, 11);
	t = lua_gettop(L);
	lua_createtable(L, (int)nb, 0);
	lua_createtable(L, (int)nb, 0);
	lua_createtable(L, (int)nb, 0);
	lua_createtable(L, (int)nb, 0);
	lua_createtable(L, (int)nb, 0);
	for (i = 0; i < nb; i++) {
		const struct pvflame_box *b = &boxes[i];
		if (b->name == PV_NONE)
			lua_pushliteral(L, "all");
		else
			push_str(L, pv, b->name);
		lua_rawseti(L, t + 1, (int)i + 1);
		lua_pushstring(L, pvflame__kind_name(b->kind));
		lua_rawseti(L, t + 2, (int)i + 1);
		lperf_pushu64(L, b->start);
		lua_rawseti(L, t + 3, (int)i + 1);
		lperf_pushu64(L, b->value);
		lua_rawseti(L, t + 4, (int)i + 1);
		lua_pushinteger(L, (lua_Integer)b->depth);
		lua_rawseti(L, t + 5, (int)i + 1);
	}
	lua_setfield(L, t, "depths");
	lua_setfield(L, t, "values");
	lua_setfield(L, t, "starts");
	lua_setfield(L, t, "kinds");
	lua_setfield(L, t, "names");
	lperf_setu64(L, "total", info.total);
	lperf_setu64(L, "omitted", info.omitted);
	lperf_setu64(L, "omitted_weight", info.omitted_weight);
	lperf_setu64(L, "nodes", info.nodes);
	lperf_setint(L, "maxdepth", info.maxdepth);
	lperf_setbool(L, "capped", info.capped);
	return 1;
}

static const luaL_Reg methods[] = {
	{ "paths", v_paths },
	{ "summary", v_summary },
	{ "report", v_report },
	{ "report_text", v_report_text },
	{ "callgraph", v_callgraph },
	{ "folded", v_folded },
	{ "list", v_list },
	{ "flame", v_flame },
	{ "close", v_close },
	{ NULL, NULL },
};

/* core.parent_match(regex, {names}) -> { [name] = true, ... }: the names
 * the regex (perf's --parent, POSIX extended) matches, for stack lists
 * (in-process profiles), whose parents lua/perf/query.lua finds. */
static int l_parent_match(lua_State *L)
{
	const char *re = luaL_checkstring(L, 1);
	regex_t *rx;
	size_t i, n;

	luaL_checktype(L, 2, LUA_TTABLE);
	/* in a userdata whose __gc frees it, so a Lua error leaks nothing */
	rx = lua_newuserdatauv(L, sizeof *rx, 0);
	if (pvreport__parent_regex(rx, re))
		return luaL_error(L, "parent: '%s' is not a POSIX extended regular expression", re);
	luaL_setmetatable(L, "perf.ParentRegex");
	lua_newtable(L);
	n = lua_rawlen(L, 2);
	for (i = 1; i <= n; i++) {
		lua_rawgeti(L, 2, (int)i);
		if (lua_type(L, -1) == LUA_TSTRING && regexec(rx, lua_tostring(L, -1), 0, NULL, 0) == 0) {
			lua_pushboolean(L, 1);
			lua_rawset(L, -3);
		} else {
			lua_pop(L, 1);
		}
	}
	return 1;
}

/* perf.core.dso_name(path[, kernel]): a report's dso column for the
 * object path (the Lua engine's, so both engines name objects alike). */
static int l_dso_name(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	char buf[4200];

	if (profview__dso_name(path, lua_toboolean(L, 2), buf, sizeof buf) < 0)
		return luaL_error(L, "not enough memory");
	lua_pushstring(L, buf);
	return 1;
}

static int parent_regex_gc(lua_State *L)
{
	regfree(luaL_checkudata(L, 1, "perf.ParentRegex"));
	return 0;
}

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
	luaL_newmetatable(L, "perf.ParentRegex");
	lua_pushcfunction(L, parent_regex_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
	lua_pushcfunction(L, l_parent_match);
	lua_setfield(L, -2, "parent_match");
	lua_pushcfunction(L, l_dso_name);
	lua_setfield(L, -2, "dso_name");
	lua_pushliteral(L, PVR_DEFAULT_PARENT);
	lua_setfield(L, -2, "default_parent");
}
