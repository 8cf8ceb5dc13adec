/* Signal-driven sampling of the calling thread (see sigsample.h). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include "base/perf_sys.h"
#include "sample/sigsample.h"

#ifndef TRAP_PERF
#define TRAP_PERF 6                   /* asm-generic/siginfo.h */
#endif

#define MAX_SAMPLERS SIGSAMPLE_MAX_OPEN
/*
 * Overflows allowed per PERF_EVENT_IOC_REFRESH (real-time mode).  Each
 * overflow signals (POLL_IN); the last one of a budget disables the event
 * and signals POLL_HUP, and only then does the handler re-arm: one ioctl per
 * budget, not per sample, and an event whose signals stop being handled (a
 * thread blocked with the signal masked) stops itself after one budget.
 */
#define SIGSAMPLE_BUDGET 64
/* attr.sig_data of our SIGTRAP events: a tag, the sampler's generation and
 * its table slot + 1, so a TRAP_PERF from someone else's event, or one still
 * queued for a closed sampler whose slot was taken again, is told apart. */
#define TRAP_TAG 0x6c75610000000000ULL  /* "lua" */
#define TRAP_TAG_MASK 0xffffff0000000000ULL
#define TRAP_GEN_SHIFT 8
#define TRAP_GEN_MASK 0xffffffffULL
#define TRAP_SLOT_MASK 0xffULL

struct sigsample {
	int fds[1 + SIGSAMPLE_MAX_COUNTERS];
	unsigned nfds;
	int tid;
	int trap;                     /* SIGTRAP mode, else real-time */
	unsigned slot;
	uint32_t gen;                 /* tells reused slots apart */
	struct perf_event_attr attr;
	atomic_int armed;
	atomic_uint_fast64_t pending;
	atomic_uint_fast64_t signals;
	void (*notify)(void *arg);
	void *arg;
	struct handler *handler;      /* the reference it holds, or NULL */
	uint64_t jitter_period;       /* opts.jitter: the mean period, else 0 */
	uint64_t rng;                 /* xorshift state, the handler's alone */
};

/*
 * The handlers find a sampler in this table by slot (SIGTRAP's sig_data)
 * or by si_fd (fasync): atomics, no lock, so they are async-signal-safe.
 * Writers hold table_lock.  A handler counts itself in `busy` while it uses
 * the sampler it found, and whoever unpublishes a sampler waits for busy to
 * drop to 0 before freeing it or calling its owner's teardown: a handler
 * running on another thread never sees freed memory.
 */
static struct {
	_Atomic(struct sigsample *) s;
	atomic_int fd;
	atomic_uint busy;
} table[MAX_SAMPLERS];

static atomic_uint next_gen;

/* A signal we took, with what was there before; guarded by table_lock. */
struct handler {
	int sig;                      /* 0: not installed */
	int refs;
	int lingering;                /* installed with no sampler (see handler_put) */
	struct sigaction old;
	void (*action)(int, siginfo_t *, void *);
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

/* The next period of a jittered sampler (the handler runs on the sampled
 * thread, one at a time: the state needs no atomics). */
static void jitter_next(struct sigsample *s)
{
	uint64_t x = s->rng, p;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	s->rng = x;
	p = s->jitter_period / 2 + x % s->jitter_period;
	ioctl(s->fds[0], PERF_EVENT_IOC_PERIOD, &p);
}

static void count_overflow(struct sigsample *s)
{
	if (s->jitter_period != 0 && atomic_load(&s->armed))
		jitter_next(s);
	atomic_fetch_add_explicit(&s->pending, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->signals, 1, memory_order_relaxed);
	/* Not after stop: the owner is tearing down what notify touches. */
	if (s->notify != NULL && atomic_load(&s->armed))
		s->notify(s->arg);
}

/* Waits until no handler uses the sampler of slot i (sequentially
 * consistent with the handler's busy increment and load of the slot). */
static void slot_quiesce(unsigned i)
{
	while (atomic_load(&table[i].busy) != 0)
		;
}

static void on_realtime(int sig, siginfo_t *si, void *uc)
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
		int found = 0;
		if (atomic_load_explicit(&table[i].fd, memory_order_acquire) != fd)
			continue;
		atomic_fetch_add(&table[i].busy, 1);
		s = atomic_load(&table[i].s);
		/* The fd number and the thread: an fd number reused by a sampler
		 * of another thread is not this signal's. */
		if (s != NULL && !s->trap && atomic_load(&table[i].fd) == fd &&
		    s->tid == (int)syscall(SYS_gettid)) {
			/* POLL_HUP: the overflow budget is spent and the kernel
			 * disabled the event; give it another. */
			if (si->si_code == POLL_HUP && atomic_load(&s->armed))
				ioctl(fd, PERF_EVENT_IOC_REFRESH, SIGSAMPLE_BUDGET);
			count_overflow(s);
			found = 1;
		}
		atomic_fetch_sub(&table[i].busy, 1);
		if (found)
			break;
	}
