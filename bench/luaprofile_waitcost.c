/*
 * The kernel's share of perf.luaprofile's wait = true: a thread that blocks
 * once per round trip with a child (a byte through a pipe and back, then
 * about 20 us of work), timed in thread CPU time unprofiled and with the
 * pieces of the wait event added one at a time:
 *   - the context-switch event, a sample at each switch out (no chain),
 *   - with the user call chain (what native = true asks for),
 *   - with the SWITCH records (context_switch = 1, their times),
 *   - its SIGTRAP alone (no ring),
 *   - all of it: what wait = true opens (sigsample, chain, records, ring).
 * The difference per wait is what the kernel costs before any Lua work.
 * Run it under `taskset -c 0` too: with the two processes on two CPUs the
 * figures include the VM's cross-CPU wake-ups (IPIs, idle exits), which
 * swing by tens of microseconds with anything that shifts the timing.
 * Variants alternate over rounds; medians are printed.
 *
 *   luaprofile_waitcost [waits] [rounds]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "base/perf_sys.h"
#include "sample/sigsample.h"

#define MAX_ROUNDS 31
#define RING_PAGES 16
#define NVARIANTS 6

static int to_child[2], from_child[2];
static volatile unsigned long sink;
static struct perf_event_mmap_page *ring;
static size_t ring_len;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Consumes the ring as the profiler's safe point does (records unread:
 * their cost to the reader is the profiler's, not the kernel's). */
static void ring_consume(void)
{
	if (ring != NULL) {
		uint64_t head = __atomic_load_n(&ring->data_head, __ATOMIC_ACQUIRE);
		__atomic_store_n(&ring->data_tail, head, __ATOMIC_RELEASE);
	}
}

static double round_trips(int n)
{
	double t0 = now();
	char c = 'x';
	int i, k;
	for (i = 0; i < n; i++) {
		unsigned long x = 1;
		if (write(to_child[1], &c, 1) != 1 || read(from_child[0], &c, 1) != 1)
			exit(1);
		for (k = 0; k < 20000; k++)
			x = x * 6364136223846793005UL + 1;
		sink = x;
		ring_consume();
	}
	return now() - t0;
}

static void attr_for(struct perf_event_attr *a, int chain, int records)
{
	memset(a, 0, sizeof *a);
	a->size = sizeof *a;
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	if (chain)
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	a->exclude_callchain_kernel = 1;
	a->context_switch = (unsigned)records;
	a->sample_id_all = 1;
	a->exclude_hv = 1;
}

static int map_ring(int fd)
{
	ring_len = (size_t)(1 + RING_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
	ring = mmap(NULL, ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		ring = NULL;
		return -1;
	}
	return 0;
}

static void unmap_ring(void)
{
	if (ring != NULL)
		munmap(ring, ring_len);
	ring = NULL;
}

/* Seconds of n round trips under variant v, or -1. */
static double run(int v, int n)
{
	struct perf_event_attr a;
	struct sigsample_opts o;
	struct sigsample *s;
	double t;
	int fd;

	if (v == 0)
		return round_trips(n);
	if (v <= 3) {
		attr_for(&a, v >= 2, v >= 3);
		a.disabled = 1;
		fd = perf_sys__open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0)
			return -1;
		if (map_ring(fd) < 0) {
			close(fd);
			return -1;
		}
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		t = round_trips(n);
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		unmap_ring();
		close(fd);
		return t;
	}
	memset(&o, 0, sizeof o);
	attr_for(&o.attr, v == 5, v == 5);
	o.signal = SIGSAMPLE_SIGNAL_TRAP;
	if (sigsample__open(&o, &s, NULL) < 0)
		return -1;
	if ((v == 5 && map_ring(sigsample__fd(s)) < 0) || sigsample__start(s) < 0) {
		sigsample__close(s);
		return -1;
	}
	t = round_trips(n);
	sigsample__stop(s);
	unmap_ring();
	sigsample__close(s);
	return t;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	static const char *names[NVARIANTS] = {
		"unprofiled", "switch sample, no chain", "+ user call chain",
		"+ SWITCH records", "SIGTRAP alone (no ring)", "all: what wait = true opens",
	};
	static double t[NVARIANTS][MAX_ROUNDS];
	int n = argc > 1 ? atoi(argv[1]) : 5000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	int r, v, status;
	pid_t child;

	if (n < 1)
		n = 5000;
	if (rounds < 1 || rounds > MAX_ROUNDS)
		rounds = 5;
	if (pipe(to_child) < 0 || pipe(from_child) < 0)
		return 1;
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		char c;
		close(to_child[1]);
		close(from_child[0]);
		while (read(to_child[0], &c, 1) == 1)
			if (write(from_child[1], &c, 1) != 1)
				break;
		_exit(0);
	}
	close(to_child[0]);
	close(from_child[1]);
	for (r = 0; r < rounds; r++)
		for (v = 0; v < NVARIANTS; v++)
			t[v][r] = run(v, n);
	for (v = 0; v < NVARIANTS; v++)
		qsort(t[v], (size_t)rounds, sizeof t[v][0], cmp);
	printf("%d blocking round trips, median of %d alternating rounds (thread CPU)\n", n, rounds);
	for (v = 0; v < NVARIANTS; v++) {
		double m = t[v][rounds / 2];
		if (t[v][0] < 0)
			printf("  %-30s unavailable\n", names[v]);
		else
			printf("  %-30s %.3f s  %+6.2f us a wait\n", names[v], m,
			       (m - t[0][rounds / 2]) / n * 1e6);
	}
	close(to_child[1]);
	waitpid(child, &status, 0);
	return 0;
}
