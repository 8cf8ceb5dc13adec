/*
 * The kernel's share of a perf.luaprofile sample: a CPU-bound C loop timed
 * (thread CPU time) without and with a sigsample event at freq Hz whose
 * handler does nothing but count.  The difference per signal is what the
 * kernel (overflow, irq_work, signal delivery, sigreturn) costs, before any
 * Lua work.  Built and run by bench/luaprofile.sh against the core objects.
 *
 *   luaprofile_sigcost [freq]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sigsample.h"

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

int main(int argc, char **argv)
{
	int freq = argc > 1 ? atoi(argv[1]) : 5000;
	struct sigsample_opts o;
	struct sigsample *s;
	double base, with;
	unsigned long long n;
	int err;

	memset(&o, 0, sizeof o);
	o.attr.type = PERF_TYPE_SOFTWARE;
	o.attr.config = PERF_COUNT_SW_CPU_CLOCK;
	o.attr.freq = 1;
	o.attr.sample_freq = (unsigned long long)freq;
	o.attr.exclude_kernel = 1;
	o.attr.sample_type = PERF_SAMPLE_IP;
	base = spin();
	err = sigsample__open(&o, &s, NULL);
	if (err < 0 || (err = sigsample__start(s)) < 0) {
		fprintf(stderr, "sigsample: %s\n", strerror(-err));
		return 1;
	}
	with = spin();
	n = sigsample__signals(s);
	sigsample__close(s);
	printf("signal path alone at %d Hz: %.3f s -> %.3f s, %llu signals, %.1f us per signal\n",
	       freq, base, with, n, n ? (with - base) / (double)n * 1e6 : 0.0);
	return 0;
}
