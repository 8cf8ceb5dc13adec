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
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "binding.h"
#include "event/errmsg.h"
#include "event/evspec.h"
#include "base/perf_sys.h"
#include "record/record.h"
#include "sample/ring.h"
#include "sample/sigsample.h"
#include "profile/stacktab.h"
#include "symbol/symbolizer.h"
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

/* Evspec's parser when the module has it (evspec.c); a few names otherwise. */
extern int evspec__parse(const char *spec, struct evspec *out, char *err,
			 size_t errlen) __attribute__((weak));

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
};

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
	/* ... and the repair of a trigger that was lost anyway (lj_repair) */
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
	/* Scratch for one stack */
	char lua_frames[LP_MAX_DEPTH][LP_FRAME_MAX];
	int nlua;
	uint64_t fbuf[2 * LP_MAX_NATIVE + LP_MAX_DEPTH + LP_MAX_ROOT + 2];
	char vmframe[32];
};

static char registry_key;             /* &registry_key: the started profiler's
					 userdata, held there while started */
static char cache_key;                /* &cache_key: function -> frame name */
#if LP_LUAJIT
static int lj_busy;                   /* LuaJIT's profiler is process-wide */
static void (*lj_known_trigger)(int); /* its SIGPROF handler, once seen */
#endif

/* ---- native frames --------------------------------------------------- */

/* Is a an address in some object's executable segments (a real frame)? */
static int exec_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct lprof *p = arg;
	int i;
	(void)size;
	for (i = 0; i < info->dlpi_phnum && p->nexec < LP_MAX_EXEC; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			p->exec_lo[p->nexec] = info->dlpi_addr + ph->p_vaddr;
			p->exec_hi[p->nexec] = p->exec_lo[p->nexec] + ph->p_memsz;
			p->nexec++;
		}
	}
	return 0;
}

static int in_exec(const struct lprof *p, uint64_t a)
{
	int i;
	for (i = 0; i < p->nexec; i++)
		if (a >= p->exec_lo[i] && a < p->exec_hi[i])
			return 1;
	return 0;
}

/* Finds the executable segments of the object that holds the Lua API. */
static int rt_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct lprof *p = arg;
	uintptr_t api = (uintptr_t)lua_gettop;
	int i, k;
	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD || api < lo || api >= lo + ph->p_memsz)
			continue;
		for (k = 0; k < info->dlpi_phnum && p->nrt < 4; k++) {
			const ElfW(Phdr) *q = &info->dlpi_phdr[k];
			if (q->p_type == PT_LOAD && (q->p_flags & PF_X)) {
				p->rt_lo[p->nrt] = info->dlpi_addr + q->p_vaddr;
				p->rt_hi[p->nrt] = p->rt_lo[p->nrt] + q->p_memsz;
				p->nrt++;
			}
		}
		return 1;
	}
	return 0;
}

static int in_runtime(const struct lprof *p, uint64_t a)
{
	int i;
	for (i = 0; i < p->nrt; i++)
		if (a >= p->rt_lo[i] && a < p->rt_hi[i])
			return 1;
	return 0;
}

/* ---- Lua frames ------------------------------------------------------ */

/* Pushes the started profiler of L's universe (its userdata, anchoring it
 * on the stack while the caller uses it) or nil; returns it or NULL. */
static struct lprof *push_profiler(lua_State *L)
{
	lua_pushlightuserdata(L, &registry_key);
	lua_rawget(L, LUA_REGISTRYINDEX);
	return lua_touserdata(L, -1);
}

