/*
 * luaperf's C API for hosts that embed Lua (a game engine, a server):
 * the in-process profiler on the host's lua_State, with Lua functions and
 * native frames in one stack, without require and without Lua code on the
 * host's side.
 *
 *   luaperf_profiler *p = luaperf_profiler_new(L, NULL, err, sizeof err);
 *   luaperf_profiler_start(p);
 *   while (running) { update(L); render(); luaperf_profiler_frame(p); }
 *   luaperf_profiler_stop(p);
 *   char *folded = luaperf_profiler_folded(p);   // free() it
 *   char *svg = luaperf_profiler_flamegraph(p, "my game");
 *   luaperf_profiler_delete(p);
 *
 * Link perf/core.so (the module `require "perf"` loads; one copy serves
 * both).  The profiler runs on L's thread and uses L for its bookkeeping;
 * call these where the host may call into L (not from inside a Lua call
 * of L that another thread runs).  The module's Lua files (lua/perf) must
 * be on L's package.path, as for require.  Every function catches Lua
 * errors: a failure returns -1 or NULL and luaperf_profiler_error() says
 * why; none raises into the host.
 */
#ifndef LUAPERF_H
#define LUAPERF_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lua_State;

#define LUAPERF_API __attribute__((visibility("default")))

typedef struct luaperf_profiler luaperf_profiler;

typedef struct luaperf_profiler_options {
	int freq;            /* samples a second; 0: 999 */
	int no_native;       /* 1: Lua frames only (no native frames) */
	const char *event;   /* the sampling event (perf's -e grammar); NULL: cpu-clock */
} luaperf_profiler_options;

/* A profiler for L (opts may be NULL).  NULL on failure, with the reason
 * in err (errlen bytes, may be 0). */
LUAPERF_API luaperf_profiler *luaperf_profiler_new(struct lua_State *L,
						  const luaperf_profiler_options *opts,
						  char *err, size_t errlen);
/* The same with perf.luaprofile's options as a Lua table constructor,
 * every option there included: "{ freq = 999, wait = true, alloc = 262144 }"
 * (wait time, allocation sampling, frame_profiles, counters, ...); read as
 * data, in an empty environment.  NULL: the defaults. */
LUAPERF_API luaperf_profiler *luaperf_profiler_new_lua(struct lua_State *L, const char *options,
						      char *err, size_t errlen);
/* Starts sampling; 0 or -1. */
LUAPERF_API int luaperf_profiler_start(luaperf_profiler *p);
/* Ends a frame of the host's loop (and starts the next); the frame count or -1. */
LUAPERF_API long luaperf_profiler_frame(luaperf_profiler *p);
/* Stops; the profile of what ran since start is kept for the calls below.
 * The sample count, or -1. */
LUAPERF_API long luaperf_profiler_stop(luaperf_profiler *p);
/* The kept profile as folded stacks (root first, ';' between frames, a
 * space and the count) or as a flame graph (SVG); malloc'd, free() it. */
LUAPERF_API char *luaperf_profiler_folded(luaperf_profiler *p);
LUAPERF_API char *luaperf_profiler_flamegraph(luaperf_profiler *p, const char *title);
/* The same folded stacks weighted by "samples", "wait" (ns), "alloc" or
 * "live" (bytes); NULL weight: samples. */
LUAPERF_API char *luaperf_profiler_folded_by(luaperf_profiler *p, const char *weight);
/* The rank-th slowest frame of the kept profile (1: the slowest): its
 * index and duration in ns (either pointer may be NULL) and its own profile
 * as folded stacks (malloc'd; free() it).  NULL when there is no such
 * frame or it kept no profile (see luaperf_profiler_error). */
LUAPERF_API char *luaperf_profiler_slowest(luaperf_profiler *p, int rank, long *index,
					   unsigned long long *duration_ns);
/* The frames marked since start, as of the last stop, and their total
 * duration in nanoseconds (NULL: not wanted); -1 on failure. */
LUAPERF_API long luaperf_profiler_frames(luaperf_profiler *p, unsigned long long *total_ns);
/* Why the last call failed ("" when none did). */
LUAPERF_API const char *luaperf_profiler_error(const luaperf_profiler *p);
/* Stops, restores L's hooks and the signal handlers, frees; NULL is fine. */
LUAPERF_API void luaperf_profiler_delete(luaperf_profiler *p);

#ifdef __cplusplus
}
#endif

#endif
