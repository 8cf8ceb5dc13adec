/*
 * The reference for bench/counter_read.lua: read(2) of a counter fd in a C
 * loop, as a tiny Lua module (built by bench/counter_read.sh, not part of
 * luaperf) so the Lua script can time it on the SAME fd as counter:read(),
 * alternating chunk by chunk in one process.
 *
 *   rawread.loop(fd, n) -> seconds for n reads of 32 bytes (the size
 *   counter:read() asks for: value, enabled, running, id)
 */
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <lua.h>
#include <lauxlib.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int rawread_loop(lua_State *L)
{
	int fd = (int)luaL_checkinteger(L, 1);
	lua_Integer n = luaL_checkinteger(L, 2), i;
	uint64_t buf[4];
	double t0 = now();

	for (i = 0; i < n; i++)
		if (read(fd, buf, sizeof buf) < 24)
			return luaL_error(L, "read failed");
	lua_pushnumber(L, now() - t0);
	return 1;
}

int luaopen_rawread(lua_State *L);

int luaopen_rawread(lua_State *L)
{
	lua_newtable(L);
	lua_pushcfunction(L, rawread_loop);
	lua_setfield(L, -2, "loop");
	return 1;
}
