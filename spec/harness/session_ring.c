/*
 * A live session whose ring is damaged by hand, for spec/faults_spec.lua
 * (issue 12): the kernel never writes a record of a bad size, but a drain
 * must not stall on one.  Only the control page of a ring is writable, so
 * the damage is a data_tail moved 8 bytes into a record: the "header" read
 * there is the sample's id, whose top 16 bits (the size) are 0.  Also: a
 * drain whose callback fails (out of memory) returns that error and leaves
 * the record for the next drain, which starts with it; drains that stop
 * after each record lose and repeat none.  The damage is done when the
 * session holds no record it has looked at (a drain went to the end), as
 * nothing but the session writes data_tail.
 *
 * One cpu-clock session on this (single-threaded) process, so its one ring
 * is the one "[perf_event]" mapping in /proc/self/maps.  Prints a line per
 * check and exits 1 on the first failure.  Links against the core objects.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/perf_event.h>

#include "sample/session.h"

#define PAGES 8

static int failed;

#define CHECK(cond, ...) do { \
	if (!(cond)) { printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); \
		printf("\n"); failed = 1; return; } } while (0)

static struct perf_event_mmap_page *ring_meta(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	void *m = NULL;

	while (f && fgets(line, sizeof line, f)) {
		if (strstr(line, "[perf_event]")) {
			m = (void *)(uintptr_t)strtoull(line, NULL, 16);
			break;
		}
	}
	if (f)
		fclose(f);
	return m;
}

static void burn(double secs)
{
	struct timespec a, b;
	volatile unsigned long x = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < secs);
}

static int n_seen;

static int count_rec(void *arg, const struct record *r)
{
	(void)arg, (void)r;
	n_seen++;
	return 0;
}

static int no_memory(void *arg, const struct record *r)
{
	(void)arg, (void)r;
	n_seen++;
	return -ENOMEM;
}

/* One record a drain, as s:records() takes them: its time kept. */
static uint64_t one_time;
static int take_one(void *arg, const struct record *r)
{
	(void)arg;
	one_time = r->s.time;
	n_seen++;
	return 1;
}

/* Records the kernel wrote in [tail, head), by their headers. */
static int count_between(const uint8_t *data, uint64_t size, uint64_t tail, uint64_t head)
{
	int n = 0;

	while (tail < head) {
		const struct perf_event_header *h =
			(const void *)(data + (tail & (size - 1)));
		if (!h->size)
			return -1;
		tail += h->size;
		n++;
	}
	return n;
}

/* 50 ms of samples; *head and *tail: the ring's bytes of them. */
static void sample_some(struct session *s, struct perf_event_mmap_page *meta,
			uint64_t *head, uint64_t *tail)
{
	session__start(s);
	burn(0.05);
	session__stop(s);
	*head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	*tail = meta->data_tail;
}

static void run(struct session *s, struct perf_event_mmap_page *meta)
{
	struct session_stats st;
	uint64_t head, tail;
	const uint8_t *data = (const uint8_t *)meta + meta->data_offset;
	int rc;

	CHECK(meta->data_size == PAGES * 4096, "data_size %llu", (unsigned long long)meta->data_size);
	sample_some(s, meta, &head, &tail);
	CHECK(head - tail >= 64, "only %llu bytes of records", (unsigned long long)(head - tail));

	/* A callback out of memory: the drain fails with it, the record stays. */
	n_seen = 0;
	rc = session__drain(s, no_memory, NULL);
	CHECK(rc == -ENOMEM, "a failing callback: drain returned %d, not -ENOMEM", rc);
	CHECK(n_seen == 1 && meta->data_tail == tail, "the record was not left (%d calls)", n_seen);
	printf("ok a callback's -ENOMEM is the drain's, the record stays\n");

	/* One record a drain to the end: every record once, the one left
	 * first, then the ring empty. */
	{
		int calls = 0, total = 0, want = count_between(data, meta->data_size, tail, head);
		uint64_t last = 0;
		do {
			n_seen = 0;
			rc = session__drain(s, take_one, NULL);
			CHECK(rc >= 0 && rc <= 1 && n_seen == rc, "drain: %d, %d records", rc, n_seen);
			CHECK(!rc || one_time >= last, "record %d: time %llu before %llu", total,
			      (unsigned long long)one_time, (unsigned long long)last);
			if (rc)
				last = one_time;
			total += rc;
		} while (rc > 0 && ++calls < want / 2);
		/* then the rest in one drain: what the last one left, and a
		 * new round after it (which must not read again what this
		 * drain took before it) */
		n_seen = 0;
		rc = session__drain(s, count_rec, NULL);
		CHECK(rc >= 0 && n_seen == rc, "the rest: drain %d, %d records", rc, n_seen);
		total += rc;
		CHECK(meta->data_tail == head, "the tail at %llu, head %llu",
		      (unsigned long long)meta->data_tail, (unsigned long long)head);
		CHECK(want >= 2 && total == want, "%d records drained, %d written", total, want);
		printf("ok %d records, %d one drain each, then the rest: none lost or repeated\n",
		       total, calls);
	}

	/* New records, then the tail 8 bytes into the first of them (a
	 * sample: its id comes first), so the drain reads a header of size 0
	 * there. */
	sample_some(s, meta, &head, &tail);
	CHECK(head - tail >= 64, "only %llu bytes of new records", (unsigned long long)(head - tail));
	CHECK(((struct perf_event_header *)(void *)(data + (tail & (meta->data_size - 1))))->type ==
	      PERF_RECORD_SAMPLE, "the first record is not a sample");
	CHECK((((const uint64_t *)(const void *)(data + (tail & (meta->data_size - 1))))[1] >> 48) == 0,
	      "the id is too large to read as a size of 0");
	__atomic_store_n(&meta->data_tail, tail + 8, __ATOMIC_RELEASE);
	n_seen = 0;
	rc = session__drain(s, count_rec, NULL);
	session__stats(s, &st);
	CHECK(rc >= 0, "a record of size 0: drain returned %d (%s)", rc, strerror(-rc));
	CHECK(meta->data_tail == head, "the tail did not move past it (%llu, head %llu)",
	      (unsigned long long)meta->data_tail, (unsigned long long)head);
	CHECK(st.errors == 1, "errors %llu, expected 1", (unsigned long long)st.errors);
	CHECK(session__last_error(s) && strstr(session__last_error(s), "bad size"),
	      "last error: %s", session__last_error(s) ? session__last_error(s) : "none");
	printf("ok a record of size 0 is dropped with what follows, counted in errors\n");

	/* The ring goes on: the kernel's next records drain. */
	sample_some(s, meta, &head, &tail);
	n_seen = 0;
	rc = session__drain(s, count_rec, NULL);
	CHECK(rc > 0 && n_seen == rc, "after the drop: drain returned %d, %d records", rc, n_seen);
	CHECK(meta->data_tail == head, "the ring was not emptied");
	printf("ok the next %d records drain\n", rc);
}

int main(void)
{
	static const char *const events[] = { "cpu-clock" };
	struct session_opts o = { .events = events, .nr_events = 1, .period = 100000,
				  .pages = PAGES };
	struct perf_event_mmap_page *meta;
	struct session *s;
	char err[256];
	int rc = session__open(&o, &s, err, sizeof err);

	if (rc) {
		printf("FAIL session__open: %s\n", err);
		return 1;
	}
	meta = ring_meta();
	if (!meta || session__nr_rings(s) != 1) {
		printf("FAIL no single perf_event mapping (%d rings)\n", session__nr_rings(s));
		return 1;
	}
	run(s, meta);
	session__close(s);
	return failed;
}
