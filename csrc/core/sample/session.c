/*
 * Sampling sessions: open events per (cpu, thread), one ring per CPU (or
 * per thread when events are per-thread), every other fd redirected into
 * it with PERF_EVENT_IOC_SET_OUTPUT; poll, drain, count losses.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include "event/errmsg.h"
#include "event/evgroup.h"
#include "event/evspec.h"
#include "base/perf_sys.h"
#include "sample/offcpu.h"
#include "sample/ring.h"
#include "sample/ringmerge.h"
#include "sample/session.h"
#include "sample/workload.h"

#define MAX_CPUS 4096
#define SESSION_MAX_EVENTS 64

struct sfd {
	int fd;
	int ev;            /* event index */
	int ring;          /* index into rings */
	int hup;
};

struct session {
	struct evtab *evtab;
	struct sfd *fds;
	int nfds;
	struct ring **rings;
	int nrings;
	struct ringmerge *merge;   /* the rings drained together, oldest first */
	uint64_t **ids;    /* per event: its ids */
	size_t *nids;
	int nevents;
	struct pollfd *pfd;
	uint8_t *seen;     /* per ring: ready in this poll (any number of rings) */
	struct workload *wl;
	int wl_done, wl_status;
	int overwrite;
	struct offcpu *oc;    /* off-CPU sessions: the switch-out filter */
	int offcpu_ev;        /* the off-CPU event's index (the last), or -1 */
	uint64_t oc_watermark;   /* its samples up to this time can be paired */
	int stopped;          /* session__stop: nothing more comes */
	struct session_stats st;
	char last_error[256];
};

