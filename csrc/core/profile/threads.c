/*
 * Threads by tid (threads.h): an open-addressing table of the live thread
 * of each tid, its pid, its current comm object (0 until one is needed)
 * and whether it has a name of its own yet (perf's comm_set).  Samples
 * repeat a thread: the last one looked up is tried first.
 */
#include "profile/threads.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/stacktab.h"

struct thread {
	int32_t tid, pid;
	uint32_t comm;              /* comm object in st; 0: ":TID", not made yet */
	uint8_t used, named;        /* named: has a name of its own (comm_set) */
};

struct threads {
	struct stacktab *st;
	struct thread *t;
	size_t n, nslots;
	size_t last;                /* slot + 1 of the last thread looked up */
	const char *const *keep;    /* threads__keep's names, or NULL */
	size_t nkeep;
	uint8_t *verdict;           /* by comm object: 0 not asked, 1 kept, 2 left out */
	size_t nverdict;
};

static size_t slot_of(const struct threads *th, int32_t tid)
{
	return (size_t)(uint32_t)tid * 2654435761u & (th->nslots - 1);
}

static int grow(struct threads *th)
{
	size_t n = th->nslots ? th->nslots * 2 : 256, i, j;
	struct thread *t = calloc(n, sizeof *t);

	if (!t)
		return -ENOMEM;
	for (i = 0; i < th->nslots; i++) {
		if (!th->t[i].used)
			continue;
		j = (size_t)(uint32_t)th->t[i].tid * 2654435761u & (n - 1);
		while (t[j].used)
			j = (j + 1) & (n - 1);
		t[j] = th->t[i];
	}
	free(th->t);
	th->t = t;
	th->nslots = n;
	th->last = 0;
	return 0;
}

/* The thread of tid, made (unnamed) when there is none; NULL: no memory. */
static struct thread *findnew(struct threads *th, int32_t pid, int32_t tid)
{
	struct thread *t;
	size_t j;

	if (th->last && th->t[th->last - 1].tid == tid) {
		t = &th->t[th->last - 1];
	} else {
		if ((th->n + 1) * 2 > th->nslots && grow(th) < 0)
			return NULL;
		for (j = slot_of(th, tid); th->t[j].used && th->t[j].tid != tid;
		     j = (j + 1) & (th->nslots - 1))
			;
		t = &th->t[j];
		if (!t->used) {
			t->used = 1;
			t->tid = tid;
			t->pid = pid;
			t->comm = 0;
			t->named = 0;
			th->n++;
		}
		th->last = j + 1;
	}
	/* perf fills in a pid it did not know (a thread made with pid -1) */
	if (t->pid == -1)
		t->pid = pid;
	return t;
}

/* The thread is new again (perf removes it and makes another). */
static void reset(struct thread *t, int32_t pid)
{
	t->pid = pid;
	t->comm = 0;
	t->named = 0;
}

/* perf's thread__set_comm: the first name overrides ":TID" in place (the
 * thread's own object); a name after that is every thread's of the name. */
static int set_comm(struct threads *th, struct thread *t, const char *name)
{
	int rc;

	if (!t->named && t->comm)
		rc = stacktab__comm_rename(th->st, t->comm, name);
	else
		rc = stacktab__comm_named(th->st, name, &t->comm);
	if (rc == 0)
		t->named = 1;
	return rc;
}

struct threads *threads__new(struct stacktab *st)
{
	struct threads *th = calloc(1, sizeof *th);
	struct thread *idle;

	if (!th)
		return NULL;
	th->st = st;
	/* perf registers the idle task before the first record */
	if (!(idle = findnew(th, 0, 0)) || set_comm(th, idle, "swapper") < 0) {
		threads__delete(th);
		return NULL;
	}
	return th;
}

void threads__delete(struct threads *th)
{
	if (!th)
		return;
	free(th->t);
	free(th->verdict);
	free(th);
}

void threads__keep(struct threads *th, const char *const *names, size_t n)
{
	th->keep = n ? names : NULL;
	th->nkeep = n;
	if (th->verdict)
		memset(th->verdict, 0, th->nverdict);
}

/* Whether the samples of a final name (comm object id) are kept. */
static int kept(struct threads *th, uint32_t id)
{
	const char *name;
	size_t i;

	if (id >= th->nverdict) {
		size_t n = th->nverdict ? th->nverdict : 256;
		uint8_t *v;
		while (n <= id)
			n *= 2;
		if (!(v = realloc(th->verdict, n)))
			return -ENOMEM;
		memset(v + th->nverdict, 0, n - th->nverdict);
		th->verdict = v;
		th->nverdict = n;
	}
	if (!th->verdict[id]) {
		name = stacktab__comm_name(th->st, id);
		th->verdict[id] = 2;
		for (i = 0; i < th->nkeep && name; i++)
			if (!strcmp(name, th->keep[i]))
				th->verdict[id] = 1;
	}
	return th->verdict[id] == 1;
}

static int fork_thread(struct threads *th, const struct record *r)
{
	int32_t pid = (int32_t)r->u.task.pid, tid = (int32_t)r->u.task.tid;
	int32_t ppid = (int32_t)r->u.task.ppid, ptid = (int32_t)r->u.task.ptid;
	struct thread *parent, *t;
	uint32_t pcomm;
	int pnamed;

	if (!(parent = findnew(th, ppid, ptid)))
		return -ENOMEM;
	/* a thread of that tid in another process is not the parent: a
	 * fork or exit was lost; perf starts the parent afresh */
	if (parent->pid != ppid)
		reset(parent, ppid);
	pcomm = parent->comm;
	pnamed = parent->named;
	if (!(t = findnew(th, pid, tid)))
		return -ENOMEM;
	reset(t, pid);
	if (pnamed)
		return set_comm(th, t, stacktab__comm_name(th->st, pcomm));
	return 0;
}

int threads__feed(struct threads *th, const struct record *r)
{
	struct thread *t;

	switch (r->type) {
	case PERF_RECORD_COMM:
		if (!(t = findnew(th, (int32_t)r->u.comm.pid, (int32_t)r->u.comm.tid)))
			return -ENOMEM;
		return set_comm(th, t, r->u.comm.comm ? r->u.comm.comm : "");
	case PERF_RECORD_FORK:
		return fork_thread(th, r);
	}
	/* EXIT: perf 6.1 keeps the thread, name and all, until a FORK reuses its tid */
	return 0;
}

int threads__sample_comm(void *arg, int32_t pid, int32_t tid, uint32_t *comm)
{
	struct threads *th = arg;
	struct thread *t;
	char name[16];
	int rc;

	if (!(t = findnew(th, pid, tid)))
		return -ENOMEM;
	if (!t->comm) {
		snprintf(name, sizeof name, ":%d", (int)tid);
		if ((rc = stacktab__comm_new(th->st, name, &t->comm)) < 0)
			return rc;
	}
	*comm = t->comm;
	if (th->keep && t->named) {
		int k = kept(th, t->comm);
		if (k <= 0)
			return k < 0 ? k : 1;
	}
	return 0;
}

int threads__publish(struct threads *th)
{
	size_t i;
	int rc;

	for (i = 0; i < th->nslots; i++) {
		const struct thread *t = &th->t[i];
		if (t->used && t->comm &&
		    (rc = stacktab__set_thread_comm(th->st, t->tid,
						    stacktab__comm_name(th->st, t->comm))) < 0)
			return rc;
	}
	return 0;
}
