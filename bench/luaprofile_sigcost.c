/*
 * The kernel's share of a perf.luaprofile sample: a CPU-bound C loop timed
 * (thread CPU time) unprofiled, then with a sampling event at freq Hz and
 *   - "timer only": a ring and no signal (what any perf sampling costs:
 *     the hrtimer interrupt and the record),
 *   - "sigtrap": sigsample's SIGTRAP delivery (task work, no IPI),
 *   - "realtime": sigsample's fasync real-time signal (irq_work self-IPI),
 * whose handlers do nothing but count.  The difference per sample is what
 * the kernel costs before any Lua work.  Variants alternate over rounds;
 * medians are printed.  Built and run by bench/luaprofile.sh.
 *
 *   luaprofile_sigcost [freq] [rounds]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include "base/perf_sys.h"
#include "sample/sigsample.h"

#define MAX_ROUNDS 31

static volatile unsigned long sink;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double spin(void)
{
	double t0 = now();
	unsigned long x = 1;
	long i;
	for (i = 0; i < 400000000L; i++)
		x = x * 6364136223846793005UL + 1;
	sink = x;
	return now() - t0;
}

static void attr_for(struct perf_event_attr *a, int freq)
{
	memset(a, 0, sizeof *a);
	a->size = sizeof *a;
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->freq = 1;
	a->sample_freq = (unsigned long long)freq;
	a->exclude_kernel = 1;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
}

/* Seconds of the loop and samples taken, or -1. */
static double timer_only(int freq, unsigned long long *samples)
{
	struct perf_event_attr a;
	struct perf_event_mmap_page *page;
	size_t len = (size_t)(1 + 64) * (size_t)sysconf(_SC_PAGESIZE);
	double t;
	int fd;

	attr_for(&a, freq);
	a.disabled = 1;
	fd = perf_sys__open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	page = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (page == MAP_FAILED) {
		close(fd);
		return -1;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	t = spin();
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	/* IP + callchain of a user-only sample: header 8, ip 8, nr 8, 2-3 ips. */
	*samples = page->data_head / 40;
	munmap(page, len);
	close(fd);
	return t;
}

static double with_signal(int freq, enum sigsample_signal how, unsigned long long *samples)
{
	struct sigsample_opts o;
	struct sigsample *s;
	double t;

	memset(&o, 0, sizeof o);
	attr_for(&o.attr, freq);
	o.signal = how;
	if (sigsample__open(&o, &s, NULL) < 0)
		return -1;
	if (sigsample__start(s) < 0) {
		sigsample__close(s);
		return -1;
	}
	t = spin();
	sigsample__stop(s);
	*samples = sigsample__signals(s);
	sigsample__close(s);
	return t;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	static const char *names[] = { "timer only (ring, no signal)", "sigtrap", "realtime signal" };
	int freq = argc > 1 ? atoi(argv[1]) : 5000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	double base[MAX_ROUNDS], t[3][MAX_ROUNDS], per[3][MAX_ROUNDS], mb;
	int r, v;

	if (rounds < 1 || rounds > MAX_ROUNDS)
		rounds = 5;
	for (r = 0; r < rounds; r++) {
		base[r] = spin();
		for (v = 0; v < 3; v++) {
			unsigned long long n = 0;
			double s = v == 0 ? timer_only(freq, &n)
				 : with_signal(freq, v == 1 ? SIGSAMPLE_SIGNAL_TRAP
						       : SIGSAMPLE_SIGNAL_REALTIME, &n);
			t[v][r] = s;
			per[v][r] = s > 0 && n > 0 ? (s - base[r]) / (double)n * 1e6 : -1;
		}
	}
	mb = median(base, rounds);
	printf("CPU loop at %d Hz, median of %d alternating rounds; unprofiled %.3f s\n",
	       freq, rounds, mb);
	for (v = 0; v < 3; v++) {
		double mt = median(t[v], rounds), mp = median(per[v], rounds);
		if (mt < 0) {
			printf("  %-30s unavailable\n", names[v]);
			continue;
		}
		printf("  %-30s %.3f s  %+6.2f%%  %5.1f us per sample\n", names[v], mt,
		       100 * (mt / mb - 1), mp);
	}
	return 0;
}
