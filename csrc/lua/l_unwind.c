/*
 * perf.unwinder(): DWARF unwinding of sample records (csrc/core/unwind/unwind.h).
 *
 *   local u = perf.unwinder([{ cached = false }])
 *       cached = false: every sample through libdwfl's own unwinder, not
 *       the CFI rows cached per pc (same stacks, slower; for comparisons)
 *   local chain, info = u:unwind(rec, sym[, regs_mask])
 *       rec   a SAMPLE record table with regs_user and stack_user (from a
 *             session or file recorded with callchain "dwarf")
 *       sym   a perf.symbolizer fed with the same stream's maps
 *       regs_mask  the event's sample_regs_user; by default inferred from
 *             how many registers the record has (perf's 0xff0fff set, or
 *             perf.unwind_regs_mask())
 *     chain: addresses leaf first, kernel part first (context markers
 *            removed, as rec.callchain); callers are return addresses
 *     info:  { kernel = leading kernel entries, user = user frames,
 *              truncated = bool, failed = bool, error = msg | nil }
 *   u:add(profile, rec, sym[, regs_mask]) -> info
 *       the same unwind, the stack added to a perf.profile() (count 1,
 *       rec.period or 1, rec.event): profiles of DWARF samples from Lua
 *   u:stats() -> { samples=, truncated=, failed=, frames=, sessions= }
 *   u:forget(pid); u:close()
 *
 *   perf.unwind_regs_mask() -> the register mask for this architecture
 *   perf.unwind_stack_size([n]) -> n rounded as the kernel needs | nil, msg, errno
 */
#include <errno.h>
#include <string.h>
#include "base/bits.h"
#include "binding.h"
#include "record/record.h"
#include "profile/stacktab.h"
#include "symbol/symbolizer.h"
#include "unwind/unwind.h"

#define UNWINDER_MT "perf.unwinder"
#define MAX_REGS 64
#define MAX_KERNEL 512
#define MAX_CHAIN 1024

/* perf record --call-graph dwarf's x86-64 set: every GPR, no segments. */
#define PERF_X86_64_DWARF_MASK 0xff0fffULL

struct lunwinder {
	struct unwinder *u;           /* NULL = closed */
};

static struct lunwinder *check_open(lua_State *L)
{
	struct lunwinder *w = luaL_checkudata(L, 1, UNWINDER_MT);

	if (w->u == NULL)
		luaL_error(L, "attempt to use a closed unwinder");
	return w;
}

static int uw_close(lua_State *L)
{
	struct lunwinder *w = luaL_checkudata(L, 1, UNWINDER_MT);

	unwinder__delete(w->u);
	w->u = NULL;
	return 0;
}

static int uw_new(lua_State *L)
{
	struct lunwinder *w;
	int cached = 1;

	if (!lua_isnoneornil(L, 1)) {
		luaL_checktype(L, 1, LUA_TTABLE);
		cached = lperf_optfield_bool(L, 1, "cached", 1);
	}
	w = lua_newuserdatauv(L, sizeof(*w), 0);
	w->u = NULL;
	luaL_setmetatable(L, UNWINDER_MT);
	if (unwinder__new(&w->u) < 0)
		return lperf_fail(L, "cannot create an unwinder: out of memory", ENOMEM);
	unwinder__set_fast(w->u, cached);
	return 1;
}

/* Reads field k of the table at t as a u64 (raises on a bad shape). */
static uint64_t field_u64(lua_State *L, int t, const char *k, uint64_t def)
{
	uint64_t v = def;

	lua_getfield(L, t, k);
	if (!lua_isnil(L, -1))
		v = lperf_checku64(L, lua_gettop(L));
	lua_pop(L, 1);
	return v;
}

static uint64_t default_mask(unsigned nregs)
{
	uint64_t mine = unwind__regs_mask();

	if (mine && (unsigned)bits_count(mine) == nregs)
		return mine;
#if defined(__x86_64__)
	if (nregs == (unsigned)bits_count(PERF_X86_64_DWARF_MASK))
		return PERF_X86_64_DWARF_MASK;
#endif
	return 0;
}

/* All Lua reads happen here, before the core runs (no error unwinds it). */
struct lua_sample {
	struct record_sample s;
	struct perf_event_attr attr;
	uint64_t regs[MAX_REGS];
	uint64_t kchain[MAX_KERNEL + 1];
};

