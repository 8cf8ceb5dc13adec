/*
 * The recording loop (perfdata_record.h): a session's rings into a
 * perf.data writer, records copied as the kernel wrote them.
 */
#include "perfdata/perfdata_record.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/perf_sys.h"
#include "perfdata/perfdata.h"
#include "record/record.h"
#include "sample/session.h"

int perfdata_writer__add_session(struct perfdata_writer *w, const struct session *s)
{
	const struct evtab *t = session__evtab(s);
	int i, e;

	for (i = 0; i < evtab__count(t); i++) {
		const uint64_t *ids = NULL;
		size_t n = session__ids(s, i, &ids);

		e = perfdata_writer__add_event(w, evtab__attr(t, i), evtab__name(t, i), ids, n);
		if (e < 0)
			return e;
	}
	return 0;
}

struct sink {
	struct perfdata_writer *w;
	int err;
	uint64_t n;
};

static int write_raw(void *arg, const struct perf_event_header *rec)
{
	struct sink *c = arg;
	int e = perfdata_writer__write(c->w, rec, rec->size);

	if (e < 0) {
		c->err = e;
		return 1;
	}
	c->n++;
	return 0;
}

static int write_rec(void *arg, const struct record *r)
{
	struct sink *c = arg;
	int e = perfdata_writer__write(c->w, r->data, r->size);

	if (e < 0) {
		c->err = e;
		return 1;
	}
	c->n++;
	return 0;
}

int session__write(struct session *s, struct perfdata_writer *w, uint64_t *n)
{
	struct sink c = { w, 0, 0 };
	int rc = session__drain_raw(s, write_raw, &c);

	if (c.err)
		return c.err;
	if (rc < 0)
		return rc;
	if (c.n)
		rc = perfdata_writer__finished_round(w);
	if (n)
		*n += c.n;
	return rc < 0 ? rc : 0;
}

/* Overwrite rings: their newest records, once, at the end. */
static int write_snapshot(struct session *s, struct perfdata_writer *w, uint64_t *n)
{
	struct sink c = { w, 0, 0 };
	int rc = session__snapshot(s, write_rec, &c);
	int e = c.err ? c.err : rc < 0 ? rc : 0;

	if (!e && c.n)
		e = perfdata_writer__finished_round(w);
	*n += c.n;
	return e;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A watched task is gone once it exited (a zombie counts as gone). */
static int task_alive(pid_t pid)
{
	char path[64], buf[512];
	const char *p;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (perf_sys__read_file(path, buf, sizeof buf) <= 0)
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

int session__record(struct session *s, struct perfdata_writer *w,
		    const struct session_record_opts *o, struct session_record_summary *sum)
{
	static const struct session_record_opts defaults;
	uint64_t deadline = 0, n = 0;
	int e = 0, done = 0;

	if (!o)
		o = &defaults;
	if (o->duration_ms)
		deadline = now_ms() + o->duration_ms;
	while (!done && !(o->stop && *o->stop) && (!deadline || now_ms() < deadline)) {
		int rc = session__poll(s, 100, &done);

		if (rc < 0 && rc != -EINTR) {
			e = rc;
			break;
		}
		if (!o->overwrite && (e = session__write(s, w, &n)) < 0)
			break;
		if (o->watch_pid > 0 && !task_alive(o->watch_pid))
			done = 1;
	}
	if (!e) {
		session__stop(s);
		e = o->overwrite ? write_snapshot(s, w, &n) : session__write(s, w, &n);
	}
	if (sum) {
		sum->records = n;
		sum->done = done;
		sum->stopped = o->stop && *o->stop;
	}
	return e;
}
