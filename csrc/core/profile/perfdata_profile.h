/*
 * perf.data -> profile: every record of a perf.data file into a stack table
 * in one pass, in C, the way reports and flame graphs want them:
 *
 *   - samples of DWARF events (perf record --call-graph dwarf) get their
 *     user stacks unwound (unwind.h), callers as call sites, as perf keeps
 *     DWARF chains; unwinding needs the maps before the samples, so that
 *     pass reads the file time-ordered even when it was opened unordered;
 *   - otherwise samples go in as they come (most without being decoded),
 *     each keyed by the name its thread had when it was taken (perf's
 *     rules: threads.h), so the pass reads the file time-ordered even when
 *     it was opened unordered; the records that shape address spaces feed
 *     a symbolizer as they come;
 *   - unless opts.no_thread_comms: samples keep no name, and from a file
 *     opened unordered the maps records are held and fed at the end of the
 *     pass (ties in file order), before any address is resolved, as a pass
 *     of their own would.
 *
 *   struct perfdata_profile_opts o = { .sym = sym };
 *   struct perfdata_profile_stats stats;
 *   if (perfdata__profile(pd, &o, st, &stats, err, sizeof err) < 0) ...
 *
 * Plain C, no Lua.  Implemented in perfdata_profile.c.
 */
#ifndef LUAPERF_PERFDATA_PROFILE_H
#define LUAPERF_PERFDATA_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include "unwind/unwind.h"

struct perfdata;
struct record_window;
struct stacktab;
struct symbolizer;

/* The root frame of an unwind that ran off the captured stack bytes
 * (mark_truncated): below mmap_min_addr, so never the address of code. */
#define PERFDATA_PROFILE_TRUNCATED_ADDR 1ULL

enum {
	PERFDATA_PROFILE_UNWIND_AUTO = 0,  /* unwind when an event is a DWARF one
					      (a pipe's events come in the stream:
					      always prepared for it) */
	PERFDATA_PROFILE_UNWIND_OFF = 1,   /* samples keep the kernel's callchain */
};

struct perfdata_profile_opts {
	/* Fed every maps record (MMAP, MMAP2, COMM, FORK, EXIT) in time order,
	 * so that the profile's addresses resolve with no second pass.  NULL:
	 * none is fed; DWARF unwinding then reads the maps from a symbolizer
	 * of the pass's own. */
	struct symbolizer *sym;
	int unwind;                 /* PERFDATA_PROFILE_UNWIND_* */
	int unwind_slow;            /* every step through libdwfl
				       (unwinder__set_fast 0), for comparisons */
	/* An unwind that ran off the captured stack ends (at its root) with
	 * PERFDATA_PROFILE_TRUNCATED_ADDR: the stack table has no flag for it,
	 * and a cut stack must not pass for a whole one. */
	int mark_truncated;
	/* Optional: called with each COMM record, in time order as the maps
	 * are fed (the last call for a tid is its newest name).  A negative
	 * return (-errno) ends the pass with it. */
	int (*comm)(void *arg, uint32_t pid, uint32_t tid, const char *comm);
	void *comm_arg;
	/* Samples keyed by no command name (no threads tracked), and a file
	 * opened unordered read in file order: the cheapest pass. */
	int no_thread_comms;
	/* Optional: called every 65,536 records with the bytes of data read
	 * and their total (a progress bar).  A negative return ends the pass. */
	int (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
	/* With a symbolizer and a table of max depth 1: a pass in time order
	 * keys each sample by the object its ip was in when it was taken
	 * (leaf_objects, stacktab__set_leaf_frame), not by its address:
	 * reports by dso, comm or pid then need no symbol.  Or, after the
	 * pass, each leaf becomes the symbol it resolves to in the maps of its
	 * samples' time (leaf_symbols, stacktab__fold_leaves): reports by
	 * symbol then resolve one place per symbol, not each address of each
	 * thread. */
	int leaf_objects, leaf_symbols;
	/* With leaf_symbols or leaf_objects, and thread names: stacks whose
	 * leaf became a symbol or an object are keyed by their command name,
	 * not their thread (leaves the pass left addresses become symbols):
	 * for reports with no pid or tid key or filter. */
	int merge_threads;
	/* With thread names: a hint for a report filtered by command name
	 * (threads__keep): the samples of threads whose name is final and
	 * none of keep_comms[0..nkeep_comms) are left out.  Borrowed. */
	const char *const *keep_comms;
	size_t nkeep_comms;
	/* Optional: perf's --time and -C; the samples it does not keep are
	 * left out of the pass, as perf report skips them (their threads and
	 * maps still count).  Borrowed. */
	const struct record_window *window;
};

struct perfdata_profile_stats {
	uint64_t records;           /* read from the file */
	uint64_t skipped;           /* that did not decode: skipped, as perf does */
	int unwinding;              /* the pass unwound DWARF samples */
	struct unwind_stats unwind; /* its counts (zero without unwinding) */
};

/*
 * Adds every record of pd, from its first, to st (stacktab__add_record's
 * rules).  pd is left rewound to its first record in its own order when the
 * pass had to read it in another.  stats (optional) gets the pass's counts.
 * Returns 0, or -errno with a message in err: -EINVAL for a malformed file
 * (perfdata__errmsg), -ENOMEM, or what opts->comm returned.
 */
int perfdata__profile(struct perfdata *pd, const struct perfdata_profile_opts *opts,
		      struct stacktab *st, struct perfdata_profile_stats *stats,
		      char *err, size_t errlen);

/*
 * Readies sym for pd's addresses: offline (pd's pids are not this
 * machine's to read in /proc) and told the build ids pd recorded for user
 * objects, which decide the ELF files that may name their addresses
 * (perfdata__profile does it for its symbolizer).  0 or -ENOMEM.
 */
int perfdata__prime_symbolizer(struct perfdata *pd, struct symbolizer *sym);

#endif
