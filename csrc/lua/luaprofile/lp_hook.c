/*
 * perf.luaprofile's safe points (lprof.h): the one-shot hook the signal
 * handler arms on Lua 5.1-5.4, LuaJIT's own profiling trigger and the
 * callback it makes, and the allocator that asks for a safe point at each
 * sampled allocation (alloc = N).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include "luaprofile/lprof.h"
#include "profile/allocsample.h"

/* ---- the safe points ------------------------------------------------- */

#if !LP_LUAJIT
/*
 * Hooks e's state for one event (the next call, return or instruction),
 * saving the hook it has unless that is already ours.  Runs in the signal
 * handler and in normal code on the same thread; either order of the two
 * leaves the saved hook right.  The state's own line events stay on, so a
 * line hook misses nothing.
 */
void lp_arm(struct lp_state *e)
{
	lua_State *L = e->L;
	lua_Hook h = lua_gethook(L);
	if (h != lp_hook) {
		e->hook = h;
		e->mask = lua_gethookmask(L);
		e->count = lua_gethookcount(L);
	}
	lua_sethook(L, lp_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT |
		    (e->mask & LUA_MASKLINE), 1);
}

/* Puts back the hook e's state had, if ours is still armed there. */
void lp_disarm(struct lp_state *e)
{
	if (e->L != NULL && lua_gethook(e->L) == lp_hook)
		lua_sethook(e->L, e->hook, e->mask, e->count);
}

/* The entry of state L: the innermost resume first. */
static struct lp_state *state_entry(struct lprof *p, lua_State *L)
{
	int k;
	for (k = p->codepth - 1; k >= 0; k--)
		if (p->costack[k].co->L == L)
			return p->costack[k].co;
	if (p->base.L == L)
		return &p->base;
	if (p->mainp != NULL && p->mainp->L == L)
		return p->mainp;
	return NULL;
}

/* Whether the hook that was there wants this event.  Count events are
 * ours: the state's own count restarts when its hook is put back. */
static int hook_wants(int mask, int event)
{
	switch (event) {
	case LUA_HOOKCALL: return mask & LUA_MASKCALL;
	case LUA_HOOKRET: return mask & LUA_MASKRET;
	case LUA_HOOKLINE: return mask & LUA_MASKLINE;
#ifdef LUA_HOOKTAILCALL
	case LUA_HOOKTAILCALL: return mask & LUA_MASKCALL;
#endif
#ifdef LUA_HOOKTAILRET
	case LUA_HOOKTAILRET: return mask & LUA_MASKRET;
#endif
	default: return 0;
	}
}

void lp_hook(lua_State *L, lua_Debug *ar)
{
	struct lprof *p = lp_push_profiler(L);
	struct lp_state *e = p != NULL ? state_entry(p, L) : NULL;
	lua_Hook hook = NULL;
	int mask = 0, count = 0;
	if (e != NULL) {
		hook = e->hook;
		mask = e->mask;
		count = e->count;
	} else if (p != NULL && p->mainp != NULL) {
		/* A thread created while its creator was hooked inherited our
		 * hook (lua_newthread copies it): give it the main thread's. */
		hook = p->mainp->hook;
		mask = p->mainp->mask;
		count = p->mainp->count;
	}
	lua_sethook(L, hook, mask, count);
	if (p != NULL && p->started) {
		uint64_t t0 = lp_now_ns();
		/* At a call event the sample was taken in the caller. */
		p->vmframe[0] = '\0';
		lp_sp_enter(p);
		if (lp_read_lua_stack(p, L, ar->event == LUA_HOOKCALL)) {
			/* No Lua frame below the one being called: the host ran. */
			p->in_lua = p->nlua > 0;
			if (p->native && p->in_lua)
				lp_capture_root(p, L);
			lp_take_samples(p);
			p->safepoint_ns += lp_now_ns() - t0;
		}
		lp_sp_leave(p);
	}
	lua_pop(L, 1);
	if (hook != NULL && hook_wants(mask, ar->event))
		hook(L, ar);
}
#endif

#if LP_LUAJIT
/*
 * The count hook lp_notify sets when LuaJIT's profiler hook was lost: any
 * hook change makes LuaJIT rewrite its dispatch table from its flags,
 * profiler hook included, so setting it repairs, and here the hook that
 * was there before is put back.
 */
void lp_lj_repair(lua_State *L, lua_Debug *ar)
{
	struct lprof *p = lp_push_profiler(L);
	(void)ar;
	if (p != NULL && atomic_load(&p->lj_repairing)) {
		lua_sethook(L, p->lj_saved_hook, p->lj_saved_mask, p->lj_saved_count);
		atomic_store(&p->lj_since_cb, 0);
		atomic_store(&p->lj_repairing, 0);
	} else {
		lua_sethook(L, NULL, 0, 0);
	}
	lua_pop(L, 1);
}
#endif

/* Asks for a safe point.  watch says what the allocation path knows of
 * LuaJIT's stop (struct lp_allocf); LP_LJ_UNWATCHED elsewhere. */
