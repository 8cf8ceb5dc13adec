/*
 * The `where` table of the query API (v:report, v:paths, v:folded... on a
 * profile view), as a mask over the view's stacks, in C: no Lua value per
 * stack.
 *
 *   where = { comm = "nginx", pid = { 12, 13 }, sym = "^lua_", cpu = 0 }
 *
 * Each key is a condition, all must hold.  A value matches exactly; a
 * list matches any of its values; a string that begins with '^' is a Lua
 * pattern (string.find, anchored by its '^').  Sample keys: comm, pid,
 * tid, event, cpu (a profile split by CPU), time (the bucket's index, a
 * profile split by time).  Frame keys match the sample's own frame (the
 * leaf): sym (as reports print it), dso (the object's short name), srcline
 * (file:line, a view made with lines).  A stack with no frame matches no
 * frame key.  Frame and string verdicts are cached by id, so a pattern
 * runs once per distinct name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "binding.h"
#include "profile/profview.h"
#include "profile/stacktab.h"

enum where_key { W_COMM, W_PID, W_TID, W_EVENT, W_CPU, W_TIME, W_SYM, W_DSO, W_SRCLINE, W_N };

static const char *const key_names[W_N] = {
	"comm", "pid", "tid", "event", "cpu", "time", "sym", "dso", "srcline",
};

/* s against the single value at idx (a string: exact or a '^' pattern; a
 * number: compared with s as a number). */
static int match_one(lua_State *L, int idx, const char *s, size_t len)
{
	if (lua_type(L, idx) == LUA_TSTRING) {
		size_t vlen;
		const char *v = lua_tolstring(L, idx, &vlen);
		int r;
		if (vlen == 0 || v[0] != '^')
			return vlen == len && memcmp(v, s, len) == 0;
		lua_getglobal(L, "string");
		lua_getfield(L, -1, "find");
		lua_pushlstring(L, s, len);
		lua_pushvalue(L, idx);
		lua_call(L, 2, 1);
		r = !lua_isnil(L, -1);
		lua_pop(L, 2);
		return r;
	}
	if (lua_type(L, idx) == LUA_TNUMBER) {
		char num[64];
		lua_Number x = lua_tonumber(L, idx);
		/* integral values print as integers: pid 12, not 12.0 */
		int n = snprintf(num, sizeof num, "%.17g", x);
		return n > 0 && (size_t)n == len && memcmp(num, s, len) == 0;
	}
	return 0;
}

/* s against the value at idx: a single value or a list of them. */
static int match(lua_State *L, int idx, const char *s, size_t len)
{
	size_t i, n;
	int found = 0;

	if (lua_type(L, idx) != LUA_TTABLE)
		return match_one(L, idx, s, len);
	n = lua_rawlen(L, idx);
	for (i = 1; i <= n && !found; i++) {
		lua_rawgeti(L, idx, (int)i);
		found = match_one(L, lua_gettop(L), s, len);
		lua_pop(L, 1);
	}
	return found;
}

int lperf_where_match(lua_State *L, int idx, const char *s, size_t len)
{
	return match(L, idx, s, len);
}

static int match_int(lua_State *L, int idx, long long v)
{
	char num[32];
	int n = snprintf(num, sizeof num, "%lld", v);

	return match(L, idx, num, (size_t)n);
}

static void check_value(lua_State *L, int idx, const char *key)
{
	int t = lua_type(L, idx);
	size_t i, n;

	if (t == LUA_TSTRING || t == LUA_TNUMBER)
		return;
	if (t == LUA_TTABLE) {
		n = lua_rawlen(L, idx);
		for (i = 1; i <= n; i++) {
			lua_rawgeti(L, idx, (int)i);
			t = lua_type(L, -1);
			lua_pop(L, 1);
			if (t != LUA_TSTRING && t != LUA_TNUMBER)
				luaL_error(L, "where.%s: a list holds strings and numbers", key);
		}
		if (n > 0)
			return;
	}
	luaL_error(L, "where.%s: expected a string, a number or a list of them", key);
}

/* A verdict cache by id: 0 unknown, 1 match, 2 no match. */
static uint8_t *cache(lua_State *L, size_t n)
{
	uint8_t *c = lua_newuserdatauv(L, n ? n : 1, 0);

	memset(c, 0, n ? n : 1);
	return c;
}

static int str_verdict(lua_State *L, struct profview *pv, int idx, uint8_t *c, uint32_t id)
{
	if (id == PV_NONE)
		return 0;
	if (!c[id])
		c[id] = match(L, idx, profview__str(pv, id), profview__strlen(pv, id)) ? 1 : 2;
	return c[id] == 1;
}

