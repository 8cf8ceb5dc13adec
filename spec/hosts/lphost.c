/*
 * A C host embedding Lua 5.4 that uses perf.luaprofile the way threaded
 * hosts do (spec/luaprofile_safety_spec.lua):
 *
 *   lphost threads N SECS      N threads, each with its own Lua state,
 *                              profiling itself at once
 *   lphost blocked MODE        a thread that blocks the profiler's signal
 *   lphost crossclose MODE [ROUNDS [keep]]
 *                              started on one thread, stopped and closed on
 *                              another while the first still gets signals;
 *                              then a new profiler where the old one was
 *                              (keep: another profiler stays open meanwhile,
 *                              so the signal handler is never given back)
 *
 * MODE is luaprofile's signal= option.  The module and its Lua files come
 * from LUA_CPATH and LUA_PATH.  Output: key=value lines; exit 0 on success.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

static volatile unsigned long sink;

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Native work, outside any Lua call: the thread still gets its signals. */
static void burn_native(double secs)
{
	double t0 = cpu_now();
	unsigned long x = 1;
	while (cpu_now() - t0 < secs) {
		int i;
		for (i = 0; i < 100000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	}
	sink += x;
}

static lua_State *new_state(void)
{
	lua_State *L = luaL_newstate();
	if (L == NULL)
		exit(2);
	luaL_openlibs(L);
	return L;
}

/* Runs chunk in L; a failure prints the message and exits. */
static void run(lua_State *L, const char *what, const char *chunk)
{
	if (luaL_dostring(L, chunk) != LUA_OK) {
		fprintf(stderr, "lphost %s: %s\n", what, lua_tostring(L, -1));
		exit(1);
	}
}

static const char prelude[] =
	"perf = require 'perf'\n"
	"function burn(n) local x = 0 for i = 1, n do x = x + i % 7 end return x end\n"
	"function count(p, pat)\n"
	"  local n, total = 0, 0\n"
	"  for frames, c in p:stacks() do\n"
	"    total = total + c\n"
	"    for _, f in ipairs(frames) do if f.name:find(pat) then n = n + c break end end\n"
	"  end\n"
	"  return n, total\n"
	"end\n";

/* ---- threads: one Lua state per thread, all profiling at once ---------- */

struct worker {
	pthread_t tid;
	int index;
	double secs;
	char out[256];
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	lua_State *L = new_state();
	char chunk[2048];
	run(L, "prelude", prelude);
	snprintf(chunk, sizeof chunk,
		 "function work%d() local r = burn(20000) return r end\n"
		 "local prof = assert(perf.luaprofile{ freq = 999 })\n"
		 "assert(prof:start())\n"
		 "local co = coroutine.wrap(function() while true do work%d() coroutine.yield() end end)\n"
		 "local t0 = os.clock()\n"
		 "while os.clock() - t0 < %g do work%d() co() end\n"
		 "local p = prof:stop()\n"
		 "local st = prof:stats()\n"
		 "prof:close()\n"
		 "local mine = count(p, '^%%[Lua%%] work%d ')\n"
		 "local others = 0\n"
		 "for frames, c in p:stacks() do for _, f in ipairs(frames) do\n"
		 "  if f.name:find('^%%[Lua%%] work') and not f.name:find('^%%[Lua%%] work%d ') then others = others + c break end\n"
		 "end end\n"
		 "result = string.format('samples%d=%%d mine%d=%%d others%d=%%d tid%d=%%d',\n"
		 "  p:total(), mine, others, st.tid)\n",
		 w->index, w->index, w->secs, w->index, w->index, w->index,
		 w->index, w->index, w->index, w->index);
	run(L, "worker", chunk);
	lua_getglobal(L, "result");
	snprintf(w->out, sizeof w->out, "%s", lua_tostring(L, -1));
	lua_close(L);
	return NULL;
}

static int cmd_threads(int n, double secs)
{
	struct worker w[8];
	int i;
	if (n < 1 || n > 8)
		return 2;
	for (i = 0; i < n; i++) {
		w[i].index = i;
		w[i].secs = secs;
		if (pthread_create(&w[i].tid, NULL, worker_main, &w[i]) != 0)
			return 2;
	}
	for (i = 0; i < n; i++) {
		pthread_join(w[i].tid, NULL);
		printf("%s\n", w[i].out);
	}
	return 0;
}

/* ---- blocked: the profiler's signals blocked in the sampled thread ----- */

static void block_all(int how)
{
	sigset_t set;
	int sig;
	sigemptyset(&set);
	sigaddset(&set, SIGTRAP);
	for (sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(&set, sig);
	pthread_sigmask(how, &set, NULL);
}

static const char *mode;

static void *blocked_main(void *arg)
{
	lua_State *L = new_state();
	char chunk[1024];
	(void)arg;
	run(L, "prelude", prelude);
	block_all(SIG_BLOCK);
	snprintf(chunk, sizeof chunk,
		 "local prof = assert(perf.luaprofile{ freq = 4000, signal = '%s' })\n"
		 "assert(prof:start())\n"
		 "local t0 = os.clock()\n"
		 "while os.clock() - t0 < 0.3 do burn(10000) end\n"
		 "local p = prof:stop()\n"
		 "io.write('blocked_samples=', p:total(), ' blocked_signals=', tonumber(p:meta().signals), '\\n')\n"
		 "prof:close()\n", mode);
	run(L, "blocked", chunk);
	/* Signals queued while blocked must not reach SIG_DFL now. */
	block_all(SIG_UNBLOCK);
	burn_native(0.05);
	/* And the profiler works once they are unblocked. */
	snprintf(chunk, sizeof chunk,
		 "local prof = assert(perf.luaprofile{ freq = 999, signal = '%s' })\n"
		 "assert(prof:start())\n"
		 "local t0 = os.clock()\n"
		 "while os.clock() - t0 < 0.3 do burn(10000) end\n"
		 "local p = prof:stop()\n"
		 "prof:close()\n"
		 "io.write('unblocked_samples=', p:total(), '\\n')\n", mode);
	run(L, "unblocked", chunk);
	lua_close(L);
	return NULL;
}

/* ---- crossclose: stop and close from another thread ------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int phase;
static lua_State *shared;

static void set_phase(int p)
{
	pthread_mutex_lock(&lock);
	phase = p;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

static void wait_phase(int p)
{
	pthread_mutex_lock(&lock);
	while (phase < p)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

/* The sampled thread: starts, then burns natively (its signals still
 * arrive) while the main thread stops and closes the profiler. */
static void *sampled_main(void *arg)
{
	int round, rounds = *(int *)arg;
	char chunk[512];
	for (round = 0; round < rounds; round++) {
		snprintf(chunk, sizeof chunk,
			 "prof = assert(perf.luaprofile{ freq = 4000, signal = '%s' })\n"
			 "assert(prof:start())\n"
			 "local t0 = os.clock()\n"
			 "while os.clock() - t0 < 0.002 do burn(1000) end\n", mode);
		run(shared, "start", chunk);
		if (round == rounds - 1) {
			/* The last round: its signals queue up, unhandled. */
			block_all(SIG_BLOCK);
			burn_native(0.01);
		}
		set_phase(2 * round + 1);
		burn_native(0.004 + 0.001 * (round % 5));
		wait_phase(2 * round + 2);
	}
	/* A new profiler on this thread, on an event that never fires here:
	 * the old one's queued signals must not count for it. */
	snprintf(chunk, sizeof chunk,
		 "prof = assert(perf.luaprofile{ event = 'major-faults', period = 1000000000, signal = '%s' })\n"
		 "assert(prof:start())\n", mode);
	run(shared, "new", chunk);
	block_all(SIG_UNBLOCK);
	burn_native(0.05);
	run(shared, "new stop",
	    "local p = prof:stop()\n"
	    "io.write('new_signals=', tonumber(p:meta().signals), ' new_samples=', p:total(), '\\n')\n"
	    "prof:close()\n");
	return NULL;
}

static int cmd_crossclose(int rounds, int keep)
{
	pthread_t t;
	int round;
	unsigned long total = 0;
	char chunk[256];
	shared = new_state();
	run(shared, "prelude", prelude);
	snprintf(chunk, sizeof chunk, "keeper = %s", keep ?
		 "assert(perf.luaprofile{ freq = 99, signal = mode })" : "nil");
	lua_pushstring(shared, mode);
	lua_setglobal(shared, "mode");
	run(shared, "keeper", chunk);
	if (pthread_create(&t, NULL, sampled_main, &rounds) != 0)
		return 2;
	for (round = 0; round < rounds; round++) {
		wait_phase(2 * round + 1);
		/* This thread uses the state now; the other one is in C. */
		run(shared, "stop",
		    "local p = prof:stop()\n"
		    "total = (total or 0) + p:total()\n"
		    "prof:close()\n"
		    "prof = nil\n");
		set_phase(2 * round + 2);
	}
	pthread_join(t, NULL);
	lua_getglobal(shared, "total");
	total = (unsigned long)lua_tointeger(shared, -1);
	lua_pop(shared, 1);
	printf("rounds=%d samples=%lu\n", rounds, total);
	run(shared, "keeper close", "if keeper then keeper:close() end");
	lua_close(shared);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc >= 4 && strcmp(argv[1], "threads") == 0)
		return cmd_threads(atoi(argv[2]), atof(argv[3]));
	if (argc >= 3 && strcmp(argv[1], "blocked") == 0) {
		pthread_t t;
		mode = argv[2];
		if (pthread_create(&t, NULL, blocked_main, NULL) != 0)
			return 2;
		pthread_join(t, NULL);
		printf("survived=1\n");
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "crossclose") == 0) {
		mode = argv[2];
		return cmd_crossclose(argc >= 4 ? atoi(argv[3]) : 200,
				      argc >= 5 && strcmp(argv[4], "keep") == 0);
	}
	fprintf(stderr, "usage: lphost threads N SECS | blocked MODE | crossclose MODE [ROUNDS [keep]]\n");
	return 2;
}
