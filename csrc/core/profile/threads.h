/*
 * Threads and their command names over time, by perf's rules (Linux
 * tools/perf/util/{machine,thread}.c, as perf 6.1 applies them), so that a
 * sample takes the name its thread had when it was taken:
 *
 *   - a thread first seen in a sample or a COMM is named ":TID" until its
 *     first COMM, which renames it in place (samples already taken too);
 *     a later COMM starts a new name, earlier samples keep theirs;
 *   - FORK replaces any thread of that tid with a new one, named as its
 *     parent is at that moment (when the parent has a name of its own);
 *   - EXIT changes nothing (perf 6.1 keeps the thread and its name);
 *   - tid 0 is the idle task, "swapper".
 *
 * Records must come in time order (a time-ordered perf.data).  The names
 * are comm objects of a stack table (stacktab.h), so a stack is keyed by
 * the name its sample had; threads__sample_comm is the table's
 * stacktab__set_sample_comm callback.
 *
 *   struct threads *th = threads__new(st);
 *   stacktab__set_sample_comm(st, threads__sample_comm, th);
 *   ... threads__feed(th, &rec) for every record, in time order ...
 *   stacktab__set_sample_comm(st, NULL, NULL);
 *   threads__publish(th);       (each thread's last name: the Pid:Command column)
 *   threads__delete(th);
 *
 * Plain C, no Lua.  Implemented in threads.c.
 */
#ifndef LUAPERF_THREADS_H
#define LUAPERF_THREADS_H

#include <stdint.h>
#include "record/record.h"

struct stacktab;
struct threads;

struct threads *threads__new(struct stacktab *st);
void threads__delete(struct threads *th);

/* COMM, FORK and EXIT change the threads; other records are ignored.
 * 0 or -ENOMEM. */
int threads__feed(struct threads *th, const struct record *r);

/* The comm object a sample of (pid, tid) takes now (made on first use).
 * 0, 1 (left out: threads__keep), or -ENOMEM. */
int threads__sample_comm(void *th, int32_t pid, int32_t tid, uint32_t *comm);

/*
 * From now on the samples of a thread whose name is final (it had a COMM,
 * or was forked from a named parent: no later record renames what it took)
 * and is none of names[0..n) are left out: threads__sample_comm returns 1.
 * A thread still ":TID" keeps its samples, since its first COMM may give
 * it one of the names.  So a report filtered by those names reads the same
 * with or without it, from fewer stacks.  names are borrowed; n = 0: all
 * kept.
 */
void threads__keep(struct threads *th, const char *const *names, size_t n);

/* Each named thread's current name into the table's thread names
 * (stacktab__set_thread_comm).  0 or -ENOMEM. */
int threads__publish(struct threads *th);

#endif
