/*
 * A target that changes under a profiler: it burns CPU, forks, execs and
 * exits on demand (spec/faults_spec.lua, bench/soak.lua).
 *
 *   forker burn SECS            burn SECS of CPU time, exit 0
 *   forker fork N [FILE]        fork N children one after another, each burns
 *                               ~2 ms and exits; FILE gets "N pid1 pid2 ..."
 *   forker exec N               fork N children that each exec "true"
 *   forker execself SECS        burn SECS, then exec itself as "forker burn SECS"
 *   forker loop SECS            fork+exec "true" and burn, continuously, for
 *                               SECS seconds of wall time (0: until killed)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

static volatile unsigned long sink;

static double cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double wall_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void forker_burn(double secs)
{
	double end = cpu_now() + secs;
	int i;

	while (cpu_now() < end)
		for (i = 0; i < 20000; i++)
			sink += (unsigned long)i;
}

static pid_t spawn(int do_exec)
{
	pid_t p = fork();

	if (p == 0) {
		if (do_exec) {
			char *argv[] = { "true", NULL };
			execvp(argv[0], argv);
			_exit(127);
		}
		forker_burn(0.002);
		_exit(0);
	}
	return p;
}

static int reap(pid_t p)
{
	int st;

	if (p < 0)
		return -1;
	while (waitpid(p, &st, 0) < 0)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "burn";
	double arg = argc > 2 ? atof(argv[2]) : 0.2;

	if (!strcmp(mode, "burn")) {
		forker_burn(arg);
		return 0;
	}
	if (!strcmp(mode, "fork") || !strcmp(mode, "exec")) {
		int n = (int)arg, i, bad = 0;
		FILE *f = argc > 3 ? fopen(argv[3], "w") : NULL;

		if (f)
			fprintf(f, "%d", n);
		for (i = 0; i < n; i++) {
			pid_t p = spawn(mode[0] == 'e');
			if (f)
				fprintf(f, " %d", (int)p);
			bad |= reap(p) != 0;
		}
		if (f)
			fclose(f);
		return bad;
	}
	if (!strcmp(mode, "execself")) {
		char *again[] = { argv[0], "burn", argv[2], NULL };
		forker_burn(arg);
		execv("/proc/self/exe", again);
		return 127;
	}
	if (!strcmp(mode, "loop")) {
		double end = wall_now() + arg;
		while (arg <= 0 || wall_now() < end) {
			reap(spawn(1));
			forker_burn(0.001);
		}
		return 0;
	}
	fprintf(stderr, "usage: forker burn|fork|exec|execself|loop ARG [FILE]\n");
	return 2;
}
