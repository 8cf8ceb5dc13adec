/* Counters and groups over perf_event_open(2) fds (see counter.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "count/counter.h"
#include "base/perf_sys.h"

/* fs.nr_open's default: no process holds more fds. */
#define COUNTER_MAX_FDS ((size_t)1 << 20)

struct counter {
	size_t nev;        /* events per fd set */
	size_t ncpu;       /* CPUs (1 unless COUNTER_CPU_ALL or a list) */
	size_t npid;       /* tasks (1 unless a list) */
	int group;
	int *cpus;         /* ncpu CPU numbers */
	pid_t *pids;       /* npid task ids */
	int *fds;          /* fds[(cpu_idx * npid + pid_idx) * nev + ev] */
	uint64_t *ids;     /* ids of the first fd set's events */
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

/* The CPU list to open on: a copy of cpus, or every online CPU when NULL. */
static int open_cpus(const int *cpus, size_t ncpus, int **list_out, size_t *nout)
{
	int *list;
	int n;

	if (cpus != NULL) {
		list = malloc(ncpus * sizeof *list);
		if (list == NULL)
			return -ENOMEM;
		memcpy(list, cpus, ncpus * sizeof *list);
		*list_out = list;
		*nout = ncpus;
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
	*list_out = list;
	*nout = (size_t)n;
	return 0;
}

void counter__close(struct counter *c)
{
	size_t i;

	if (c == NULL)
		return;
	/* Members before leaders, as the kernel tears groups down either way. */
	if (c->fds != NULL)
		for (i = c->nev * c->ncpu * c->npid; i-- > 0;)
			if (c->fds[i] >= 0)
				close(c->fds[i]);
	free(c->fds);
	free(c->ids);
	free(c->cpus);
	free(c->pids);
	free(c->buf);
	free(c);
}

static int ioctl_all(struct counter *c, unsigned long req);

int counter__open_on(const struct perf_event_attr *attrs, size_t n, int as_group,
		     const pid_t *pids, size_t npids, const int *cpus, size_t ncpus,
		     struct counter **out, struct counter_failure *fail)
{
	struct counter *c;
	size_t i, ev, nset;
	int r, start;

	*out = NULL;
	if (fail != NULL) {
		fail->index = 0;
		fail->cpu = cpus != NULL && ncpus > 0 ? cpus[0] : -1;
		fail->pid = pids != NULL && npids > 0 ? pids[0] : -1;
	}
	if (n == 0 || (!as_group && n != 1) || n > 1024)
		return -EINVAL;
	if (pids == NULL || npids == 0 || npids > COUNTER_MAX_PIDS)
		return -EINVAL;
	if (cpus != NULL && (ncpus == 0 || ncpus > COUNTER_MAX_CPUS))
		return -EINVAL;
	for (i = 0; cpus != NULL && i < ncpus; i++)
		if (cpus[i] < -1)
			return -EINVAL;
	for (i = 0; i < npids; i++)
		if (pids[i] < -1)
			return -EINVAL;
	c = calloc(1, sizeof *c);
	if (c == NULL)
		return -ENOMEM;
	c->nev = n;
	c->group = as_group != 0;
	r = open_cpus(cpus, ncpus, &c->cpus, &c->ncpu);
	if (r < 0) {
		free(c);
		return r;
	}
	c->npid = npids;
	c->pids = malloc(npids * sizeof *c->pids);
	if (c->pids != NULL)
		memcpy(c->pids, pids, npids * sizeof *c->pids);
	/* Each factor is bounded, so the product cannot overflow; more fds
	 * than a process may hold (fs.nr_open's default) cannot open anyway. */
	nset = c->ncpu * c->npid;
	if (nset * n > COUNTER_MAX_FDS) {
		counter__close(c);
		return -EMFILE;
	}
	c->fds = malloc(nset * n * sizeof *c->fds);
	/* -1 before anything can fail: counter__close skips them. */
	if (c->fds != NULL)
		for (i = 0; i < nset * n; i++)
			c->fds[i] = -1;
	c->ids = calloc(n, sizeof *c->ids);
	/* A group read: nr, enabled, running, then {value, id} per event;
	 * a single one: value, enabled, running, id. */
	c->buflen = 3 + 2 * n;
	c->buf = calloc(c->buflen, sizeof *c->buf);
	if (c->pids == NULL || c->fds == NULL || c->ids == NULL || c->buf == NULL) {
		counter__close(c);
		return -ENOMEM;
	}

	/* perf's convention: everything opens disabled (a group's members
	 * follow their leader), then starts at once when every fd is open.
	 * A member opened enabled into a running leader may count nothing
	 * until the group is next scheduled in. */
	start = !attrs[0].disabled && !attrs[0].enable_on_exec;
	for (i = 0; i < nset; i++) {
		int cpu = c->cpus[i / c->npid];
		pid_t pid = c->pids[i % c->npid];
		int leader = -1;
		for (ev = 0; ev < n; ev++) {
			struct perf_event_attr a = attrs[ev];
			int fd;

			a.size = sizeof a;
			if (ev == 0 || !c->group) {
				a.disabled = 1;
			} else {
				a.disabled = 0;
				a.enable_on_exec = 0;
			}
			a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
					PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
			if (c->group)
				a.read_format |= PERF_FORMAT_GROUP;
			fd = perf_sys__open(&a, pid, cpu, leader, PERF_FLAG_FD_CLOEXEC);
			if (fd < 0) {
				if (fail != NULL) {
					fail->index = ev;
					fail->cpu = cpu;
					fail->pid = pid;
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
	if (start && (r = ioctl_all(c, PERF_EVENT_IOC_ENABLE)) < 0) {
		counter__close(c);
		return r;
	}
	*out = c;
	return 0;
}

int counter__open(const struct perf_event_attr *attrs, size_t n, int as_group,
		  pid_t pid, int cpu, struct counter **out,
		  struct counter_failure *fail)
{
	if (cpu < -1 && cpu != COUNTER_CPU_ALL) {
		*out = NULL;
		if (fail != NULL) {
			fail->index = 0;
			fail->cpu = -1;
			fail->pid = pid;
		}
		return -EINVAL;
	}
	return counter__open_on(attrs, n, as_group, &pid, 1,
				cpu == COUNTER_CPU_ALL ? NULL : &cpu, 1, out, fail);
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

size_t counter__nr_pids(const struct counter *c)
{
	return c->npid;
}

size_t counter__nr_sets(const struct counter *c)
{
	return c->ncpu * c->npid;
}

int counter__fd(const struct counter *c, size_t ev, size_t s)
{
	if (ev >= c->nev || s >= c->ncpu * c->npid)
		return -1;
	return c->fds[s * c->nev + ev];
}

int counter__cpu(const struct counter *c, size_t cpu_idx)
{
	return cpu_idx < c->ncpu ? c->cpus[cpu_idx] : -1;
}

pid_t counter__pid(const struct counter *c, size_t pid_idx)
{
	return pid_idx < c->npid ? c->pids[pid_idx] : -1;
}

uint64_t counter__id(const struct counter *c, size_t ev)
{
	return ev < c->nev ? c->ids[ev] : 0;
}

static int ioctl_all(struct counter *c, unsigned long req)
{
	size_t i;

	for (i = 0; i < c->ncpu * c->npid; i++) {
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

/* Adds fd set s's raw counts and times to vals (unscaled). */
static int add_set(struct counter *c, size_t s, struct counter_value *vals)
{
	size_t ev;
	int got;

	if (!c->group) {
		got = read_fd(c->fds[s], c->buf, 4);
		if (got < 0)
			return got;
		if (got < 3)
			return -EIO;
		vals[0].raw += c->buf[0];
		vals[0].enabled += c->buf[1];
		vals[0].running += c->buf[2];
		return 0;
	}
	got = read_fd(c->fds[s * c->nev], c->buf, c->buflen);
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
		if (s == 0 && c->ids[ev] != id) {
			for (k = 0; k < c->nev && c->ids[k] != id; k++)
				;
			if (k == c->nev)
				k = ev;
		}
		vals[k].raw += v;
	}
	return 0;
}

static void finish(const struct counter *c, struct counter_value *vals)
{
	size_t ev;

	for (ev = 0; ev < c->nev; ev++) {
		vals[ev].value = counter__scale(vals[ev].raw, vals[ev].enabled,
						vals[ev].running);
		vals[ev].id = c->ids[ev];
	}
}

int counter__read(struct counter *c, struct counter_value *vals)
{
	size_t s;
	int r;

	memset(vals, 0, c->nev * sizeof *vals);
	for (s = 0; s < c->ncpu * c->npid; s++) {
		r = add_set(c, s, vals);
		if (r < 0)
			return r;
	}
	finish(c, vals);
	return 0;
}

int counter__read_set(struct counter *c, size_t s, struct counter_value *vals)
{
	int r;

	if (s >= c->ncpu * c->npid)
		return -EINVAL;
	memset(vals, 0, c->nev * sizeof *vals);
	r = add_set(c, s, vals);
	if (r < 0)
		return r;
	finish(c, vals);
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int counter__threads(pid_t pid, pid_t *tids, size_t max)
{
	char path[64];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (d == NULL)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long t = strtol(de->d_name, &end, 10);

		if (*end != '\0' || end == de->d_name || t <= 0 || t > INT_MAX)
			continue;
		if (n < max)
			tids[n] = (pid_t)t;
		if (n < INT_MAX)
			n++;
	}
	closedir(d);
	if (n == 0)
		return -ESRCH;
	qsort(tids, n < max ? n : max, sizeof *tids, cmp_pid);
	return (int)n;
}
