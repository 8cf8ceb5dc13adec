/*
 * perf trace -s's numbers: enter/exit pairs per thread, in time order,
 * summed per thread and system call (syscount.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/perf_sys.h"
#include "base/u64map.h"
#include "count/syscount.h"

struct sc_ev {
	uint64_t time, seq;
	uint32_t pid, tid;
	int exit;
	int64_t nr, ret;
};

struct pending {
	int64_t nr;
	uint64_t time;
	int active;
};

struct syscount {
	int enter_ev, exit_ev;
	unsigned id_off, ret_off;
	struct sc_ev *batch;
	size_t nbatch, capbatch;
	uint64_t seq;
	struct u64map rowmap;         /* tid << 32 | nr -> row */
	struct syscount_row *rows;
	size_t nrows, caprows;
	struct u64map thrmap;         /* tid -> thread */
	struct syscount_thread *threads;
	struct pending *pend;         /* beside threads */
	size_t nthreads, capthreads;
};

struct syscount *syscount__new(int enter_ev, int exit_ev, unsigned id_off, unsigned ret_off)
{
	struct syscount *sc = calloc(1, sizeof *sc);

	if (sc == NULL)
		return NULL;
	sc->enter_ev = enter_ev;
	sc->exit_ev = exit_ev;
	sc->id_off = id_off;
	sc->ret_off = ret_off;
	u64map__init(&sc->rowmap);
	u64map__init(&sc->thrmap);
	return sc;
}

void syscount__delete(struct syscount *sc)
{
	if (sc == NULL)
		return;
	free(sc->batch);
	free(sc->rows);
	free(sc->threads);
	free(sc->pend);
	u64map__exit(&sc->rowmap);
	u64map__exit(&sc->thrmap);
	free(sc);
}

/* "field:long id;\toffset:8;" in events/raw_syscalls/<event>/format */
static int field_offset(const char *tracefs, const char *event, const char *field,
			unsigned *off)
{
	char path[512], buf[4096], want[64];
	const char *p;
	ssize_t n;

	snprintf(path, sizeof path, "%s/events/raw_syscalls/%s/format", tracefs, event);
	n = perf_sys__read_file(path, buf, sizeof buf);
	if (n < 0)
		return (int)n;
	snprintf(want, sizeof want, "field:long %s;", field);
	p = strstr(buf, want);
	if (p == NULL || (p = strstr(p, "offset:")) == NULL)
		return -EINVAL;
	*off = (unsigned)strtoul(p + 7, NULL, 10);
	return *off < 4096 ? 0 : -EINVAL;
}

