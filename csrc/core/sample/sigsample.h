/*
 * Signal-driven sampling of the calling thread: one perf event (the group
 * leader, with optional counters as members) whose overflows are delivered
 * as a signal to the thread that opened it, in one of two ways:
 *
 * - SIGTRAP from the event itself (attr.sigtrap, Linux 5.18+ semantics:
 *   queued, never forced, when blocked).  Since Linux 6.11 the kernel sends
 *   it from task work on the way back to user space, so a sample costs no
 *   irq_work self-IPI; on this project's VM that is ~10 us less per sample
 *   than the real-time signal (bench/luaprofile_sigcost.c).  SIGTRAPs that
 *   are not TRAP_PERF go on to the disposition that was there before.
 * - A real-time signal through fasync (O_ASYNC, F_SETSIG, F_SETOWN_EX with
 *   F_OWNER_TID): the highest real-time signal nobody handles.  The event
 *   runs on a budget of overflows (PERF_EVENT_IOC_REFRESH); the kernel
 *   disables it when the budget is spent and the handler re-arms it, so an
 *   event whose signals are no longer handled stops by itself.
 *
 * SIGPROF is never used (jit.p and gperftools own it).  A signal is taken
 * when the first sampler using it starts and given back, with its previous
 * disposition, when the last one closes.
 *
 * The handlers are async-signal-safe: they bump the pending count (and
 * re-arm a spent budget) and call the owner's notify callback (which must
 * itself be async-signal-safe).  Everything else (reading counters,
 * draining the ring the owner maps over sigsample__fd) happens later, at a
 * safe point chosen by the owner.
 *
 * Plain C, no Lua; -errno returns; all-or-nothing opens.
 */
#ifndef LUAPERF_SIGSAMPLE_H
#define LUAPERF_SIGSAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#define SIGSAMPLE_MAX_COUNTERS 8
#define SIGSAMPLE_MAX_OPEN 64      /* samplers open at once, process-wide */

struct sigsample;

enum sigsample_signal {
	SIGSAMPLE_SIGNAL_AUTO,        /* SIGTRAP where the kernel queues it, else real-time */
	SIGSAMPLE_SIGNAL_TRAP,        /* SIGTRAP only: -EOPNOTSUPP on older kernels */
	SIGSAMPLE_SIGNAL_REALTIME,    /* a real-time signal through fasync */
};

struct sigsample_opts {
	/* The sampling event: type, config, sample_period or (freq +
	 * sample_freq), exclude_* bits.  read_format, disabled, watermark and
	 * the signal plumbing are set here; sample_type is used as given
	 * (add PERF_SAMPLE_READ to get counter values in the records). */
	struct perf_event_attr attr;
	/* Counters read with the leader (group members), 0..MAX_COUNTERS. */
	struct perf_event_attr counters[SIGSAMPLE_MAX_COUNTERS];
	unsigned nr_counters;
	enum sigsample_signal signal;
	/* With a fixed attr.sample_period: after each overflow the handler
	 * draws the next period uniformly from [period/2, 3*period/2) (the
	 * mean stays the period; one PERF_EVENT_IOC_PERIOD, ~5 us here).  A
	 * program looping at the sampler's own period would otherwise lock
	 * in phase with it and show one part of its loop only. */
	int jitter;
	/* Called from the signal handler after each overflow. */
	void (*notify)(void *arg);
	void *arg;
};

/* Opens the events for the calling thread, disabled.  Returns 0 or -errno
 * (*failed, when not NULL, gets the index of the event that failed: 0 for
 * the leader, 1.. for the counters; -1 with -EMFILE when
 * SIGSAMPLE_MAX_OPEN samplers are already open). */
int sigsample__open(const struct sigsample_opts *opts, struct sigsample **out,
		    int *failed);
/* Stops, unregisters, closes every fd; NULL is fine.  When it was the last
 * sampler, the signal's previous disposition is restored, and signals still
 * queued for blocked threads are discarded first; except after a SIGTRAP
 * sampler closed from another thread than the sampled one, whose last
 * signal the kernel may still send: then the handler stays installed
 * (dropping it, forwarding foreign SIGTRAPs) and the module stays mapped.
 * Safe from any thread: returns once no handler uses the sampler. */
void sigsample__close(struct sigsample *s);

/* Installs the handler (first sampler) and arms the event.  0 or -errno. */
int sigsample__start(struct sigsample *s);
/* Disarms the event; signals already queued are still counted, but notify
 * is no longer called, and no call of it is running (on any thread) when
 * this returns: the owner may then tear down what notify uses. */
int sigsample__stop(struct sigsample *s);

/* Takes (and zeroes) the number of overflows signalled since the last take. */
uint64_t sigsample__take(struct sigsample *s);
/* Overflows signalled in total since open. */
uint64_t sigsample__signals(const struct sigsample *s);

/*
 * Reads the group: vals[0] the leader, vals[1..nr_counters] the counters,
 * raw counts, not scaled (enabled and running, when not NULL, get the
 * times that tell whether multiplexing happened).  Returns 0 or -errno.
 */
int sigsample__read(struct sigsample *s, uint64_t *vals, size_t n,
		    uint64_t *enabled, uint64_t *running);

int sigsample__fd(const struct sigsample *s);
/* The attr the leader was opened with (sample_type, read_format, ...). */
const struct perf_event_attr *sigsample__attr(const struct sigsample *s);
/* The signal this sampler's overflows arrive as. */
int sigsample__signo(const struct sigsample *s);
/* The thread the signal is delivered to. */
int sigsample__tid(const struct sigsample *s);

#endif
