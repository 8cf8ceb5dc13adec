/*
 * perf.luaprofile: in-process sampling of the Lua code of this thread, with
 * Lua frames, native frames and counter deltas in one stack.
 *
 *   signal (sigsample.c)  ->  safe point  ->  Lua stack + ring samples  ->  stacks
 *
 * The safe point: on Lua 5.1-5.4 the signal handler sets a one-shot hook on
 * the running lua_State (what lua.c does for SIGINT); the hook restores the
 * previous hook and reads the stack with lua_getstack/lua_getinfo.  On
 * LuaJIT, whose compiled traces ignore hooks, the handler calls the SIGPROF
 * handler that luaJIT_profile_start installed (taken and then uninstalled:
 * SIGPROF and ITIMER_PROF are given back at once), so the VM stops at its
 * own profiling safe point and calls us with the VM state.
 *
 * Mixed stacks: the host's frames down to its Lua API call (unwound from
 * our own stack at the safe point), the Lua frames in place of the
 * interpreter's, the LuaJIT VM state, then the native frames of the sample
 * below the runtime (memcpy under string.rep, the host's C function under
 * the Lua code that called it).  A sample taken while no Lua function ran
 * (the host's own code) keeps its native chain alone.
 *
 * Stacks go into the stack table every profile uses (profile/stacktab.h):
 * native frames as addresses, Lua frames and the VM state as named frames,
 * counter deltas as weights.  stop() hands the table over as a
 * perf.Profile; the Lua layer (lua/perf/luaprofile.lua) symbolizes it as
 * any other profile and adds what is particular to this one.
 *
 * The files, one stage each (this header holds what they share):
 *
 *   l_luaprofile.c  perf.luaprofile{...}: the events, rings and samplers
 *                   opened; close(); the methods registered
 *   lp_start.c      start(): sampling armed, safe points put in place;
 *                   lp_halt gives everything back
 *   lp_hook.c       the safe points: the one-shot hook (5.x), LuaJIT's
 *                   trigger and callback, the sampling allocator
 *   lp_coro.c       coroutines (5.x): the resumed state is the one to hook
 *   lp_frames.c     native frames (what is code) and Lua frames (names)
 *   lp_sample.c     one sample: ring records, context switches and
 *                   sampled allocations become stacks of the table
 *   lp_result.c     frame(), stop(), stats(): frames and the results
 */
#ifndef LUAPERF_LUAPROFILE_LPROF_H
#define LUAPERF_LUAPROFILE_LPROF_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "binding.h"
#include "event/evspec.h"
#include "sample/sigsample.h"
#include "profile/stacktab.h"
#ifdef LUA_JITLIBNAME
#include <luajit.h>
#define LP_LUAJIT 1
#else
#define LP_LUAJIT 0
#endif

#define LP_CLASS "perf.LuaProfile"
#define LP_MAX_DEPTH 128        /* Lua frames per stack */
#define LP_MAX_NATIVE 128       /* native frames per stack */
#define LP_MAX_CO 64            /* nested coroutine resumes tracked */
#define LP_FRAME_MAX 256        /* bytes per frame name */
#define LP_NCTR SIGSAMPLE_MAX_COUNTERS
#define LP_ROOT_CACHE 64
#define LP_MAX_ROOT 48         /* host frames above the Lua API call */
#define LP_ROOT_REFRESH 64     /* samples between two unwinds of the host */
#define LP_MAX_EXEC 256        /* executable segments of loaded objects */
#define LP_LJ_QUIET_NS 20000   /* LuaJIT: no trigger this soon after a callback */
#define LP_LJ_STUCK 32         /* LuaJIT: signals without a callback before a repair */
#define LP_MAX_KEEP 256        /* frame profiles kept (the slowest frames) */
#define LP_FREC_MAX (1u << 20) /* stack records a frame keeps for its profile */

/*
 * A Lua state the signal handler may hook, with the hook it had when it
 * was last hooked (restored at the safe point, chained to, and put back at
 * stop): per state, so a debugger's or coverage tool's hook set after
 * start() keeps working, and each coroutine gets its own back.
 */
struct lp_state {
	lua_State *L;
	lua_Hook hook;
	int mask, count;
};

/* A frame of the host's loop (prof:frame() marks its end). */
struct lp_frame {
	uint64_t index, duration, samples;  /* duration in ns */
	uint64_t wait, alloc;               /* ns blocked, bytes allocated (exact) */
	uint64_t counters[LP_NCTR];         /* what each counter counted (exact) */
};

/* What a frame added to the profile, for its own profile: a stack of the
 * stack table (its index) with what was added to it. */
struct lp_frec {
	size_t idx;
	uint64_t count, period;
	uint64_t w[STACKTAB_MAX_WEIGHTS];
};

