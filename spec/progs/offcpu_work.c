/*
 * Off-CPU and live-view targets (spec/offcpu_spec.lua, spec/top_spec.lua,
 * bench/offcpu.sh).  Built with frame pointers (make progs): the blocking
 * call is made one function below the one the specs look for, so the
 * function itself is a return address on the frame chain even though
 * glibc's own code keeps no frame pointer.
 *
 *   offcpu_work sleep N MS BURN_MS   sleeper(): N naps of MS ms, then
 *                                    burner(): BURN_MS ms of CPU; prints
 *                                    slept_ns=<sleeper's wall time>
 *   offcpu_work mutex THREADS MS     THREADS threads block in waiter() on a
 *                                    mutex holder() keeps MS ms
 *   offcpu_work spin SECS            hot_loop() burns SECS seconds of CPU
 *                                    (0: until killed)
 *   offcpu_work switch N             N short sleeps (context switches) for
 *                                    the cost benchmark
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static double now(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

void nap(long ms);
void nap(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) != 0)
		;
}

void sleeper(int n, long ms);
void sleeper(int n, long ms)
{
	int i;

	for (i = 0; i < n; i++)
		nap(ms);
}

void burner(long ms);
void burner(long ms)
{
	double end = now(CLOCK_THREAD_CPUTIME_ID) + (double)ms / 1000;

	while (now(CLOCK_THREAD_CPUTIME_ID) < end) {
		unsigned long i;
		for (i = 0; i < 100000; i++)
			sink += i * i;
	}
}

void take_lock(void);
void take_lock(void)
{
	pthread_mutex_lock(&lock);
}

void *waiter(void *arg);
void *waiter(void *arg)
{
	(void)arg;
	take_lock();
	pthread_mutex_unlock(&lock);
	return NULL;
}

void holder(long ms);
void holder(long ms)
{
	nap(ms);
}

void hot_loop(double secs);
void hot_loop(double secs)
{
	double end = now(CLOCK_MONOTONIC) + secs;

	for (;;) {
		unsigned long i;
		for (i = 0; i < 1000000; i++)
			sink += i ^ (i >> 3);
		if (secs > 0 && now(CLOCK_MONOTONIC) >= end)
			break;
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: offcpu_work sleep N MS BURN_MS | mutex THREADS MS | "
		"spin SECS | switch N\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "sleep")) {
		double t0 = now(CLOCK_MONOTONIC), t1;
		sleeper(atoi(argv[2]), atol(argv[3]));
		t1 = now(CLOCK_MONOTONIC);
		burner(atol(argv[4]));
		/* the wall time sleeper() took, for the specs to compare */
		printf("slept_ns=%.0f\n", (t1 - t0) * 1e9);
	} else if (argc == 4 && !strcmp(argv[1], "mutex")) {
		int n = atoi(argv[2]), i;
		pthread_t t[64];
		if (n < 1 || n > 64)
			return usage();
		pthread_mutex_lock(&lock);
		for (i = 0; i < n; i++)
			pthread_create(&t[i], NULL, waiter, NULL);
		holder(atol(argv[3]));
		pthread_mutex_unlock(&lock);
		for (i = 0; i < n; i++)
			pthread_join(t[i], NULL);
	} else if (argc == 3 && !strcmp(argv[1], "spin")) {
		hot_loop(atof(argv[2]));
	} else if (argc == 3 && !strcmp(argv[1], "switch")) {
		long i, n = atol(argv[2]);
		struct timespec t = { 0, 1000 };
		for (i = 0; i < n; i++)
			nanosleep(&t, NULL);
	} else {
		return usage();
	}
	return 0;
}
