/*
 * perf.data reading benchmark, C side: the whole file through
 * perfdata__next (framing, zstd, time ordering) and record__decode, as the
 * Lua iterator and f:scan() use them, best of N runs.  Prints
 *   "<path> <records> <seconds> <MB/s>"
 * for the time-ordered path and the file-order path, then for
 * perfdata__profile (the whole file into a stack table, as f:profile and
 * luaperf report/flame build it) in both orders.  Times are the CPU time
 * of this thread, so a busy machine counts less.
 *
 *   build/bench/perfdata FILE [repeat]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "perfdata/perfdata.h"
#include "profile/perfdata_profile.h"
#include "profile/stacktab.h"
#include "record/record.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int run(const char *path, int unordered, int reps)
{
	struct perfdata_opts o = { .unordered = unordered };
	double best = 1e9;
	unsigned long long n = 0, size = 0;
	int i;

	for (i = 0; i < reps; i++) {
		struct perfdata *pd;
		struct perfdata_rec r;
		struct record rec;
		char err[512];
		double t0 = now();
		int rc;

		if (perfdata__open(path, &o, &pd, err, sizeof err)) {
			fprintf(stderr, "%s: %s\n", path, err);
			return 1;
		}
		n = 0;
		while ((rc = perfdata__next(pd, &r)) > 0) {
			if (record__decode(perfdata__evtab(pd), r.hdr, r.hdr->size, &rec, err, sizeof err) == 0)
				n++;
		}
		if (rc < 0) {
			fprintf(stderr, "%s\n", perfdata__errmsg(pd));
			return 1;
		}
		size = perfdata__info(pd)->file_size;
		perfdata__close(pd);
		if (now() - t0 < best)
			best = now() - t0;
	}
	printf("%s %llu %.4f %.1f\n", unordered ? "file-order" : "time-ordered", n, best,
	       size / 1048576.0 / best);
	return 0;
}

/* perf.data -> profile: perfdata__profile into a stack table. */
static int run_profile(const char *path, int unordered, int reps)
{
	struct perfdata_opts o = { .unordered = unordered };
	double best = 1e9;
	unsigned long long n = 0, size = 0;
	int i;

	for (i = 0; i < reps; i++) {
		struct perfdata_profile_stats stats;
		struct stacktab_meta m;
		struct perfdata *pd;
		struct stacktab *st;
		char err[512];
		double t0 = now();

		if (perfdata__open(path, &o, &pd, err, sizeof err)) {
			fprintf(stderr, "%s: %s\n", path, err);
			return 1;
		}
		if (!(st = stacktab__new()) ||
		    perfdata__profile(pd, NULL, st, &stats, err, sizeof err) < 0) {
			fprintf(stderr, "%s: %s\n", path, st ? err : "out of memory");
			return 1;
		}
		stacktab__meta(st, &m);
		n = m.samples;
		size = perfdata__info(pd)->file_size;
		stacktab__delete(st);
		perfdata__close(pd);
		if (now() - t0 < best)
			best = now() - t0;
	}
	printf("%s %llu %.4f %.1f\n", unordered ? "profile-file-order" : "profile-time-ordered",
	       n, best, size / 1048576.0 / best);
	return 0;
}

int main(int argc, char **argv)
{
	int reps = argc > 2 ? atoi(argv[2]) : 3;
	if (argc < 2) {
		fprintf(stderr, "usage: %s perf.data [repeat]\n", argv[0]);
		return 2;
	}
	return run(argv[1], 0, reps) || run(argv[1], 1, reps) ||
	       run_profile(argv[1], 0, reps) || run_profile(argv[1], 1, reps);
}
