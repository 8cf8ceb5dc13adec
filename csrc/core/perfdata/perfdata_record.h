/*
 * Recording: a live session's rings into a perf.data being written, in C
 * (no callback per record), as `perf record` does:
 *
 *   perfdata_writer__add_session(w, s);      the events and their ids
 *   perfdata_writer__synthesize(w, pid);     what exists already
 *   session__start(s);
 *   session__record(s, w, &o, &sum);        until the target is gone, *o.stop,
 *                                            or the duration
 *   perfdata_writer__close(w);
 *
 * The core installs no signal handler: the host decides what ends a
 * recording (luaperf: SIGINT and SIGTERM set the stop flag, so the file
 * gets finished).  Plain C, no Lua.  Implemented in perfdata_record.c.
 */
#ifndef LUAPERF_PERFDATA_RECORD_H
#define LUAPERF_PERFDATA_RECORD_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

struct perfdata_writer;
struct session;

/*
 * Declares every event of s with the sample ids of its fds.  Returns 0,
 * -EBUSY (a record was written already) or -errno.
 */
int perfdata_writer__add_session(struct perfdata_writer *w, const struct session *s);

/*
 * One pass over every ring of s into w, closed by FINISHED_ROUND when it
 * wrote anything.  *n (optional) grows by the records written.  Returns 0
 * or -errno (a write error, or the drain's).
 */
int session__write(struct session *s, struct perfdata_writer *w, uint64_t *n);

struct session_record_opts {
	uint64_t duration_ms;          /* 0: no limit */
	pid_t watch_pid;               /* > 0: done once this task is gone
					  (exited: a zombie counts as gone) */
	int overwrite;                 /* backward rings (session_opts.overwrite):
					  only wait, then write the newest records
					  of every ring once */
	volatile sig_atomic_t *stop;   /* optional: nonzero ends the recording
					  (set by the host's signal handler) */
};

struct session_record_summary {
	uint64_t records;              /* written by the drains */
	int done;                      /* the target is gone */
	int stopped;                   /* *stop ended it */
};

/*
 * The recording loop: polls (100 ms), drains every ring into w, until the
 * target is gone (the command exited, every event hung up, or watch_pid is
 * gone), *stop, or duration_ms; then disables the events and writes what
 * is left (overwrite: the snapshot).  The writer's counters
 * (perfdata_writer__stats) say what the file holds.  sum is optional.
 * Returns 0 or -errno; w is left open either way.
 */
int session__record(struct session *s, struct perfdata_writer *w,
		    const struct session_record_opts *o, struct session_record_summary *sum);

#endif
