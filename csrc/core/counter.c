/* Counters and groups over perf_event_open(2) fds (see counter.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "counter.h"
#include "perf_sys.h"

/* More CPUs than any machine this runs on; bounds the online list. */
#define COUNTER_MAX_CPUS 4096

struct counter {
	size_t nev;        /* events per CPU */
	size_t ncpu;       /* CPU sets (1 unless COUNTER_CPU_ALL) */
	int group;
	int *cpus;         /* ncpu CPU numbers */
	int *fds;          /* fds[cpu_idx * nev + ev] */
	uint64_t *ids;     /* ids of the first CPU's events */
	uint64_t *buf;     /* one read(2) worth of u64s */
	size_t buflen;     /* in u64s */
};

uint64_t counter__scale(uint64_t raw, uint64_t enabled, uint64_t running)
{
	if (running == 0)
		return 0;
	if (running >= enabled)
		return raw;
	return (uint64_t)((unsigned __int128)raw * enabled / running);
}

static int open_cpus(int cpu, int **cpus, size_t *ncpu)
{
	int *list;
	int n;

	if (cpu != COUNTER_CPU_ALL) {
		list = malloc(sizeof *list);
		if (list == NULL)
			return -ENOMEM;
		list[0] = cpu;
		*cpus = list;
		*ncpu = 1;
		return 0;
	}
	list = malloc(COUNTER_MAX_CPUS * sizeof *list);
	if (list == NULL)
		return -ENOMEM;
	n = perf_sys__online_cpus(list, COUNTER_MAX_CPUS);
	if (n <= 0) {
		free(list);
		return n < 0 ? n : -ENODEV;
	}
	*cpus = list;
	*ncpu = (size_t)n;
	return 0;
}

void counter__close(struct counter *c)
{
	size_t i;

	if (c == NULL)
		return;
	/* Members before leaders, as the kernel tears groups down either way. */
	if (c->fds != NULL)
		for (i = c->nev * c->ncpu; i-- > 0;)
			if (c->fds[i] >= 0)
				close(c->fds[i]);
	free(c->fds);
	free(c->ids);
	free(c->cpus);
	free(c->buf);
	free(c);
}

int counter__open(const struct perf_event_attr *attrs, size_t n, int as_group,
		  pid_t pid, int cpu, struct counter **out,
		  struct counter_failure *fail)
{
	struct counter *c;
	size_t i, ev;
	int r;

	*out = NULL;
	if (fail != NULL) {
		fail->index = 0;
		fail->cpu = cpu == COUNTER_CPU_ALL ? -1 : cpu;
	}
	if (n == 0 || (!as_group && n != 1) || n > 1024)
		return -EINVAL;
	if (cpu < -1 && cpu != COUNTER_CPU_ALL)
		return -EINVAL;
	c = calloc(1, sizeof *c);
	if (c == NULL)
		return -ENOMEM;
	c->nev = n;
	c->group = as_group != 0;
	r = open_cpus(cpu, &c->cpus, &c->ncpu);
	if (r < 0) {
		free(c);
		return r;
	}
	c->fds = malloc(c->ncpu * n * sizeof *c->fds);
	/* -1 before anything can fail: counter__close skips them. */
	if (c->fds != NULL)
		for (i = 0; i < c->ncpu * n; i++)
			c->fds[i] = -1;
	c->ids = calloc(n, sizeof *c->ids);
	/* A group read: nr, enabled, running, then {value, id} per event;
	 * a single one: value, enabled, running, id. */
	c->buflen = 3 + 2 * n;
	c->buf = calloc(c->buflen, sizeof *c->buf);
	if (c->fds == NULL || c->ids == NULL || c->buf == NULL) {
		counter__close(c);
		return -ENOMEM;
	}

