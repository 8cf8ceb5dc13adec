/*
 * The core's pipelines from C, without Lua (spec/pipeline_spec.lua):
 *
 *   pipeline profile FILE [unordered] [nounwind]
 *       perfdata__profile over FILE with a symbolizer and a comm callback;
 *       prints "records= skipped= samples= period= stacks= lost= unwound=
 *       truncated= comms=", then each stack "pid tid count leaf-symbol".
 *   pipeline record OUT -- CMD ARGS...
 *       session -> perf.data: cpu-clock with frame-pointer call chains over
 *       CMD, session__record into OUT, then OUT back through
 *       perfdata__profile; prints "recorded=... done=... samples=...".
 *
 * Exits 1 with a message on failure.  Links against the core objects.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata/perfdata.h"
#include "perfdata/perfdata_record.h"
#include "profile/perfdata_profile.h"
#include "profile/stacktab.h"
#include "sample/session.h"
#include "symbol/symbolizer.h"

static int count_comm(void *arg, uint32_t pid, uint32_t tid, const char *comm)
{
	(void)pid;
	(void)tid;
	(void)comm;
	++*(unsigned long *)arg;
	return 0;
}

static int profile(const char *path, int unordered, int unwind, int list)
{
	struct perfdata_opts po = { .unordered = unordered };
	struct perfdata_profile_opts o = { .unwind = unwind ? PERFDATA_PROFILE_UNWIND_AUTO
					   : PERFDATA_PROFILE_UNWIND_OFF };
	struct perfdata_profile_stats stats;
	struct stacktab_meta m;
	struct perfdata *pd;
	struct stacktab *st;
	unsigned long comms = 0;
	char err[512];
	size_t i;

	if (perfdata__open(path, &po, &pd, err, sizeof err) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	st = stacktab__new();
	o.sym = symbolizer__new();
	o.comm = count_comm;
	o.comm_arg = &comms;
	if (!st || !o.sym) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	if (perfdata__profile(pd, &o, st, &stats, err, sizeof err) < 0) {
		fprintf(stderr, "perfdata__profile: %s\n", err);
		return 1;
	}
	stacktab__meta(st, &m);
	printf("records=%" PRIu64 " skipped=%" PRIu64 " samples=%" PRIu64 " period=%" PRIu64
	       " stacks=%zu lost=%" PRIu64 " unwound=%" PRIu64 " truncated=%" PRIu64
	       " comms=%lu\n", stats.records, stats.skipped, m.samples, m.period,
	       stacktab__count(st), m.lost, stats.unwind.samples, stats.unwind.truncated, comms);
	for (i = 0; list && i < stacktab__count(st); i++) {
		struct stacktab_entry e;
		struct sym_result r;
		const char *name = "?";

		stacktab__get(st, i, &e);
		if (e.nr && symbolizer__resolve(o.sym, (uint32_t)e.pid, e.addrs[0], 0, &r) == 0 && r.name)
			name = r.name;
		printf("%d %d %" PRIu64 " %s\n", (int)e.pid, (int)e.tid, e.count, name);
	}
	stacktab__delete(st);
	symbolizer__delete(o.sym);
	perfdata__close(pd);
	return 0;
}

static volatile sig_atomic_t stop;

static int record(const char *out, char *const *argv)
{
	static const char *const events[] = { "cpu-clock" };
	struct session_opts so = { .events = events, .nr_events = 1, .freq = 999,
				   .callchain = SESSION_CALLCHAIN_FP, .argv = argv };
	struct session_record_opts ro = { .stop = &stop };
	struct session_record_summary sum;
	struct perfdata_writer *w;
	struct session *s;
	char err[512];
	int e;

	if (session__open(&so, &s, err, sizeof err) < 0) {
		fprintf(stderr, "session__open: %s\n", err);
		return 1;
	}
	if ((e = perfdata_writer__open(out, &w)) < 0 ||
	    (e = perfdata_writer__add_session(w, s)) < 0 ||
	    (e = perfdata_writer__synthesize_kernel(w)) < 0 ||
	    (e = session__start(s)) < 0 ||
	    (e = session__record(s, w, &ro, &sum)) < 0) {
		fprintf(stderr, "recording: %s\n", strerror(-e));
		return 1;
	}
	printf("recorded=%" PRIu64 " done=%d stopped=%d written=%" PRIu64 "\n", sum.records,
	       sum.done, sum.stopped, perfdata_writer__stats(w)->samples);
	if ((e = perfdata_writer__close(w)) < 0) {
		fprintf(stderr, "close: %s\n", strerror(-e));
		return 1;
	}
	session__close(s);
	return profile(out, 0, 1, 0);
}

int main(int argc, char **argv)
{
	int i, unordered = 0, unwind = 1;

	if (argc >= 3 && !strcmp(argv[1], "profile")) {
		for (i = 3; i < argc; i++) {
			unordered |= !strcmp(argv[i], "unordered");
			unwind &= strcmp(argv[i], "nounwind") != 0;
		}
		return profile(argv[2], unordered, unwind, 1);
	}
	if (argc >= 5 && !strcmp(argv[1], "record") && !strcmp(argv[3], "--"))
		return record(argv[2], argv + 4);
	fprintf(stderr, "usage: pipeline profile FILE [unordered] [nounwind] | "
		"pipeline record OUT -- CMD ...\n");
	return 2;
}