/* The records of one frame (the current one, or one of the slowest kept). */
struct lp_fbuf {
	struct lp_frec *r;
	size_t n, cap;
	uint64_t index, duration;
	int overflow;                 /* records past LP_FREC_MAX were not kept */
};

/*
 * The allocator we put in the state (alloc = N): the one it had, and the
 * profiler, or NULL once stopped.  Allocated apart from the profiler: when
 * another allocator was put over ours meanwhile, ours cannot be taken out
 * at stop and stays, forwarding, for the state's lifetime.
 */
struct lp_allocf {
	lua_Alloc f;
	void *ud;
	struct lprof *p;
	struct allocsample *as;       /* p's */
	lua_Alloc own;                /* the shim put in the state */
#if LP_LUAJIT
	/* LuaJIT's profiler's string buffer, which its stop frees through
	 * this allocator: seeing that free is how the allocation path knows
	 * the stop came, without a system call (lp_lj_stopped). */
	void *lj_buf;
	int lj_watch;                 /* LP_LJ_UNWATCHED, _WATCHED or _FREED */
#endif
};

enum { LP_LJ_UNWATCHED, LP_LJ_WATCHED, LP_LJ_FREED };

/* A tracked resume: the coroutine's state and the state that resumed it. */
struct lp_resume {
	struct lp_state *co;
	lua_State *from;
};

struct lprof {
	struct sigsample *ss;         /* NULL once closed */
	struct ring *ring;            /* native chains and counter values */
	struct evtab *evtab;
	/*
	 * 5.x: the states the signal handler hooks.  `running`, the state
	 * known to run: the one that started (anchored in the registry while
	 * started, so a coroutine that finishes is not freed under us) or the
	 * innermost coroutine resumed through our coroutine.resume/wrap
	 * (alive: its resumer's stack holds it).  And the main thread, which
	 * never goes away, so samples still reach a safe point when the
	 * running state is not known (start() inside a coroutine that then
	 * yields, resumes that bypass our wrappers).
	 */
	struct lp_state base, main;
	struct lp_state *mainp;       /* &main, &base (started on it) or NULL */
	_Atomic(struct lp_state *) running;
	struct lp_state copool[LP_MAX_CO];
	struct lp_resume costack[LP_MAX_CO];
	int codepth;
	unsigned epoch;               /* starts so far: a resume spanning a restart */
	int base_ref;                 /* registry ref anchoring base.L */
	int started, native, vmstate_frames;
	unsigned nctr;
	char names[1 + LP_NCTR][EVSPEC_NAME_MAX];
	uint64_t last[1 + LP_NCTR];   /* counter values at the previous sample */
	int have_last;
	uint64_t fixed_period;
	/* The coroutine library table we patched and its functions we
	 * replaced (registry refs) */
	int ref_colib, ref_resume, ref_wrap;
	/* LuaJIT: the VM's own profiling trigger (its SIGPROF handler), and
	 * when our callback last returned (see lp_notify) */
	void (*lj_trigger)(int);
	_Atomic uint64_t lj_cb_end;
	/* ... and the sa_flags bit that says LuaJIT stopped it (lp_start.c) */
	int lj_stop_mark;
	/* ... and the repair of a trigger that was lost anyway (lp_lj_repair) */
	lua_State *lj_L;
	atomic_uint lj_since_cb;
	atomic_int lj_repairing;
	lua_Hook lj_saved_hook;
	int lj_saved_mask, lj_saved_count;
	/* Aggregation: the stack table stop() hands over, made at start */
	struct stacktab *st;
	int32_t pid, tid;
	uintptr_t rt_lo[4], rt_hi[4]; /* the Lua runtime's executable text */
	int nrt;
	uintptr_t exec_lo[LP_MAX_EXEC], exec_hi[LP_MAX_EXEC]; /* all objects' */
	int nexec;
	int in_lua;                   /* the Lua stack says a Lua call was active */
	/* The host's frames down to its call into the Lua API (from our own
	 * stack at the safe point), reused while the same outermost Lua
	 * function runs: an unwind costs ~10 us. */
	uint64_t root[LP_MAX_ROOT];
	int nroot, root_age;
	lua_State *root_state;
	char root_key[LP_FRAME_MAX];
	int vmstate;                  /* LuaJIT: 'N', 'I', 'C', 'G', 'J' */
	struct symbolizer *sym;       /* LuaJIT: names the roots of native walks */
	uint64_t thread_root_addr[LP_ROOT_CACHE];
	int thread_root_is[LP_ROOT_CACHE];
	uint64_t api_addr[LP_ROOT_CACHE];  /* is_api_frame's answers (dladdr scans) */
	int api_is[LP_ROOT_CACHE];
	uint64_t samples, lost, unattributed, hooks;
	uint64_t safepoint_ns;        /* time spent at safe points: our own cost */
	/* Frames: the last frames_cap kept in a ring (a game marks 60 a
	 * second for weeks); frames_n in all since start. */
	struct lp_frame *frames;
	size_t frames_cap;
	uint64_t frames_n, frame_t0, frame_samples0;
	/* Weight columns of the stack table: counters first, then these
	 * (-1 when not asked for); nw in all. */
	int w_wait, w_alloc, w_live;
	unsigned nw;
	/* The slowest frames' own profiles: the records of the frame running
	 * (fcur) and of the keep slowest frames so far. */
	struct lp_fbuf fcur;
	struct lp_fbuf *kept;
	/* wait = true: the context-switch event (a sample at each switch out
	 * of the thread, its signal at the switch in) with its switch records */
	struct sigsample *ws;
	struct ring *wring;
	struct evtab *wtab;
	uint64_t wchain[LP_MAX_NATIVE];
	uint64_t wout_time;
	uint64_t wait_ns, preempt_ns, waits, frame_wait0;
	/* alloc = N: the sampler, the allocator put in the state, and the
	 * bytes allocated when the frame began */
	uint64_t alloc_rate;
	struct allocsample *as;
	struct lp_allocf *shim;
	uint64_t frame_alloc0;
	uint64_t frame_ctr0[1 + LP_NCTR];  /* the group's values at the last mark */
	unsigned keep, nkept, kmin;   /* frame profiles: kept at most, kept, the fastest kept */
	int nwchain, wout_preempt;
	/* Scratch for one stack */
	char lua_frames[LP_MAX_DEPTH][LP_FRAME_MAX];
	int nlua;
	uint64_t fbuf[2 * LP_MAX_NATIVE + LP_MAX_DEPTH + LP_MAX_ROOT + 2];
	char vmframe[32];
};