static void errf(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void errf(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* perf's default ring: perf_event_mlock_kb minus the control page, rounded
 * down to a power of two (512 KiB with the kernel's default of 516). */
static size_t default_pages(void)
{
	long page = sysconf(_SC_PAGESIZE);
	long long kb = perf_sys__sysctl("perf_event_mlock_kb", 516) - page / 1024;
	size_t pages, p = 1;

	if (kb <= 0)
		kb = 512;
	pages = (size_t)(kb * 1024 / page);
	while (p * 2 <= pages)
		p *= 2;
	return p;
}

/* Threads of a process from /proc/PID/task (the pid alone when unreadable). */
static int threads_of(pid_t pid, pid_t **out, int *n)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	int cap = 8, cnt = 0;
	pid_t *t = malloc(cap * sizeof *t);

	if (!t)
		return -ENOMEM;
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (d) {
		while ((de = readdir(d))) {
			long v;
			char *end;
			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			v = strtol(de->d_name, &end, 10);
			if (*end || v <= 0)
				continue;
			if (cnt == cap) {
				pid_t *nt = realloc(t, 2 * (size_t)cap * sizeof *t);
				if (!nt) {
					closedir(d);
					free(t);
					return -ENOMEM;
				}
				t = nt;
				cap *= 2;
			}
			t[cnt++] = (pid_t)v;
		}
		closedir(d);
	}
	if (!cnt)
		t[cnt++] = pid;
	*out = t;
	*n = cnt;
	return 0;
}

/*
 * Groups follow perf: the leader opens disabled (enabled on exec for a
 * command), members enabled so they follow it; in a group read at the
 * leader's samples (:S, or read_group), members do not sample themselves.
 * offcpu: the session's off-CPU event (context-switches at every
 * switch-out, with its call chain).
 */
static void fill_attr(struct perf_event_attr *a, const struct evgroup_event *ge,
		      const struct session_opts *o, int idx, int offcpu)
{
	uint64_t st = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
		      PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	const struct evspec *es = &ge->ev;
	int in_group = ge->leader >= 0;
	int read = in_group && ge->sample_read;
	int member = in_group && ge->leader != idx;
	/* an off-CPU sample is its call chain */
	int callchain = offcpu && o->callchain == SESSION_CALLCHAIN_NONE ?
			SESSION_CALLCHAIN_FP : o->callchain;

	*a = es->attr;
	a->size = sizeof *a;
	st |= o->sample_type;
	switch (callchain) {
	case SESSION_CALLCHAIN_FP:
		st |= PERF_SAMPLE_CALLCHAIN;
		break;
	case SESSION_CALLCHAIN_DWARF:
		/* perf's choice: kernel chain from the kernel, user side unwound
		 * later from registers and a copy of the stack. */
		st |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->exclude_callchain_user = 1;
		if (!o->sample_regs_user)
			a->sample_regs_user = 0xff0fffULL;  /* x86-64 GPRs, no segment regs */
		a->sample_stack_user = o->stack_size ? o->stack_size : 8192;
		/* As perf: data mappings too, so perf's own unwinder can read
		 * variables the CFI refers to. */
		a->mmap_data = 1;
		break;
	case SESSION_CALLCHAIN_LBR:
		st |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_BRANCH_STACK;
		a->branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_CALL_STACK;
		break;
	}
	if (o->sample_regs_user)
		a->sample_regs_user = o->sample_regs_user;
	if (o->sample_regs_intr)
		a->sample_regs_intr = o->sample_regs_intr;
	if (o->branch_sample_type)
		a->branch_sample_type = o->branch_sample_type;
	if ((st & PERF_SAMPLE_BRANCH_STACK) && !a->branch_sample_type)
		a->branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
	if ((st & PERF_SAMPLE_REGS_USER) && !a->sample_regs_user)
		a->sample_regs_user = 0xff0fffULL;
	if ((st & PERF_SAMPLE_REGS_INTR) && !a->sample_regs_intr)
		a->sample_regs_intr = 0xff0fffULL;
	if ((st & PERF_SAMPLE_STACK_USER) && !a->sample_stack_user)
		a->sample_stack_user = o->stack_size ? o->stack_size : 8192;
	if (o->max_stack)
		a->sample_max_stack = o->max_stack;
	if (read) {
		a->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
				 PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		st |= PERF_SAMPLE_READ;
	}
	/* A tracepoint's payload is its reason to be sampled. */
	if (a->type == PERF_TYPE_TRACEPOINT)
		st |= PERF_SAMPLE_RAW;
	a->sample_type = st;
	if (member && read) {
		a->sample_period = 0;  /* counted, read with the leader's samples */
		a->freq = 0;
	} else if (offcpu) {
		/* every switch-out */
		a->sample_period = 1;
		a->freq = 0;
	} else if (!es->has_period) {
		if ((a->type == PERF_TYPE_TRACEPOINT || es->kind == EVSPEC_UPROBE ||
		     es->kind == EVSPEC_KPROBE) && !o->period) {
			/* As perf: every hit of a tracepoint or probe, not a frequency. */
			a->sample_period = 1;
			a->freq = 0;
		} else if (o->period) {
			a->sample_period = o->period;
			a->freq = 0;
		} else {
			long long max = perf_sys__sysctl("perf_event_max_sample_rate", 100000);
			uint64_t f = o->freq ? o->freq : 4000;
			if (max > 0 && f > (uint64_t)max)
				f = (uint64_t)max;
			a->sample_freq = f;
			a->freq = 1;
		}
	}
	a->sample_id_all = 1;
	a->disabled = member ? 0 : 1;
	/* Never for probes: their config1 points into our memory, which the
	 * kernel reads again at each fork of a task that inherited the event
	 * (an exec'd command's fork would fail). */
	a->inherit = o->inherit && es->kind != EVSPEC_UPROBE && es->kind != EVSPEC_KPROBE;
	/* As perf: a group read at the leader's samples is not inherited
	 * (each task would read its own members, and perf script takes the
	 * deltas per event, not per task). */
	if (read)
		a->inherit = 0;
	a->enable_on_exec = o->argv && !member ? 1 : 0;
	if (o->exclude_kernel && offcpu) {
		/* The switch happens in the kernel: an event excluding it never
		 * fires.  User-only means user-only call chains here. */
		a->exclude_callchain_kernel = 1;
	} else if (o->exclude_kernel) {
		a->exclude_kernel = a->exclude_hv = 1;
	}
	if (o->use_clockid) {
		a->use_clockid = 1;
		a->clockid = o->clockid;
	}
	if (o->overwrite)
		a->write_backward = 1;
	if (o->wakeup_events) {
		a->wakeup_events = o->wakeup_events;
	} else if (o->watermark) {
		a->watermark = 1;
		a->wakeup_watermark = o->watermark;
	}
	if (idx == 0) {
		/* Symbolization needs the address-space history. */
		a->mmap = 1;
		a->mmap2 = 1;
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
		a->context_switch = o->context_switch || o->offcpu ? 1 : 0;
	}
}

void session__close(struct session *s)
{
	int i;

	if (!s)
		return;
	ringmerge__delete(s->merge);
	for (i = 0; i < s->nrings; i++)
		ring__unmap(s->rings[i]);
	for (i = 0; i < s->nfds; i++)
		if (s->fds[i].fd >= 0)
			close(s->fds[i].fd);
	for (i = 0; i < s->nevents; i++)
		free(s->ids ? s->ids[i] : NULL);
	offcpu__delete(s->oc);
	free(s->ids);
	free(s->nids);
	free(s->rings);
	free(s->fds);
	free(s->pfd);
	free(s->seen);
	workload__delete(s->wl);
	evtab__delete(s->evtab);
	free(s);
}

static int add_id(struct session *s, int ev, int fd)
{
	uint64_t id, *ids;
	int rc;

	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		return -errno;
	rc = evtab__add_id(s->evtab, ev, id);
	if (rc)
		return rc;
	ids = realloc(s->ids[ev], (s->nids[ev] + 1) * sizeof *ids);
	if (!ids)
		return -ENOMEM;
	ids[s->nids[ev]++] = id;
	s->ids[ev] = ids;
	return 0;
}

/* Why the off-CPU event did not open, in the words of what to do (the
 * usual advice, add :u, cannot help it). */
static void offcpu_errmsg(char *err, size_t errlen, int e, const struct perf_event_attr *a,
			  pid_t pid, int cpu)
{
	if (e == EACCES || e == EPERM)
		errf(err, errlen, "off-CPU samples are taken in the kernel, at each context switch "
		     "(%s): they need CAP_PERFMON (or CAP_SYS_ADMIN) or "
		     "kernel.perf_event_paranoid<=1 (it is %lld)", strerror(e),
		     perf_sys__sysctl("perf_event_paranoid", 2));
	else
		errmsg__open(err, errlen, e, "context-switches (for offcpu-time)", a, pid, cpu);
}

static int open_all(struct session *s, const struct session_opts *o,
		    struct perf_event_attr *attrs, const struct evgroup_event *specs,
		    const int *cpus, int ncpus, const pid_t *threads, int nthreads,
		    int cgroup_fd, char *err, size_t errlen)
{
	int per_cpu = cpus[0] >= 0;
	int c, t, e, rc;
	unsigned long flags = PERF_FLAG_FD_CLOEXEC | (cgroup_fd >= 0 ? PERF_FLAG_PID_CGROUP : 0);
	size_t pages = o->pages ? o->pages : default_pages();

	s->fds = calloc((size_t)ncpus * nthreads * s->nevents, sizeof *s->fds);
	s->rings = calloc((size_t)(per_cpu ? ncpus : nthreads), sizeof *s->rings);
	if (!s->fds || !s->rings)
		return -ENOMEM;
	for (c = 0; c < ncpus; c++) {
		for (t = 0; t < nthreads; t++) {
			int ring = per_cpu ? c : t;
			/* This (cpu, thread)'s fds start here: a member's leader is
			 * at its event index from it. */
			int base = s->nfds;
			for (e = 0; e < s->nevents; e++) {
				pid_t pid = cgroup_fd >= 0 ? cgroup_fd : threads[t];
				int l = specs[e].leader;
				int group = l >= 0 && l != e ? s->fds[base + l].fd : -1;
				int fd = perf_sys__open(&attrs[e], pid, cpus[c], group, flags);
				struct sfd *f;
				if (fd < 0 && e == s->offcpu_ev) {
					offcpu_errmsg(err, errlen, -fd, &attrs[e], pid, cpus[c]);
					return fd;
				}
				if (fd < 0) {
					errmsg__open(err, errlen, -fd, specs[e].text, &attrs[e],
						     pid, cpus[c]);
					return fd;
				}
				f = &s->fds[s->nfds++];
				f->fd = fd;
				f->ev = e;
				f->ring = ring;
				rc = add_id(s, e, fd);
				if (rc) {
					errf(err, errlen, "%s: PERF_EVENT_IOC_ID: %s",
					     specs[e].ev.name, strerror(-rc));
					return rc;
				}
				if (!s->rings[ring]) {
					rc = ring__mmap(fd, pages, o->overwrite, &s->rings[ring]);
					if (rc) {
						errmsg__mmap(err, errlen, -rc, pages);
						return rc;
					}
					s->nrings = ring + 1 > s->nrings ? ring + 1 : s->nrings;
				} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT,
						 ring__fd(s->rings[ring])) < 0) {
					rc = -errno;
					errf(err, errlen, "%s: PERF_EVENT_IOC_SET_OUTPUT: %s",
					     specs[e].ev.name, strerror(errno));
					return rc;
				}
			}
		}
	}
	return 0;
}