static inline void notify(struct lprof *p, int watch)
{
#if LP_LUAJIT
	/* After our callback returns, LuaJIT rewrites its dispatch table
	 * (lj_profile_interpreter: hookmask, then lj_dispatch_update).  Its
	 * trigger run inside that rewrite updates the table too, and the
	 * outer rewrite then overwrites the hook it set while the mask keeps
	 * saying it is set: no callback ever again (seen at 10 kHz, one run in
	 * five).  So no trigger for a moment after a callback: the sample
	 * waits in the ring for the next safe point. */
	unsigned since = atomic_fetch_add(&p->lj_since_cb, 1) + 1;
	if (p->lj_trigger == NULL ||
	    lp_now_ns() - atomic_load_explicit(&p->lj_cb_end, memory_order_relaxed) <= LP_LJ_QUIET_NS)
		return;
	/* LuaJIT stopped its profiler under us (lua_close does, before it
	 * runs the finalizers, ours among them; so does jit.profile.stop):
	 * its trigger would read the state it has cleared. */
	if (watch == LP_LJ_FREED || (watch == LP_LJ_UNWATCHED && lp_lj_stopped(p)))
		return;
	/* The same can happen when the JIT rewrites the table as it starts or
	 * stops recording a trace: after LP_LJ_STUCK signals with no
	 * callback, a one-shot count hook makes LuaJIT rewrite it again.
	 * (Also when the thread merely runs no Lua: then it is harmless.) */
	if (since >= LP_LJ_STUCK && !atomic_exchange(&p->lj_repairing, 1)) {
		p->lj_saved_hook = lua_gethook(p->lj_L);
		p->lj_saved_mask = lua_gethookmask(p->lj_L);
		p->lj_saved_count = lua_gethookcount(p->lj_L);
		lua_sethook(p->lj_L, lp_lj_repair, LUA_MASKCOUNT, 1);
		return;
	}
	p->lj_trigger(SIGPROF);
#else
	struct lp_state *e = atomic_load_explicit(&p->running, memory_order_acquire);
	(void)watch;
	if (e != NULL)
		lp_arm(e);
	if (p->mainp != NULL && p->mainp != e)
		lp_arm(p->mainp);
#endif
}

/* Signal context: async-signal-safe only.  sigsample calls it only while
 * started, and stop() waits for a call in progress on another thread. */
void lp_notify(void *arg)
{
	notify(arg, LP_LJ_UNWATCHED);
}

/*
 * The state's allocator while alloc = N is started: the one it had does
 * the work; every allocation (and growth of a block) is counted, one per
 * N bytes on average is sampled, and a safe point is asked for as a
 * sample's signal does (the hook armed or LuaJIT's trigger: both are safe
 * anywhere, they only set flags), where the sample gets its stack.  Frees
 * and moves of blocks that may be sampled ones are reported.  No Lua API
 * call here: the collector or a table resize may be half done.
 *
 * libc: the state had lauxlib's allocator (luaL_newstate's: free for a
 * size of 0, else realloc, in every Lua 5.x), which is then called as
 * itself, not through its pointer: a call less per allocation, on a path
 * Lua takes tens of millions of times a second.
 */
static inline void *forward(const struct lp_allocf *sh, void *ptr, size_t osize, size_t nsize,
			    int libc)
{
	if (!libc)
		return sh->f(sh->ud, ptr, osize, nsize);
	if (nsize == 0) {
		free(ptr);
		return NULL;
	}
	return realloc(ptr, nsize);
}

/* A call that frees or moves a sampled block, or is to be sampled. */
static __attribute__((noinline)) void *
shim_slow(struct lp_allocf *sh, void *ptr, size_t osize, size_t nsize, uint64_t grow,
	  int tracked, int sample, int libc)
{
	uintptr_t from = (uintptr_t)ptr;   /* an address, no longer a block once freed */
	void *r = forward(sh, ptr, osize, nsize, libc);

	if (tracked && (nsize == 0 || (r != NULL && (uintptr_t)r != from)))
		allocsample__moved(sh->as, from, nsize == 0 ? 0 : (uintptr_t)r);
#if LP_LUAJIT
	if (ptr != NULL && ptr == sh->lj_buf) {
		if (nsize == 0) {
			sh->lj_buf = NULL;
			sh->lj_watch = LP_LJ_FREED;
		} else if (r != NULL) {
			sh->lj_buf = r;
		}
	}
#endif
	if (sample && r != NULL && sh->p != NULL) {
		allocsample__take(sh->as, (uintptr_t)r, grow);
#if LP_LUAJIT
		notify(sh->p, sh->lj_watch);
#else
		notify(sh->p, LP_LJ_UNWATCHED);
#endif
	}
	return r;
}

/* Every other call (nearly all) ends in a tail call of the allocator, so
 * it costs a few instructions and no stack frame.  Bytes are counted
 * before the call: an allocation that fails counts too. */
