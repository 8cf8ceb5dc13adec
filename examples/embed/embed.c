/*
 * A game-style host: embeds Lua 5.4, runs frames for a while, and in each
 * frame calls the Lua update functions (examples/embed/game.lua) and then
 * does its own native "rendering".  It profiles itself through luaperf's
 * C API (csrc/include/luaperf.h: no require, no Lua of ours on this side)
 * and writes folded stacks, so one profile shows Lua functions, the C
 * functions they call (host.blit) and the host's own frame loop; with a
 * third argument, a flame graph too.
 *
 *   make embed && build/embed/embed [seconds] [out.folded] [out.svg]
 *
 * Run it from the checkout (its script is examples/embed/game.lua); it
 * finds the perf module of the checkout it was built in by itself, with no
 * LUA_PATH or LUA_CPATH (use_checkout_paths).
 *
 * It prints the CPU time it measured per phase (update, render) and its
 * frame count, so the profile can be checked against them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include "luaperf.h"

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile unsigned sink;

/*
 * The checkout this host was built in (CHECKOUT/build/embed/embed): its
 * lua/ and build/ go first on package.path and package.cpath, where the
 * profiler's require "perf" looks.  A host of your own sets its paths the
 * same way, or its users set LUA_PATH and LUA_CPATH.
 */
static void use_checkout_paths(lua_State *L)
{
	char root[4096];
	ssize_t n = readlink("/proc/self/exe", root, sizeof(root) - 1);
	int up;

	if (n <= 0)
		return;
	root[n] = '\0';
	for (up = 0; up < 3; up++) {            /* embed, embed/, build/ */
		char *slash = strrchr(root, '/');
		if (slash == NULL)
			return;
		*slash = '\0';
	}
	lua_getglobal(L, "package");
	lua_pushfstring(L, "%s/lua/?.lua;%s/lua/?/init.lua;", root, root);
	lua_getfield(L, -2, "path");
	lua_concat(L, 2);
	lua_setfield(L, -2, "path");
	lua_pushfstring(L, "%s/build/?.so;", root);
	lua_getfield(L, -2, "cpath");
	lua_concat(L, 2);
	lua_setfield(L, -2, "cpath");
	lua_pop(L, 1);
}

/* Native work the Lua code asks for: a C function called from Lua. */
static void blit_rows(unsigned char *fb, size_t n, unsigned v)
{
	size_t i;
	for (i = 0; i < n; i++)
		fb[i] = (unsigned char)(fb[i] * 31 + v + i);
	sink += fb[n / 2];
}

static int host_blit(lua_State *L)
{
	static unsigned char fb[1 << 16];
	lua_Integer times = luaL_checkinteger(L, 1), t;
	for (t = 0; t < times; t++)
		blit_rows(fb, sizeof fb, (unsigned)t);
	return 0;
}

/* The host's own work between Lua updates (outside any Lua call). */
static void render(unsigned frame)
{
	unsigned i, acc = frame;
	for (i = 0; i < 2000000; i++)
		acc = acc * 1103515245u + 12345u;
	sink += acc;
}

static int call(lua_State *L, const char *fn, int nargs)
{
	lua_getglobal(L, fn);
	lua_insert(L, -1 - nargs);
	if (lua_pcall(L, nargs, 0, 0) != LUA_OK) {
		fprintf(stderr, "embed: %s: %s\n", fn, lua_tostring(L, -1));
		return -1;
	}
	return 0;
}

static long frame_loop(lua_State *L, luaperf_profiler *prof, double seconds,
		       double *t_update, double *t_render)
{
	double start = cpu_now();
	long frame = 0;
	while (cpu_now() - start < seconds) {
		double t0 = cpu_now(), t1;
		lua_pushinteger(L, frame);
		if (call(L, "update", 1) < 0)
			return -1;
		t1 = cpu_now();
		render((unsigned)frame);
		*t_update += t1 - t0;
		*t_render += cpu_now() - t1;
		luaperf_profiler_frame(prof);
		frame++;
	}
	return frame;
}

static int write_text(const char *path, const char *text)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	if (f == NULL)
		return -1;
	fputs(text, f);
	return f == stdout ? 0 : fclose(f);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2.0, t_update = 0, t_render = 0;
	const char *out = argc > 2 ? argv[2] : "-", *svg_out = argc > 3 ? argv[3] : NULL;
	luaperf_profiler_options opts = { 999, 0, NULL };
	luaperf_profiler *prof = NULL;
	char err[256], *folded = NULL, *svg = NULL;
	unsigned long long frames_ns = 0;
	long frames, samples, marked;
	const char *script = getenv("EMBED_SCRIPT") ? getenv("EMBED_SCRIPT")
						    : "examples/embed/game.lua";
	static const luaL_Reg host[] = { { "blit", host_blit }, { NULL, NULL } };
	lua_State *L = luaL_newstate();
	int rc = 1;

	if (L == NULL)
		return 1;
	luaL_openlibs(L);
	use_checkout_paths(L);
	luaL_newlib(L, host);
	lua_setglobal(L, "host");
	if (luaL_dofile(L, script) != LUA_OK) {
		fprintf(stderr, "embed: %s\n", lua_tostring(L, -1));
		goto done;
	}
	prof = luaperf_profiler_new(L, &opts, err, sizeof err);
	if (prof == NULL) {
		fprintf(stderr, "embed: %s\n", err);
		goto done;
	}
	if (luaperf_profiler_start(prof) < 0)
		goto fail;
	frames = frame_loop(L, prof, seconds, &t_update, &t_render);
	if (frames < 0)
		goto done;
	samples = luaperf_profiler_stop(prof);
	if (samples < 0 || (folded = luaperf_profiler_folded(prof)) == NULL ||
	    (marked = luaperf_profiler_frames(prof, &frames_ns)) < 0)
		goto fail;
	if (write_text(out, folded) < 0) {
		perror(out);
		goto done;
	}
	if (svg_out != NULL) {
		if ((svg = luaperf_profiler_flamegraph(prof, "examples/embed")) == NULL)
			goto fail;
		if (write_text(svg_out, svg) < 0) {
			perror(svg_out);
			goto done;
		}
	}
	printf("cpu_update=%.4f cpu_render=%.4f frames=%ld marked=%ld frames_ms=%.1f samples=%ld\n",
	       t_update, t_render, frames, marked, (double)frames_ns / 1e6, samples);
	rc = 0;
	goto done;
fail:
	fprintf(stderr, "embed: %s\n", luaperf_profiler_error(prof));
done:
	free(folded);
	free(svg);
	luaperf_profiler_delete(prof);
	lua_close(L);
	return rc;
}
