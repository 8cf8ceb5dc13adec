/*
 * The rings of a session drained together, oldest record first.  A round
 * takes every ring's data_head once, then hands the records before those
 * heads out in time order (a k-way merge over a heap of the rings' next
 * records), so a record read from one CPU's ring never comes after a later
 * one from another ring that was already published: an exec's COMM before
 * the new program's MMAP, wherever each was written.  A record published
 * during a round waits for the next round.  Implemented in ringmerge.c.
 */
#ifndef LUAPERF_RINGMERGE_H
#define LUAPERF_RINGMERGE_H

#include "record/record.h"
#include "sample/ring.h"

struct ringmerge;

/* Over rings[0..n) (forward rings, borrowed) whose records belong to the
 * events of t (borrowed, read for each record's time).  0 or -errno. */
int ringmerge__new(struct ring **rings, int n, const struct evtab *t, struct ringmerge **out);
void ringmerge__delete(struct ringmerge *m);

/*
 * ring__drain over all the rings: fn's contract is the same (0 go on, > 0
 * stop after this record, < 0 stop before it, which stays in its ring with
 * every record not handed out yet).  A drain finishes the round an earlier
 * one stopped in, then runs at most one new round.  Records of equal time
 * come by ring index, and in their ring's order within one ring.  Returns the
 * number of records consumed or -errno; *corrupt gets the number of rings
 * that held a record of a bad size (dropped with what follows it, as
 * ring__drain does).
 */
int ringmerge__drain(struct ringmerge *m,
		     int (*fn)(void *arg, const struct perf_event_header *rec),
		     void *arg, int *corrupt);

#endif
