/*
 * perf.luaprofile's results (lprof.h): frame() and the frames' records
 * (the slowest frames keep their own profiles), stop(), which hands the
 * stack table over as a perf.Profile, and stats().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "luaprofile/lprof.h"
#include "profile/allocsample.h"

/* A stack table with this profile's weight columns: the counters, then
 * wait, alloc and live when asked for (p->w_* are their indices). */
struct stacktab *lp_new_table(const struct lprof *p)
{
	struct stacktab *st = stacktab__new();
	unsigned k;
	int ok = st != NULL;
	for (k = 0; ok && k < p->nctr; k++)
		ok = stacktab__weight(st, p->names[k + 1]) >= 0;
	if (ok && p->w_wait >= 0)
		ok = stacktab__weight(st, "wait") == p->w_wait;
	if (ok && p->w_alloc >= 0)
		ok = stacktab__weight(st, "alloc") == p->w_alloc &&
		     stacktab__weight(st, "live") == p->w_live;
	if (!ok) {
		stacktab__delete(st);
		return NULL;
	}
	return st;
}

/*
 * The frame just ended keeps its records if it is one of the keep slowest
 * so far (it takes the place of the fastest of them, whose buffer becomes
 * the next frame's); otherwise its buffer is emptied for the next one.
 * O(1) unless a kept frame is replaced (then O(keep)).
 */
static void frame_keep(struct lprof *p, uint64_t index, uint64_t duration)
{
	struct lp_fbuf tmp, *slot;
	unsigned k;
	if (p->nkept < p->keep) {
		slot = &p->kept[p->nkept++];
	} else if (duration > p->kept[p->kmin].duration) {
		slot = &p->kept[p->kmin];
	} else {
		p->fcur.n = 0;
		p->fcur.overflow = 0;
		return;
	}
	tmp = *slot;
	*slot = p->fcur;
	slot->index = index;
	slot->duration = duration;
	p->fcur = tmp;
	p->fcur.n = 0;
	p->fcur.overflow = 0;
	for (p->kmin = 0, k = 1; k < p->nkept; k++)
		if (p->kept[k].duration < p->kept[p->kmin].duration)
			p->kmin = k;
}

/* prof:frame(): the end of a frame of the host's loop (and the start of
 * the next).  Samples, wait time and allocations count for the frame
 * whose safe point took them. */
int lp_frame(lua_State *L)
{
	struct lprof *p = lp_check_open(L);
	struct lp_frame *f;
	uint64_t t;
	if (!p->started)
		return luaL_error(L, "the profile is not started");
	if (p->frames == NULL) {
		p->frames = malloc(p->frames_cap * sizeof *p->frames);
		if (p->frames == NULL)
			return lperf_fail(L, NULL, ENOMEM);
	}
	t = lp_now_ns();
	f = &p->frames[p->frames_n % p->frames_cap];
	f->index = p->frames_n + 1;
	f->duration = t - p->frame_t0;
	f->samples = p->samples - p->frame_samples0;
	f->wait = p->wait_ns - p->frame_wait0;
	f->alloc = p->as != NULL ? allocsample__bytes(p->as) - p->frame_alloc0 : 0;
	if (p->nctr > 0) {
		/* one read of the group: exact counts between the marks */
		uint64_t vals[1 + LP_NCTR];
		unsigned k;
		if (sigsample__read(p->ss, vals, 1 + p->nctr, NULL, NULL) == 0) {
			for (k = 0; k < p->nctr; k++)
				f->counters[k] = vals[k + 1] - p->frame_ctr0[k + 1];
			memcpy(p->frame_ctr0, vals, sizeof(uint64_t) * (1 + p->nctr));
		} else {
			memset(f->counters, 0, sizeof f->counters);
		}
	}
	if (p->keep > 0)
		frame_keep(p, f->index, f->duration);
	p->frames_n++;
	p->frame_t0 = t;
	p->frame_samples0 = p->samples;
	p->frame_wait0 = p->wait_ns;
	p->frame_alloc0 = p->as != NULL ? allocsample__bytes(p->as) : 0;
	lua_pushinteger(L, (lua_Integer)p->frames_n);
	return 1;
}

/* Sampled allocations no safe point took yet: charged to the stack that
 * calls stop (the Lua code last run). */
static void stop_allocs(lua_State *L, struct lprof *p)
{
	if (!p->started || p->as == NULL || allocsample__unplaced(p->as) == 0)
		return;
	lp_sp_enter(p);
	p->vmframe[0] = '\0';
	if (lua_checkstack(L, 8)) {
		lua_pushvalue(L, 1);   /* anchored while frames are named */
		if (lp_read_lua_stack(p, L, 1)) {
			p->in_lua = p->nlua > 0;
			lp_take_allocs(p);
		}
		lua_pop(L, 1);
	}
	lp_sp_leave(p);
}

/* live: the sampled blocks not freed at stop, on the stacks that
 * allocated them (the tracking starts again with the next start). */
static void charge_live(struct lprof *p)
{
	struct allocsample *a = p->as;
	size_t j;
	for (j = 0; j < a->live_cap; j++)
		if (a->live[j].ptr != 0 && a->live[j].tag != ALLOCSAMPLE_UNPLACED)
			stacktab__add_weight_at(p->st, a->live[j].tag, (unsigned)p->w_live,
						a->live[j].weight);
}