static int frame_verdict(lua_State *L, struct profview *pv, int idx, uint8_t *c,
			 uint32_t frame, enum where_key k)
{
	const struct pv_frame *f;

	if (c[frame])
		return c[frame] == 1;
	f = profview__frame(pv, frame);
	if (k == W_SYM) {
		c[frame] = str_verdict(L, pv, idx, c + profview__nframes(pv), f->symname) ? 1 : 2;
	} else if (k == W_DSO) {
		c[frame] = f->dsoname != PV_NONE && match(L, idx, profview__str(pv, f->dsoname),
							  profview__strlen(pv, f->dsoname)) ? 1 : 2;
	} else {
		char line[4096];
		int n = f->file == PV_NONE ? -1
			: snprintf(line, sizeof line, "%s:%u", profview__str(pv, f->file), f->line);
		c[frame] = n > 0 && (size_t)n < sizeof line && match(L, idx, line, (size_t)n) ? 1 : 2;
	}
	return c[frame] == 1;
}

/*
 * ANDs the where table at index w into keep (one byte per stack of pv).
 * Raises on an unknown key or a key the profile cannot answer.
 */
void lperf_where_mask(lua_State *L, struct profview *pv, int w, unsigned char *keep)
{
	const struct stacktab *st = profview__table(pv);
	size_t ns = profview__nstacks(pv), nf = profview__nframes(pv), i;
	int top = lua_gettop(L), idx[W_N], k, rc;
	uint8_t *c[W_N];
	enum stacktab_split split = stacktab__split(st, NULL);

	w = lua_absindex(L, w);
	luaL_checktype(L, w, LUA_TTABLE);
	rc = profview__symnames(pv);
	if (rc == -EOPNOTSUPP)
		luaL_error(L, "where: a view made by_label has no symbol names to match");
	if (rc)
		luaL_error(L, "where: out of memory");
	/* unknown keys are errors, not silently true */
	lua_pushnil(L);
	while (lua_next(L, w)) {
		int known = 0;
		lua_pop(L, 1);
		if (lua_type(L, -1) == LUA_TSTRING)
			for (k = 0; k < W_N; k++)
				known |= !strcmp(lua_tostring(L, -1), key_names[k]);
		if (!known)
			luaL_error(L, "where: unknown key '%s' (comm, pid, tid, event, cpu, "
				   "time, sym, dso, srcline)", lua_type(L, -1) == LUA_TSTRING ?
				   lua_tostring(L, -1) : luaL_typename(L, -1));
	}
	for (k = 0; k < W_N; k++) {
		lua_getfield(L, w, key_names[k]);
		idx[k] = lua_gettop(L);
		c[k] = NULL;
		if (lua_isnil(L, -1))
			continue;
		check_value(L, idx[k], key_names[k]);
		if (k == W_CPU && split != STACKTAB_SPLIT_CPU)
			luaL_error(L, "where.cpu: this profile keeps no CPU (a file's query "
				   "splits by CPU when asked; a session's or luaprofile's cannot)");
		if (k == W_TIME && split != STACKTAB_SPLIT_TIME)
			luaL_error(L, "where.time: this profile is not split by time");
		if (k >= W_SYM)    /* per frame, then (sym) per string */
			c[k] = cache(L, nf + (k == W_SYM ? profview__nstrs(pv) : 0));
		else if (k == W_COMM || k == W_EVENT)
			c[k] = cache(L, profview__nstrs(pv));
	}
	for (i = 0; i < ns; i++) {
		struct stacktab_entry e;
		const uint32_t *ids;
		unsigned n;
		int ok = 1;

		if (!keep[i])
			continue;
		stacktab__get(st, i, &e);
		profview__stack(pv, i, &ids, &n);
		for (k = 0; k < W_N && ok; k++) {
			if (lua_isnil(L, idx[k]))
				continue;
			switch (k) {
			case W_COMM:
				ok = str_verdict(L, pv, idx[k], c[k], profview__comm(pv, i));
				break;
			case W_EVENT:
				ok = str_verdict(L, pv, idx[k], c[k], profview__event(pv, i));
				break;
			case W_PID:
				ok = match_int(L, idx[k], e.pid);
				break;
			case W_TID:
				ok = match_int(L, idx[k], e.tid);
				break;
			case W_CPU:
				ok = match_int(L, idx[k], (int32_t)e.tag);
				break;
			case W_TIME:
				ok = match_int(L, idx[k], e.tag);
				break;
			default:
				ok = n > 0 && frame_verdict(L, pv, idx[k], c[k], ids[n - 1],
							    (enum where_key)k);
			}
		}
		keep[i] = (uint8_t)ok;
	}
	lua_settop(L, top);
}
