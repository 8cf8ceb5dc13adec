/* perf.parse(spec) and perf.list([pattern]): the event grammar and catalog. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "event/evcatalog.h"
#include "event/evgroup.h"
#include "event/evspec.h"
#include "binding.h"

void lperf_push_evspec(lua_State *L, const struct evspec *ev)
{
	const struct perf_event_attr *a = &ev->attr;

	lua_createtable(L, 0, 24);
	lperf_setstr(L, "name", ev->name);
	lperf_setstr(L, "pmu", ev->pmu);
	lperf_setstr(L, "kind", evspec__kind_name(ev->kind));
	lperf_setint(L, "size", a->size);
	lperf_setu64(L, "type", a->type);
	lperf_setu64(L, "config", a->config);
	lperf_setu64(L, "config1", a->config1);
	lperf_setu64(L, "config2", a->config2);
	if (ev->kind == EVSPEC_BREAKPOINT) {
		lperf_setint(L, "bp_type", a->bp_type);
		lperf_setu64(L, "bp_addr", a->bp_addr);
		lperf_setu64(L, "bp_len", a->bp_len);
	}
	if (ev->kind == EVSPEC_UPROBE || ev->kind == EVSPEC_KPROBE) {
		lua_createtable(L, 0, 5);
		if (ev->probe.path != NULL)
			lperf_setstr(L, "path", ev->probe.path);
		lperf_setstr(L, "func", ev->probe.func);
		lperf_setu64(L, "offset", ev->probe.offset);
		if (!ev->probe.kernel)
			lperf_setu64(L, "addr", ev->probe.addr);
		lperf_setbool(L, "ret", ev->probe.ret);
		lua_setfield(L, -2, "probe");
	}
	if (a->freq)
		lperf_setu64(L, "sample_freq", a->sample_freq);
	else if (a->sample_period != 0)
		lperf_setu64(L, "sample_period", a->sample_period);
	lperf_setbool(L, "freq", a->freq);
	lperf_setbool(L, "has_period", ev->has_period);
	lperf_setbool(L, "exclude_user", a->exclude_user);
	lperf_setbool(L, "exclude_kernel", a->exclude_kernel);
	lperf_setbool(L, "exclude_hv", a->exclude_hv);
	lperf_setbool(L, "exclude_host", a->exclude_host);
	lperf_setbool(L, "exclude_guest", a->exclude_guest);
	lperf_setbool(L, "exclude_idle", a->exclude_idle);
	lperf_setint(L, "precise_ip", (lua_Integer)a->precise_ip);
	lperf_setbool(L, "precise_max", ev->precise_max);
	lperf_setbool(L, "sample_read", ev->sample_read);
	lperf_setbool(L, "pinned", a->pinned);
	lperf_setbool(L, "exclusive", a->exclusive);
}

/* Copies each member out of the parse; no Lua call while it runs. */
static int keep_member(void *arg, size_t idx, const char *text, const struct evspec *ev)
{
	struct lperf_member *m = (struct lperf_member *)arg + idx;

	m->ev = *ev;
	snprintf(m->text, sizeof m->text, "%s", text);
	return 0;
}

int lperf_parse_group(lua_State *L, const char *spec, struct lperf_member **out,
		      char *err, size_t errlen)
{
	struct lperf_member *m;
	int n = evgroup__parse(spec, NULL, NULL, err, errlen);

	if (n <= 0)
		return n < 0 ? n : -EINVAL;
	m = lua_newuserdatauv(L, (size_t)n * sizeof *m, 0);
	memset(m, 0, (size_t)n * sizeof *m);
	n = evgroup__parse(spec, keep_member, m, err, errlen);
	if (n <= 0) {
		lua_pop(L, 1);
		return n < 0 ? n : -EINVAL;
	}
	*out = m;
	return n;
}

/* perf.parse("{a,b}:mods") -> { group=true, name=, mods=, sample_read=,
 * [i] = a member's attr table with its spec as written } */