/* A cgroup as given (an absolute directory), else under the perf_event
 * hierarchy: cgroup2 at /sys/fs/cgroup, its hybrid place, or v1's. */
static int open_cgroup(const char *cg, char *err, size_t errlen)
{
	static const char *const roots[] = {
		"", "/sys/fs/cgroup/", "/sys/fs/cgroup/unified/", "/sys/fs/cgroup/perf_event/",
	};
	char path[4096];
	size_t i;
	int fd, e = ENOENT;

	for (i = 0; i < sizeof roots / sizeof roots[0]; i++) {
		if (!i && cg[0] != '/')
			continue;
		snprintf(path, sizeof path, "%s%s", roots[i], cg + (i && cg[0] == '/'));
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
		if (errno != ENOENT)
			e = errno;
	}
	errf(err, errlen, "cgroup '%s': %s (looked under /sys/fs/cgroup, its unified "
	     "and perf_event hierarchies)", cg, strerror(e));
	return -e;
}

int session__open(const struct session_opts *o, struct session **out,
		  char *err, size_t errlen)
{
	struct session *s;
	struct evgroup_event *specs = NULL;
	struct perf_event_attr *attrs = NULL;
	pid_t *threads = NULL, one;
	int nthreads = 0, *cpus = NULL, ncpus = 0, cgroup_fd = -1, rc, i;
	int per_cpu;

	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	if (o->nr_events < (o->offcpu ? 0 : 1) || o->nr_events > SESSION_MAX_EVENTS) {
		errf(err, errlen, "a session needs 1 to %d events (got %d)", SESSION_MAX_EVENTS,
		     o->nr_events);
		return -EINVAL;
	}
	if (o->offcpu && o->overwrite) {
		errf(err, errlen, "off-CPU samples pair each switch-out with its switch-in as "
		     "the rings drain: not with overwrite rings");
		return -EINVAL;
	}
	if (o->pages && (o->pages & (o->pages - 1))) {
		errf(err, errlen, "pages must be a power of two (got %zu)", o->pages);
		return -EINVAL;
	}
	if (o->callchain == SESSION_CALLCHAIN_DWARF && o->stack_size &&
	    (o->stack_size % 8 || o->stack_size > 65528)) {
		errf(err, errlen, "dwarf stack size must be a multiple of 8 up to 65528 (got %u)",
		     o->stack_size);
		return -EINVAL;
	}
	s = calloc(1, sizeof *s);
	if (!s)
		return -ENOMEM;
	s->overwrite = o->overwrite;
	/* Groups ({a,b}:S) expand into their members, up to 64 events; an
	 * off-CPU session's own event comes last. */
	s->offcpu_ev = -1;
	specs = calloc(SESSION_MAX_EVENTS + 1, sizeof *specs);
	if (!specs) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = o->nr_events == 0 ? 0 :
	     evgroup__expand(o->events, (size_t)o->nr_events, specs, SESSION_MAX_EVENTS,
			     err, errlen);
	if (rc == -E2BIG)
		errf(err, errlen, "a session takes at most %d events (groups counted by members)",
		     SESSION_MAX_EVENTS);
	if (rc < 0 || (rc == 0 && !o->offcpu)) {
		rc = rc < 0 ? rc : -EINVAL;
		goto fail;
	}
	s->nevents = rc;
	for (i = 0; o->read_group && i < s->nevents; i++) {
		/* read_group: one group of every event, read at the first's samples. */
		specs[i].leader = 0;
		specs[i].sample_read = 1;
	}
	if (o->offcpu) {
		struct evgroup_event *ge = &specs[s->nevents];
		rc = evspec__parse("context-switches", &ge->ev, err, errlen);
		if (rc)
			goto fail;
		ge->leader = -1;
		ge->sample_read = 0;
		s->offcpu_ev = s->nevents++;
	}
	s->evtab = evtab__new();
	s->ids = calloc((size_t)s->nevents, sizeof *s->ids);
	s->nids = calloc((size_t)s->nevents, sizeof *s->nids);
	attrs = calloc((size_t)s->nevents, sizeof *attrs);
	cpus = calloc(MAX_CPUS, sizeof *cpus);
	if (!s->evtab || !s->ids || !s->nids || !attrs || !cpus) {
		rc = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < s->nevents; i++) {
		int offcpu = i == s->offcpu_ev;
		fill_attr(&attrs[i], &specs[i], o, i, offcpu);
		if (offcpu) {
			/* Declared as perf's --off-cpu declares its event (a
			 * software bpf-output event), so perf treats its samples
			 * as off-CPU time; opened as context-switches. */
			struct perf_event_attr fa = attrs[i];
			fa.config = PERF_COUNT_SW_BPF_OUTPUT;
			rc = evtab__add(s->evtab, &fa, OFFCPU_EVENT_NAME);
		} else {
			rc = evtab__add(s->evtab, &attrs[i], specs[i].ev.name);
		}
		if (rc < 0)
			goto fail;
	}
	if (o->offcpu) {
		struct offcpu_opts oo = { .evidx = s->offcpu_ev, .thresh_ns = o->offcpu_thresh_ns,
					  .keep_switches = o->context_switch };
		rc = offcpu__new(&oo, &s->oc);
		if (rc)
			goto fail;
	}

	/* Who: a command, tids, a pid (all its threads), everyone, a cgroup. */
	if (o->argv) {
		rc = workload__prepare(o->argv, &s->wl);
		if (rc) {
			errf(err, errlen, "cannot start %s: %s", o->argv[0], strerror(-rc));
			goto fail;
		}
		one = workload__pid(s->wl);
		threads = &one;
		nthreads = 1;
	} else if (o->cgroup) {
		cgroup_fd = open_cgroup(o->cgroup, err, errlen);
		if (cgroup_fd < 0) {
			rc = cgroup_fd;
			goto fail;
		}
		one = -1;
		threads = &one;
		nthreads = 1;
	} else if (o->tids && o->nr_tids > 0) {
		threads = (pid_t *)o->tids;
		nthreads = o->nr_tids;
	} else if (o->pid < 0) {
		one = -1;
		threads = &one;
		nthreads = 1;
	} else {
		rc = threads_of(o->pid ? o->pid : getpid(), &threads, &nthreads);
		if (rc)
			goto fail;
	}

	/* Where: inherited, system-wide and cgroup events need per-CPU rings
	 * (the kernel refuses to mmap an inherited per-task event). */
	per_cpu = o->nr_cpus > 0 || o->inherit || cgroup_fd >= 0 || threads[0] == -1;
	if (o->nr_cpus > 0) {
		if (o->nr_cpus > MAX_CPUS) {
			rc = -EINVAL;
			errf(err, errlen, "too many cpus (%d)", o->nr_cpus);
			goto fail;
		}
		memcpy(cpus, o->cpus, (size_t)o->nr_cpus * sizeof *cpus);
		ncpus = o->nr_cpus;
	} else if (per_cpu) {
		ncpus = perf_sys__online_cpus(cpus, MAX_CPUS);
		if (ncpus <= 0) {
			rc = ncpus < 0 ? ncpus : -ENODEV;
			errf(err, errlen, "cannot read the online CPUs: %s", strerror(-rc));
			goto fail;
		}
	} else {
		cpus[0] = -1;
		ncpus = 1;
	}

	rc = open_all(s, o, attrs, specs, cpus, ncpus, threads, nthreads, cgroup_fd,
		      err, errlen);
	if (rc)
		goto fail;
	s->pfd = calloc((size_t)s->nfds, sizeof *s->pfd);
	s->seen = calloc((size_t)s->nrings, 1);
	if (!s->pfd || !s->seen) {
		rc = -ENOMEM;
		goto fail;
	}
	if (!o->overwrite && (rc = ringmerge__new(s->rings, s->nrings, s->evtab, &s->merge)))
		goto fail;
	for (i = 0; i < s->nfds; i++) {
		s->pfd[i].fd = s->fds[i].fd;
		s->pfd[i].events = POLLIN;
	}
	if (threads != &one && threads != o->tids)
		free(threads);
	if (cgroup_fd >= 0)
		close(cgroup_fd);
	free(specs);
	free(attrs);
	free(cpus);
	*out = s;
	return 0;
fail:
	if (rc == -ENOMEM && err && errlen && !err[0])
		errf(err, errlen, "out of memory");
	if (threads && threads != &one && threads != o->tids)
		free(threads);
	if (cgroup_fd >= 0)
		close(cgroup_fd);
	free(specs);
	free(attrs);
	free(cpus);
	session__close(s);
	return rc;
}

