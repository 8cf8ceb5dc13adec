/*
 * perf.luaprofile's start() (lprof.h): the sampling armed, the safe points
 * put in place (the hook's states and coroutine wrappers, or LuaJIT's
 * profiler, the allocator), and lp_halt, which gives all of it back.
 */
#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
#include "luaprofile/lprof.h"
#include "record/record.h"
#include "sample/ring.h"

#if LP_LUAJIT
static int lj_busy;                   /* LuaJIT's profiler is process-wide */
static void (*lj_known_trigger)(int); /* its SIGPROF handler, once seen */
#endif

/* Holds the profiler's userdata (at ud, or nothing when 0) in the
 * registry: the safe points find it there, and a started profiler the
 * program dropped is not collected under them. */
static void set_registry(lua_State *L, int ud)
{
	lua_pushlightuserdata(L, &lp_registry_key);
	if (ud != 0)
		lua_pushvalue(L, ud);
	else
		lua_pushnil(L);
	lua_rawset(L, LUA_REGISTRYINDEX);
}

static int count_unattributed(void *arg, const struct perf_event_header *h)
{
	struct lprof *p = arg;
	struct record r;
	char err[128];
	if (h->type == PERF_RECORD_SAMPLE)
		p->unattributed++;
	/* what the kernel dropped while the ring was full counts as lost,
	 * as at a safe point */
	else if (h->type == PERF_RECORD_LOST &&
		 record__decode(p->evtab, h, h->size, &r, err, sizeof err) == 0)
		p->lost += r.u.lost.lost;
	return 0;
}

static int count_nothing(void *arg, const struct perf_event_header *h)
{
	(void)arg;
	(void)h;
	return 0;
}

#if LP_LUAJIT
/*
 * LuaJIT's trigger (its SIGPROF handler) reads the profiler's state, which
 * luaJIT_profile_stop clears: lua_close calls it before it runs the
 * finalizers, so a sample in between would crash.  LuaJIT has no call that
 * says it stopped, but its stop puts back the SIGPROF disposition it saw at
 * start.  We show it one marked with a flag that means nothing for SIGPROF
 * (SA_NOCLDSTOP and SA_NOCLDWAIT concern SIGCHLD only) and put the real one
 * back: the mark on SIGPROF says LuaJIT's stop has run.  The stop restores
 * the disposition first and clears the state last, and the sample runs on
 * the thread that stops, so unmarked means the state is still there.
 */
static int stop_mark(const struct sigaction *before)
{
	if (!(before->sa_flags & SA_NOCLDSTOP))
		return SA_NOCLDSTOP;
	if (!(before->sa_flags & SA_NOCLDWAIT))
		return SA_NOCLDWAIT;
	return 0;
}

int lp_lj_stopped(const struct lprof *p)
{
	struct sigaction cur;
	return sigaction(SIGPROF, NULL, &cur) != 0 || (cur.sa_flags & p->lj_stop_mark) != 0;
}
#endif

/* Stops sampling and gives back the hook, SIGPROF, the coroutine functions
 * and the allocator. */
void lp_halt(lua_State *L, struct lprof *p)
{
	if (!p->started)
		return;
	p->started = 0;
	lp_alloc_restore(L, p);
	/* No handler arms a state past this point, on any thread. */
	sigsample__stop(p->ss);
	if (p->ws != NULL)
		sigsample__stop(p->ws);
#if LP_LUAJIT
	{
		struct itimerval it;
		struct sigaction cur;
		/* luaJIT_profile_stop resets ITIMER_PROF and SIGPROF: keep what is there now. */
		getitimer(ITIMER_PROF, &it);
		sigaction(SIGPROF, NULL, &cur);
		/* LuaJIT's own handler in place: its profiler was stopped under
		 * us and started again by someone else (jit.p), theirs to stop */
		if ((cur.sa_flags & SA_SIGINFO) || cur.sa_handler != p->lj_trigger) {
			luaJIT_profile_stop(L);
			setitimer(ITIMER_PROF, &it, NULL);
			/* stopped already (lua_close): the disposition before us, marked */
			cur.sa_flags &= ~p->lj_stop_mark;
			sigaction(SIGPROF, &cur, NULL);
		}
		p->lj_trigger = NULL;
		/* a repair not yet done: its hook goes, the one before comes back */
		if (atomic_exchange(&p->lj_repairing, 0) && lua_gethook(L) == lp_lj_repair)
			lua_sethook(L, p->lj_saved_hook, p->lj_saved_mask, p->lj_saved_count);
		lj_busy = 0;
	}
#else
	{
		/* Our hook may still be armed where no safe point came: put
		 * each state's own back. */
		int k;
		atomic_store(&p->running, NULL);
		for (k = p->codepth - 1; k >= 0; k--)
			lp_disarm(p->costack[k].co);
		p->codepth = 0;
		lp_disarm(&p->base);
		if (p->mainp != NULL)
			lp_disarm(p->mainp);
		p->base.L = p->main.L = NULL;
		p->mainp = NULL;
	}
	lp_co_unpatch(L, p);
#endif
	luaL_unref(L, LUA_REGISTRYINDEX, p->base_ref);
	p->base_ref = LUA_NOREF;
	/* Samples that reached no safe point before the stop: counted, not
	 * attributed, and gone from the ring (a next start begins clean). */
	if (p->ring != NULL) {
		sigsample__take(p->ss);
		ring__drain(p->ring, count_unattributed, p);
	} else {
		p->unattributed += sigsample__take(p->ss);
	}
	if (p->ws != NULL) {
		sigsample__take(p->ws);
		ring__drain(p->wring, count_nothing, p);
		p->wout_time = 0;
	}
	set_registry(L, 0);
}