/* "string.rep" for a function found in a loaded module; pushes it or nothing. */
static int find_global_name(lua_State *L, int fn)
{
	lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
	if (!lua_istable(L, -1)) {
		lua_pop(L, 1);
		return 0;
	}
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		if (lua_istable(L, -1) && lua_type(L, -2) == LUA_TSTRING) {
			lua_pushnil(L);
			while (lua_next(L, -2)) {
				if (lua_rawequal(L, -1, fn) && lua_type(L, -2) == LUA_TSTRING) {
					const char *mod = lua_tostring(L, -4);
					if (strcmp(mod, "_G") == 0)
						lua_pushvalue(L, -2);
					else
						lua_pushfstring(L, "%s.%s", mod, lua_tostring(L, -2));
					lua_replace(L, -6);
					lua_pop(L, 4);
					return 1;
				}
				lua_pop(L, 1);
			}
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return 0;
}

#if !LP_LUAJIT
static int co_resume(lua_State *L);
static int co_wrapped(lua_State *L);
static int is_wrapper(lua_CFunction f)
{
	return f != NULL && (f == co_resume || f == co_wrapped);
}
#else
static int is_wrapper(lua_CFunction f)
{
	(void)f;
	return 0;
}
#endif

#if !LP_LUAJIT
/* cache[function at index fn] = name */
static void cache_name(lua_State *L, int fn, const char *name)
{
	fn = lua_absindex(L, fn);
	lua_pushstring(L, name);
	lperf_weakmap_set(L, &cache_key, fn, -1);
	lua_pop(L, 1);
}
#endif

/*
 * The frame name of the function at the top of the stack, cached in a
 * weak-keyed registry table (a function's name is computed once).
 */
static void frame_name(lua_State *L, lua_Debug *ar, char *out)
{
	int fn = lua_gettop(L);
	lua_pushlightuserdata(L, &cache_key);
	lua_rawget(L, LUA_REGISTRYINDEX);
	lua_pushvalue(L, fn);
	lua_rawget(L, -2);
	if (lua_type(L, -1) == LUA_TSTRING) {
		/* the hot path: no formatting, a bounded copy */
		size_t len;
		const char *name = lua_tolstring(L, -1, &len);
		if (len >= LP_FRAME_MAX)
			len = LP_FRAME_MAX - 1;
		memcpy(out, name, len);
		out[len] = '\0';
		lua_pop(L, 2);
		return;
	}
	lua_pop(L, 1);
	lua_getinfo(L, "Sn", ar);
	if (strcmp(ar->what, "C") == 0) {
		if (is_wrapper(lua_tocfunction(L, fn))) {
			out[0] = '\0';       /* ours: not a frame of the program */
		} else if (find_global_name(L, fn)) {
			snprintf(out, LP_FRAME_MAX, "%s", lua_tostring(L, -1));
			lua_pop(L, 1);
		} else if (ar->name != NULL) {
			snprintf(out, LP_FRAME_MAX, "%s", ar->name);
		} else {
			Dl_info info;
			lua_CFunction f = lua_tocfunction(L, fn);
			if (f != NULL && dladdr((void *)f, &info) && info.dli_sname != NULL)
				snprintf(out, LP_FRAME_MAX, "%s", info.dli_sname);
			else
				snprintf(out, LP_FRAME_MAX, "%s", "?");
		}
	} else if (strcmp(ar->what, "main") == 0) {
		snprintf(out, LP_FRAME_MAX, "[Lua] main chunk %s", ar->short_src);
	} else if (find_global_name(L, fn)) {
		/* A global or module name is stable; the call site's is not. */
		snprintf(out, LP_FRAME_MAX, "[Lua] %s %s:%d", lua_tostring(L, -1),
			 ar->short_src, ar->linedefined);
		lua_pop(L, 1);
	} else {
		snprintf(out, LP_FRAME_MAX, "[Lua] %s %s:%d",
			 ar->name != NULL ? ar->name : "?", ar->short_src, ar->linedefined);
	}
	lua_pushvalue(L, fn);
	lua_pushstring(L, out);
	lua_rawset(L, -3);
	lua_pop(L, 1);
}

/*
 * Reads L's stack from level first up, then the states that resumed it.
 * Naming a function allocates, so the collector (and any finalizer, which
 * may stop this profiler) can run: returns 0 when the profiler was
 * stopped meanwhile, and then touches neither it nor its states again.
 */
static int read_lua_stack(struct lprof *p, lua_State *L, int first)
{
	lua_Debug ar;
	int level, k;
	unsigned epoch = p->epoch;
	p->nlua = 0;
	if (!lua_checkstack(L, 24))
		return 1;
	for (;;) {
		for (level = first; p->nlua < LP_MAX_DEPTH && lua_getstack(L, level, &ar); level++) {
			lua_getinfo(L, "f", &ar);
			frame_name(L, &ar, p->lua_frames[p->nlua]);
			lua_pop(L, 1);
			if (!p->started || p->epoch != epoch)
				return 0;
			if (p->lua_frames[p->nlua][0] == '\0')
				continue;
			p->nlua++;
		}
		/* A coroutine: continue in the state that resumed it. */
		for (k = p->codepth - 1; k >= 0 && p->costack[k].co->L != L; k--)
			;
		if (k < 0)
			break;
		L = p->costack[k].from;
		first = 0;
		if (!lua_checkstack(L, 24))
			break;
	}
	return 1;
}

/* ---- one sample ------------------------------------------------------ */

/* Is addr inside an exported Lua API function (lua_*, luaL_*, luaJIT_*)?
 * Only the runtime's code can be; dladdr scans symbol tables, so each
 * address is asked once (return addresses repeat from sample to sample). */
static int is_api_frame(struct lprof *p, uint64_t addr)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	unsigned slot = (unsigned)(addr >> 2) % LP_ROOT_CACHE;
	int api;
	if (p->nrt > 0 && !in_runtime(p, addr))
		return 0;
	if (p->api_addr[slot] == addr)
		return p->api_is[slot];
	api = dladdr1((void *)(uintptr_t)addr, &info, (void **)&sym, RTLD_DL_SYMENT) &&
	      info.dli_sname != NULL && sym != NULL &&
	      /* dladdr names the nearest export even for internal code */
	      addr < (uintptr_t)info.dli_saddr + sym->st_size &&
	      (strncmp(info.dli_sname, "lua_", 4) == 0 ||
	       strncmp(info.dli_sname, "luaL_", 5) == 0 ||
	       strncmp(info.dli_sname, "luaJIT_", 7) == 0);
	p->api_addr[slot] = addr;
	p->api_is[slot] = api;
	return api;
}

/*
 * The host's frames, root first, down to and including its call into the
 * Lua API (main;frame_loop;lua_pcallk): unwound from our own stack here at
 * the safe point, which is still inside that call.  The kernel's walk
 * rarely gets there (the runtime has no frame pointers); the unwinder
 * (.eh_frame) does.
 */
static void capture_root(struct lprof *p, lua_State *L)
{
	void *bt[128];
	const char *key = p->nlua > 0 ? p->lua_frames[p->nlua - 1] : "";
	int n, i, k;
	if (p->root_state == L && p->root_age++ < LP_ROOT_REFRESH &&
	    strcmp(p->root_key, key) == 0)
		return;
	p->root_state = L;
	p->root_age = 0;
	snprintf(p->root_key, sizeof p->root_key, "%s", key);
	p->nroot = 0;
	n = backtrace(bt, 128);
	for (i = n - 1; i >= 0; i--)
		if (is_api_frame(p, (uint64_t)(uintptr_t)bt[i] - 1))
			break;
	if (i < 0) {
		/* The API call was a tail call into the VM (LuaJIT's lua_resume
		 * jumps to lj_vm_resume): stop above the runtime's first frame. */
		for (i = n - 1; i >= 0; i--)
			if (in_runtime(p, (uint64_t)(uintptr_t)bt[i] - 1))
				break;
		if (i < 0 || i == n - 1)
			return;       /* nothing of the host above the runtime */
		i++;
	}
	for (k = n - 1; k >= i && p->nroot < LP_MAX_ROOT; k--)
		p->root[p->nroot++] = (uint64_t)(uintptr_t)bt[k] - 1;
}