static int each_fd(struct session *s, unsigned long req)
{
	int i, rc = 0;

	for (i = 0; i < s->nfds; i++) {
		/* Group members follow their leader. */
		const struct perf_event_attr *a = evtab__attr(s->evtab, s->fds[i].ev);
		if (a->disabled == 0 && s->fds[i].ev > 0)
			continue;
		if (ioctl(s->fds[i].fd, req, 0) < 0 && !rc)
			rc = -errno;
	}
	return rc;
}

int session__start(struct session *s)
{
	s->stopped = 0;
	if (s->wl)
		return workload__start(s->wl);
	return each_fd(s, PERF_EVENT_IOC_ENABLE);
}

int session__stop(struct session *s)
{
	s->stopped = 1;
	return each_fd(s, PERF_EVENT_IOC_DISABLE);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int target_gone(struct session *s)
{
	int i, live = 0;

	if (s->wl && !s->wl_done && workload__try_wait(s->wl, &s->wl_status) == 1)
		s->wl_done = 1;
	if (s->wl_done)
		return 1;
	for (i = 0; i < s->nfds; i++)
		live += !s->fds[i].hup;
	return live == 0;
}

int session__poll(struct session *s, int timeout_ms, int *done)
{
	int64_t end = timeout_ms >= 0 ? now_ms() + timeout_ms : 0;
	int i, n, ready = 0;

	if (done)
		*done = 0;
	for (;;) {
		int wait = timeout_ms < 0 ? -1 : (int)(end - now_ms());
		if (timeout_ms >= 0 && wait < 0)
			wait = 0;
		/* A gone command is not worth waiting for; data left is drained
		 * by the caller. */
		if (target_gone(s)) {
			wait = 0;
			if (done)
				*done = 1;
		}
		n = poll(s->pfd, (nfds_t)s->nfds, wait);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		break;
	}
	memset(s->seen, 0, (size_t)s->nrings);
	for (i = 0; i < s->nfds; i++) {
		short re = s->pfd[i].revents;
		int r = s->fds[i].ring;
		if (re & (POLLHUP | POLLERR)) {
			/* Keep it out of later polls, or poll would spin. */
			s->fds[i].hup = 1;
			s->pfd[i].fd = -1;
		}
		if ((re & POLLIN) && !s->seen[r]) {
			s->seen[r] = 1;
			ready++;
		}
	}
	if (ready)
		s->st.wakeups++;
	if (done && target_gone(s))
		*done = 1;
	return ready;
}

struct raw_ctx {
	struct session *s;
	session_raw_fn fn;
	void *arg;
	int stopped;
	int err;           /* fn's -errno: the drain fails with it */
};

static void count(struct session *s, const struct perf_event_header *h)
{
	uint64_t v;

	s->st.records++;
	s->st.bytes += h->size;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		s->st.samples++;
		break;
	case PERF_RECORD_LOST:
		if (h->size >= 24) {
			memcpy(&v, (const uint8_t *)h + 16, 8);
			s->st.lost += v;
		}
		s->st.lost_records++;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (h->size >= 16) {
			memcpy(&v, (const uint8_t *)h + 8, 8);
			s->st.lost += v;
		}
		s->st.lost_records++;
		break;
	case PERF_RECORD_THROTTLE:
		s->st.throttled++;
		break;
	case PERF_RECORD_UNTHROTTLE:
		s->st.unthrottled++;
		break;
	}
}

