/*
 * Sampling sessions: a set of sampling events over a target (this process,
 * a pid, tids, a command, CPUs, a cgroup), their rings (one per CPU, or per
 * thread when not inheriting; events share it via PERF_EVENT_IOC_SET_OUTPUT),
 * draining in C and counting what was lost.  Plain C, no Lua.
 *
 *   struct session_opts o = { .events = specs, .nr_events = 1, .freq = 999 };
 *   session__open(&o, &s, err, sizeof err);
 *   session__start(s);                 enable (or release the command)
 *   session__poll(s, 100, &done);      wait on all rings
 *   session__drain(s, fn, arg);        decoded records, as the kernel wrote them
 *   session__close(s);
 *
 * Every event gets PERF_SAMPLE_IDENTIFIER and sample_id_all, so each record
 * maps to its event through session__evtab.  Task, comm, mmap2 (and
 * context switch when asked) tracking is on the first event.  Off-CPU
 * sessions add the context-switches event last, named "offcpu-time", and
 * drain through offcpu.h's filter; the evtab (what a perf.data declares)
 * gives it the attr perf's --off-cpu writes: software, bpf-output.
 */
#ifndef LUAPERF_SESSION_H
#define LUAPERF_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "record/record.h"

enum session_callchain {
	SESSION_CALLCHAIN_NONE,
	SESSION_CALLCHAIN_FP,
	SESSION_CALLCHAIN_DWARF,       /* regs + user stack copy; unwound elsewhere */
	SESSION_CALLCHAIN_LBR,
};

struct session_opts {
	const char *const *events;     /* event specs (evspec grammar) or groups
					  ("{a,b}", "{a,b}:S": the leader's samples read
					  the members, PERF_SAMPLE_READ); >= 1 */
	int nr_events;
	uint64_t period;               /* fixed period, or */
	uint64_t freq;                 /* frequency (Hz); neither: perf's 4000 Hz */
	uint64_t sample_type;          /* PERF_SAMPLE_* bits beyond the defaults */
	int read_group;                /* events[1..] count in a group with events[0],
					  read on each of its samples (PERF_SAMPLE_READ) */
	int callchain;                 /* enum session_callchain */
	uint32_t stack_size;           /* dwarf: user stack bytes (default 8192) */
	uint16_t max_stack;            /* 0: the kernel's limit */
	pid_t pid;                     /* 0: this process; -1: every process (per CPU) */
	const pid_t *tids;             /* instead of pid: these threads */
	int nr_tids;
	const int *cpus;               /* NULL: all online CPUs where a CPU is needed */
	int nr_cpus;
	char *const *argv;             /* a command to run (pid is then the child) */
	const char *cgroup;            /* a cgroup path (under /sys/fs/cgroup) or NULL */
	int inherit;                   /* follow children (forces per-CPU rings) */
	size_t pages;                  /* data pages per ring (power of two); 0: perf's default */
	uint32_t wakeup_events;        /* wake the poller every N samples, or */
	uint32_t watermark;            /* when this many bytes are ready */
	int context_switch;
	int overwrite;                 /* backward rings, read by session__snapshot */
	uint64_t branch_sample_type;   /* for PERF_SAMPLE_BRANCH_STACK (lbr sets it) */
	uint64_t sample_regs_user, sample_regs_intr;
	int exclude_kernel;            /* force :u on every event (off-CPU: its chains) */
	/* Off-CPU samples (offcpu.h): one more event, "offcpu-time", whose
	 * samples weigh the time their thread was blocked (ns); events may
	 * then be empty (nr_events 0). */
	int offcpu;
	uint64_t offcpu_thresh_ns;     /* shorter waits are dropped */
	/* Sample times from this clock (CLOCK_MONOTONIC, ...; perf record -k),
	 * one for every CPU, so times of a thread that moved compare; 0: perf's
	 * own clock. */
	int use_clockid, clockid;
};

struct session;

/* Opens all events and maps the rings.  All or nothing: on failure returns
 * -errno with an explanation in err (errmsg__open's text for open errors). */
int session__open(const struct session_opts *o, struct session **out,
		  char *err, size_t errlen);
void session__close(struct session *s);

int session__start(struct session *s);   /* enables; releases the command */
int session__stop(struct session *s);    /* disables */

/*
 * Waits up to timeout_ms (-1: forever) for data on any ring, retrying on
 * EINTR.  Returns how many rings have data (0 on timeout) or -errno.
 * *done (may be NULL) is set when the target is gone (the command exited,
 * or every event reported POLLHUP).
 */
int session__poll(struct session *s, int timeout_ms, int *done);

/*
 * Raw records exactly as the kernel wrote them (for perf.data writers),
 * every ring in turn.  fn's return follows ring__drain's contract; a
 * negative one is a -errno the drain returns (the record stays for the
 * next drain).  Counts what it passes into the stats.  A ring holding a
 * record of a bad size drops the data after it and counts an error
 * (stats.errors, session__last_error); the drain goes on.  Returns records
 * passed or -errno.
 */
typedef int (*session_raw_fn)(void *arg, const struct perf_event_header *rec);
int session__drain_raw(struct session *s, session_raw_fn fn, void *arg);

/*
 * Decoded records; a record that does not decode is counted
 * (stats.errors, session__last_error) and skipped.  fn returns as for
 * session__drain_raw.
 */
typedef int (*session_rec_fn)(void *arg, const struct record *r);
int session__drain(struct session *s, session_rec_fn fn, void *arg);

/* Overwrite sessions: the newest records of every ring, oldest first per ring. */
int session__snapshot(struct session *s, session_rec_fn fn, void *arg);

struct session_stats {
	uint64_t records, samples, bytes, wakeups;
	uint64_t lost;          /* LOST.lost + LOST_SAMPLES.lost */
	uint64_t lost_records;  /* LOST and LOST_SAMPLES records */
	uint64_t throttled, unthrottled;
	uint64_t errors;        /* records skipped: not decoded, or of a bad size */
	/* off-CPU sessions (offcpu.h's counts) */
	uint64_t offcpu_switch_outs, offcpu_samples, offcpu_ns;
	uint64_t offcpu_preempted, offcpu_short, offcpu_unmatched;
};
void session__stats(const struct session *s, struct session_stats *st);
const char *session__last_error(const struct session *s);

/* The events: attrs as opened, names as given, and each fd's sample id. */
const struct evtab *session__evtab(const struct session *s);
/* The ids of event idx (one per fd); returns the count. */
size_t session__ids(const struct session *s, int idx, const uint64_t **ids);
/* The command's pid, or -1. */
pid_t session__workload_pid(const struct session *s);
/* Waits for the command (blocking); *status as from waitpid. */
int session__workload_wait(struct session *s, int *status);
/* The CPUs the rings are on (-1 entries for per-thread rings). */
int session__nr_rings(const struct session *s);

#endif