/* { [frame index] = perf.Profile, ... }: the slowest frames' own profiles,
 * made of the stacks of the profile's table their records name. */
static void push_frame_profiles(lua_State *L, struct lprof *p)
{
	unsigned k;
	size_t j;
	lua_createtable(L, 0, (int)p->nkept);
	for (k = 0; k < p->nkept && p->st != NULL; k++) {
		const struct lp_fbuf *b = &p->kept[k];
		struct stacktab **slot = lperf_newprofile(L);
		int rc = 0;
		*slot = lp_new_table(p);
		if (*slot == NULL) {
			lua_pop(L, 1);
			continue;
		}
		for (j = 0; j < b->n && rc == 0; j++)
			rc = stacktab__copy_entry(*slot, p->st, b->r[j].idx, b->r[j].count,
						  b->r[j].period, b->r[j].w);
		if (rc < 0 || b->overflow)
			stacktab__add_lost(*slot, 1, 0);
		lperf_pushu64(L, b->index);
		lua_insert(L, -2);
		lua_rawset(L, -3);
	}
	p->nkept = p->kmin = 0;
	p->fcur.n = 0;
}

/*
 * Stops and returns the raw profile: { event=, counters={names}, samples=,
 * lost=, unattributed=, signals=, profile=<perf.Profile>, frames={...},
 * weights={"wait", "alloc", "live" as asked}, frame_profiles={...},
 * wait_ns=, waits=, preempted_ns=, alloc_bytes=, alloc_samples= }.
 * The aggregation is reset, so start() begins a new profile.
 */
int lp_stop(lua_State *L)
{
	struct lprof *p = lp_check_open(L);
	unsigned k;
	stop_allocs(L, p);
	lp_halt(L, p);
	if (p->as != NULL && p->st != NULL)
		charge_live(p);
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
	lua_createtable(L, 3, 0);
	for (k = 0; p->st != NULL && k + p->nctr < stacktab__nweights(p->st); k++) {
		lua_pushstring(L, stacktab__weight_name(p->st, k + p->nctr));
		lua_rawseti(L, -2, (int)k + 1);
	}
	lua_setfield(L, -2, "weights");
	if (p->ws != NULL) {
		lperf_setu64(L, "wait_ns", p->wait_ns);
		lperf_setu64(L, "waits", p->waits);
		lperf_setu64(L, "preempted_ns", p->preempt_ns);
	}
	if (p->as != NULL) {
		lperf_setu64(L, "alloc_bytes", allocsample__bytes(p->as));
		lperf_setu64(L, "alloc_samples", p->as->samples);
		lperf_setu64(L, "alloc_rate", p->alloc_rate);
	}
	push_frame_profiles(L, p);
	lua_setfield(L, -2, "frame_profiles");
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
		/* frames = { {index, duration, samples, wait, alloc[, {counter values}]}, ... },
		 * oldest first */
		uint64_t first = p->frames_n > p->frames_cap ? p->frames_n - p->frames_cap : 0, j;
		lua_createtable(L, (int)(p->frames_n - first), 0);
		for (j = first; j < p->frames_n; j++) {
			const struct lp_frame *f = &p->frames[j % p->frames_cap];
			lua_createtable(L, 5, 0);
			lperf_pushu64(L, f->wait);
			lua_rawseti(L, -2, 4);
			lperf_pushu64(L, f->alloc);
			lua_rawseti(L, -2, 5);
			lperf_pushu64(L, f->index);
			lua_rawseti(L, -2, 1);
			lperf_pushu64(L, f->duration);
			lua_rawseti(L, -2, 2);
			lperf_pushu64(L, f->samples);
			lua_rawseti(L, -2, 3);
			if (p->nctr > 0) {
				unsigned c;
				lua_createtable(L, (int)p->nctr, 0);
				for (c = 0; c < p->nctr; c++) {
					lperf_pushu64(L, f->counters[c]);
					lua_rawseti(L, -2, (int)c + 1);
				}
				lua_rawseti(L, -2, 6);
			}
			lua_rawseti(L, -2, (int)(j - first + 1));
		}
		lua_setfield(L, -2, "frames");
		lperf_setu64(L, "frames_total", p->frames_n);
		p->frames_n = 0;
	}
	p->samples = p->lost = p->unattributed = p->hooks = p->safepoint_ns = 0;
	if (p->as != NULL)
		allocsample__reset(p->as);
	return 1;
}

int lp_stats(lua_State *L)
{
	struct lprof *p = lp_check_open(L);
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
	lperf_setbool(L, "wait", p->ws != NULL);
	if (p->ws != NULL) {
		lperf_setu64(L, "wait_ns", p->wait_ns);
		lperf_setu64(L, "preempted_ns", p->preempt_ns);
		lperf_setu64(L, "waits", p->waits);
	}
	if (p->as != NULL) {
		lperf_setu64(L, "alloc_bytes", allocsample__bytes(p->as));
		lperf_setu64(L, "alloc_samples", p->as->samples);
	}
	return 1;
}
