/*
 * A host of luaperf's C API (csrc/include/luaperf.h), built as C and as
 * C++ by spec/embed_spec.lua with -Wall -Wextra -Werror: every function,
 * its refusals, and a profile of Lua code the host runs.  Prints
 * key=value lines.
 */
#ifdef __cplusplus
#include <lua.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#else
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#endif
#include "luaperf.h"

static const char game[] =
	"function busy(n) local x = 0 for i = 1, n do x = x + i % 7 end return x end\n"
	"function tick() local r = busy(200000) return r end\n";

int main(void)
{
	lua_State *L = luaL_newstate();
	luaperf_profiler_options bad = { 999, 0, "cyclez" };
	luaperf_profiler *p;
	char err[256];
	char *text;
	unsigned long long ns = 0;
	long samples, frames;
	int i, top;

	luaL_openlibs(L);
	if (luaL_dostring(L, game) != 0)
		return 1;
	top = lua_gettop(L);

	/* a refusal: a message, no profiler */
	p = luaperf_profiler_new(L, &bad, err, sizeof err);
	printf("bad_new=%s\n", p == NULL ? "null" : "profiler");
	printf("bad_err=%s\n", err);

	p = luaperf_profiler_new(L, NULL, err, sizeof err);
	if (p == NULL) {
		printf("new_err=%s\n", err);
		return 1;
	}
	/* nothing to report before a stop */
	text = luaperf_profiler_folded(p);
	printf("early_folded=%s\n", text == NULL ? "null" : "text");
	printf("early_err=%s\n", luaperf_profiler_error(p));

	if (luaperf_profiler_start(p) != 0) {
		printf("start_err=%s\n", luaperf_profiler_error(p));
		return 1;
	}
	for (i = 0; i < 40; i++) {
		lua_getglobal(L, "tick");
		if (lua_pcall(L, 0, 0, 0) != 0)
			return 1;
		luaperf_profiler_frame(p);
	}
	samples = luaperf_profiler_stop(p);
	frames = luaperf_profiler_frames(p, &ns);
	text = luaperf_profiler_folded(p);
	printf("samples=%ld frames=%ld frames_ns=%llu stack_kept=%d\n", samples, frames, ns,
	       lua_gettop(L) == top);
	if (text != NULL) {
		printf("busy_in_folded=%d\n", strstr(text, "[Lua] tick ") != NULL &&
		       strstr(text, "[Lua] busy ") != NULL);
		free(text);
	}
	text = luaperf_profiler_flamegraph(p, "capi host");
	if (text != NULL) {
		printf("svg=%d\n", strstr(text, "<svg") != NULL && strstr(text, "capi host") != NULL);
		free(text);
	}
	luaperf_profiler_delete(p);
	luaperf_profiler_delete(NULL);
	/* the state is the host's again: its hook is back */
	printf("hook_after=%s\n", lua_gethook(L) == NULL ? "none" : "set");
	lua_close(L);
	return 0;
}
