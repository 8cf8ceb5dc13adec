/*
 * Fuzz target: the perf.data reader over bytes, every record decoded (from
 * memory, and from a file, whose records are read through windows); then
 * the perf.data -> profile pipeline (perfdata__profile) over the same
 * bytes, in both orders: time-ordered (maps fed as they come, DWARF samples
 * unwound) and file order with the maps records held and fed at the end;
 * and the reports over each profile (profview, pvreport, pvtext, pvfolded),
 * with children and call graphs; and the header's text
 * (perfdata__header_text).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include "perfdata/perfdata.h"
#include "profile/perfdata_profile.h"
#include "profile/profview.h"
#include "profile/pvfolded.h"
#include "profile/pvreport.h"
#include "profile/pvtext.h"
#include "profile/stacktab.h"
#include <stdlib.h>
#include "record/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every record of pd decoded (at most 100,000), then pd closed. */
static void decode_all(struct perfdata *pd)
{
	struct perfdata_rec r;
	char err[512];
	int n = 0;

	while (n++ < 100000 && perfdata__next(pd, &r) > 0) {
		struct record rec;
		record__decode(perfdata__evtab(pd), r.hdr, r.size, &rec, err, sizeof err);
	}
	perfdata__close(pd);
}

static void read_all(const uint8_t *data, size_t size, size_t max_queue)
{
	struct perfdata_opts opts = { .max_queue = max_queue };
	struct perfdata *pd;
	char err[512];

	if (perfdata__read_buffer(data, size, &opts, &pd, err, sizeof err) == 0) {
		/* the header's text too (its feature sections' printers) */
		char *text;
		size_t len;
		if (perfdata__header_text(pd, 0, &text, &len) == 0)
			free(text);
		decode_all(pd);
	}
}

/* The same from a file (a memfd, written anew each time), both orders. */
static void read_file(const uint8_t *data, size_t size, size_t max_queue, int unordered)
{
	static int fd = -1;
	struct perfdata_opts opts = { .max_queue = max_queue, .unordered = unordered };
	struct perfdata *pd;
	char err[512], path[64];

	if (fd < 0 && (fd = memfd_create("fuzz_perfdata", 0)) < 0)
		return;
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		return;
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	if (perfdata__open(path, &opts, &pd, err, sizeof err) == 0)
		decode_all(pd);
}

static int count_comm(void *arg, uint32_t pid, uint32_t tid, const char *comm)
{
	(void)pid;
	(void)tid;
	(void)comm;
	++*(unsigned *)arg;
	return 0;
}

/* Every report of the profile's view: rows, the --stdio text with call
 * graphs, folded stacks. */
static void reports(struct stacktab *st)
{
	struct profview_opts vo = { 0 };
	struct pvreport_opts ro = { .keys = { PVR_COMM, PVR_DSO, PVR_SYM }, .nkeys = 3 };
	struct pvtext_opts to = { .cols = { PVT_CHILDREN, PVT_SELF, PVT_COMM, PVT_DSO, PVT_SYM },
				  .ncols = 5, .base = 1, .children = 1, .graph = 1,
				  .graph_opts = &ro, .graph_total = 1, .graph_pct = 0.5 };
	struct pvfolded_opts fo = { .annotate = 1, .with_comm = 1 };
	struct profview *pv;
	struct pvreport *r;
	char *text;
	size_t len;
	int children;

	if (profview__new(st, &vo, &pv) < 0)
		return;
	for (children = 0; children < 2; children++) {
		ro.children = children;
		if (pvreport__new(pv, &ro, &r) < 0)
			continue;
		to.base = to.graph_total = (double)pvreport__total(r) + 1;
		if (pvreport__text(pv, r, &to, &text, &len) == 0)
			free(text);
		pvreport__delete(r);
	}
	if (profview__folded(pv, &fo, &text, &len) == 0)
		free(text);
	profview__delete(pv);
}

static void profile(const uint8_t *data, size_t size, int unordered)
{
	struct perfdata_opts opts = { .unordered = unordered, .max_queue = 1 << 20 };
	struct perfdata_profile_opts po = { .comm = count_comm, .mark_truncated = 1 };
	struct perfdata_profile_stats stats;
	struct perfdata *pd;
	struct stacktab *st;
	unsigned comms = 0;
	char err[512];

	/* file order: the holding path (the unwinding one reads time-ordered) */
	po.unwind = unordered ? PERFDATA_PROFILE_UNWIND_OFF : PERFDATA_PROFILE_UNWIND_AUTO;
	po.comm_arg = &comms;
	if (perfdata__read_buffer(data, size, &opts, &pd, err, sizeof err) != 0)
		return;
	if ((st = stacktab__new()) != NULL) {
		/* file order: leaves alone, as a report without children reads */
		stacktab__set_max_depth(st, unordered ? 1 : 0);
		perfdata__profile(pd, &po, st, &stats, err, sizeof err);
		reports(st);
		stacktab__delete(st);
	}
	perfdata__close(pd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	read_all(data, size, 1 << 20);
	/* A tiny ordering queue: forced flushes and late records. */
	read_all(data, size, 64);
	read_file(data, size, 64, 0);
	read_file(data, size, 1 << 20, 1);
	profile(data, size, 0);
	profile(data, size, 1);
	return 0;
}