static int parse_group(lua_State *L, const char *spec)
{
	struct lperf_member *m;
	const char *close = strchr(spec, '}');
	char err[512];
	int n, i;

	n = lperf_parse_group(L, spec, &m, err, sizeof err);
	if (n < 0)
		return lperf_fail(L, err, -n);
	lua_createtable(L, n, 5);
	lperf_setbool(L, "group", 1);
	lperf_setstr(L, "name", spec);
	lperf_setstr(L, "mods", close != NULL && close[1] == ':' ? close + 2 : "");
	lperf_setbool(L, "sample_read", m[0].ev.sample_read);
	lperf_setint(L, "members", n);
	for (i = 0; i < n; i++) {
		lperf_push_evspec(L, &m[i].ev);
		lperf_setstr(L, "spec", m[i].text);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

static int l_parse(lua_State *L)
{
	size_t len;
	const char *spec = luaL_checklstring(L, 1, &len);
	struct evspec *ev;
	char err[512];
	int rc;

	if (strlen(spec) != len)
		return lperf_fail(L, "event spec contains a NUL byte", EINVAL);
	if (evgroup__is_group(spec))
		return parse_group(L, spec);
	/* The struct is large for a C stack frame in a binding; GC-owned. */
	ev = lua_newuserdatauv(L, sizeof *ev, 0);
	rc = evspec__parse(spec, ev, err, sizeof err);
	if (rc != 0)
		return lperf_fail(L, err, -rc);
	lperf_push_evspec(L, ev);
	return 1;
}

/*
 * perf.list collects the catalog in C first, into memory a userdata owns,
 * so no Lua error can fire while the catalog walk holds directories open.
 */
struct entries {
	char *data;
	size_t len, cap;
	size_t count;
	int oom;
};

static int entries_gc(lua_State *L)
{
	struct entries *e = lua_touserdata(L, 1);

	if (e != NULL) {
		free(e->data);
		e->data = NULL;
		e->len = e->cap = e->count = 0;
	}
	return 0;
}

static int put(struct entries *e, const void *p, size_t n)
{
	if (e->len + n > e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 16384;
		char *d;
		while (cap < e->len + n)
			cap *= 2;
		d = realloc(e->data, cap);
		if (d == NULL) {
			e->oom = 1;
			return -ENOMEM;
		}
		e->data = d;
		e->cap = cap;
	}
	memcpy(e->data + e->len, p, n);
	e->len += n;
	return 0;
}

static int put_str(struct entries *e, const char *s)
{
	return put(e, s != NULL ? s : "", (s != NULL ? strlen(s) : 0) + 1);
}

/* Record: kind, available, then name, alias, pmu, desc as C strings. */
static int collect(const struct evcatalog_entry *ce, void *arg)
{
	struct entries *e = arg;
	char head[2] = { (char)ce->kind, (char)(ce->available != 0) };

	if (put(e, head, 2) || put_str(e, ce->name) || put_str(e, ce->alias) ||
	    put_str(e, ce->pmu) || put_str(e, ce->desc))
		return -ENOMEM;
	e->count++;
	return 0;
}

static const char *next_str(const char **p)
{
	const char *s = *p;
	*p += strlen(s) + 1;
	return s;
}

static int l_list(lua_State *L)
{
	const char *pattern = luaL_optstring(L, 1, NULL);
	struct entries *e;
	const char *p, *end;
	size_t i;
	int rc;

	e = lua_newuserdatauv(L, sizeof *e, 0);
	memset(e, 0, sizeof *e);
	luaL_setmetatable(L, "perf.catalog_entries");
	rc = evcatalog__foreach(pattern, collect, e);
	if (rc < 0)
		return lperf_fail(L, rc == -E2BIG ? "event pattern is too long (at most 255 bytes)" :
				  e->oom ? "out of memory listing events" : NULL, -rc);
	lua_createtable(L, (int)(e->count < 100000 ? e->count : 0), 0);
	p = e->data;
	end = e->data + e->len;
	for (i = 1; p != NULL && p < end; i++) {
		int kind = (unsigned char)p[0], available = (unsigned char)p[1];
		const char *name, *alias, *pmu, *desc;

		p += 2;
		name = next_str(&p);
		alias = next_str(&p);
		pmu = next_str(&p);
		desc = next_str(&p);
		lua_createtable(L, 0, 6);
		lperf_setstr(L, "name", name);
		if (alias[0] != '\0')
			lperf_setstr(L, "alias", alias);
		lperf_setstr(L, "kind", evspec__kind_name((enum evspec_kind)kind));
		if (pmu[0] != '\0')
			lperf_setstr(L, "pmu", pmu);
		lperf_setstr(L, "desc", desc);
		lperf_setbool(L, "available", available);
		lua_rawseti(L, -2, (int)i);
	}
	return 1;
}

static int split_one(const char *ev, void *arg)
{
	struct entries *e = arg;

	if (put_str(e, ev) != 0)
		return -ENOMEM;
	e->count++;
	return 0;
}

/* perf.split("a,pmu/x=1,y=2/,b") -> { "a", "pmu/x=1,y=2/", "b" } */
static int l_split(lua_State *L)
{
	size_t len, i;
	const char *list = luaL_checklstring(L, 1, &len), *p;
	struct entries *e;
	int rc;

	if (strlen(list) != len)
		return lperf_fail(L, "event list contains a NUL byte", EINVAL);
	e = lua_newuserdatauv(L, sizeof *e, 0);
	memset(e, 0, sizeof *e);
	luaL_setmetatable(L, "perf.catalog_entries");
	rc = evspec__split(list, split_one, e);
	if (rc < 0)
		return lperf_fail(L, "out of memory splitting an event list", -rc);
	lua_createtable(L, (int)(e->count < 100000 ? e->count : 0), 0);
	p = e->data;
	for (i = 1; i <= e->count; i++) {
		lua_pushstring(L, next_str(&p));
		lua_rawseti(L, -2, (int)i);
	}
	return 1;
}

void lperf_open_evspec(lua_State *L)
{
	static const luaL_Reg none[] = { { NULL, NULL } };

	lperf_newclass(L, "perf.catalog_entries", none, entries_gc);
	lua_pushcfunction(L, l_parse);
	lua_setfield(L, -2, "parse");
	lua_pushcfunction(L, l_list);
	lua_setfield(L, -2, "list");
	lua_pushcfunction(L, l_split);
	lua_setfield(L, -2, "split");
}