static void read_sample(lua_State *L, int rec, int maskarg, struct lua_sample *ls)
{
	struct record_sample *s = &ls->s;
	size_t len = 0;
	unsigned n;
	uint64_t nk;

	luaL_checktype(L, rec, LUA_TTABLE);
	memset(ls, 0, sizeof *ls);
	s->type = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_CALLCHAIN;
	s->pid = (uint32_t)field_u64(L, rec, "pid", 0);
	s->tid = (uint32_t)field_u64(L, rec, "tid", s->pid);

	lua_getfield(L, rec, "regs_user");
	if (!lua_istable(L, -1))
		luaL_error(L, "the record has no regs_user (not recorded with callchain \"dwarf\")");
	s->regs_user_abi = field_u64(L, lua_gettop(L), "abi", PERF_SAMPLE_REGS_ABI_64);
	n = (unsigned)lua_rawlen(L, -1);
	if (n > MAX_REGS)
		luaL_error(L, "regs_user has %d registers (at most %d)", (int)n, MAX_REGS);
	for (unsigned i = 0; i < n; i++) {
		lua_rawgeti(L, -1, (int)i + 1);
		ls->regs[i] = lperf_checku64(L, lua_gettop(L));
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	s->regs_user = ls->regs;
	s->nr_regs_user = n;

	lua_getfield(L, rec, "stack_user");
	if (lua_type(L, -1) != LUA_TSTRING)
		luaL_error(L, "the record has no stack_user (not recorded with callchain \"dwarf\")");
	/* The string stays referenced by rec (an argument) during the call. */
	s->stack_user = lua_tolstring(L, -1, &len);
	lua_pop(L, 1);
	s->stack_user_dyn_size = len;
	s->stack_user_size = field_u64(L, rec, "stack_user_size", len);

	/* The kernel part of the chain, back in the kernel's format. */
	nk = field_u64(L, rec, "callchain_kernel", 0);
	lua_getfield(L, rec, "callchain");
	if (lua_istable(L, -1) && nk > 0) {
		if (nk > MAX_KERNEL || nk > lua_rawlen(L, -1))
			luaL_error(L, "callchain_kernel is %d, the callchain has %d entries",
				   (int)nk, (int)lua_rawlen(L, -1));
		ls->kchain[0] = PERF_CONTEXT_KERNEL;
		for (uint64_t i = 0; i < nk; i++) {
			lua_rawgeti(L, -1, (int)i + 1);
			ls->kchain[i + 1] = lperf_checku64(L, lua_gettop(L));
			lua_pop(L, 1);
		}
		s->nr_callchain = nk + 1;
	}
	lua_pop(L, 1);
	s->callchain = ls->kchain;

	if (lua_isnil(L, maskarg))
		ls->attr.sample_regs_user = default_mask(n);
	else
		ls->attr.sample_regs_user = lperf_checku64(L, maskarg);
	ls->attr.sample_type = s->type;
	if (n > 0 && (unsigned)bits_count(ls->attr.sample_regs_user) != n)
		luaL_error(L, "regs_user has %d registers: pass the event's sample_regs_user", (int)n);
}

static void push_info(lua_State *L, struct lunwinder *w, int nkernel, int user,
		      unsigned status);

static int uw_unwind(lua_State *L)
{
	struct lunwinder *w = check_open(L);
	struct symbolizer *sym = lperf_tosymbolizer(L, 3);
	struct lua_sample *ls;
	uint64_t *chain;
	unsigned status = 0;
	int n, out = 0, nkernel = 0, user = 0, in_kernel = 0;

	if (!sym)
		luaL_argerror(L, 3, "perf.symbolizer expected");
	lua_settop(L, 4);  /* the scratch below goes above the arguments */
	/* Scratch owned by the Lua stack: nothing leaks if a check raises. */
	ls = lua_newuserdatauv(L, sizeof *ls + MAX_CHAIN * sizeof(uint64_t), 0);
	chain = (uint64_t *)(ls + 1);
	read_sample(L, 2, 4, ls);

	n = unwind__sample(w->u, sym, &ls->attr, &ls->s, chain, MAX_CHAIN, &status);
	if (n < 0)
		return lperf_fail(L, "the record cannot be unwound (no user registers or stack)", -n);

	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		if (chain[i] >= PERF_CONTEXT_MAX) {
			in_kernel = chain[i] == PERF_CONTEXT_KERNEL;
			continue;
		}
		if (in_kernel)
			nkernel++;
		else
			user++;
		lperf_pushu64(L, chain[i]);
		lua_rawseti(L, -2, ++out);
	}
	push_info(L, w, nkernel, user, status);
	return 2;
}

/*
 * u:add(profile, rec, sym[, regs_mask]) -> info: unwinds a SAMPLE record
 * and adds its stack to the profile (count 1, rec.period or 1, rec.event),
 * as profile:add(rec) would with the unwound chain.
 */
