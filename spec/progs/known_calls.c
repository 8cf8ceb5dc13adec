/*
 * A program whose calls are known in advance, for the probe, trace and
 * latency specs:
 *
 *   known_calls calls N     probe_target(i) for i = 1..N, then N write(2)s
 *                           to /dev/null through libc
 *   known_calls sleeps K [FILE]
 *                           nap(1), nap(2), nap(4): K times each, a nap of
 *                           ms milliseconds (nanosleep); FILE gets each
 *                           nap's own measure, "ms ns" a line (the
 *                           reference for latency histograms)
 *   known_calls loop N      probe_target(i) for i = 1..N and nothing else
 *                           (the cost of a probe hit, bench/trace.sh)
 *   known_calls syscalls N  N each of: getppid (succeeds), openat of a
 *                           missing file (ENOENT), close(-1) (EBADF),
 *                           write to /dev/null; all through syscall(2)
 *                           so libc adds nothing of its own
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

volatile long sink;

NOINLINE long probe_target(long i)
{
	sink += i;
	return sink;
}

NOINLINE void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "calls";
	long n = argc > 2 ? atol(argv[2]) : 10, i;
	int fd;

	if (strcmp(mode, "sleeps") == 0) {
		FILE *f = argc > 3 ? fopen(argv[3], "w") : NULL;
		for (i = 0; i < n; i++) {
			for (long ms = 1; ms <= 4; ms *= 2) {
				struct timespec a, b;
				clock_gettime(CLOCK_MONOTONIC, &a);
				nap(ms);
				clock_gettime(CLOCK_MONOTONIC, &b);
				if (f != NULL)
					fprintf(f, "%ld %lld\n", ms, (long long)(b.tv_sec - a.tv_sec) *
						1000000000LL + (b.tv_nsec - a.tv_nsec));
			}
		}
		if (f != NULL)
			fclose(f);
		return 0;
	}
	if (strcmp(mode, "loop") == 0) {
		for (i = 1; i <= n; i++)
			probe_target(i);
		return 0;
	}
	fd = open("/dev/null", O_WRONLY);
	if (fd < 0)
		return 2;
	if (strcmp(mode, "syscalls") == 0) {
		for (i = 0; i < n; i++) {
			syscall(SYS_getppid);
			syscall(SYS_openat, AT_FDCWD, "/nonexistent/luaperf", O_RDONLY);
			syscall(SYS_close, -1);
			syscall(SYS_write, fd, "x", 1);
		}
		return 0;
	}
	for (i = 1; i <= n; i++)
		probe_target(i);
	for (i = 0; i < n; i++)
		if (write(fd, "x", 1) != 1)
			return 3;
	return 0;
}
