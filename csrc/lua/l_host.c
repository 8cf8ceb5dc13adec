/*
 * The C API for hosts (csrc/include/luaperf.h): the in-process profiler
 * driven from C on the host's lua_State.  Each call runs one protected
 * step on that state through the same objects a Lua script uses
 * (perf.luaprofile, the profile its stop() returns), so the two paths
 * cannot drift apart; Lua errors become -1/NULL and a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "binding.h"
#include "luaperf.h"

struct luaperf_profiler {
	lua_State *L;
	int ref;             /* the perf.LuaProfiler (registry) */
	int result;          /* the profile of the last stop (registry) */
	char err[512];
};

enum host_what { OP_NEW, OP_START, OP_FRAME, OP_STOP, OP_FOLDED, OP_FLAME, OP_FRAMES,
		 OP_SLOWEST, OP_DELETE };

struct host_op {
	luaperf_profiler *p;
	enum host_what what;
	const luaperf_profiler_options *opts;
	const char *title;   /* OP_FLAME's title, OP_FOLDED's weight, OP_NEW's options text */
	char *text;          /* out: malloc'd */
	long n;
	unsigned long long total;
};

/* require(name), through the state's own require (its package.path). */
static void push_require(lua_State *L, const char *name)
{
	lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
	lua_getfield(L, -1, "_G");
	if (lua_istable(L, -1))
		lua_getfield(L, -1, "require");
	else
		lua_pushnil(L);
	if (!lua_isfunction(L, -1))
		luaL_error(L, "this Lua state has no require (open the standard libraries first)");
	lua_pushstring(L, name);
	lua_call(L, 1, 1);
	lua_replace(L, -3);
	lua_pop(L, 1);
}

