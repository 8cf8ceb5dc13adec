/*
 * perf.luaprofile's samples (lprof.h): what a safe point takes (the
 * sampling ring's records, with their native chains and counter values,
 * the context switches of wait = true, the sampled allocations of
 * alloc = N) becomes stacks of the table, with the Lua frames read there.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "luaprofile/lprof.h"
#include "record/record.h"
#include "sample/ring.h"
#include "profile/allocsample.h"
#include "symbol/symbolizer.h"

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
	if (p->nrt > 0 && !lp_in_runtime(p, addr))
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
void lp_capture_root(struct lprof *p, lua_State *L)
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
			if (lp_in_runtime(p, (uint64_t)(uintptr_t)bt[i] - 1))
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
		if (lp_in_runtime(p, chain[i])) {
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

/* Notes what the frame running added to the stack at idx (consecutive
 * adds to one stack share a record). */
static void frec_add(struct lp_fbuf *b, size_t idx, uint64_t count, uint64_t period,
		     const uint64_t *w, unsigned nw)
{
	struct lp_frec *r = b->n > 0 ? &b->r[b->n - 1] : NULL;
	unsigned k;
	if (r == NULL || r->idx != idx) {
		if (b->n >= b->cap || b->r == NULL) {
			size_t cap = b->cap ? 2 * b->cap : 64;
			struct lp_frec *nr = cap <= LP_FREC_MAX ? realloc(b->r, cap * sizeof *nr) : NULL;
			if (nr == NULL) {
				b->overflow = 1;
				return;
			}
			b->r = nr;
			b->cap = cap;
		}
		r = &b->r[b->n++];
		memset(r, 0, sizeof *r);
		r->idx = idx;
	}
	r->count += count;
	r->period += period;
	for (k = 0; k < nw; k++)
		r->w[k] += w[k];
}

/* Adds count samples of the stack built in p->fbuf, with weights w (nw
 * of them; NULL: none); its index in the table goes to *idx. */
static int add_sample(struct lprof *p, int n, uint64_t count, uint64_t period,
		      const uint64_t *w, size_t *idx)
{
	size_t i;
	if (n < 0 || p->st == NULL ||
	    stacktab__add_stack_w(p->st, p->fbuf, (unsigned)n, 0, p->pid, p->tid, p->names[0],
				  count, period, p->nw > 0 ? w : NULL) < 0) {
		p->lost += count;
		return -1;
	}
	p->samples += count;
	i = stacktab__last(p->st);
	if (p->keep > 0)
		frec_add(&p->fcur, i, count, period, w, w != NULL ? p->nw : 0);
	if (idx != NULL)
		*idx = i;
	return 0;
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

/* The symbols is_thread_root reads, loaded at start for the objects on
 * this thread's stack (the host, the runtime, libc): their first load
 * takes milliseconds, which would otherwise land in whatever frame first
 * samples C code. */
void lp_warm_roots(struct lprof *p)
{
	void *bt[64];
	int n = backtrace(bt, 64), i;
	for (i = 0; i < n; i++)
		(void)is_thread_root(p, (uint64_t)(uintptr_t)bt[i] - 1);
}

/* The user frames of a sample's call chain, leaf first (out holds
 * LP_MAX_NATIVE).  Frame-pointer walks through code built without them
 * wander off: they stop at the first address outside every executable
 * segment. */
static unsigned user_chain(const struct lprof *p, const struct record *r, uint64_t *out)
{
	unsigned n = 0;
	uint64_t i;
	for (i = 0; i < r->s.nr_callchain && n < LP_MAX_NATIVE; i++) {
		uint64_t a = r->s.callchain[i];
		if (a >= (uint64_t)PERF_CONTEXT_MAX)
			continue;     /* context markers */
		if (!lp_in_exec(p, a))
			break;
		out[n] = n > 0 ? a - 1 : a;  /* return addresses: the call site */
		n++;
	}
	return n;
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
	uint64_t chain[LP_MAX_NATIVE], ctr[LP_NCTR], delta[STACKTAB_MAX_WEIGHTS];
	unsigned n, k;
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
	n = user_chain(p, &r, chain);
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
			if (lp_in_runtime(p, chain[i]))
				in_lua = 1;
	}
	add_sample(p, build_stack(p, p->native ? chain : NULL, p->native ? (int)n : 0, in_lua),
		   1, r.s.period ? r.s.period : p->fixed_period, delta, NULL);
	c->got++;
	return 0;
}

