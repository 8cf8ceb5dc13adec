/*
 * perf.luaprofile and coroutines (lprof.h): on Lua 5.1-5.4 the hook goes
 * on the state that runs, so resume and wrap of the coroutine library are
 * wrapped while started to know which one that is.  On LuaJIT the VM
 * reaches its safe point in whichever coroutine runs: nothing is wrapped.
 */
#include "luaprofile/lprof.h"

/* ---- coroutines (5.x): the resumed state is the one to hook ---------- */

#if !LP_LUAJIT

/* cache[function at index fn] = name */
static void cache_name(lua_State *L, int fn, const char *name)
{
	fn = lua_absindex(L, fn);
	lua_pushstring(L, name);
	lperf_weakmap_set(L, &lp_cache_key, fn, -1);
	lua_pop(L, 1);
}

static void co_enter(struct lprof *p, lua_State *co, lua_State *from)
{
	struct lp_state *e;
	if (co == p->base.L) {
		e = &p->base;
	} else {
		e = &p->copool[p->codepth];
		e->L = co;
		e->hook = NULL;
		e->mask = e->count = 0;
	}
	p->costack[p->codepth].co = e;
	p->costack[p->codepth].from = from;
	p->codepth++;
	atomic_store_explicit(&p->running, e, memory_order_release);
}

/* The coroutine returned or yielded: its resumer runs again.  A sample
 * still waiting for the coroutine's safe point moves to the resumer's. */
static void co_leave(struct lprof *p)
{
	struct lp_resume *r = &p->costack[--p->codepth];
	struct lp_state *top;
	if (p->codepth > 0)
		top = p->costack[p->codepth - 1].co;
	else if (p->mainp != NULL && r->from == p->mainp->L)
		top = p->mainp;
	else
		top = &p->base;       /* anchored; the main thread is hooked too */
	atomic_store_explicit(&p->running, top, memory_order_release);
	if (lua_gethook(r->co->L) == lp_hook) {
		lp_disarm(r->co);
		lp_arm(top);
	}
}

/*
 * Calls the function at upvalue 1 with co marked as running.  The profiler
 * is found in the registry at each call, never kept in the closure: a
 * wrapper that outlives its profiler (user code keeps it) finds none.
 */
static int co_call(lua_State *L, lua_State *co)
{
	struct lprof *p;
	int status, n = lua_gettop(L);
	unsigned epoch;
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	p = lp_push_profiler(L);
	if (p == NULL || !p->started || co == NULL || co == L || p->codepth >= LP_MAX_CO) {
		lua_pop(L, 1);
		lua_call(L, n, LUA_MULTRET);
		return lua_gettop(L);
	}
	lua_insert(L, 1);             /* the profiler stays anchored below the call */
	epoch = p->epoch;
	co_enter(p, co, L);
	status = lua_pcall(L, n, LUA_MULTRET, 0);
	/* The coroutine may have stopped (or restarted) the profiler. */
	if (p->started && p->epoch == epoch)
		co_leave(p);
	if (status != LUA_OK)
		return lua_error(L);
	return lua_gettop(L) - 1;
}

/* coroutine.resume(co, ...) */
static int co_resume(lua_State *L)
{
	return co_call(L, lua_tothread(L, 1));
}

/* The function coroutine.wrap returned; upvalue 2 is its coroutine. */
static int co_wrapped(lua_State *L)
{
	return co_call(L, lua_tothread(L, lua_upvalueindex(2)));
}

/* coroutine.wrap(f): the original's closure, called through co_wrapped. */
static int co_wrap(lua_State *L)
{
	lua_State *co = NULL;
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_pushvalue(L, 1);
	lua_call(L, 1, 1);
	/* auxwrap's first upvalue is the coroutine */
	if (lua_getupvalue(L, -1, 1) != NULL) {
		co = lua_tothread(L, -1);
		if (co == NULL)
			lua_pop(L, 1);
	}
	if (co == NULL)
		return 1;
	cache_name(L, -2, "coroutine.wrap");
	lua_pushcclosure(L, co_wrapped, 2);
	return 1;
}

/*
 * Wraps resume and wrap of the coroutine library: the table package.loaded
 * holds (what require "coroutine" gives, also where the global is gone),
 * else the global.
 */
void lp_co_patch(lua_State *L, struct lprof *p)
{
	lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
	if (lua_istable(L, -1))
		lua_getfield(L, -1, "coroutine");
	else
		lua_pushnil(L);
	lua_remove(L, -2);
	if (!lua_istable(L, -1)) {
		lua_pop(L, 1);
		lua_getglobal(L, "coroutine");
	}
	if (!lua_istable(L, -1)) {
		lua_pop(L, 1);
		return;
	}
	lua_getfield(L, -1, "resume");
	if (lua_isfunction(L, -1)) {
		cache_name(L, -1, "coroutine.resume");
		lua_pushvalue(L, -1);
		p->ref_resume = luaL_ref(L, LUA_REGISTRYINDEX);
		lua_pushcclosure(L, co_resume, 1);
		lua_setfield(L, -2, "resume");
	} else {
		lua_pop(L, 1);
	}
	lua_getfield(L, -1, "wrap");
	if (lua_isfunction(L, -1)) {
		lua_pushvalue(L, -1);
		p->ref_wrap = luaL_ref(L, LUA_REGISTRYINDEX);
		lua_pushcclosure(L, co_wrap, 1);
		lua_setfield(L, -2, "wrap");
	} else {
		lua_pop(L, 1);
	}
	p->ref_colib = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* Puts the originals back (only where our wrappers are still installed:
 * user code may have replaced them since). */
void lp_co_unpatch(lua_State *L, struct lprof *p)
{
	static const char *const names[2] = { "resume", "wrap" };
	const lua_CFunction ours[2] = { co_resume, co_wrap };
	int *refs[2] = { &p->ref_resume, &p->ref_wrap }, i;
	if (p->ref_colib == LUA_NOREF)
		return;
	lua_rawgeti(L, LUA_REGISTRYINDEX, p->ref_colib);
	for (i = 0; i < 2; i++) {
		if (*refs[i] == LUA_NOREF)
			continue;
		lua_getfield(L, -1, names[i]);
		if (lua_tocfunction(L, -1) == ours[i]) {
			lua_rawgeti(L, LUA_REGISTRYINDEX, *refs[i]);
			lua_setfield(L, -3, names[i]);
		}
		lua_pop(L, 1);
		luaL_unref(L, LUA_REGISTRYINDEX, *refs[i]);
		*refs[i] = LUA_NOREF;
	}
	lua_pop(L, 1);
	luaL_unref(L, LUA_REGISTRYINDEX, p->ref_colib);
	p->ref_colib = LUA_NOREF;
}

int lp_is_wrapper(lua_CFunction f)
{
	return f != NULL && (f == co_resume || f == co_wrapped);
}

#else

int lp_is_wrapper(lua_CFunction f)
{
	(void)f;
	return 0;
}

#endif
