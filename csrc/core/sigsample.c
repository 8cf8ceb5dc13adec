/* Signal-driven sampling of the calling thread (see sigsample.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include "perf_sys.h"
#include "sigsample.h"

#define MAX_SAMPLERS SIGSAMPLE_MAX_OPEN
/*
 * Overflows allowed per PERF_EVENT_IOC_REFRESH.  Each overflow signals
 * (POLL_IN); the last one of a budget disables the event and signals
 * POLL_HUP, and only then does the handler re-arm: one ioctl per budget,
 * not per sample, and an event whose signals stop being handled (a thread
 * blocked with the signal masked) stops itself after one budget.
 */
#define SIGSAMPLE_BUDGET 64

struct sigsample {
	int fds[1 + SIGSAMPLE_MAX_COUNTERS];
	unsigned nfds;
	int tid;
	struct perf_event_attr attr;
	atomic_int armed;
	atomic_uint_fast64_t pending;
	atomic_uint_fast64_t signals;
	void (*notify)(void *arg);
	void *arg;
	int started;                  /* holds a reference on the handler */
};

/*
 * The handler finds a sampler by si_fd in this table: a linear scan of
 * atomics, no lock, so it is async-signal-safe.  Writers hold table_lock.
 */
static struct {
	atomic_int fd;
	_Atomic(struct sigsample *) s;
} table[MAX_SAMPLERS];

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static int signo;                     /* 0: no handler installed */
static int handler_refs;
static struct sigaction old_action;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	int fd = si->si_fd;
	unsigned i;
	(void)sig;
	(void)uc;
	if (si->si_code != POLL_IN && si->si_code != POLL_HUP)
		goto out;             /* not from the kernel's fasync */
	for (i = 0; i < MAX_SAMPLERS; i++) {
		struct sigsample *s;
		if (atomic_load_explicit(&table[i].fd, memory_order_acquire) != fd)
			continue;
		s = atomic_load_explicit(&table[i].s, memory_order_acquire);
		if (s == NULL)
			continue;
		atomic_fetch_add_explicit(&s->pending, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->signals, 1, memory_order_relaxed);
		/* POLL_HUP: the overflow budget is spent and the kernel
		 * disabled the event; give it another. */
		if (si->si_code == POLL_HUP &&
		    atomic_load_explicit(&s->armed, memory_order_relaxed))
			ioctl(fd, PERF_EVENT_IOC_REFRESH, SIGSAMPLE_BUDGET);
		if (s->notify != NULL)
			s->notify(s->arg);
		break;
	}
out:
	errno = saved;
}

/* The highest real-time signal with the default disposition. */
static int pick_signal(void)
{
	int sig;
	for (sig = SIGRTMAX; sig >= SIGRTMIN; sig--) {
		struct sigaction sa;
		if (sigaction(sig, NULL, &sa) != 0)
			continue;
		if (!(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL)
			return sig;
	}
	return -EBUSY;
}

/* Caller holds table_lock. */
static int handler_get(void)
{
	struct sigaction sa;
	int sig;
	if (handler_refs++ > 0)
		return 0;
	sig = pick_signal();
	if (sig < 0) {
		handler_refs--;
		return sig;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, &old_action) != 0) {
		handler_refs--;
		return -errno;
	}
	signo = sig;
	return 0;
}

/*
 * Signals already queued for this thread would hit the old disposition
 * (for a real-time signal, SIG_DFL terminates): consume them first.
 */
