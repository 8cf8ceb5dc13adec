/*
 * A C host of the game-loop fixture (spec/hosts/gameloop.lua) through the
 * C API (csrc/include/luaperf.h): 60 frames marked with
 * luaperf_profiler_frame, wait time and allocations on.  Measures its own
 * references in the same run (each frame's wall and thread CPU time, the
 * state's memory count) and writes the profiles to DIR:
 *
 *   gamehost FIXTURE DIR     -> key=value lines; DIR/{samples,wait,alloc,live,slowest}.folded
 */
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "luaperf.h"

static unsigned long long ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static int save(const char *dir, const char *name, char *text)
{
	char path[4096];
	FILE *f;
	if (text == NULL)
		return -1;
	snprintf(path, sizeof path, "%s/%s.folded", dir, name);
	f = fopen(path, "w");
	if (f == NULL)
		return -1;
	fputs(text, f);
	fclose(f);
	free(text);
	return 0;
}

static double kbytes(lua_State *L)
{
	return lua_gc(L, LUA_GCCOUNT, 0) + lua_gc(L, LUA_GCCOUNTB, 0) / 1024.0;
}

int main(int argc, char **argv)
{
	lua_State *L = luaL_newstate();
	luaperf_profiler_options plain = { 999, 0, NULL };
	luaperf_profiler *p;
	lua_Alloc f0, f1;
	void *ud0, *ud1;
	char err[512];
	unsigned long long off = 0, waiter_off = 0, dur = 0;
	double k0, k1;
	long index = 0;
	int i;

	if (argc != 3)
		return 2;
	luaL_openlibs(L);
	if (luaL_dofile(L, argv[1]) != 0) {
		printf("fixture_err=%s\n", lua_tostring(L, -1));
		return 1;
	}
	f0 = lua_getallocf(L, &ud0);

	/* without alloc, the allocator is not touched */
	p = luaperf_profiler_new(L, &plain, err, sizeof err);
	if (p == NULL || luaperf_profiler_start(p) != 0) {
		printf("plain_err=%s\n", p ? luaperf_profiler_error(p) : err);
		return 1;
	}
	f1 = lua_getallocf(L, &ud1);
	printf("plain_untouched=%d\n", f1 == f0 && ud1 == ud0);
	luaperf_profiler_delete(p);

	p = luaperf_profiler_new_lua(L, "{ freq = 999, wait = true, alloc = 16 * 1024 }", err, sizeof err);
	if (p == NULL) {
		printf("new_err=%s\n", err);
		return 1;
	}
	lua_gc(L, LUA_GCSTOP, 0);     /* memory count deltas are the bytes allocated */
	if (luaperf_profiler_start(p) != 0) {
		printf("start_err=%s\n", luaperf_profiler_error(p));
		return 1;
	}
	f1 = lua_getallocf(L, &ud1);
	printf("alloc_wrapped=%d\n", f1 != f0);
	k0 = kbytes(L);
	for (i = 1; i <= 60; i++) {
		unsigned long long w0 = ns(CLOCK_MONOTONIC), c0 = ns(CLOCK_THREAD_CPUTIME_ID), d;
		lua_getglobal(L, "frame");
		lua_pushinteger(L, i);
		if (lua_pcall(L, 1, 0, 0) != 0) {
			printf("frame_err=%s\n", lua_tostring(L, -1));
			return 1;
		}
		d = (ns(CLOCK_MONOTONIC) - w0) - (ns(CLOCK_THREAD_CPUTIME_ID) - c0);
		off += d;
		if (i % 10 == 0)
			waiter_off += d;
		luaperf_profiler_frame(p);
	}
	k1 = kbytes(L);
	printf("samples=%ld\n", luaperf_profiler_stop(p));
	f1 = lua_getallocf(L, &ud1);
	printf("alloc_restored=%d\n", f1 == f0 && ud1 == ud0);
	printf("frames=%ld\n", luaperf_profiler_frames(p, NULL));
	printf("ref_off_ns=%llu\nref_waiter_off_ns=%llu\nref_alloc=%.0f\n", off, waiter_off,
	       (k1 - k0) * 1024);
	save(argv[2], "samples", luaperf_profiler_folded_by(p, "samples"));
	save(argv[2], "wait", luaperf_profiler_folded_by(p, "wait"));
	save(argv[2], "alloc", luaperf_profiler_folded_by(p, "alloc"));
	save(argv[2], "live", luaperf_profiler_folded_by(p, "live"));
	if (save(argv[2], "slowest", luaperf_profiler_slowest(p, 1, &index, &dur)) < 0)
		printf("slowest_err=%s\n", luaperf_profiler_error(p));
	printf("slowest_index=%ld\nslowest_ns=%llu\n", index, dur);
	printf("bad_weight=%s\n", luaperf_profiler_folded_by(p, "nope") == NULL ? "null" : "text");
	luaperf_profiler_delete(p);
	lua_close(L);
	return 0;
}