static int raw_one(void *arg, const struct perf_event_header *h)
{
	struct raw_ctx *c = arg;
	int v = c->fn(c->arg, h);

	if (v)
		c->stopped = 1;
	if (v < 0)
		c->err = v;
	else
		count(c->s, h);
	return v;
}

/* Off-CPU sessions: every record through the switch-out filter first. */
static int offcpu_one(void *arg, const struct perf_event_header *h)
{
	struct raw_ctx *c = arg;

	return offcpu__feed(c->s->oc, c->s->evtab, h, raw_one, c);
}

/* Off-CPU samples the watermark allows; nonzero when the consumer
 * stopped (or failed) on one. */
static int offcpu_flush(struct raw_ctx *c, int *total)
{
	uint64_t before = c->s->st.records;
	int rc = offcpu__flush(c->s->oc, c->s->oc_watermark, raw_one, c);

	*total += (int)(c->s->st.records - before);
	if (rc < 0 && !c->err)
		c->err = rc;
	return rc;
}

int session__drain_raw(struct session *s, session_raw_fn fn, void *arg)
{
	struct raw_ctx c = { s, fn, arg, 0, 0 };
	int n, corrupt, total = 0;
	/* after a whole pass, every record up to this time has been fed */
	uint64_t pass_mark = s->oc ? offcpu__seen(s->oc) : 0;

	if (s->overwrite) {
		snprintf(s->last_error, sizeof s->last_error,
			 "an overwrite session is read with snapshot(), not drained");
		return -EINVAL;
	}
	/* what an earlier call left (its consumer stopped) */
	if (s->oc && offcpu_flush(&c, &total))
		return c.err ? c.err : total;
	n = ringmerge__drain(s->merge, s->oc ? offcpu_one : raw_one, &c, &corrupt);
	if (corrupt) {
		/* Those rings dropped what they could not frame and go on:
		 * counted like records that do not decode. */
		s->st.errors += (uint64_t)corrupt;
		snprintf(s->last_error, sizeof s->last_error,
			 "%d ring%s held a record of a bad size: the data after it was dropped",
			 corrupt, corrupt > 1 ? "s" : "");
	}
	if (n < 0)
		return n;
	total += n;
	/* The record fn failed on stays in its ring for the next call. */
	if (c.err) {
		snprintf(s->last_error, sizeof s->last_error,
			 "draining the rings: %s", strerror(-c.err));
		return c.err;
	}
	if (s->oc && !c.stopped) {
		/* a whole pass: stopped events have no records left to come */
		s->oc_watermark = s->stopped ? UINT64_MAX : pass_mark;
		if (offcpu_flush(&c, &total) < 0)
			return c.err;
	}
	return total;
}