	for (i = 0; i < c->ncpu; i++) {
		int leader = -1;
		for (ev = 0; ev < n; ev++) {
			struct perf_event_attr a = attrs[ev];
			int fd;

			a.size = sizeof a;
			a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
					PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
			if (c->group)
				a.read_format |= PERF_FORMAT_GROUP;
			fd = perf_sys__open(&a, pid, c->cpus[i], leader,
					    PERF_FLAG_FD_CLOEXEC);
			if (fd < 0) {
				if (fail != NULL) {
					fail->index = ev;
					fail->cpu = c->cpus[i];
				}
				counter__close(c);
				return fd;
			}
			c->fds[i * n + ev] = fd;
			if (ev == 0)
				leader = fd;
			if (i == 0 && ioctl(fd, PERF_EVENT_IOC_ID, &c->ids[ev]) < 0)
				c->ids[ev] = 0;
		}
	}
	*out = c;
	return 0;
}

size_t counter__nr_events(const struct counter *c)
{
	return c->nev;
}

int counter__is_group(const struct counter *c)
{
	return c->group;
}

size_t counter__nr_cpus(const struct counter *c)
{
	return c->ncpu;
}

int counter__fd(const struct counter *c, size_t ev, size_t cpu_idx)
{
	if (ev >= c->nev || cpu_idx >= c->ncpu)
		return -1;
	return c->fds[cpu_idx * c->nev + ev];
}

int counter__cpu(const struct counter *c, size_t cpu_idx)
{
	return cpu_idx < c->ncpu ? c->cpus[cpu_idx] : -1;
}

uint64_t counter__id(const struct counter *c, size_t ev)
{
	return ev < c->nev ? c->ids[ev] : 0;
}

static int ioctl_all(struct counter *c, unsigned long req)
{
	size_t i;

	for (i = 0; i < c->ncpu; i++) {
		/* A group is driven through its leader alone. */
		int fd = c->fds[i * c->nev];
		if (ioctl(fd, req, c->group ? PERF_IOC_FLAG_GROUP : 0) < 0)
			return -errno;
	}
	return 0;
}

int counter__enable(struct counter *c)
{
	return ioctl_all(c, PERF_EVENT_IOC_ENABLE);
}

int counter__disable(struct counter *c)
{
	return ioctl_all(c, PERF_EVENT_IOC_DISABLE);
}

int counter__reset(struct counter *c)
{
	return ioctl_all(c, PERF_EVENT_IOC_RESET);
}

static int read_fd(int fd, uint64_t *buf, size_t words)
{
	ssize_t n;

	do {
		n = read(fd, buf, words * sizeof *buf);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (int)((size_t)n / sizeof *buf);
}

int counter__read(struct counter *c, struct counter_value *vals)
{
	size_t i, ev;

	memset(vals, 0, c->nev * sizeof *vals);
	for (i = 0; i < c->ncpu; i++) {
		int got;

		if (!c->group) {
			got = read_fd(c->fds[i], c->buf, 4);
			if (got < 0)
				return got;
			if (got < 3)
				return -EIO;
			vals[0].raw += c->buf[0];
			vals[0].enabled += c->buf[1];
			vals[0].running += c->buf[2];
			continue;
		}
		got = read_fd(c->fds[i * c->nev], c->buf, c->buflen);
		if (got < 0)
			return got;
		if (got < 3 || c->buf[0] > c->nev || (size_t)got < 3 + 2 * c->buf[0])
			return -EIO;
		for (ev = 0; ev < c->nev; ev++) {
			vals[ev].enabled += c->buf[1];
			vals[ev].running += c->buf[2];
		}
		/* Members come in creation order; the id confirms it. */
		for (ev = 0; ev < c->buf[0]; ev++) {
			uint64_t v = c->buf[3 + 2 * ev], id = c->buf[4 + 2 * ev];
			size_t k = ev;
			if (i == 0 && c->ids[ev] != id) {
				for (k = 0; k < c->nev && c->ids[k] != id; k++)
					;
				if (k == c->nev)
					k = ev;
			}
			vals[k].raw += v;
		}
	}
	for (ev = 0; ev < c->nev; ev++) {
		vals[ev].value = counter__scale(vals[ev].raw, vals[ev].enabled,
						vals[ev].running);
		vals[ev].id = c->ids[ev];
	}
	return 0;
}
