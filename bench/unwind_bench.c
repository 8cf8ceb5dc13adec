/*
 * DWARF unwinding over a perf.data file, for the benchmark (bench/unwind.sh)
 * and the specs (spec/dwarf_spec.lua): reads the file with the core's
 * reader, feeds the symbolizer with its maps and unwinds every sample that
 * carries user registers and stack.
 *
 *   unwind_bench [-p] [-s] [-r N] perf.data
 *     -p    print each sample as perf script -F pid,tid,time,ip,sym,dso
 *           --no-inline prints it (user frames at dso-relative addresses,
 *           callers at return address - 1, as perf shows them), with the
 *           unwind status on the header line
 *     -s    symbolize the printed frames (otherwise "?")
 *     -r N  unwind the file N times (timing), report the best run
 *     -n    read, decode and feed only (the baseline the unwinding adds to)
 *     -f    the profile path: unwind__add_record into a stack table,
 *           printed as address-level folded stacks (user frames, root
 *           first, dso+offset as perf shows them, one line per table entry)
 *     -S    every sample through libdwfl's unwinder (no cached CFI rows)
 *
 * Prints "samples N unwound N truncated N failed N frames N seconds S
 * rate R" on stderr.  Links against the core objects (build/obj/core).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perfdata/perfdata.h"
#include "record/record.h"
#include "profile/stacktab.h"
#include "symbol/symbolizer.h"
#include "unwind/unwind.h"

#define MAX_IPS 512

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void print_sample(struct symbolizer *sym, const struct record *r,
			 const uint64_t *ips, int n, unsigned status, int symbolize)
{
	const char *st = status & UNWIND_TRUNCATED ? "truncated" :
			 status & UNWIND_FAILED ? "failed" :
			 status & UNWIND_NO_USER ? "no-user" : "ok";
	int user = 0, first = 1;

	printf("%" PRIu32 "/%" PRIu32 " %" PRIu64 " %s\n", r->s.pid, r->s.tid, r->s.time, st);
	for (int i = 0; i < n; i++) {
		uint64_t a = ips[i];
		struct sym_map m;
		struct sym_result res;
		if (a >= PERF_CONTEXT_MAX) {
			user = a == PERF_CONTEXT_USER;
			continue;
		}
		if (!user)
			continue;  /* kernel frames: not ours to compare */
		/* Callers are return addresses; perf shows the call (ret - 1). */
		if (!first)
			a--;
		first = 0;
		const char *name = "?";
		if (symbolize && symbolizer__resolve(sym, r->s.pid, a, SYM_NAMES, &res) == 0 && res.name)
			name = res.name;
		if (symbolizer__find_map(sym, r->s.pid, a, &m) == 0)
			printf("\t%" PRIx64 " %s (%s)\n", a - m.start + m.pgoff, name, m.path);
		else
			printf("\t%" PRIx64 " %s ([unknown])\n", a, name);
	}
	printf("\n");
}

struct totals { uint64_t samples, unwound, truncated, failed, frames; };

static int no_unwind, slow_only, folded;

/* The profile path: unwind__add_record into a stack table, printed folded
 * (root first, user frames only, dso+offset). */
static int run_folded(const char *path)
{
	struct perfdata *pd;
	struct symbolizer *sym = symbolizer__new();
	struct stacktab *st = stacktab__new();
	struct unwinder *u;
	struct perfdata_rec pr;
	char err[256];
	int rc;

	if (!sym || !st || unwinder__new(&u) < 0)
		return -ENOMEM;
	rc = perfdata__open(path, NULL, &pd, err, sizeof err);
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", path, err);
		return rc;
	}
	while ((rc = perfdata__next(pd, &pr)) > 0) {
		const struct evtab *et = perfdata__evtab(pd);
		struct record r;
		if (record__decode(et, pr.hdr, pr.size, &r, err, sizeof err) < 0)
			continue;
		if (unwind__add_record(u, sym, st, &r, et, NULL) < 0) {
			rc = -ENOMEM;
			break;
		}
	}
	for (size_t i = 0; i < stacktab__count(st); i++) {
		struct stacktab_entry e;
		stacktab__get(st, i, &e);
		if (e.nr == e.nkernel)
			continue;
		for (unsigned j = e.nr; j-- > e.nkernel;) {
			struct sym_map m;
			uint64_t a = e.addrs[j];  /* callers already call sites */
			if (symbolizer__find_map(sym, (uint32_t)e.pid, a, &m) == 0)
				printf("%s+%" PRIx64, m.path, a - m.start + m.pgoff);
			else
				printf("[unknown]+%" PRIx64, a);
			printf("%s", j > e.nkernel ? ";" : "");
		}
		printf(" %" PRIu64 "\n", e.count);
	}
	perfdata__close(pd);
	stacktab__delete(st);
	unwinder__delete(u);
	symbolizer__delete(sym);
	return rc;
}