int lp_start(lua_State *L)
{
	struct lprof *p = lp_check_open(L);
	int err;
	if (p->started)
		return luaL_error(L, "the profile is already started");
	if (lp_push_profiler(L) != NULL)
		return lperf_fail(L, "another perf.luaprofile is running on this Lua state", EBUSY);
	lua_pop(L, 1);
	if (p->st == NULL && (p->st = lp_new_table(p)) == NULL)
		return lperf_fail(L, "cannot start the profile: out of memory", ENOMEM);
	p->pid = (int32_t)getpid();
	p->tid = (int32_t)sigsample__tid(p->ss);
	p->codepth = 0;
	p->have_last = 0;
	p->epoch++;
	p->frames_n = 0;
	p->frame_t0 = lp_now_ns();
	p->frame_samples0 = p->samples;
	p->wait_ns = p->preempt_ns = p->waits = p->frame_wait0 = 0;
	p->wout_time = 0;
	p->nwchain = 0;
	p->frame_alloc0 = 0;
	memset(p->frame_ctr0, 0, sizeof p->frame_ctr0);
	if (p->nctr > 0)
		sigsample__read(p->ss, p->frame_ctr0, 1 + p->nctr, NULL, NULL);
	p->fcur.n = 0;
	p->fcur.overflow = 0;
	p->nkept = p->kmin = 0;
#if LP_LUAJIT
	{
		struct sigaction before, marked, lj;
		struct itimerval it;
		if (lj_busy)
			return lperf_fail(L, "LuaJIT's profiler is process-wide and already in use", EBUSY);
		sigaction(SIGPROF, NULL, &before);
		/* jit.p (or another jit.profile user) holds it: starting would stop
		 * theirs.  Recognized by its handler, once we have seen it. */
		if (lj_known_trigger != NULL && !(before.sa_flags & SA_SIGINFO) &&
		    before.sa_handler == lj_known_trigger)
			return lperf_fail(L, "LuaJIT's profiler is in use (jit.p or jit.profile): stop it first", EBUSY);
		p->lj_stop_mark = stop_mark(&before);
		if (p->lj_stop_mark == 0)
			return lperf_fail(L, "SIGPROF's disposition has both SA_NOCLDSTOP and SA_NOCLDWAIT: "
					  "cannot see LuaJIT stop its profiler", ENOTSUP);
		getitimer(ITIMER_PROF, &it);
		marked = before;
		marked.sa_flags |= p->lj_stop_mark;
		sigaction(SIGPROF, &marked, NULL);
		/* 'f': traces check for the profiler at function granularity, as
		 * jit.p does; the timer interval does not matter, it is undone. */
		luaJIT_profile_start(L, "fi100000", lp_lj_callback, p);
		sigaction(SIGPROF, NULL, &lj);
		setitimer(ITIMER_PROF, &it, NULL);
		sigaction(SIGPROF, &before, NULL);
		if ((lj.sa_flags & SA_SIGINFO) || lj.sa_handler == SIG_DFL ||
		    lj.sa_handler == SIG_IGN || lj.sa_handler == before.sa_handler) {
			luaJIT_profile_stop(L);
			sigaction(SIGPROF, &before, NULL);
			return lperf_fail(L, "this LuaJIT has no SIGPROF profiler (built without LJ_HASPROFILE?)", ENOTSUP);
		}
		p->lj_trigger = lj.sa_handler;
		lj_known_trigger = lj.sa_handler;
		lj_busy = 1;
		p->lj_L = L;
		atomic_store(&p->lj_since_cb, 0);
		atomic_store(&p->lj_repairing, 0);
	}
#else
	{
		lua_State *main;
#if LUA_VERSION_NUM >= 502
		lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
		main = lua_tothread(L, -1);
#else
		main = lua_pushthread(L) ? L : NULL;   /* 5.1 tells only "is it L" */
#endif
		lua_pop(L, 1);
		memset(&p->base, 0, sizeof p->base);
		memset(&p->main, 0, sizeof p->main);
		p->base.L = L;
		if (main == L) {
			p->mainp = &p->base;
		} else if (main != NULL) {
			p->main.L = main;
			p->mainp = &p->main;
		} else {
			p->mainp = NULL;
		}
		atomic_store(&p->running, &p->base);
		lp_co_patch(L, p);
	}
#endif
	/* The state that started may be a coroutine that finishes while we
	 * run: it stays alive until stop. */
	lua_pushthread(L);
	p->base_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	p->nexec = 0;
	dl_iterate_phdr(lp_exec_phdr, p);
	if (p->native) {
		/* backtrace() loads libgcc's unwinder on its first call: here,
		 * not in the first sample (glibc's advice for signal contexts). */
		void *warm[4];
		backtrace(warm, 4);
	}
#if LP_LUAJIT
	lp_warm_roots(p);
#endif
	p->root_state = NULL;
	p->nroot = 0;
	set_registry(L, 1);
	p->started = 1;
	err = sigsample__start(p->ss);
	if (err < 0) {
		lp_halt(L, p);
		return lperf_fail(L, "cannot arm the sampling event", -err);
	}
	if (p->ws != NULL && (err = sigsample__start(p->ws)) < 0) {
		lp_halt(L, p);
		return lperf_fail(L, "cannot arm the context-switch event (wait = true)", -err);
	}
	if (p->as != NULL && lp_alloc_install(L, p) < 0) {
		lp_halt(L, p);
		return lperf_fail(L, "cannot start the profile: out of memory", ENOMEM);
	}
	lua_settop(L, 1);
	return 1;
}