static int uw_add(lua_State *L)
{
	struct lunwinder *w = check_open(L);
	struct stacktab *st = lperf_checkprofile(L, 2);
	struct symbolizer *sym = lperf_tosymbolizer(L, 4);
	struct lua_sample *ls;
	uint64_t *chain, period;
	const char *event;
	unsigned status = 0, nkernel = 0, out = 0, user = 0;
	int n, in_kernel = 0, rc;

	if (!sym)
		luaL_argerror(L, 4, "perf.symbolizer expected");
	lua_settop(L, 5);
	ls = lua_newuserdatauv(L, sizeof *ls + MAX_CHAIN * sizeof(uint64_t), 0);
	chain = (uint64_t *)(ls + 1);
	read_sample(L, 3, 5, ls);
	period = field_u64(L, 3, "period", 1);
	lua_getfield(L, 3, "event");
	event = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
	/* (stays on the stack, so the string lives through the call) */

	n = unwind__sample(w->u, sym, &ls->attr, &ls->s, chain, MAX_CHAIN, &status);
	if (n < 0)
		return lperf_fail(L, "the record cannot be unwound (no user registers or stack)", -n);
	unwind__call_sites(chain, (size_t)n);
	/* Markers out, in place: the table wants addresses and a kernel count. */
	for (int i = 0; i < n; i++) {
		if (chain[i] >= PERF_CONTEXT_MAX) {
			in_kernel = chain[i] == PERF_CONTEXT_KERNEL;
			continue;
		}
		if (in_kernel)
			nkernel++;
		else
			user++;
		chain[out++] = chain[i];
	}
	rc = stacktab__add_stack(st, chain, out, nkernel, (int32_t)ls->s.pid,
				 (int32_t)ls->s.tid, event, 1, period);
	if (rc < 0)
		return lperf_fail(L, "cannot add the stack: out of memory", -rc);
	push_info(L, w, (int)nkernel, (int)user, status);
	return 1;
}

static void push_info(lua_State *L, struct lunwinder *w, int nkernel, int user, unsigned status)
{
	lua_createtable(L, 0, 5);
	lperf_setint(L, "kernel", nkernel);
	lperf_setint(L, "user", user);
	lperf_setbool(L, "truncated", (status & UNWIND_TRUNCATED) != 0);
	lperf_setbool(L, "failed", (status & UNWIND_FAILED) != 0);
	if (status & UNWIND_MAX_DEPTH)
		lperf_setbool(L, "max_depth", 1);
	if (status & UNWIND_NO_USER)
		lperf_setbool(L, "no_user", 1);
	if (unwinder__last_error(w->u)[0])
		lperf_setstr(L, "error", unwinder__last_error(w->u));
}

static int uw_stats(lua_State *L)
{
	struct lunwinder *w = check_open(L);
	struct unwind_stats s;

	unwinder__stats(w->u, &s);
	lua_createtable(L, 0, 5);
	lperf_setu64(L, "samples", s.samples);
	lperf_setu64(L, "truncated", s.truncated);
	lperf_setu64(L, "failed", s.failed);
	lperf_setu64(L, "frames", s.frames);
	lperf_setu64(L, "sessions", s.sessions);
	return 1;
}

static int uw_forget(lua_State *L)
{
	struct lunwinder *w = check_open(L);

	unwinder__forget(w->u, (uint32_t)luaL_checkinteger(L, 2));
	return 0;
}

static int l_regs_mask(lua_State *L)
{
	lperf_pushu64(L, unwind__regs_mask());
	return 1;
}

static int l_stack_size(lua_State *L)
{
	uint64_t req = lperf_optu64(L, 1, 0);
	int size = unwind__stack_size(req);

	if (size < 0) {
		lua_pushfstring(L, "stack dump size must be at most %d bytes",
				(int)UNWIND_MAX_STACK_SIZE);
		return lperf_fail(L, lua_tostring(L, -1), EINVAL);
	}
	lua_pushinteger(L, size);
	return 1;
}

static const luaL_Reg methods[] = {
	{ "unwind", uw_unwind },
	{ "add", uw_add },
	{ "stats", uw_stats },
	{ "forget", uw_forget },
	{ "close", uw_close },
	{ NULL, NULL },
};

void lperf_open_unwind(lua_State *L)
{
	lperf_newclass(L, UNWINDER_MT, methods, uw_close);
	lua_pushcfunction(L, uw_new);
	lua_setfield(L, -2, "unwinder");
	lua_pushcfunction(L, l_regs_mask);
	lua_setfield(L, -2, "unwind_regs_mask");
	lua_pushcfunction(L, l_stack_size);
	lua_setfield(L, -2, "unwind_stack_size");
}
