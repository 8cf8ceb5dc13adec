/*
 * System call summaries from raw_syscalls:sys_enter/sys_exit samples, as
 * perf trace -s makes them: per thread, per call: calls, errors (a return
 * below 0), and the time between enter and exit (total, min, max, mean
 * and the running variance, Welford's).  An exit without its enter (the
 * execve that started the command, a fork's return in the child) counts a
 * call of no time, as in perf; rt_sigreturn, whose exit the kernel reports
 * under no number, is counted as the call pending on the thread, with no
 * error (as strace counts it).
 *
 * Samples of one drain arrive ring by ring, so a thread that moved CPU
 * between enter and exit may show its exit first: records are batched and
 * paired in time order at syscount__flush.  Plain C, no Lua.
 */
#ifndef LUAPERF_SYSCOUNT_H
#define LUAPERF_SYSCOUNT_H

#include <stddef.h>
#include <stdint.h>
#include "record/record.h"

struct syscount;

/*
 * enter_ev, exit_ev: the evtab indexes of sys_enter and sys_exit; id_off
 * and ret_off: where "long id" and "long ret" are in their payloads (the
 * tracepoints' format files: syscount__offsets).
 */
struct syscount *syscount__new(int enter_ev, int exit_ev, unsigned id_off, unsigned ret_off);
void syscount__delete(struct syscount *sc);

/* Reads the offsets from tracefs's raw_syscalls formats; 0 or -errno. */
int syscount__offsets(const char *tracefs, unsigned *id_off, unsigned *ret_off);

/* Takes one record (samples of the two events, COMM records); 0 or -ENOMEM. */
int syscount__add_record(struct syscount *sc, const struct record *r);

/* Pairs what was added since the last flush, in time order; 0 or -ENOMEM. */
int syscount__flush(struct syscount *sc);

struct syscount_row {
	uint32_t pid, tid;
	long nr;                      /* the system call number */
	uint64_t calls, errors;
	uint64_t total, min, max;     /* ns */
	double mean, m2;              /* ns; variance = m2 / (calls - 1) */
};

struct syscount_thread {
	uint32_t pid, tid;
	uint64_t events;              /* its enter and exit samples */
	char comm[16];
};

/* The rows and threads so far (owned by sc, valid until the next add). */
const struct syscount_row *syscount__rows(const struct syscount *sc, size_t *n);
const struct syscount_thread *syscount__threads(const struct syscount *sc, size_t *n);

#endif