/* ---- wait time: context switches of the thread ----------------------- */

/* Time off CPU charged to the stack the thread blocked in: the Lua frames
 * read now (nothing ran on the thread since) and the native frames of the
 * sample taken as it switched out. */
static void charge_wait(struct lprof *p, uint64_t ns)
{
	uint64_t w[STACKTAB_MAX_WEIGHTS] = { 0 };
	w[p->w_wait] = ns;
	p->wait_ns += ns;
	p->waits++;
	add_sample(p, build_stack(p, p->native ? p->wchain : NULL, p->native ? p->nwchain : 0,
				  p->in_lua), 0, 0, w, NULL);
}

/*
 * The ring of the context-switch event, in order: the sample at the switch
 * out (its user call chain), the SWITCH record out (its time; PREEMPT when
 * the thread was still runnable), the SWITCH record in.  Blocked time goes
 * to the stack; preempted time is counted apart (not a wait of the code).
 */
static int on_wait_record(void *arg, const struct perf_event_header *h)
{
	struct lprof *p = arg;
	struct record r;
	char err[128];
	if (h->type != PERF_RECORD_SAMPLE && h->type != PERF_RECORD_SWITCH &&
	    h->type != PERF_RECORD_LOST)
		return 0;
	if (record__decode(p->wtab, h, h->size, &r, err, sizeof err) < 0)
		return 0;
	if (h->type == PERF_RECORD_LOST) {
		p->wout_time = 0;       /* a pair may be broken: skip it */
		return 0;
	}
	if (h->type == PERF_RECORD_SAMPLE) {
		p->nwchain = (int)user_chain(p, &r, p->wchain);
		return 0;
	}
	if (h->misc & PERF_RECORD_MISC_SWITCH_OUT) {
		p->wout_time = r.s.time;
		p->wout_preempt = (h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0;
		return 0;
	}
	if (p->wout_time != 0 && r.s.time > p->wout_time) {
		if (p->wout_preempt)
			p->preempt_ns += r.s.time - p->wout_time;
		else
			charge_wait(p, r.s.time - p->wout_time);
	}
	p->wout_time = 0;
	p->nwchain = 0;
	return 0;
}

/* ---- allocations ----------------------------------------------------- */

/* The sampled allocations since the last safe point, charged to the Lua
 * stack read now (the hook runs at the next instruction, call or return of
 * the code that allocated); their blocks stay tracked as live on it until
 * freed. */
void lp_take_allocs(struct lprof *p)
{
	struct allocsample *a = p->as;
	uint64_t w[STACKTAB_MAX_WEIGHTS] = { 0 };
	size_t idx = ALLOCSAMPLE_UNPLACED;
	int n = build_stack(p, NULL, 0, p->in_lua);

	w[p->w_alloc] = allocsample__unplaced(a);
	add_sample(p, n, 0, 0, w, &idx);
	/* (a stack the table had no room for: its blocks are not live) */
	allocsample__place(a, idx);
}

uint64_t lp_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Attributes what happened since the last safe point to the Lua stack read now. */
void lp_take_samples(struct lprof *p)
{
	uint64_t n = sigsample__take(p->ss);
	p->hooks++;
	if (p->ws != NULL) {
		sigsample__take(p->ws);
		if (ring__drain(p->wring, on_wait_record, p) < 0)
			p->lost++;
	}
	if (p->as != NULL && allocsample__unplaced(p->as) > 0)
		lp_take_allocs(p);
	if (p->ring != NULL) {
		struct drain_ctx c = { p, 0 };
		if (ring__drain(p->ring, on_record, &c) < 0)
			p->lost++;
		return;
	}
	if (n > 0) {
		uint64_t vals[1 + LP_NCTR], delta[STACKTAB_MAX_WEIGHTS];
		unsigned k;
		memset(delta, 0, sizeof delta);
		if (p->nctr > 0 && sigsample__read(p->ss, vals, 1 + p->nctr, NULL, NULL) == 0) {
			if (p->have_last)
				for (k = 0; k < p->nctr; k++)
					delta[k] = vals[k + 1] - p->last[k + 1];
			memcpy(p->last, vals, sizeof vals);
			p->have_last = 1;
		}
		add_sample(p, build_stack(p, NULL, 0, p->in_lua), n, n * p->fixed_period, delta, NULL);
	}
}