int syscount__offsets(const char *tracefs, unsigned *id_off, unsigned *ret_off)
{
	unsigned enter_id;
	int rc;

	if (tracefs == NULL)
		return -ENODEV;
	rc = field_offset(tracefs, "sys_enter", "id", &enter_id);
	if (rc == 0)
		rc = field_offset(tracefs, "sys_exit", "id", id_off);
	if (rc == 0)
		rc = field_offset(tracefs, "sys_exit", "ret", ret_off);
	/* one offset serves both events' id (as on every architecture) */
	if (rc == 0 && enter_id != *id_off)
		rc = -EINVAL;
	return rc;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (q == NULL)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

static struct syscount_thread *thread_of(struct syscount *sc, uint32_t pid, uint32_t tid,
					 size_t *idx)
{
	size_t cap = sc->capthreads;
	uint32_t *v;
	int added;

	/* room first, so the map never names a thread that is not there */
	if (grow((void **)&sc->pend, &cap, sc->nthreads + 1, sizeof *sc->pend) < 0 ||
	    grow((void **)&sc->threads, &sc->capthreads, sc->nthreads + 1,
		 sizeof *sc->threads) < 0)
		return NULL;
	v = u64map__insert(&sc->thrmap, tid, (uint32_t)sc->nthreads, &added);
	if (v == NULL)
		return NULL;
	if (added) {
		memset(&sc->threads[sc->nthreads], 0, sizeof *sc->threads);
		memset(&sc->pend[sc->nthreads], 0, sizeof *sc->pend);
		sc->threads[sc->nthreads].pid = pid;
		sc->threads[sc->nthreads].tid = tid;
		sc->nthreads++;
	}
	*idx = *v;
	return &sc->threads[*v];
}

static int64_t load_i64(const void *raw, unsigned off)
{
	int64_t v;

	memcpy(&v, (const char *)raw + off, sizeof v);
	return v;
}

int syscount__add_record(struct syscount *sc, const struct record *r)
{
	struct sc_ev *e;
	int exit;

	if (r->type == PERF_RECORD_COMM) {
		size_t idx;
		struct syscount_thread *t = thread_of(sc, r->u.comm.pid, r->u.comm.tid, &idx);
		if (t == NULL)
			return -ENOMEM;
		snprintf(t->comm, sizeof t->comm, "%s", r->u.comm.comm);
		return 0;
	}
	if (r->type != PERF_RECORD_SAMPLE || (r->evidx != sc->enter_ev && r->evidx != sc->exit_ev))
		return 0;
	exit = r->evidx == sc->exit_ev;
	/* untrusted sizes: the fields must be inside the payload */
	if (r->s.raw == NULL || r->s.raw_size < sc->id_off + 8 ||
	    (exit && r->s.raw_size < sc->ret_off + 8))
		return 0;
	if (grow((void **)&sc->batch, &sc->capbatch, sc->nbatch + 1, sizeof *sc->batch) < 0)
		return -ENOMEM;
	e = &sc->batch[sc->nbatch++];
	e->time = r->s.time;
	e->seq = sc->seq++;
	e->pid = r->s.pid;
	e->tid = r->s.tid;
	e->exit = exit;
	e->nr = load_i64(r->s.raw, sc->id_off);
	e->ret = exit ? load_i64(r->s.raw, sc->ret_off) : 0;
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct sc_ev *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static struct syscount_row *row_of(struct syscount *sc, const struct sc_ev *e)
{
	uint64_t key = (uint64_t)e->tid << 32 | (uint32_t)e->nr;
	uint32_t *v;
	int added;

	if (grow((void **)&sc->rows, &sc->caprows, sc->nrows + 1, sizeof *sc->rows) < 0)
		return NULL;
	v = u64map__insert(&sc->rowmap, key, (uint32_t)sc->nrows, &added);
	if (v == NULL)
		return NULL;
	if (added) {
		struct syscount_row *w = &sc->rows[sc->nrows++];
		memset(w, 0, sizeof *w);
		w->pid = e->pid;
		w->tid = e->tid;
		w->nr = (long)e->nr;
		w->min = UINT64_MAX;
	}
	return &sc->rows[*v];
}

static int count(struct syscount *sc, const struct sc_ev *e, uint64_t d);

static int pair(struct syscount *sc, const struct sc_ev *e)
{
	struct syscount_thread *t;
	struct pending *p;
	uint64_t d = 0;
	size_t idx;

	t = thread_of(sc, e->pid, e->tid, &idx);
	if (t == NULL)
		return -ENOMEM;
	t->events++;
	p = &sc->pend[idx];
	if (!e->exit) {
		p->nr = e->nr;
		p->time = e->time;
		p->active = 1;
		return 0;
	}
	if (p->active && (p->nr == e->nr || e->nr == -1) && e->time >= p->time) {
		d = e->time - p->time;
		/* rt_sigreturn exits as no call (id -1: it restored the
		 * interrupted context's registers, and its return value is
		 * that context's rax, not an error): it was the pending one. */
		if (e->nr == -1) {
			struct sc_ev fixed = *e;
			fixed.nr = p->nr;
			fixed.ret = 0;
			p->active = 0;
			return count(sc, &fixed, d);
		}
	}
	p->active = 0;
	if (e->nr < 0)
		return 0;  /* no call to name */
	return count(sc, e, d);
}

static int count(struct syscount *sc, const struct sc_ev *e, uint64_t d)
{
	struct syscount_row *w;
	double delta;

	w = row_of(sc, e);
	if (w == NULL)
		return -ENOMEM;
	w->calls++;
	if (e->ret < 0)
		w->errors++;
	w->total += d;
	if (d < w->min)
		w->min = d;
	if (d > w->max)
		w->max = d;
	delta = (double)d - w->mean;
	w->mean += delta / (double)w->calls;
	w->m2 += delta * ((double)d - w->mean);
	return 0;
}

int syscount__flush(struct syscount *sc)
{
	size_t i;
	int rc = 0;

	if (sc->nbatch > 1)
		qsort(sc->batch, sc->nbatch, sizeof *sc->batch, by_time);
	for (i = 0; i < sc->nbatch && rc == 0; i++)
		rc = pair(sc, &sc->batch[i]);
	sc->nbatch = 0;
	return rc;
}

const struct syscount_row *syscount__rows(const struct syscount *sc, size_t *n)
{
	*n = sc->nrows;
	return sc->rows;
}

const struct syscount_thread *syscount__threads(const struct syscount *sc, size_t *n)
{
	*n = sc->nthreads;
	return sc->threads;
}