/* Appends the named frame of name to the stack being built. */
static int put_name(struct lprof *p, unsigned *n, const char *name)
{
	if (*n >= sizeof p->fbuf / sizeof p->fbuf[0] ||
	    stacktab__intern(p->st, name, &p->fbuf[*n]) < 0)
		return -1;
	(*n)++;
	return 0;
}

static void put_addr(struct lprof *p, unsigned *n, uint64_t addr)
{
	if (*n < sizeof p->fbuf / sizeof p->fbuf[0])
		p->fbuf[(*n)++] = addr;
}

/*
 * Builds the stack, leaf first, in p->fbuf.  In Lua: the native frames the
 * runtime or a C function called (memcpy under string.rep), the VM state,
 * the Lua frames in place of the interpreter's, then the native frames
 * that called into the runtime.  Not in Lua (the host's own code): the
 * native frames alone.  chain: user addresses leaf first, already cut where
 * the frame-pointer walk left the executable segments (nchain may be 0).
 * Returns the frame count, or -1 out of memory.
 */
static int build_stack(struct lprof *p, const uint64_t *chain, int nchain, int in_lua)
{
	unsigned n = 0;
	int i, first_rt = -1, last_rt = -1, rc = 0;
	for (i = 0; i < nchain; i++) {
		if (in_runtime(p, chain[i])) {
			if (first_rt < 0)
				first_rt = i;
			last_rt = i;
		}
	}
	if (!in_lua) {
		for (i = 0; i < nchain; i++)
			put_addr(p, &n, chain[i]);
		if (n == 0)
			rc = put_name(p, &n, "[not in Lua]");
		return rc < 0 ? -1 : (int)n;
	}
	for (i = 0; i < (first_rt < 0 ? nchain : first_rt); i++)
		put_addr(p, &n, chain[i]);
	if (p->vmframe[0] != '\0')
		rc |= put_name(p, &n, p->vmframe);
	for (i = 0; i < p->nlua; i++)
		rc |= put_name(p, &n, p->lua_frames[i]);
	if (p->nroot > 0)
		for (i = p->nroot - 1; i >= 0; i--)
			put_addr(p, &n, p->root[i]);
	else
		for (i = last_rt + 1; last_rt >= 0 && i < nchain; i++)
			put_addr(p, &n, chain[i]);
	if (n == 0)
		rc |= put_name(p, &n, "[unknown]");
	return rc < 0 ? -1 : (int)n;
}

/* Adds count samples of the stack built in p->fbuf. */
static void add_sample(struct lprof *p, int n, uint64_t count, uint64_t period,
		       const uint64_t *delta)
{
	if (n < 0 || p->st == NULL ||
	    stacktab__add_stack_w(p->st, p->fbuf, (unsigned)n, 0, p->pid, p->tid, p->names[0],
				  count, period, p->nctr > 0 ? delta : NULL) < 0) {
		p->lost += count;
		return;
	}
	p->samples += count;
}

/* Whether addr is in a function that starts threads (the walk is complete). */
static int is_thread_root(struct lprof *p, uint64_t addr)
{
	static const char *const roots[] = { "__libc_start_call_main", "__libc_start_main",
		"_start", "start_thread", "clone", "clone3", "__clone", "__clone3" };
	struct sym_result r;
	unsigned k, slot = (unsigned)(addr >> 4) % LP_ROOT_CACHE;
	int root = 0;
	if (p->thread_root_addr[slot] == addr)
		return p->thread_root_is[slot];
	if (p->sym == NULL) {
		p->sym = symbolizer__new();
		if (p->sym != NULL)
			symbolizer__load_proc(p->sym, (uint32_t)getpid());
	}
	if (p->sym != NULL &&
	    symbolizer__resolve(p->sym, (uint32_t)getpid(), addr, SYM_NAMES, &r) == 0 && r.name)
		for (k = 0; k < sizeof roots / sizeof roots[0]; k++)
			if (strcmp(r.name, roots[k]) == 0)
				root = 1;
	p->thread_root_addr[slot] = addr;
	p->thread_root_is[slot] = root;
	return root;
}

struct drain_ctx {
	struct lprof *p;
	unsigned got;
};