/* The table the Lua constructor text makes, evaluated with no globals. */
static void push_options(lua_State *L, const char *text)
{
	lua_pushfstring(L, "return %s", text);
	if (luaL_loadbuffer(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=options") != LUA_OK)
		lua_error(L);
	lua_newtable(L);
#if LUA_VERSION_NUM >= 502
	lua_setupvalue(L, -2, 1);
#else
	lua_setfenv(L, -2);
#endif
	lua_call(L, 0, 1);
	if (!lua_istable(L, -1))
		luaL_error(L, "options must be a table constructor ({ wait = true, ... })");
	lua_remove(L, -2);
}

/* Calls obj:name(...) with the nargs values on top; leaves nres results. */
static void call_method(lua_State *L, int ref, const char *name, int nargs, int nres)
{
	if (ref == LUA_NOREF)
		luaL_error(L, "no profile yet: call luaperf_profiler_stop first");
	lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
	lua_getfield(L, -1, name);
	lua_insert(L, -2 - nargs);
	lua_insert(L, -1 - nargs);
	lua_call(L, nargs + 1, nres);
}

/* The string at the top, copied for the host (freed with free()). */
static char *copy_top(lua_State *L)
{
	size_t len;
	const char *s = lua_tolstring(L, -1, &len);
	char *out;
	if (s == NULL)
		luaL_error(L, "no text");
	out = malloc(len + 1);
	if (out == NULL)
		luaL_error(L, "out of memory");
	memcpy(out, s, len + 1);
	return out;
}

static int host_step(lua_State *L)
{
	struct host_op *op = lua_touserdata(L, 1);
	luaperf_profiler *p = op->p;
	lua_settop(L, 0);
	switch (op->what) {
	case OP_NEW: {
		const luaperf_profiler_options *o = op->opts;
		push_require(L, "perf");
		lua_getfield(L, -1, "luaprofile");
		if (op->title != NULL) {
			push_options(L, op->title);
		} else {
			lua_createtable(L, 0, 3);
		}
		if (o != NULL && o->freq > 0) {
			lua_pushinteger(L, o->freq);
			lua_setfield(L, -2, "freq");
		}
		if (o != NULL && o->no_native) {
			lua_pushboolean(L, 0);
			lua_setfield(L, -2, "native");
		}
		if (o != NULL && o->event != NULL) {
			lua_pushstring(L, o->event);
			lua_setfield(L, -2, "event");
		}
		lua_call(L, 1, 2);
		if (lua_isnil(L, -2))
			return lua_error(L);          /* the message */
		lua_pop(L, 1);
		p->ref = luaL_ref(L, LUA_REGISTRYINDEX);
		break;
	}
	case OP_START:
		call_method(L, p->ref, "start", 0, 2);
		if (lua_isnil(L, -2))
			return lua_error(L);
		break;
	case OP_FRAME:
		call_method(L, p->ref, "frame", 0, 1);
		op->n = (long)lua_tointeger(L, -1);
		break;
	case OP_STOP:
		call_method(L, p->ref, "stop", 0, 1);
		luaL_unref(L, LUA_REGISTRYINDEX, p->result);
		lua_pushvalue(L, -1);
		p->result = luaL_ref(L, LUA_REGISTRYINDEX);
		call_method(L, p->result, "total", 0, 1);
		op->n = (long)lua_tointeger(L, -1);
		break;
	case OP_FOLDED:
		lua_createtable(L, 0, 1);
		if (op->title != NULL) {
			lua_pushstring(L, op->title);
			lua_setfield(L, -2, "weight");
		}
		call_method(L, p->result, "folded", 1, 1);
		op->text = copy_top(L);
		break;
	case OP_SLOWEST:
		lua_createtable(L, 0, 1);
		lua_pushinteger(L, op->n);
		lua_setfield(L, -2, "slowest");
		call_method(L, p->result, "frames", 1, 1);
		lua_rawgeti(L, -1, (int)op->n);
		if (!lua_istable(L, -1))
			luaL_error(L, "no frame of rank %d", (int)op->n);
		lua_getfield(L, -1, "index");
		lua_getfield(L, -2, "duration");
		op->n = (long)lua_tointeger(L, -2);
		op->total = (unsigned long long)lua_tonumber(L, -1);
		lua_getfield(L, -3, "profile");
		if (lua_isnil(L, -1))
			luaL_error(L, "frame %d kept no profile (raise frame_profiles)", (int)op->n);
		lua_getfield(L, -1, "folded");
		lua_insert(L, -2);
		lua_call(L, 1, 1);
		op->text = copy_top(L);
		break;
	case OP_FLAME:
		lua_createtable(L, 0, 1);
		if (op->title != NULL) {
			lua_pushstring(L, op->title);
			lua_setfield(L, -2, "title");
		}
		call_method(L, p->result, "flamegraph", 1, 1);
		op->text = copy_top(L);
		break;
	case OP_FRAMES: {
		int i, n;
		call_method(L, p->result, "frames", 0, 1);
		n = (int)lua_rawlen(L, -1);
		op->total = 0;
		for (i = 1; i <= n; i++) {
			lua_rawgeti(L, -1, i);
			lua_getfield(L, -1, "duration");
			op->total += (unsigned long long)lua_tonumber(L, -1);
			lua_pop(L, 2);
		}
		op->n = n;
		break;
	}
	case OP_DELETE:
		if (p->ref != LUA_NOREF)
			call_method(L, p->ref, "close", 0, 0);
		luaL_unref(L, LUA_REGISTRYINDEX, p->ref);
		luaL_unref(L, LUA_REGISTRYINDEX, p->result);
		p->ref = p->result = LUA_NOREF;
		break;
	}
	return 0;
}

/* One protected step; 0 or -1 with p->err set.  L's stack is as it was. */
static int run(luaperf_profiler *p, struct host_op *op)
{
	lua_State *L = p->L;
	int top = lua_gettop(L), rc;
	p->err[0] = '\0';
	op->p = p;
	if (!lua_checkstack(L, 8)) {
		snprintf(p->err, sizeof p->err, "no room on the Lua stack");
		return -1;
	}
	lua_pushcfunction(L, host_step);
	lua_pushlightuserdata(L, op);
	rc = lua_pcall(L, 1, 0, 0);
	if (rc != LUA_OK) {
		const char *msg = lua_tostring(L, -1);
		snprintf(p->err, sizeof p->err, "%s", msg != NULL ? msg : "error in the Lua state");
	}
	lua_settop(L, top);
	return rc == LUA_OK ? 0 : -1;
}

static luaperf_profiler *profiler_new(lua_State *L, const luaperf_profiler_options *opts,
				      const char *text, char *err, size_t errlen)
{
	struct host_op op = { 0 };
	luaperf_profiler *p = calloc(1, sizeof *p);
	if (p == NULL) {
		if (errlen > 0)
			snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->L = L;
	p->ref = p->result = LUA_NOREF;
	op.what = OP_NEW;
	op.opts = opts;
	op.title = text;
	if (run(p, &op) < 0) {
		if (errlen > 0)
			snprintf(err, errlen, "%s", p->err);
		free(p);
		return NULL;
	}
	return p;
}

luaperf_profiler *luaperf_profiler_new(lua_State *L, const luaperf_profiler_options *opts,
				       char *err, size_t errlen)
{
	return profiler_new(L, opts, NULL, err, errlen);
}

luaperf_profiler *luaperf_profiler_new_lua(lua_State *L, const char *options, char *err,
					   size_t errlen)
{
	return profiler_new(L, NULL, options, err, errlen);
}

int luaperf_profiler_start(luaperf_profiler *p)
{
	struct host_op op = { 0 };
	op.what = OP_START;
	return run(p, &op);
}

long luaperf_profiler_frame(luaperf_profiler *p)
{
	struct host_op op = { 0 };
	op.what = OP_FRAME;
	return run(p, &op) < 0 ? -1 : op.n;
}

long luaperf_profiler_stop(luaperf_profiler *p)
{
	struct host_op op = { 0 };
	op.what = OP_STOP;
	return run(p, &op) < 0 ? -1 : op.n;
}

char *luaperf_profiler_folded(luaperf_profiler *p)
{
	struct host_op op = { 0 };
	op.what = OP_FOLDED;
	return run(p, &op) < 0 ? NULL : op.text;
}

char *luaperf_profiler_folded_by(luaperf_profiler *p, const char *weight)
{
	struct host_op op = { 0 };
	op.what = OP_FOLDED;
	op.title = weight;
	return run(p, &op) < 0 ? NULL : op.text;
}

char *luaperf_profiler_slowest(luaperf_profiler *p, int rank, long *index,
			       unsigned long long *duration_ns)
{
	struct host_op op = { 0 };
	op.what = OP_SLOWEST;
	op.n = rank;
	if (rank < 1) {
		snprintf(p->err, sizeof p->err, "rank must be 1 or more");
		return NULL;
	}
	if (run(p, &op) < 0)
		return NULL;
	if (index != NULL)
		*index = op.n;
	if (duration_ns != NULL)
		*duration_ns = op.total;
	return op.text;
}

char *luaperf_profiler_flamegraph(luaperf_profiler *p, const char *title)
{
	struct host_op op = { 0 };
	op.what = OP_FLAME;
	op.title = title;
	return run(p, &op) < 0 ? NULL : op.text;
}

long luaperf_profiler_frames(luaperf_profiler *p, unsigned long long *total_ns)
{
	struct host_op op = { 0 };
	op.what = OP_FRAMES;
	if (run(p, &op) < 0)
		return -1;
	if (total_ns != NULL)
		*total_ns = op.total;
	return op.n;
}

const char *luaperf_profiler_error(const luaperf_profiler *p)
{
	return p->err;
}

void luaperf_profiler_delete(luaperf_profiler *p)
{
	struct host_op op = { 0 };
	if (p == NULL)
		return;
	op.what = OP_DELETE;
	run(p, &op);
	free(p);
}
