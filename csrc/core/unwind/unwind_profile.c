/*
 * Profiles of DWARF samples: the hook between the record stream and a
 * stack table (see unwind.h, unwind__add_record).  Maps records feed the
 * symbolizer the unwinder reads them from; a sample with user registers and
 * stack goes into the table with its unwound chain in place of the kernel's
 * callchain, so the table counts it (period, event, pid) as any sample.
 */
#include "unwind/unwind.h"

#include <errno.h>
#include <stdlib.h>

#include "record/record.h"
#include "profile/stacktab.h"
#include "symbol/symbolizer.h"

#define MAX_CHAIN 1024

int unwind__wants(const struct perf_event_attr *attr)
{
	uint64_t need = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

	return attr && (attr->sample_type & need) == need && attr->sample_regs_user != 0;
}

void unwind__call_sites(uint64_t *chain, size_t n)
{
	size_t i;
	int user = 0, first = 0;

	for (i = 0; i < n; i++) {
		if (chain[i] >= PERF_CONTEXT_MAX) {
			user = chain[i] == PERF_CONTEXT_USER;
			first = user;
			continue;
		}
		if (user && !first && chain[i] > 0)
			chain[i]--;
		first = 0;
	}
}

int unwind__feed(struct unwinder *u, struct symbolizer *sym, const struct record *r)
{
	int rc = symbolizer__feed(sym, r);

	if (rc < 0)
		return rc;
	/* A new image or a gone process: its session is of no more use. */
	if ((r->type == PERF_RECORD_COMM && (r->misc & PERF_RECORD_MISC_COMM_EXEC)) ||
	    (r->type == PERF_RECORD_EXIT && r->u.task.pid == r->u.task.tid))
		unwinder__forget(u, r->type == PERF_RECORD_COMM ? r->u.comm.pid : r->u.task.pid);
	return 0;
}

/* The attr of r when r is a sample with what unwinding needs, else NULL. */
static const struct perf_event_attr *unwindable(const struct record *r, const struct evtab *t)
{
	const struct perf_event_attr *attr;

	if (r->type != PERF_RECORD_SAMPLE || !t || r->evidx < 0)
		return NULL;
	attr = evtab__attr(t, r->evidx);
	if (!unwind__wants(attr) || !(r->s.type & PERF_SAMPLE_REGS_USER) ||
	    !(r->s.type & PERF_SAMPLE_STACK_USER))
		return NULL;
	return attr;
}

int unwind__chain(struct unwinder *u, struct symbolizer *sym, const struct record *r,
		  const struct evtab *t, uint64_t *chain, size_t max, unsigned *status)
{
	const struct perf_event_attr *attr = unwindable(r, t);
	int n;

	if (status)
		*status = 0;
	if (!attr)
		return 0;
	n = unwind__sample(u, sym, attr, &r->s, chain, max, status);
	if (n <= 0)
		return 0;
	unwind__call_sites(chain, (size_t)n);
	return n;
}

int unwind__add_record(struct unwinder *u, struct symbolizer *sym, struct stacktab *st,
		       const struct record *r, const struct evtab *t, unsigned *status)
{
	uint64_t *chain;
	struct record copy;
	int n, rc;

	if (status)
		*status = 0;
	if (r->type != PERF_RECORD_SAMPLE) {
		rc = unwind__feed(u, sym, r);
		return rc < 0 ? rc : stacktab__add_record(st, r, t);
	}
	if (!unwindable(r, t))
		return stacktab__add_record(st, r, t);
	/* Off the C stack: 8 KiB is too much for callers deep in Lua. */
	chain = malloc(MAX_CHAIN * sizeof *chain);
	if (!chain)
		return -ENOMEM;
	n = unwind__chain(u, sym, r, t, chain, MAX_CHAIN, status);
	if (n <= 0) {
		free(chain);
		return stacktab__add_record(st, r, t);
	}
	copy = *r;
	copy.s.type |= PERF_SAMPLE_CALLCHAIN;
	copy.s.callchain = chain;
	copy.s.nr_callchain = (uint64_t)n;
	rc = stacktab__add_record(st, &copy, t);
	free(chain);
	return rc;
}
