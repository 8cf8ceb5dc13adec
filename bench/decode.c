/*
 * Decode + aggregate benchmark, C side: loads a perf.data file, then times
 *   bulk:   stacktab__add_records over the data section in memory (the C path
 *           a reader or a ring drain feeds: decode + intern, no Lua);
 *   shuffled: the same records in a shuffled order, so consecutive samples
 *           rarely share a stack (the table's previous-stack check misses
 *           and every sample pays the hash: the worst case of the bulk path);
 *   reader: perfdata__next (time-ordered) + stacktab__add_record.
 * Prints one line per path: "<path> <samples> <seconds> <samples/s> <stacks>".
 *
 * Times are the CPU time of this thread (best of the repeats).
 *
 *   build/bench/decode FILE [repeat]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "perfdata/perfdata.h"
#include "record/record.h"
#include "profile/stacktab.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);  /* CPU time: a busy machine must not count */
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct perfdata *pd;
	const struct perfdata_info *info;
	struct stacktab_meta m;
	struct perfdata_rec rec;
	char err[512];
	int reps = argc > 2 ? atoi(argv[2]) : 5, i, rc;
	double t0, best = 1e9;
	uint64_t *buf;
	FILE *f;
	size_t stacks = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s perf.data [repeat]\n", argv[0]);
		return 2;
	}
	if ((rc = perfdata__open(argv[1], NULL, &pd, err, sizeof err))) {
		fprintf(stderr, "%s: %s\n", argv[1], err);
		return 1;
	}
	info = perfdata__info(pd);
	buf = malloc(info->data_size + 8);
	f = fopen(argv[1], "rb");
	if (!buf || !f || fseek(f, (long)info->data_offset, SEEK_SET) ||
	    fread(buf, 1, info->data_size, f) != info->data_size) {
		fprintf(stderr, "cannot read the data section\n");
		return 1;
	}
	fclose(f);

	for (i = 0; i < reps; i++) {
		struct stacktab *st = stacktab__new();
		long n;
		t0 = now();
		n = stacktab__add_records(st, perfdata__evtab(pd), buf, info->data_size,
					  err, sizeof err);
		t0 = now() - t0;
		if (n < 0) {
			fprintf(stderr, "add_records: %s\n", err);
			return 1;
		}
		if (t0 < best)
			best = t0;
		stacktab__meta(st, &m);
		stacks = stacktab__count(st);
		stacktab__delete(st);
	}
	printf("bulk %llu %.6f %.0f %zu errors=%llu\n", (unsigned long long)m.samples, best,
	       m.samples / best, stacks, (unsigned long long)m.errors);

	{
		/* Record offsets, shuffled (fixed seed), copied into a new buffer. */
		size_t nrec = 0, off = 0, cap = info->data_size / 8 + 1, k;
		size_t *offs = malloc(cap * sizeof *offs);
		uint64_t *sh = malloc(info->data_size + 8);
		uint8_t *o = (uint8_t *)sh;
		unsigned long long seed = 42;
		if (!offs || !sh)
			return 1;
		while (off + 8 <= info->data_size) {
			const struct perf_event_header *h = (const void *)((const uint8_t *)buf + off);
			if (h->size < 8 || off + h->size > info->data_size)
				break;
			offs[nrec++] = off;
			off += h->size;
		}
		for (k = nrec; k > 1; k--) {
			size_t j, t;
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			j = (size_t)(seed >> 33) % k;
			t = offs[k - 1];
			offs[k - 1] = offs[j];
			offs[j] = t;
		}
		for (k = 0; k < nrec; k++) {
			const struct perf_event_header *h = (const void *)((const uint8_t *)buf + offs[k]);
			memcpy(o, h, h->size);
			o += h->size;
		}
		best = 1e9;
		for (i = 0; i < reps; i++) {
			struct stacktab *st = stacktab__new();
			t0 = now();
			if (stacktab__add_records(st, perfdata__evtab(pd), sh,
						  (size_t)(o - (uint8_t *)sh), err, sizeof err) < 0)
				return 1;
			t0 = now() - t0;
			if (t0 < best)
				best = t0;
			stacktab__meta(st, &m);
			stacks = stacktab__count(st);
			stacktab__delete(st);
		}
		printf("shuffled %llu %.6f %.0f %zu\n", (unsigned long long)m.samples, best,
		       m.samples / best, stacks);
		free(offs);
		free(sh);
	}

	best = 1e9;
	for (i = 0; i < reps; i++) {
		struct stacktab *st = stacktab__new();
		struct record r;
		perfdata__rewind(pd);
		t0 = now();
		while ((rc = perfdata__next(pd, &rec)) == 1) {
			if (record__decode(perfdata__evtab(pd), rec.hdr, rec.size, &r, NULL, 0) == 0)
				stacktab__add_record(st, &r, perfdata__evtab(pd));
		}
		t0 = now() - t0;
		if (rc < 0) {
			fprintf(stderr, "reader: %s\n", perfdata__errmsg(pd));
			return 1;
		}
		if (t0 < best)
			best = t0;
		stacktab__meta(st, &m);
		stacks = stacktab__count(st);
		stacktab__delete(st);
	}
	printf("reader %llu %.6f %.0f %zu\n", (unsigned long long)m.samples, best,
	       m.samples / best, stacks);
	free(buf);
	perfdata__close(pd);
	return 0;
}