static int on_record(void *arg, const struct perf_event_header *h)
{
	struct drain_ctx *c = arg;
	struct lprof *p = c->p;
	struct record r;
	char err[128];
	uint64_t chain[LP_MAX_NATIVE], ctr[LP_NCTR], delta[LP_NCTR];
	unsigned n = 0, k;
	uint64_t i;
	int in_lua;

	if (h->type == PERF_RECORD_LOST) {
		if (record__decode(p->evtab, h, h->size, &r, err, sizeof err) == 0)
			p->lost += r.u.lost.lost;
		return 0;
	}
	if (h->type != PERF_RECORD_SAMPLE)
		return 0;
	if (record__decode(p->evtab, h, h->size, &r, err, sizeof err) < 0) {
		p->lost++;
		return 0;
	}
	/* Frame-pointer walks through code built without them wander off:
	 * stop at the first address outside every executable segment. */
	for (i = 0; i < r.s.nr_callchain && n < LP_MAX_NATIVE; i++) {
		uint64_t a = r.s.callchain[i];
		if (a >= (uint64_t)PERF_CONTEXT_MAX)
			continue;     /* context markers */
		if (!in_exec(p, a))
			break;
		chain[n] = n > 0 ? a - 1 : a;  /* return addresses: the call site */
		n++;
	}
	/* Counter values at this sample: the delta since the previous one. */
	memset(delta, 0, sizeof delta);
	if (p->nctr > 0 && r.s.read.nr == 1 + p->nctr) {
		for (k = 0; k < p->nctr; k++)
			ctr[k] = r.s.read.values[(size_t)(k + 1) * r.s.read.stride];
		if (p->have_last)
			for (k = 0; k < p->nctr; k++)
				delta[k] = ctr[k] - p->last[k + 1];
		memcpy(p->last + 1, ctr, sizeof(uint64_t) * p->nctr);
		p->have_last = 1;
	}
	in_lua = p->in_lua;
	/* LuaJIT in C code: the host's own code if the native stack is
	 * complete (down to a thread's root) and the runtime is not on it;
	 * then the VM only reached its safe point later.  An incomplete walk
	 * (code without frame pointers) cannot tell: kept in Lua. */
	if (LP_LUAJIT && p->vmstate == 'C' && n > 0 && is_thread_root(p, chain[n - 1])) {
		in_lua = 0;
		for (i = 0; i < n; i++)
			if (in_runtime(p, chain[i]))
				in_lua = 1;
	}
	add_sample(p, build_stack(p, p->native ? chain : NULL, p->native ? (int)n : 0, in_lua),
		   1, r.s.period ? r.s.period : p->fixed_period, delta);
	c->got++;
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Attributes what happened since the last safe point to the Lua stack read now. */
static void take_samples(struct lprof *p)
{
	uint64_t n = sigsample__take(p->ss);
	p->hooks++;
	if (p->ring != NULL) {
		struct drain_ctx c = { p, 0 };
		if (ring__drain(p->ring, on_record, &c) < 0)
			p->lost++;
		return;
	}
	if (n > 0) {
		uint64_t vals[1 + LP_NCTR], delta[LP_NCTR];
		unsigned k;
		memset(delta, 0, sizeof delta);
		if (p->nctr > 0 && sigsample__read(p->ss, vals, 1 + p->nctr, NULL, NULL) == 0) {
			if (p->have_last)
				for (k = 0; k < p->nctr; k++)
					delta[k] = vals[k + 1] - p->last[k + 1];
			memcpy(p->last, vals, sizeof vals);
			p->have_last = 1;
		}
		add_sample(p, build_stack(p, NULL, 0, p->in_lua), n, n * p->fixed_period, delta);
	}
}

/* ---- the safe points ------------------------------------------------- */

#if !LP_LUAJIT
static void lp_hook(lua_State *L, lua_Debug *ar);

/*
 * Hooks e's state for one event (the next call, return or instruction),
 * saving the hook it has unless that is already ours.  Runs in the signal
 * handler and in normal code on the same thread; either order of the two
 * leaves the saved hook right.  The state's own line events stay on, so a
 * line hook misses nothing.
 */
static void arm(struct lp_state *e)
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
static void disarm(struct lp_state *e)
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

static void lp_hook(lua_State *L, lua_Debug *ar)
{
	struct lprof *p = push_profiler(L);
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
		uint64_t t0 = now_ns();
		/* At a call event the sample was taken in the caller. */
		p->vmframe[0] = '\0';
		if (read_lua_stack(p, L, ar->event == LUA_HOOKCALL)) {
			/* No Lua frame below the one being called: the host ran. */
			p->in_lua = p->nlua > 0;
			if (p->native && p->in_lua)
				capture_root(p, L);
			take_samples(p);
			p->safepoint_ns += now_ns() - t0;
		}
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
static void lj_repair(lua_State *L, lua_Debug *ar)
{
	struct lprof *p = push_profiler(L);
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

/* Signal context: async-signal-safe only.  sigsample calls it only while
 * started, and stop() waits for a call in progress on another thread. */
static void lp_notify(void *arg)
{
	struct lprof *p = arg;
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
	    now_ns() - atomic_load_explicit(&p->lj_cb_end, memory_order_relaxed) <= LP_LJ_QUIET_NS)
		return;
	/* The same can happen when the JIT rewrites the table as it starts or
	 * stops recording a trace: after LP_LJ_STUCK signals with no
	 * callback, a one-shot count hook makes LuaJIT rewrite it again.
	 * (Also when the thread merely runs no Lua: then it is harmless.) */
	if (since >= LP_LJ_STUCK && !atomic_exchange(&p->lj_repairing, 1)) {
		p->lj_saved_hook = lua_gethook(p->lj_L);
		p->lj_saved_mask = lua_gethookmask(p->lj_L);
		p->lj_saved_count = lua_gethookcount(p->lj_L);
		lua_sethook(p->lj_L, lj_repair, LUA_MASKCOUNT, 1);
		return;
	}
	p->lj_trigger(SIGPROF);
#else
	struct lp_state *e = atomic_load_explicit(&p->running, memory_order_acquire);
	if (e != NULL)
		arm(e);
	if (p->mainp != NULL && p->mainp != e)
		arm(p->mainp);
#endif
}

#if LP_LUAJIT
static void lj_callback(void *data, lua_State *L, int samples, int vmstate)
{
	struct lprof *p = data;
	const char *vm;
	uint64_t t0 = now_ns();
	(void)samples;
	/* Anchored on L's stack while we use it: naming frames allocates, and
	 * a finalizer run by the collector may stop and drop the profiler. */
	if (push_profiler(L) != p || !p->started) {
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
	if (read_lua_stack(p, L, 0)) {
		p->in_lua = 1;
		if (p->native)
			capture_root(p, L);
		take_samples(p);
		p->safepoint_ns += now_ns() - t0;
	}
	lua_pop(L, 1);
	atomic_store(&p->lj_since_cb, 0);
	atomic_store_explicit(&p->lj_cb_end, now_ns(), memory_order_relaxed);
}
#endif

/* ---- coroutines (5.x): the resumed state is the one to hook ---------- */

#if !LP_LUAJIT

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
		disarm(r->co);
		arm(top);
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
	p = push_profiler(L);
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
static void co_patch(lua_State *L, struct lprof *p)
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
static void co_unpatch(lua_State *L, struct lprof *p)
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

#endif

/* ---- the userdata ---------------------------------------------------- */

static struct lprof *check_open(lua_State *L)
{
	struct lprof *p = luaL_checkudata(L, 1, LP_CLASS);
	if (p->ss == NULL)
		luaL_error(L, "attempt to use a closed perf.LuaProfile");
	return p;
}

/* Holds the profiler's userdata (at ud, or nothing when 0) in the
 * registry: the safe points find it there, and a started profiler the
 * program dropped is not collected under them. */
static void set_registry(lua_State *L, int ud)
{
	lua_pushlightuserdata(L, &registry_key);
	if (ud != 0)
		lua_pushvalue(L, ud);
	else
		lua_pushnil(L);
	lua_rawset(L, LUA_REGISTRYINDEX);
}

static int count_unattributed(void *arg, const struct perf_event_header *h)
{
	struct lprof *p = arg;
	if (h->type == PERF_RECORD_SAMPLE)
		p->unattributed++;
	return 0;
}

/* Stops sampling and gives back the hook, SIGPROF and coroutine functions. */
static void lp_halt(lua_State *L, struct lprof *p)
{
	if (!p->started)
		return;
	p->started = 0;
	/* No handler arms a state past this point, on any thread. */
	sigsample__stop(p->ss);
#if LP_LUAJIT
	{
		struct itimerval it;
		struct sigaction cur;
		/* luaJIT_profile_stop resets ITIMER_PROF and SIGPROF: keep what is there now. */
		getitimer(ITIMER_PROF, &it);
		sigaction(SIGPROF, NULL, &cur);
		luaJIT_profile_stop(L);
		setitimer(ITIMER_PROF, &it, NULL);
		sigaction(SIGPROF, &cur, NULL);
		p->lj_trigger = NULL;
		/* a repair not yet done: its hook goes, the one before comes back */
		if (atomic_exchange(&p->lj_repairing, 0) && lua_gethook(L) == lj_repair)
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
			disarm(p->costack[k].co);
		p->codepth = 0;
		disarm(&p->base);
		if (p->mainp != NULL)
			disarm(p->mainp);
		p->base.L = p->main.L = NULL;
		p->mainp = NULL;
	}
	co_unpatch(L, p);
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
	set_registry(L, 0);
}

static void lp_release(lua_State *L, struct lprof *p)
{
	if (p->ss == NULL)
		return;
	lp_halt(L, p);
	ring__unmap(p->ring);
	p->ring = NULL;
	sigsample__close(p->ss);
	p->ss = NULL;
	evtab__delete(p->evtab);
	p->evtab = NULL;
	stacktab__delete(p->st);
	p->st = NULL;
	free(p->frames);
	p->frames = NULL;
	symbolizer__delete(p->sym);
	p->sym = NULL;
}

static int lp_close(lua_State *L)
{
	lp_release(L, luaL_checkudata(L, 1, LP_CLASS));
	return 0;
}

static int lp_start(lua_State *L)
{
	struct lprof *p = check_open(L);
	int err;
	if (p->started)
		return luaL_error(L, "the profile is already started");
	if (push_profiler(L) != NULL)
		return lperf_fail(L, "another perf.luaprofile is running on this Lua state", EBUSY);
	lua_pop(L, 1);
	if (p->st == NULL) {
		unsigned k;
		p->st = stacktab__new();
		for (k = 0; p->st != NULL && k < p->nctr; k++)
			if (stacktab__weight(p->st, p->names[k + 1]) < 0) {
				stacktab__delete(p->st);
				p->st = NULL;
			}
		if (p->st == NULL)
			return lperf_fail(L, "cannot start the profile: out of memory", ENOMEM);
	}
	p->pid = (int32_t)getpid();
	p->tid = (int32_t)sigsample__tid(p->ss);
	p->codepth = 0;
	p->have_last = 0;
	p->epoch++;
	p->frames_n = 0;
	p->frame_t0 = now_ns();
	p->frame_samples0 = p->samples;
#if LP_LUAJIT
	{
		struct sigaction before, lj;
		struct itimerval it;
		if (lj_busy)
			return lperf_fail(L, "LuaJIT's profiler is process-wide and already in use", EBUSY);
		sigaction(SIGPROF, NULL, &before);
		/* jit.p (or another jit.profile user) holds it: starting would stop
		 * theirs.  Recognized by its handler, once we have seen it. */
		if (lj_known_trigger != NULL && !(before.sa_flags & SA_SIGINFO) &&
		    before.sa_handler == lj_known_trigger)
			return lperf_fail(L, "LuaJIT's profiler is in use (jit.p or jit.profile): stop it first", EBUSY);
		getitimer(ITIMER_PROF, &it);
		/* 'f': traces check for the profiler at function granularity, as
		 * jit.p does; the timer interval does not matter, it is undone. */
		luaJIT_profile_start(L, "fi100000", lj_callback, p);
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
		co_patch(L, p);
	}
#endif
	/* The state that started may be a coroutine that finishes while we
	 * run: it stays alive until stop. */
	lua_pushthread(L);
	p->base_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	p->nexec = 0;
	dl_iterate_phdr(exec_phdr, p);
	if (p->native) {
		/* backtrace() loads libgcc's unwinder on its first call: here,
		 * not in the first sample (glibc's advice for signal contexts). */
		void *warm[4];
		backtrace(warm, 4);
	}
	p->root_state = NULL;
	p->nroot = 0;
	set_registry(L, 1);
	p->started = 1;
	err = sigsample__start(p->ss);
	if (err < 0) {
		lp_halt(L, p);
		return lperf_fail(L, "cannot arm the sampling event", -err);
	}
	lua_settop(L, 1);
	return 1;
}

/* prof:frame(): the end of a frame of the host's loop (and the start of
 * the next).  Samples count for the frame whose safe point took them. */
static int lp_frame(lua_State *L)
{
	struct lprof *p = check_open(L);
	struct lp_frame *f;
	uint64_t t;
	if (!p->started)
		return luaL_error(L, "the profile is not started");
	if (p->frames == NULL) {
		p->frames = malloc(p->frames_cap * sizeof *p->frames);
		if (p->frames == NULL)
			return lperf_fail(L, NULL, ENOMEM);
	}
	t = now_ns();
	f = &p->frames[p->frames_n % p->frames_cap];
	f->index = p->frames_n + 1;
	f->duration = t - p->frame_t0;
	f->samples = p->samples - p->frame_samples0;
	p->frames_n++;
	p->frame_t0 = t;
	p->frame_samples0 = p->samples;
	lua_pushinteger(L, (lua_Integer)p->frames_n);
	return 1;
}

/*
 * Stops and returns the raw profile: { event=, counters={names}, samples=,
 * lost=, unattributed=, signals=, profile=<perf.Profile>, frames={...} }.
 * The aggregation is reset, so start() begins a new profile.
 */
static int lp_stop(lua_State *L)
{
	struct lprof *p = check_open(L);
	unsigned k;
	lp_halt(L, p);
	lua_createtable(L, 0, 8);
	lperf_setstr(L, "event", p->names[0]);
	lua_createtable(L, (int)p->nctr, 0);
	for (k = 0; k < p->nctr; k++) {
		lua_pushstring(L, p->names[k + 1]);
		lua_rawseti(L, -2, (int)k + 1);
	}
	lua_setfield(L, -2, "counters");
	lperf_setu64(L, "samples", p->samples);
	lperf_setu64(L, "lost", p->lost);
	lperf_setu64(L, "unattributed", p->unattributed);
	lperf_setu64(L, "signals", sigsample__signals(p->ss));
	lperf_setu64(L, "safepoints", p->hooks);
	lperf_setu64(L, "safepoint_ns", p->safepoint_ns);
	lperf_setbool(L, "native", p->native && p->ring != NULL);
	/* The stack table goes to a perf.Profile; start() makes a new one. */
	if (p->st != NULL) {
		*lperf_newprofile(L) = p->st;
		p->st = NULL;
	} else {
		struct stacktab **slot = lperf_newprofile(L);
		if ((*slot = stacktab__new()) == NULL)
			return lperf_fail(L, "out of memory", ENOMEM);
	}
	lua_setfield(L, -2, "profile");
	{
		/* frames = { {index, duration, samples}, ... }, oldest first */
		uint64_t first = p->frames_n > p->frames_cap ? p->frames_n - p->frames_cap : 0, j;
		lua_createtable(L, (int)(p->frames_n - first), 0);
		for (j = first; j < p->frames_n; j++) {
			const struct lp_frame *f = &p->frames[j % p->frames_cap];
			lua_createtable(L, 3, 0);
			lperf_pushu64(L, f->index);
			lua_rawseti(L, -2, 1);
			lperf_pushu64(L, f->duration);
			lua_rawseti(L, -2, 2);
			lperf_pushu64(L, f->samples);
			lua_rawseti(L, -2, 3);
			lua_rawseti(L, -2, (int)(j - first + 1));
		}
		lua_setfield(L, -2, "frames");
		lperf_setu64(L, "frames_total", p->frames_n);
		p->frames_n = 0;
	}
	p->samples = p->lost = p->unattributed = p->hooks = p->safepoint_ns = 0;
	return 1;
}

/* ---- construction ---------------------------------------------------- */

/* Software events by name, for builds without evspec.c. */
static int parse_event(const char *spec, struct evspec *ev, char *err, size_t errlen)
{
	static const struct { const char *name; uint32_t type; uint64_t config; } names[] = {
		{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
		{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
		{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
		{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
		{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
		{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
		{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
		{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
		{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	};
	size_t i, len = strcspn(spec, ":");
	if (evspec__parse != NULL)
		return evspec__parse(spec, ev, err, errlen);
	memset(ev, 0, sizeof *ev);
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (strlen(names[i].name) == len && strncmp(spec, names[i].name, len) == 0) {
			ev->attr.size = sizeof ev->attr;
			ev->attr.type = names[i].type;
			ev->attr.config = names[i].config;
			if (spec[len] == ':' && strchr(spec + len, 'u') != NULL) {
				ev->attr.exclude_kernel = 1;
				ev->attr.exclude_hv = 1;
			}
			snprintf(ev->name, sizeof ev->name, "%s", spec);
			return 0;
		}
	}
	snprintf(err, errlen, "unknown event '%s'", spec);
	return -ENOENT;
}

/* errmsg.c's explanation of a refused open, without its "cannot open ..."
 * head (the caller's names the thread); its ":u" advice is for event specs,
 * the luaprofile way to stay in user space is leaving out kernel=true. */
static void explain_refusal(char *buf, size_t len, int err, const char *name,
			    const struct perf_event_attr *attr)
{
	char head[EVSPEC_NAME_MAX + 128];
	char *u;
	int n;

	errmsg__open(buf, len, err, name, attr, 0, -1);
	n = snprintf(head, sizeof head, "cannot open '%s' (%s): ", name, strerror(err));
	if (n > 0 && (size_t)n < sizeof head && !strncmp(buf, head, (size_t)n))
		memmove(buf, buf + n, strlen(buf + n) + 1);
	u = strstr(buf, "add :u");
	if (u != NULL)
		snprintf(u, len - (size_t)(u - buf), "drop kernel=true to profile user space only");
}

/* A full collection in protected mode: a finalizer may raise (5.1, LuaJIT)
 * and the caller holds memory no userdata owns. */
static int lp_collect(lua_State *L)
{
	lua_gc(L, LUA_GCCOLLECT, 0);
	return 0;
}

static int lp_new(lua_State *L)
{
	struct lprof *p;
	struct sigsample_opts *o;
	struct evspec ev;
	char err[512];
	const char *event, *sigmode;
	enum sigsample_signal signal;
	lua_Integer freq, period, max_stack, nframes;
	int pages, rc, failed = 0, kernel;
	unsigned k;

	if (lua_isnoneornil(L, 1))
		lua_newtable(L);
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 1);
	event = lperf_optfield_str(L, 1, "event", "cpu-clock");
	freq = lperf_optfield_int(L, 1, "freq", 0);
	period = lperf_optfield_int(L, 1, "period", 0);
	pages = lperf_optfield_int(L, 1, "pages", 16);
	kernel = lperf_optfield_bool(L, 1, "kernel", 0);
	sigmode = lperf_optfield_str(L, 1, "signal", "auto");
	if (!strcmp(sigmode, "auto"))
		signal = SIGSAMPLE_SIGNAL_AUTO;
	else if (!strcmp(sigmode, "trap"))
		signal = SIGSAMPLE_SIGNAL_TRAP;
	else if (!strcmp(sigmode, "realtime"))
		signal = SIGSAMPLE_SIGNAL_REALTIME;
	else
		return luaL_error(L, "signal must be \"auto\", \"trap\" or \"realtime\", not \"%s\"", sigmode);
	if (freq < 0 || period < 0 || (freq > 0 && period > 0))
		return luaL_error(L, "give freq= or period= (a positive number), not both");
	if (freq == 0 && period == 0)
		freq = 999;
	if (pages < 1 || pages > 4096 || (pages & (pages - 1)))
		return luaL_error(L, "pages must be a power of two between 1 and 4096");
	lua_getfield(L, 1, "counters");
	if (!lua_isnil(L, -1))
		luaL_checktype(L, -1, LUA_TTABLE);
	if (lua_istable(L, -1) && lua_rawlen(L, -1) > LP_NCTR)
		return luaL_error(L, "at most %d counters", LP_NCTR);

	o = calloc(1, sizeof *o);
	if (o == NULL)
		return lperf_fail(L, NULL, ENOMEM);
	p = lua_newuserdatauv(L, sizeof *p, 1);
	memset(p, 0, sizeof *p);
	p->ref_colib = p->ref_resume = p->ref_wrap = p->base_ref = LUA_NOREF;
	luaL_setmetatable(L, LP_CLASS);     /* closed: p->ss == NULL */

	if (parse_event(event, &ev, err, sizeof err) < 0) {
		free(o);
		return lperf_fail(L, err, EINVAL);
	}
	snprintf(p->names[0], sizeof p->names[0], "%s", ev.name);
	o->attr = ev.attr;
	if (!kernel) {
		o->attr.exclude_kernel = 1;
		o->attr.exclude_hv = 1;
	}
	if (!ev.has_period) {
		o->attr.freq = freq > 0;
		o->attr.sample_period = freq > 0 ? (uint64_t)freq : (uint64_t)period;
	}
	p->fixed_period = o->attr.freq ? 1 : o->attr.sample_period;
	if (o->attr.type == PERF_TYPE_SOFTWARE && o->attr.freq &&
	    (o->attr.config == PERF_COUNT_SW_CPU_CLOCK ||
	     o->attr.config == PERF_COUNT_SW_TASK_CLOCK))
		p->fixed_period = 1000000000ULL / o->attr.sample_freq;
	p->native = lperf_optfield_bool(L, 1, "native", 1);
	max_stack = lperf_optfield_int(L, 1, "max_stack", 32);
	nframes = lperf_optfield_int(L, 1, "frames", 65536);
	if (nframes < 1 || nframes > (1 << 24)) {
		free(o);
		return luaL_error(L, "frames (how many frames to keep) must be between 1 and %d", 1 << 24);
	}
	p->frames_cap = (size_t)nframes;
	if (max_stack < 1 || max_stack > LP_MAX_NATIVE) {
		free(o);
		return luaL_error(L, "max_stack must be between 1 and %d", LP_MAX_NATIVE);
	}
	p->vmstate_frames = lperf_optfield_bool(L, 1, "vmstate", 1);
	o->attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	/* Only in frequency mode: with a fixed period, a software event that
	 * records PERIOD samples every single event (the kernel's
	 * perf_swevent_event takes period = nr), whatever the period. */
	if (o->attr.freq)
		o->attr.sample_type |= PERF_SAMPLE_PERIOD;
	if (p->native) {
		o->attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
		o->attr.exclude_callchain_kernel = 1;
		/* The kernel walks frame pointers through a runtime built
		 * without them until its limit, each step a read of the
		 * thread's memory, and we keep only what lies in code: 32
		 * frames cost ~4 us a sample less than 127 here.  The host's
		 * frames above its Lua call come from our own unwind. */
		o->attr.sample_max_stack = (uint16_t)max_stack;

	}
	for (k = 0; lua_istable(L, 2) && k < lua_rawlen(L, 2); k++) {
		struct evspec cev;
		lua_rawgeti(L, 2, (int)k + 1);
		if (lua_type(L, -1) != LUA_TSTRING) {
			free(o);
			return luaL_error(L, "counters[%d] must be an event name", (int)k + 1);
		}
		if (parse_event(lua_tostring(L, -1), &cev, err, sizeof err) < 0) {
			free(o);
			return lperf_fail(L, err, EINVAL);
		}
		lua_pop(L, 1);
		o->counters[k] = cev.attr;
		if (!kernel) {
			o->counters[k].exclude_kernel = 1;
			o->counters[k].exclude_hv = 1;
		}
		snprintf(p->names[k + 1], sizeof p->names[k + 1], "%s", cev.name);
	}
	o->nr_counters = k;
	p->nctr = k;
	if (k > 0)
		o->attr.sample_type |= PERF_SAMPLE_READ;
	o->notify = lp_notify;
	o->arg = p;
	o->signal = signal;

	rc = sigsample__open(o, &p->ss, &failed);
	if (rc == -EMFILE) {
		/* Unreachable luaprofiles keep their slot (and fds) until collected. */
		lua_pushcfunction(L, lp_collect);
		if (lua_pcall(L, 0, 0, 0) != 0)
			lua_pop(L, 1);
		rc = sigsample__open(o, &p->ss, &failed);
	}
	if (rc == -EMFILE && failed < 0) {
		free(o);
		snprintf(err, sizeof err, "at most %d luaprofiles can be open at once: "
			 "close() the ones you no longer use", SIGSAMPLE_MAX_OPEN);
		return lperf_fail(L, err, EMFILE);
	}
	if (rc == -EINVAL && !failed && o->attr.freq &&
	    (long long)o->attr.sample_freq > perf_sys__sysctl("perf_event_max_sample_rate", 1LL << 40)) {
		snprintf(err, sizeof err, "freq %llu is above kernel.perf_event_max_sample_rate (%lld): "
			 "lower freq= or raise the sysctl",
			 (unsigned long long)o->attr.sample_freq,
			 perf_sys__sysctl("perf_event_max_sample_rate", 0));
		free(o);
		return lperf_fail(L, err, EINVAL);
	}
	if (rc == -EOPNOTSUPP && signal == SIGSAMPLE_SIGNAL_TRAP) {
		free(o);
		return lperf_fail(L, "signal=\"trap\" is not supported before Linux 5.18 "
				  "(a blocked SIGTRAP was forced): use \"auto\" or \"realtime\"", EOPNOTSUPP);
	}
	if (rc < 0) {
		char why[512] = "";
		if (rc == -EACCES || rc == -EPERM)
			explain_refusal(why, sizeof why, -rc, p->names[failed],
					failed ? &o->counters[failed - 1] : &o->attr);
		snprintf(err, sizeof err, "cannot open %s '%.64s' for sampling this thread: %s%s%s%.300s%s",
			 failed ? "counter" : "event", p->names[failed], strerror(-rc),
			 rc == -ENOENT ? " (no such event on this machine: hardware events need a PMU)" : "",
			 why[0] ? " (" : "", why[0] ? why : "", why[0] ? ")" : "");
		free(o);
		return lperf_fail(L, err, -rc);
	}
	free(o);
	/* The ring carries call chains and counter values; without one the
	 * counters are read at each safe point and stacks are Lua-only. */
	if (p->native || p->nctr > 0) {
		p->evtab = evtab__new();
		if (p->evtab == NULL || evtab__add(p->evtab, sigsample__attr(p->ss), p->names[0]) < 0 ||
		    (rc = ring__mmap(sigsample__fd(p->ss), (size_t)pages, 0, &p->ring)) < 0) {
			if (p->evtab == NULL)
				rc = -ENOMEM;
			lp_release(L, p);
			return lperf_fail(L, "cannot map the sampling ring (raise pages= or the mlock limit)",
					  rc < 0 ? -rc : ENOMEM);
		}
	}
	dl_iterate_phdr(rt_phdr, p);
	lua_settop(L, 3);
	return 1;
}

static int lp_stats(lua_State *L)
{
	struct lprof *p = check_open(L);
	lua_createtable(L, 0, 6);
	lperf_setu64(L, "samples", p->samples);
	lperf_setu64(L, "lost", p->lost);
	lperf_setu64(L, "signals", sigsample__signals(p->ss));
	lperf_setu64(L, "safepoints", p->hooks);
	lperf_setu64(L, "safepoint_ns", p->safepoint_ns);
	lperf_setint(L, "signo", sigsample__signo(p->ss));
	lperf_setint(L, "tid", sigsample__tid(p->ss));
	lperf_setbool(L, "started", p->started);
	lperf_setbool(L, "native", p->native && p->ring != NULL);
	return 1;
}

static const luaL_Reg lp_methods[] = {
	{ "start", lp_start },
	{ "stop", lp_stop },
	{ "stats", lp_stats },
	{ "frame", lp_frame },
	{ "close", lp_close },
	{ NULL, NULL },
};

void lperf_open_luaprofile(lua_State *L)
{
	lperf_newclass(L, LP_CLASS, lp_methods, lp_close);
	lperf_exportclass(L, -1, LP_CLASS, "LuaProfile");
	/* The frame-name cache: weak keys, so functions are not kept alive. */
	lperf_weakmap_new(L, &cache_key);
	lua_pushcfunction(L, lp_new);
	lua_setfield(L, -2, "luaprofile");
}