struct rec_ctx {
	struct session *s;
	session_rec_fn fn;
	void *arg;
};

static int rec_one(void *arg, const struct perf_event_header *h)
{
	struct rec_ctx *c = arg;
	struct record r;
	char msg[200];

	if (record__decode(c->s->evtab, h, h->size, &r, msg, sizeof msg)) {
		c->s->st.errors++;
		snprintf(c->s->last_error, sizeof c->s->last_error, "%s", msg);
		return 0;
	}
	return c->fn(c->arg, &r);
}

int session__drain(struct session *s, session_rec_fn fn, void *arg)
{
	struct rec_ctx c = { s, fn, arg };

	return session__drain_raw(s, rec_one, &c);
}

int session__snapshot(struct session *s, session_rec_fn fn, void *arg)
{
	struct rec_ctx c = { s, fn, arg };
	int i, total = 0;

	if (!s->overwrite)
		return -EINVAL;
	for (i = 0; i < s->nrings; i++) {
		int n = ring__snapshot(s->rings[i], rec_one, &c);
		if (n < 0)
			return n;
		total += n;
	}
	return total;
}

void session__stats(const struct session *s, struct session_stats *st)
{
	*st = s->st;
	if (s->oc) {
		struct offcpu_stats o;
		offcpu__stats(s->oc, &o);
		st->offcpu_switch_outs = o.switch_outs;
		st->offcpu_samples = o.samples;
		st->offcpu_ns = o.ns;
		st->offcpu_preempted = o.preempted;
		st->offcpu_short = o.short_waits;
		st->offcpu_unmatched = o.unmatched;
	}
}

const char *session__last_error(const struct session *s)
{
	return s->last_error[0] ? s->last_error : NULL;
}

const struct evtab *session__evtab(const struct session *s)
{
	return s->evtab;
}

size_t session__ids(const struct session *s, int idx, const uint64_t **ids)
{
	if (idx < 0 || idx >= s->nevents) {
		*ids = NULL;
		return 0;
	}
	*ids = s->ids[idx];
	return s->nids[idx];
}

pid_t session__workload_pid(const struct session *s)
{
	return s->wl ? workload__pid(s->wl) : -1;
}

int session__workload_wait(struct session *s, int *status)
{
	int rc;

	if (!s->wl)
		return -ECHILD;
	if (s->wl_done) {
		*status = s->wl_status;
		return 0;
	}
	rc = workload__wait(s->wl, status);
	if (!rc) {
		s->wl_done = 1;
		s->wl_status = *status;
	}
	return rc;
}

int session__nr_rings(const struct session *s)
{
	return s->nrings;
}