static inline void *shim(void *ud, void *ptr, size_t osize, size_t nsize, int libc)
{
	struct lp_allocf *sh = ud;
	int tracked, sample;
	uint64_t grow;

	if (sh->p == NULL)
		return forward(sh, ptr, osize, nsize, libc);
	tracked = ptr != NULL && allocsample__may_track(sh->as, (uintptr_t)ptr);
	/* osize of a new block is a type tag in 5.4, not a size */
	grow = nsize == 0 ? 0 : ptr == NULL ? nsize : nsize > osize ? nsize - osize : 0;
	sample = grow > 0 && allocsample__count(sh->as, grow);
	if (!tracked && !sample
#if LP_LUAJIT
	    && (ptr == NULL || ptr != sh->lj_buf)
#endif
	)
		return forward(sh, ptr, osize, nsize, libc);
	return shim_slow(sh, ptr, osize, nsize, grow, tracked, sample, libc);
}

static void *lp_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	return shim(ud, ptr, osize, nsize, 0);
}

#if !LP_LUAJIT
static void *lp_alloc_libc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	return shim(ud, ptr, osize, nsize, 1);
}

/* Whether f is lauxlib's allocator: the one a new state of luaL_newstate
 * gets.  (LuaJIT's is its own allocator, never libc's.) */
static int is_lauxlib_alloc(lua_Alloc f)
{
	void *ud;
	lua_State *t = luaL_newstate();
	int same;
	if (t == NULL)
		return 0;
	same = lua_getallocf(t, &ud) == f;
	lua_close(t);
	return same;
}
#endif

void lp_sp_enter(struct lprof *p)
{
	if (p->as != NULL)
		allocsample__pause(p->as);
}

void lp_sp_leave(struct lprof *p)
{
	if (p->as != NULL)
		allocsample__resume(p->as);
}

/* Puts our allocator in L's state (alloc = N); on LuaJIT, with its
 * profiler started, the shim then follows that profiler's string buffer
 * (struct lp_allocf).  0 or -ENOMEM. */
int lp_alloc_install(lua_State *L, struct lprof *p)
{
	struct lp_allocf *sh = malloc(sizeof *sh);
#if LP_LUAJIT
	size_t len;
	const char *b;
#endif
	if (sh == NULL)
		return -ENOMEM;
	sh->f = lua_getallocf(L, &sh->ud);
	sh->p = p;
	sh->as = p->as;
	sh->own = lp_alloc;
#if !LP_LUAJIT
	if (is_lauxlib_alloc(sh->f))
		sh->own = lp_alloc_libc;
#endif
	allocsample__reset(p->as);
#if LP_LUAJIT
	sh->lj_buf = NULL;
	sh->lj_watch = LP_LJ_UNWATCHED;
#endif
	p->shim = sh;
	lua_setallocf(L, sh->own, sh);
#if LP_LUAJIT
	/* A stack dump of one frame makes the buffer, through the shim.  With
	 * no frame to dump there is none, and the allocation path asks the
	 * system as the signal path does. */
	lp_sp_enter(p);   /* not a sample of the profiler's own */
	b = luaJIT_profile_dumpstack(L, "l", 1, &len);
	lp_sp_leave(p);
	if (b != NULL && len > 0) {
		sh->lj_buf = (void *)b;
		sh->lj_watch = LP_LJ_WATCHED;
	}
#endif
	return 0;
}

/* Gives L's state its allocator back, exactly the one (and the data) it
 * had, unless another was put over ours: then ours stays and forwards. */
void lp_alloc_restore(lua_State *L, struct lprof *p)
{
	void *ud;
	lua_Alloc f;
	if (p->shim == NULL)
		return;
	f = lua_getallocf(L, &ud);
	if (f == p->shim->own && ud == p->shim) {
		lua_setallocf(L, p->shim->f, p->shim->ud);
		free(p->shim);
	} else {
		p->shim->p = NULL;
	}
	p->shim = NULL;
}

#if LP_LUAJIT
void lp_lj_callback(void *data, lua_State *L, int samples, int vmstate)
{
	struct lprof *p = data;
	const char *vm;
	uint64_t t0 = lp_now_ns();
	(void)samples;
	/* Anchored on L's stack while we use it: naming frames allocates, and
	 * a finalizer run by the collector may stop and drop the profiler. */
	if (lp_push_profiler(L) != p || !p->started) {
		lua_pop(L, 1);
		return;
	}
	switch (vmstate) {
	case 'N': vm = "[vm:compiled]"; break;
	case 'I': vm = "[vm:interpreted]"; break;
	case 'C': vm = "[vm:C]"; break;
	case 'G': vm = "[vm:GC]"; break;
	case 'J': vm = "[vm:JIT compiler]"; break;
	default: vm = "[vm:?]"; break;
	}
	snprintf(p->vmframe, sizeof p->vmframe, "%s", p->vmstate_frames ? vm : "");
	p->vmstate = vmstate;
	lp_sp_enter(p);
	if (lp_read_lua_stack(p, L, 0)) {
		p->in_lua = 1;
		if (p->native)
			lp_capture_root(p, L);
		lp_take_samples(p);
		p->safepoint_ns += lp_now_ns() - t0;
	}
	lp_sp_leave(p);
	lua_pop(L, 1);
	atomic_store(&p->lj_since_cb, 0);
	atomic_store_explicit(&p->lj_cb_end, lp_now_ns(), memory_order_relaxed);
}
#endif