static void drain_queued(int sig)
{
	sigset_t set, old;
	struct timespec zero = { 0, 0 };
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	while (sigtimedwait(&set, NULL, &zero) == sig)
		;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Caller holds table_lock. */
static void handler_put(void)
{
	struct sigaction cur;
	if (handler_refs == 0 || --handler_refs > 0)
		return;
	drain_queued(signo);
	/* Give the signal back only if nobody replaced our handler meanwhile. */
	if (sigaction(signo, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
	    cur.sa_sigaction == on_signal)
		sigaction(signo, &old_action, NULL);
	signo = 0;
}

static int thread_id(void)
{
	return (int)syscall(SYS_gettid);
}

static int open_fd(struct perf_event_attr *attr, int group_fd)
{
	return perf_sys__open(attr, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

int sigsample__open(const struct sigsample_opts *opts, struct sigsample **out,
		    int *failed)
{
	struct sigsample *s;
	struct perf_event_attr attr;
	unsigned i;
	int fd, err;

	*out = NULL;
	if (failed != NULL)
		*failed = 0;
	if (opts->nr_counters > SIGSAMPLE_MAX_COUNTERS)
		return -E2BIG;
	s = calloc(1, sizeof *s);
	if (s == NULL)
		return -ENOMEM;
	s->tid = thread_id();
	s->notify = opts->notify;
	s->arg = opts->arg;

	attr = opts->attr;
	attr.size = sizeof attr;
	attr.disabled = 1;
	attr.inherit = 0;             /* one thread: the one the signal goes to */
	attr.wakeup_events = 1;
	attr.watermark = 0;
	attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
			   PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	fd = open_fd(&attr, -1);
	if (fd < 0) {
		free(s);
		return fd;
	}
	s->fds[s->nfds++] = fd;
	s->attr = attr;
	for (i = 0; i < opts->nr_counters; i++) {
		struct perf_event_attr c = opts->counters[i];
		c.size = sizeof c;
		c.disabled = 0;       /* counts whenever the leader runs */
		c.inherit = 0;
		c.sample_period = 0;
		c.freq = 0;
		c.sample_type = 0;
		c.read_format = attr.read_format;
		fd = open_fd(&c, s->fds[0]);
		if (fd < 0) {
			if (failed != NULL)
				*failed = (int)i + 1;
			err = fd;
			goto fail;
		}
		s->fds[s->nfds++] = fd;
	}

	/* Overflows of the leader become our signal, sent to this thread. */
	{
		struct f_owner_ex owner = { F_OWNER_TID, s->tid };
		int flags;
		pthread_mutex_lock(&table_lock);
		err = handler_get();
		pthread_mutex_unlock(&table_lock);
		if (err < 0)
			goto fail;
		s->started = 1;
		fd = s->fds[0];
		flags = fcntl(fd, F_GETFL);
		if (flags < 0 || fcntl(fd, F_SETFL, flags | O_ASYNC) < 0 ||
		    fcntl(fd, F_SETSIG, signo) < 0 ||
		    fcntl(fd, F_SETOWN_EX, &owner) < 0) {
			err = -errno;
			goto fail;
		}
	}

	pthread_mutex_lock(&table_lock);
	for (i = 0; i < MAX_SAMPLERS; i++) {
		if (atomic_load(&table[i].s) == NULL) {
			atomic_store(&table[i].fd, s->fds[0]);
			atomic_store(&table[i].s, s);
			break;
		}
	}
	pthread_mutex_unlock(&table_lock);
	if (i == MAX_SAMPLERS) {
		if (failed != NULL)
			*failed = -1;
		err = -EMFILE;
		goto fail;
	}
	*out = s;
	return 0;
fail:
	if (s->started) {
		pthread_mutex_lock(&table_lock);
		handler_put();
		pthread_mutex_unlock(&table_lock);
	}
	while (s->nfds > 0)
		close(s->fds[--s->nfds]);
	free(s);
	return err;
}

int sigsample__start(struct sigsample *s)
{
	atomic_store(&s->armed, 1);
	if (ioctl(s->fds[0], PERF_EVENT_IOC_REFRESH, SIGSAMPLE_BUDGET) < 0) {
		atomic_store(&s->armed, 0);
		return -errno;
	}
	return 0;
}

int sigsample__stop(struct sigsample *s)
{
	atomic_store(&s->armed, 0);
	if (ioctl(s->fds[0], PERF_EVENT_IOC_DISABLE, 0) < 0)
		return -errno;
	return 0;
}

void sigsample__close(struct sigsample *s)
{
	unsigned i;
	if (s == NULL)
		return;
	sigsample__stop(s);
	pthread_mutex_lock(&table_lock);
	for (i = 0; i < MAX_SAMPLERS; i++) {
		if (atomic_load(&table[i].s) == s) {
			atomic_store(&table[i].s, NULL);
			atomic_store(&table[i].fd, -1);
		}
	}
	while (s->nfds > 0)
		close(s->fds[--s->nfds]);
	if (s->started)
		handler_put();
	pthread_mutex_unlock(&table_lock);
	free(s);
}

uint64_t sigsample__take(struct sigsample *s)
{
	return atomic_exchange(&s->pending, 0);
}

uint64_t sigsample__signals(const struct sigsample *s)
{
	return atomic_load(&((struct sigsample *)s)->signals);
}

int sigsample__read(struct sigsample *s, uint64_t *vals, size_t n,
		    uint64_t *enabled, uint64_t *running)
{
	/* nr, enabled, running, then {value, id} per event. */
	uint64_t buf[3 + 2 * (1 + SIGSAMPLE_MAX_COUNTERS)];
	ssize_t got;
	size_t i, nr;
	got = read(s->fds[0], buf, sizeof buf);
	if (got < 0)
		return -errno;
	if (got < (ssize_t)(3 * sizeof(uint64_t)))
		return -EIO;
	nr = (size_t)buf[0];
	if (nr > 1 + SIGSAMPLE_MAX_COUNTERS ||
	    (size_t)got < (3 + 2 * nr) * sizeof(uint64_t))
		return -EIO;
	for (i = 0; i < n; i++)
		vals[i] = i < nr ? buf[3 + 2 * i] : 0;
	if (enabled != NULL)
		*enabled = buf[1];
	if (running != NULL)
		*running = buf[2];
	return 0;
}

int sigsample__fd(const struct sigsample *s)
{
	return s->fds[0];
}

const struct perf_event_attr *sigsample__attr(const struct sigsample *s)
{
	return &s->attr;
}

int sigsample__signo(void)
{
	int sig;
	pthread_mutex_lock(&table_lock);
	sig = signo;
	pthread_mutex_unlock(&table_lock);
	return sig;
}

int sigsample__tid(const struct sigsample *s)
{
	return s->tid;
}