out:
	errno = saved;
}

static struct handler rt_handler = { .action = on_realtime };
static void on_trap(int sig, siginfo_t *si, void *uc);
static struct handler trap_handler = { .action = on_trap };

/* si_perf_data: the word after si_addr in the kernel's _sigfault (glibc's
 * siginfo_t does not name it). */
static uint64_t perf_data_of(const siginfo_t *si)
{
	unsigned long data;
	memcpy(&data, (const char *)&si->si_addr + sizeof si->si_addr, sizeof data);
	return data;
}

/* A SIGTRAP that is not ours gets what it would have got without us. */
static void chain_trap(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *old = &trap_handler.old;
	if (old->sa_flags & SA_SIGINFO) {
		if (old->sa_sigaction != NULL)
			old->sa_sigaction(sig, si, uc);
	} else if (old->sa_handler == SIG_DFL) {
		/* The default action (a core dump) once this handler returns. */
		struct sigaction dfl;
		memset(&dfl, 0, sizeof dfl);
		dfl.sa_handler = SIG_DFL;
		sigaction(sig, &dfl, NULL);
		raise(sig);
	} else if (old->sa_handler != SIG_IGN) {
		old->sa_handler(sig);
	}
}

static void on_trap(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	uint64_t data;
	if (si->si_code != TRAP_PERF ||
	    ((data = perf_data_of(si)) & TRAP_TAG_MASK) != TRAP_TAG) {
		chain_trap(sig, si, uc);
	} else if ((data & TRAP_SLOT_MASK) >= 1 && (data & TRAP_SLOT_MASK) <= MAX_SAMPLERS) {
		unsigned i = (unsigned)(data & TRAP_SLOT_MASK) - 1;
		uint32_t gen = (uint32_t)((data >> TRAP_GEN_SHIFT) & TRAP_GEN_MASK);
		struct sigsample *s;
		atomic_fetch_add(&table[i].busy, 1);
		s = atomic_load(&table[i].s);
		/* NULL or another generation: a signal still queued for a
		 * sampler that was closed (and whose slot may be taken again). */
		if (s != NULL && s->trap && s->gen == gen)
			count_overflow(s);
		atomic_fetch_sub(&table[i].busy, 1);
	}
	errno = saved;
}

/* The highest real-time signal with the default disposition. */
static int pick_realtime(void)
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
static int handler_get(struct handler *h)
{
	struct sigaction sa, cur;
	int sig;
	if (h->refs++ > 0)
		return 0;
	if (h->lingering) {
		h->lingering = 0;
		/* Still ours: keep it, and the disposition saved before it. */
		if (sigaction(h->sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
		    cur.sa_sigaction == h->action)
			return 0;
	}
	sig = h == &trap_handler ? SIGTRAP : pick_realtime();
	if (sig < 0) {
		h->refs--;
		return sig;
	}
	if (sigaction(sig, NULL, &h->old) != 0) {
		h->refs--;
		return -errno;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = h->action;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) != 0) {
		h->refs--;
		return -errno;
	}
	h->sig = sig;
	return 0;
}

/*
 * Signals of the closed samplers still queued for a thread that blocks
 * them would reach the old disposition (for a real-time signal or SIGTRAP,
 * SIG_DFL terminates the process).  Setting SIG_IGN discards the signal
 * from every thread's queue (POSIX; Linux's do_sigaction flushes them),
 * so the last close goes through it before giving the old one back.  A
 * non-perf SIGTRAP pending in a blocked thread at that moment is lost.
 */
static void discard_queued(int sig)
{
	struct sigaction ign;
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(sig, &ign, NULL);
}

/* This object stays mapped for good: a handler in it outlives its users
 * (the handle is never closed, on purpose). */
static void *pinned;

