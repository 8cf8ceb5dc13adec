/*
 * Off-CPU samples from perf_events alone (no BPF): a session samples the
 * context-switches software event at period 1 with call chains (one
 * sample at each switch-out of its threads, taken in the switched-out
 * task's context) and records the switches (attr.context_switch).  This
 * filter, between the rings and whoever drains them, holds each such
 * sample until its thread's switch-in, then passes it on as a sample of
 * the event perf's `record --off-cpu` writes, "offcpu-time", whose period
 * is the time the thread was off the CPU (ns) and whose time is the
 * switch-in.  As perf's BPF program, it keeps blocked threads only: a
 * switch-out the SWITCH record marks as a preemption (the thread stayed
 * runnable) is dropped, and so are waits shorter than a threshold.
 *
 * Records arrive ring by ring, so a thread's switch-in (on the CPU it
 * wakes on) may be drained before its switch-out (on the CPU it slept
 * on), and a later wait before an earlier one: switch-outs and switch-ins
 * are kept per thread and paired in time order up to a watermark, as perf
 * orders records by rounds: after a pass over every ring, every record of
 * a time up to the latest time fed before that pass has been fed.
 * Plain C, no Lua; -errno returns.  Implemented in offcpu.c.
 */
#ifndef LUAPERF_OFFCPU_H
#define LUAPERF_OFFCPU_H

#include <stdint.h>
#include <linux/perf_event.h>

struct evtab;
struct offcpu;

#define OFFCPU_EVENT_NAME "offcpu-time"

struct offcpu_opts {
	int evidx;               /* the context-switches event in the evtab */
	uint64_t thresh_ns;      /* waits shorter than this are dropped */
	int keep_switches;       /* pass SWITCH records on (else swallowed) */
};

struct offcpu_stats {
	uint64_t switch_outs;    /* switch-out samples seen */
	uint64_t samples;        /* off-CPU samples passed on */
	uint64_t ns;             /* their summed periods */
	uint64_t preempted;      /* switch-outs of runnable threads, dropped */
	uint64_t short_waits;    /* waits under the threshold, dropped */
	uint64_t unmatched;      /* switch-outs replaced before their switch-in */
};

int offcpu__new(const struct offcpu_opts *o, struct offcpu **out);
void offcpu__delete(struct offcpu *oc);

/*
 * Feeds one record as the kernel wrote it.  Records other than the
 * context-switches samples and (unless kept) SWITCH records go to emit
 * unchanged; returns what emit returned (ring__drain's contract), or 0.
 */
typedef int (*offcpu_emit_fn)(void *arg, const struct perf_event_header *rec);
int offcpu__feed(struct offcpu *oc, const struct evtab *t, const struct perf_event_header *h,
		 offcpu_emit_fn emit, void *arg);

/* The latest record time fed (the watermark of the next full pass). */
uint64_t offcpu__seen(const struct offcpu *oc);

/*
 * Emits the off-CPU samples whose switch-in is at or below watermark
 * (UINT64_MAX once the events are off and drained: all).  Stops when emit
 * returns nonzero and returns that (a sample emit refused stays held);
 * the next call goes on.  0 when all were emitted.
 */
int offcpu__flush(struct offcpu *oc, uint64_t watermark, offcpu_emit_fn emit, void *arg);

void offcpu__stats(const struct offcpu *oc, struct offcpu_stats *st);

#endif