/* &lp_registry_key: the started profiler's userdata, held there while started */
extern char lp_registry_key;
/* &lp_cache_key: function -> frame name (a weak-keyed table) */
extern char lp_cache_key;

struct dl_phdr_info;

/* lp_frames.c */
int lp_exec_phdr(struct dl_phdr_info *info, size_t size, void *arg);  /* for dl_iterate_phdr */
int lp_in_exec(const struct lprof *p, uint64_t a);
int lp_rt_phdr(struct dl_phdr_info *info, size_t size, void *arg);    /* for dl_iterate_phdr */
int lp_in_runtime(const struct lprof *p, uint64_t a);
struct lprof *lp_push_profiler(lua_State *L);
int lp_read_lua_stack(struct lprof *p, lua_State *L, int first);

/* lp_sample.c */
void lp_capture_root(struct lprof *p, lua_State *L);
void lp_warm_roots(struct lprof *p);
void lp_take_allocs(struct lprof *p);
uint64_t lp_now_ns(void);
void lp_take_samples(struct lprof *p);

/* lp_hook.c */
#if !LP_LUAJIT
void lp_arm(struct lp_state *e);
void lp_disarm(struct lp_state *e);
void lp_hook(lua_State *L, lua_Debug *ar);
#else
void lp_lj_repair(lua_State *L, lua_Debug *ar);
int lp_lj_stopped(const struct lprof *p); /* async-signal-safe */
void lp_lj_callback(void *data, lua_State *L, int samples, int vmstate);
#endif
void lp_notify(void *arg);          /* sigsample's notify: signal context */
int lp_alloc_install(lua_State *L, struct lprof *p);
void lp_alloc_restore(lua_State *L, struct lprof *p);
/* A safe point's bounds: our own allocations in between are not counted. */
void lp_sp_enter(struct lprof *p);
void lp_sp_leave(struct lprof *p);

/* lp_coro.c: whether f is one of our coroutine wrappers (not a frame of
 * the program); the wrappers put in and taken out (5.x) */
int lp_is_wrapper(lua_CFunction f);
#if !LP_LUAJIT
void lp_co_patch(lua_State *L, struct lprof *p);
void lp_co_unpatch(lua_State *L, struct lprof *p);
#endif

/* lp_start.c */
void lp_halt(lua_State *L, struct lprof *p);
int lp_start(lua_State *L);

/* lp_result.c */
struct stacktab *lp_new_table(const struct lprof *p);
int lp_frame(lua_State *L);
int lp_stop(lua_State *L);
int lp_stats(lua_State *L);

/* l_luaprofile.c: the open profiler at index 1 (raises when closed) */
struct lprof *lp_check_open(lua_State *L);

#endif