static void pin_module(void)
{
	Dl_info info;
	if (pinned == NULL && dladdr((void *)on_trap, &info) && info.dli_fname != NULL)
		pinned = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

/*
 * Caller holds table_lock.  late: a signal of the sampler just closed may
 * still come.  Since Linux 6.12 an event's SIGTRAP is sent by task work
 * that holds its own reference, so a close from another thread than the
 * sampled one returns before the sampled thread has run it: our handler
 * stays (it drops that signal, and passes foreign ones on to the old
 * disposition as before) until a sampler is opened again or a last close
 * comes from the sampled thread itself.
 */
static void handler_put(struct handler *h, int late)
{
	struct sigaction cur;
	if (h->refs == 0 || --h->refs > 0)
		return;
	if (late) {
		h->lingering = 1;
		pin_module();
		return;
	}
	h->lingering = 0;
	/* Give the signal back only if nobody replaced our handler meanwhile. */
	if (sigaction(h->sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
	    cur.sa_sigaction == h->action) {
		discard_queued(h->sig);
		sigaction(h->sig, &h->old, NULL);
	}
	h->sig = 0;
}

/*
 * Real-time signals queued for this thread before an fd number is given
 * to a new sampler: delivered now, to the samplers they belong to, so none
 * is counted against the new one (fasync names the event by fd only).
 * Queued signals of a closed event only wait on its own thread, the thread
 * a new sampler with the same fd number would be opened on.
 */
static void deliver_queued(int sig)
{
	sigset_t set, old;
	siginfo_t si;
	struct timespec zero = { 0, 0 };
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	while (sigtimedwait(&set, &si, &zero) == sig)
		on_realtime(sig, &si, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * attr.sigtrap exists since Linux 5.13, but before 5.18 a blocked SIGTRAP
 * was forced (the handler reset, the process killed): only 5.18 and later.
 */
static int kernel_queues_sigtrap(void)
{
	struct utsname u;
	int major = 0, minor = 0;
	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return 0;
	return major > 5 || (major == 5 && minor >= 18);
}

static int thread_id(void)
{
	return (int)syscall(SYS_gettid);
}

static int open_fd(struct perf_event_attr *attr, int group_fd)
{
	return perf_sys__open(attr, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

/* Caller holds table_lock.  A free slot, reserved for s, or -1. */
static int slot_reserve(struct sigsample *s)
{
	unsigned i;
	for (i = 0; i < MAX_SAMPLERS; i++) {
		if (atomic_load(&table[i].s) == NULL) {
			atomic_store(&table[i].fd, -1);
			atomic_store(&table[i].s, s);
			return (int)i;
		}
	}
	return -1;
}

/* Opens the leader for this thread, delivering overflows as SIGTRAP or
 * with the fasync plumbing added later.  fd or -errno. */
static int open_leader(struct sigsample *s, const struct perf_event_attr *given, int trap)
{
	struct perf_event_attr attr = *given;
	int fd;
	attr.size = sizeof attr;
	attr.disabled = 1;
	attr.inherit = 0;             /* one thread: the one the signal goes to */
	attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
			   PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	if (trap) {
		/* No ring wakeups either: each one is an irq_work of its own.
		 * The owner drains the ring at its safe points. */
		attr.sigtrap = 1;
		attr.remove_on_exec = 1;   /* required with sigtrap */
		attr.sig_data = TRAP_TAG | ((uint64_t)s->gen << TRAP_GEN_SHIFT) | (s->slot + 1);
		attr.wakeup_events = 0;
		attr.watermark = 0;
	} else {
		attr.wakeup_events = 1;
		attr.watermark = 0;
	}
	fd = open_fd(&attr, -1);
	if (fd >= 0)
		s->attr = attr;
	return fd;
}

int sigsample__open(const struct sigsample_opts *opts, struct sigsample **out,
		    int *failed)
{
	struct sigsample *s;
	unsigned i;
	int fd, err, slot;

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
	if (opts->jitter && !opts->attr.freq && opts->attr.sample_period >= 2) {
		s->jitter_period = opts->attr.sample_period;
		s->rng = ((uint64_t)(unsigned)s->tid << 32 | (uint64_t)(uintptr_t)s) | 1;
	}
	switch (opts->signal) {
	case SIGSAMPLE_SIGNAL_TRAP:
		if (!kernel_queues_sigtrap()) {
			free(s);
			return -EOPNOTSUPP;
		}
		s->trap = 1;
		break;
	case SIGSAMPLE_SIGNAL_REALTIME:
		s->trap = 0;
		break;
	default:
		s->trap = kernel_queues_sigtrap();
		break;
	}

	pthread_mutex_lock(&table_lock);
	slot = slot_reserve(s);
	pthread_mutex_unlock(&table_lock);
	if (slot < 0) {
		free(s);
		if (failed != NULL)
			*failed = -1;
		return -EMFILE;
	}
	s->slot = (unsigned)slot;
	s->gen = (uint32_t)atomic_fetch_add(&next_gen, 1);

	fd = open_leader(s, &opts->attr, s->trap);
	if (fd == -EINVAL && s->trap && opts->signal == SIGSAMPLE_SIGNAL_AUTO) {
		/* A PMU or kernel that refuses sigtrap: the fasync signal. */
		s->trap = 0;
		fd = open_leader(s, &opts->attr, 0);
	}
	if (fd < 0) {
		err = fd;
		goto fail;
	}
	s->fds[s->nfds++] = fd;
	for (i = 0; i < opts->nr_counters; i++) {
		struct perf_event_attr c = opts->counters[i];
		c.size = sizeof c;
		c.disabled = 0;       /* counts whenever the leader runs */
		c.inherit = 0;
		c.sample_period = 0;
		c.freq = 0;
		c.sample_type = 0;
		c.read_format = s->attr.read_format;
		fd = open_fd(&c, s->fds[0]);
		if (fd < 0) {
			if (failed != NULL)
				*failed = (int)i + 1;
			err = fd;
			goto fail;
		}
		s->fds[s->nfds++] = fd;
	}

	pthread_mutex_lock(&table_lock);
	err = handler_get(s->trap ? &trap_handler : &rt_handler);
	if (err == 0)
		s->handler = s->trap ? &trap_handler : &rt_handler;
	pthread_mutex_unlock(&table_lock);
	if (err < 0)
		goto fail;
	if (!s->trap) {
		/* Overflows of the leader become our signal, sent to this thread. */
		struct f_owner_ex owner = { F_OWNER_TID, s->tid };
		int flags;
		fd = s->fds[0];
		flags = fcntl(fd, F_GETFL);
		if (flags < 0 || fcntl(fd, F_SETFL, flags | O_ASYNC) < 0 ||
		    fcntl(fd, F_SETSIG, rt_handler.sig) < 0 ||
		    fcntl(fd, F_SETOWN_EX, &owner) < 0) {
			err = -errno;
			goto fail;
		}
		deliver_queued(rt_handler.sig);
	}
	atomic_store(&table[s->slot].fd, s->fds[0]);
	*out = s;
	return 0;
fail:
	pthread_mutex_lock(&table_lock);
	atomic_store(&table[s->slot].s, NULL);
	slot_quiesce(s->slot);
	if (s->handler != NULL)
		handler_put(s->handler, 0);
	pthread_mutex_unlock(&table_lock);
	while (s->nfds > 0)
		close(s->fds[--s->nfds]);
	free(s);
	return err;
}

int sigsample__start(struct sigsample *s)
{
	int rc;
	atomic_store(&s->armed, 1);
	if (s->trap)
		rc = ioctl(s->fds[0], PERF_EVENT_IOC_ENABLE, 0);
	else
		rc = ioctl(s->fds[0], PERF_EVENT_IOC_REFRESH, SIGSAMPLE_BUDGET);
	if (rc < 0) {
		atomic_store(&s->armed, 0);
		return -errno;
	}
	return 0;
}

int sigsample__stop(struct sigsample *s)
{
	int rc = 0;
	atomic_store(&s->armed, 0);
	if (ioctl(s->fds[0], PERF_EVENT_IOC_DISABLE, 0) < 0)
		rc = -errno;
	/* A handler that saw armed set may still be in notify on another
	 * thread: once it is out, no notify runs until the next start. */
	slot_quiesce(s->slot);
	return rc;
}

void sigsample__close(struct sigsample *s)
{
	if (s == NULL)
		return;
	sigsample__stop(s);
	pthread_mutex_lock(&table_lock);
	atomic_store(&table[s->slot].s, NULL);
	atomic_store(&table[s->slot].fd, -1);
	slot_quiesce(s->slot);
	while (s->nfds > 0)
		close(s->fds[--s->nfds]);
	if (s->handler != NULL)
		handler_put(s->handler, s->trap && s->tid != thread_id());
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

int sigsample__signo(const struct sigsample *s)
{
	return s->trap ? SIGTRAP : rt_handler.sig;
}

int sigsample__tid(const struct sigsample *s)
{
	return s->tid;
}