static int run(const char *path, int print, int symbolize, struct totals *t)
{
	struct perfdata *pd;
	struct symbolizer *sym = symbolizer__new();
	struct unwinder *u;
	struct perfdata_rec pr;
	char err[256];
	uint64_t ips[MAX_IPS];
	int rc;

	memset(t, 0, sizeof *t);
	if (!sym || unwinder__new(&u) < 0) {
		fprintf(stderr, "out of memory\n");
		return -ENOMEM;
	}
	unwinder__set_fast(u, !slow_only);
	rc = perfdata__open(path, NULL, &pd, err, sizeof err);
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", path, err);
		unwinder__delete(u);
		symbolizer__delete(sym);
		return rc;
	}
	while ((rc = perfdata__next(pd, &pr)) > 0) {
		/* Asked each time: attr records met in the stream rebuild it. */
		const struct evtab *et = perfdata__evtab(pd);
		struct record r;
		if (record__decode(et, pr.hdr, pr.size, &r, err, sizeof err) < 0)
			continue;
		if (r.type != PERF_RECORD_SAMPLE) {
			symbolizer__feed(sym, &r);
			continue;
		}
		t->samples++;
		const struct perf_event_attr *attr = evtab__attr(et, r.evidx < 0 ? 0 : r.evidx);
		if (!attr || !(r.s.type & PERF_SAMPLE_REGS_USER) || !(r.s.type & PERF_SAMPLE_STACK_USER))
			continue;
		if (no_unwind)
			continue;
		unsigned status;
		int n = unwind__sample(u, sym, attr, &r.s, ips, MAX_IPS, &status);
		if (n < 0)
			continue;
		t->unwound++;
		if (print)
			print_sample(sym, &r, ips, n, status, symbolize);
	}
	if (rc < 0)
		fprintf(stderr, "%s: %s\n", path, perfdata__errmsg(pd));
	struct unwind_stats s;
	unwinder__stats(u, &s);
	t->truncated = s.truncated;
	t->failed = s.failed;
	t->frames = s.frames;
	perfdata__close(pd);
	unwinder__delete(u);
	symbolizer__delete(sym);
	return rc;
}

int main(int argc, char **argv)
{
	int print = 0, symbolize = 0, reps = 1, c;

	while ((c = getopt(argc, argv, "fnSpsr:")) != -1) {
		switch (c) {
		case 'n': no_unwind = 1; break;
		case 'f': folded = 1; break;
		case 'S': slow_only = 1; break;
		case 'p': print = 1; break;
		case 's': symbolize = 1; break;
		case 'r': reps = atoi(optarg) > 0 ? atoi(optarg) : 1; break;
		default:
			fprintf(stderr, "usage: unwind_bench [-p] [-s] [-f] [-S] [-n] [-r N] perf.data\n");
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: unwind_bench [-p] [-s] [-f] [-S] [-n] [-r N] perf.data\n");
		return 2;
	}
	if (folded)
		return run_folded(argv[optind]) < 0;
	double best = 0;
	struct totals t = { 0 };
	for (int i = 0; i < reps; i++) {
		double t0 = now();
		if (run(argv[optind], print && i == 0, symbolize, &t) < 0)
			return 1;
		double dt = now() - t0;
		if (i == 0 || dt < best)
			best = dt;
	}
	fprintf(stderr, "samples %" PRIu64 " unwound %" PRIu64 " truncated %" PRIu64
		" failed %" PRIu64 " frames %" PRIu64 " seconds %.4f rate %.0f\n",
		t.samples, t.unwound, t.truncated, t.failed, t.frames, best,
		best > 0 ? (double)t.unwound / best : 0.0);
	return 0;
}
