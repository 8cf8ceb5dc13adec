/*
 * Counting: one event or a group of events, on one pid/CPU, on every
 * online CPU (summed, as perf stat -a), or on a list of tasks times a list
 * of CPUs (perf stat -C, --per-thread), read summed or one fd set at a
 * time (perf stat -A).  Plain C, no Lua.
 *
 * A counter always reads TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID (plus
 * GROUP for a group), so values can be scaled for multiplexing.  Opens are
 * all-or-nothing: on failure every fd opened so far is closed and the
 * failing event index and CPU are reported for the error message.
 */
#ifndef LUAPERF_COUNTER_H
#define LUAPERF_COUNTER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

/* cpu argument: one fd per online CPU, summed on read. */
#define COUNTER_CPU_ALL (-2)

struct counter;

struct counter_value {
	uint64_t value;    /* raw scaled by enabled/running; 0 when not counted */
	uint64_t raw;      /* the kernel's count */
	uint64_t enabled;  /* ns the event was enabled (summed over CPUs) */
	uint64_t running;  /* ns it was on the PMU; 0 = never scheduled */
	uint64_t id;       /* kernel event id (of the first CPU's fd) */
};

struct counter_failure {
	size_t index;  /* which event (0 = the leader) */
	int cpu;       /* the CPU it was opened on (-1 = any) */
	pid_t pid;     /* the task it was opened on (-1 = all) */
};

/* Bounds of counter__open_on's lists (more than any machine has). */
#define COUNTER_MAX_CPUS 4096
#define COUNTER_MAX_PIDS 65536

/*
 * Opens n events on pid/cpu (pid: 0 self, >0 a task, -1 with a cpu = all
 * tasks; cpu: -1 any, >= 0 one, COUNTER_CPU_ALL every online one).
 * as_group != 0: attrs[0] leads, the rest are members read with one
 * syscall; as_group == 0 needs n == 1.  read_format is set here; the
 * attrs' other fields are used as given (inherit, exclude_*, ...), except
 * the enable state, which follows perf: attrs[0] says it for the whole
 * set.  Every fd opens disabled (a group's members enabled, following
 * their leader), enable_on_exec on leaders only; when attrs[0] is neither
 * disabled nor enable_on_exec, every fd set is enabled (a group through
 * its leader, PERF_IOC_FLAG_GROUP) once all of them are open.
 * Returns 0 or -errno (fail, when not NULL, says which open failed).
 */
int counter__open(const struct perf_event_attr *attrs, size_t n, int as_group,
		  pid_t pid, int cpu, struct counter **out,
		  struct counter_failure *fail);

/*
 * The general form: every event on every (cpu, pid) pair, CPU-major: fd set
 * s = cpu_idx * npids + pid_idx.  cpus NULL means every online CPU; each
 * listed CPU is >= -1 (-1 = any), each pid >= -1.  A group has one leader
 * per fd set.  All-or-nothing as counter__open.
 */
int counter__open_on(const struct perf_event_attr *attrs, size_t n, int as_group,
		     const pid_t *pids, size_t npids, const int *cpus, size_t ncpus,
		     struct counter **out, struct counter_failure *fail);

/* Closes every fd and frees c; NULL is fine. */
void counter__close(struct counter *c);

size_t counter__nr_events(const struct counter *c);
int counter__is_group(const struct counter *c);
/* Number of CPUs the events are opened on (1 unless COUNTER_CPU_ALL or a list). */
size_t counter__nr_cpus(const struct counter *c);
/* Number of tasks they are opened on (1 unless a list of pids). */
size_t counter__nr_pids(const struct counter *c);
/* Number of fd sets: nr_cpus * nr_pids. */
size_t counter__nr_sets(const struct counter *c);
/* fd of event ev in fd set s (both 0-based), or -1 out of range; with one
 * pid, s is the CPU index. */
int counter__fd(const struct counter *c, size_t ev, size_t s);
/* The CPU number of the i-th CPU (-1 when opened with cpu -1). */
int counter__cpu(const struct counter *c, size_t cpu_idx);
/* The pid of the i-th task. */
pid_t counter__pid(const struct counter *c, size_t pid_idx);
uint64_t counter__id(const struct counter *c, size_t ev);

/* ioctls on every fd (a group through its leaders, PERF_IOC_FLAG_GROUP). */
int counter__enable(struct counter *c);
int counter__disable(struct counter *c);
int counter__reset(struct counter *c);

/*
 * Reads every event into vals[0..nr_events-1]: one read(2) per CPU (a
 * group's members come with its leader), no allocation.
 */
int counter__read(struct counter *c, struct counter_value *vals);

/*
 * Reads fd set s alone into vals[0..nr_events-1], scaled by its own
 * enabled/running: one read(2), no allocation.  -EINVAL when s is out of
 * range.
 */
int counter__read_set(struct counter *c, size_t s, struct counter_value *vals);

/*
 * Tids of a process from /proc/PID/task, ascending (perf's thread map
 * order); returns how many there are (may exceed max: then only max were
 * stored and the caller retries bigger) or -errno (-ESRCH: no such process).
 */
int counter__threads(pid_t pid, pid_t *tids, size_t max);

/* Scales raw by enabled/running without overflow; 0 when running == 0. */
uint64_t counter__scale(uint64_t raw, uint64_t enabled, uint64_t running);

#endif
