/* perf.caps(): what perf_events allows on this machine; perf.setenv(),
 * perf.prefault(). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/bigmem.h"
#include "event/caps.h"
#include "binding.h"

static void set_known(lua_State *L, const char *k, long long v)
{
	if (v >= 0)
		lperf_seti64(L, k, v);
}

static int l_caps(lua_State *L)
{
	/* struct caps is ~25 KB: GC-owned memory, not the C stack. */
	struct caps *c = lua_newuserdatauv(L, sizeof *c, 0);
	size_t i;

	caps__read(c);
	lua_createtable(L, 0, 16);
	lperf_setint(L, "paranoid", c->paranoid);
	set_known(L, "max_sample_rate", c->max_sample_rate);
	set_known(L, "mlock_kb", c->mlock_kb);
	set_known(L, "max_stack", c->max_stack);
	set_known(L, "max_contexts_per_stack", c->max_contexts_per_stack);
	set_known(L, "cpu_time_max_percent", c->cpu_time_max_percent);
	set_known(L, "nmi_watchdog", c->nmi_watchdog);
	set_known(L, "kptr_restrict", c->kptr_restrict);
	lperf_setbool(L, "hardware", c->hardware);
	if (c->tracefs[0] != '\0')
		lperf_setstr(L, "tracefs", c->tracefs);
	lperf_setbool(L, "tracefs_readable", c->tracefs_readable);

	lua_newtable(L);
	for (i = 0; i < c->npmus; i++)
		lperf_setint(L, c->pmus[i].name, c->pmus[i].type);
	lua_setfield(L, -2, "pmus");
	lua_newtable(L);
	for (i = 0; i < c->npmus; i++)
		if (c->pmus[i].max_precise >= 0)
			lperf_seti64(L, c->pmus[i].name, c->pmus[i].max_precise);
	lua_setfield(L, -2, "max_precise");
	lua_newtable(L);
	for (i = 0; i < c->npmus; i++)
		if (c->pmus[i].branches >= 0)
			lperf_seti64(L, c->pmus[i].name, c->pmus[i].branches);
	lua_setfield(L, -2, "branches");
	return 1;
}

/* perf.setenv(name, value | nil) -> true | nil, msg, errno: this process's
 * environment, which the commands it starts inherit (Lua can read it,
 * os.getenv, but not change it). */
static int l_setenv(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	const char *value = luaL_optstring(L, 2, NULL);
	char msg[256];

	if ((value ? setenv(name, value, 1) : unsetenv(name)) != 0) {
		int err = errno;
		snprintf(msg, sizeof msg, "%s: %s", name, strerror(err));
		return lperf_fail(L, msg, err);
	}
	lua_pushboolean(L, 1);
	return 1;
}

/* The helper thread is stopped before the state closes: the module's
 * code may be unloaded then (package's CLIBS, finalized after this). */
static int prefault_gc(lua_State *L)
{
	(void)L;
	(void)bigmem__prefault(0);
	return 0;
}

/* perf.prefault(on) -> true | nil, msg, errno: bigmem__prefault. */
static int l_prefault(lua_State *L)
{
	int on = lua_toboolean(L, 1), rc;

	luaL_checkany(L, 1);
	if (on) {
		lua_getfield(L, LUA_REGISTRYINDEX, "perf.prefault");
		if (lua_isnil(L, -1)) {
			lua_newuserdatauv(L, 1, 0);
			lua_newtable(L);
			lua_pushcfunction(L, prefault_gc);
			lua_setfield(L, -2, "__gc");
			lua_setmetatable(L, -2);
			lua_setfield(L, LUA_REGISTRYINDEX, "perf.prefault");
		}
		lua_pop(L, 1);
	}
	if ((rc = bigmem__prefault(on)) < 0)
		return lperf_fail(L, "cannot start the prefault thread", -rc);
	lua_pushboolean(L, 1);
	return 1;
}

void lperf_open_sys(lua_State *L)
{
	lua_pushcfunction(L, l_prefault);
	lua_setfield(L, -2, "prefault");
	lua_pushcfunction(L, l_setenv);
	lua_setfield(L, -2, "setenv");
	lua_pushcfunction(L, l_caps);
	lua_setfield(L, -2, "caps");
}
