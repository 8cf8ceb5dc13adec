/*
 * The reference for bench/counter_read.lua: a raw read(2) of a counter fd
 * opened with the same attr luaperf uses (read_format TOTAL_TIME_ENABLED |
 * TOTAL_TIME_RUNNING | ID), in a loop.  Prints ns per read, best of rounds.
 *
 *   counter_read EVENT_CONFIG N ROUNDS     (software event config: 1 task-clock, 3 cs)
 */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct perf_event_attr a;
	uint64_t buf[4];
	long config = argc > 1 ? atol(argv[1]) : 1, n = argc > 2 ? atol(argv[2]) : 1000000, i;
	int rounds = argc > 3 ? atoi(argv[3]) : 5, r, fd;
	double best = 1e30;

	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = (uint64_t)config;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
			PERF_FORMAT_ID;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		perror("perf_event_open");
		return 1;
	}
	for (r = 0; r < rounds; r++) {
		double t0 = now(), dt;
		for (i = 0; i < n; i++)
			if (read(fd, buf, sizeof buf) < 24)
				return 1;
		dt = (now() - t0) / (double)n * 1e9;
		if (dt < best)
			best = dt;
	}
	printf("%.1f\n", best);
	return 0;
}
