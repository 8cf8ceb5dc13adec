/* A child forked early, blocked on a pipe, exec'd on demand (see workload.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sample/workload.h"

struct workload {
	pid_t pid;
	int go_fd;      /* socket: one byte releases the child, EOF cancels it */
	int err_fd;     /* read end: the child's execvp errno, or EOF on exec */
	int started;
	int reaped;
	int status;
	struct rusage ru;
};

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* In the child: only async-signal-safe calls until execvp. */
static void __attribute__((noreturn)) child_run(char *const argv[], int go_rd, int err_wr)
{
	static const int sigs[] = { SIGINT, SIGQUIT, SIGPIPE, SIGCHLD, SIGTERM };
	sigset_t none;
	char c;
	ssize_t n;
	size_t i;
	int e;

	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		signal(sigs[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	do {
		n = read(go_rd, &c, 1);
	} while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127); /* cancelled: the parent deleted us unstarted */
	close(go_rd);
	execvp(argv[0], argv);
	e = errno;
	(void)write_all(err_wr, &e, sizeof e);
	_exit(127);
}

int workload__prepare(char *const argv[], struct workload **out)
{
	struct workload *w;
	int go[2], err[2];
	pid_t pid;
	int e;

	*out = NULL;
	if (argv == NULL || argv[0] == NULL || argv[0][0] == '\0')
		return -EINVAL;
	/* A socket, not a pipe, so releasing a child that already died is
	 * EPIPE (MSG_NOSIGNAL) rather than a SIGPIPE in the caller. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go) < 0)
		return -errno;
	if (pipe2(err, O_CLOEXEC) < 0) {
		e = -errno;
		close(go[0]);
		close(go[1]);
		return e;
	}
	pid = fork();
	if (pid < 0) {
		e = -errno;
		close(go[0]);
		close(go[1]);
		close(err[0]);
		close(err[1]);
		return e;
	}
	if (pid == 0) {
		close(go[1]);
		close(err[0]);
		child_run(argv, go[0], err[1]);
	}
	close(go[0]);
	close(err[1]);
	/* Allocated after the fork, so a child that never execs holds no
	 * copy of it (leak checkers would report one at its _exit). */
	w = calloc(1, sizeof *w);
	if (w == NULL) {
		int st;
		close(go[1]); /* the child reads EOF and exits */
		close(err[0]);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		return -ENOMEM;
	}
	w->pid = pid;
	w->go_fd = go[1];
	w->err_fd = err[0];
	*out = w;
	return 0;
}

pid_t workload__pid(const struct workload *w)
{
	return w->pid;
}

int workload__start(struct workload *w)
{
	char c = 1;
	ssize_t n;
	int e = 0, r;

	if (w->started)
		return -EALREADY;
	w->started = 1;
	r = send(w->go_fd, &c, 1, MSG_NOSIGNAL) == 1 ? 0 : -errno;
	close(w->go_fd);
	w->go_fd = -1;
	if (r < 0)
		return r;
	/* Blocks until the child's execvp succeeds (CLOEXEC closes the pipe)
	 * or fails (it writes its errno). */
	do {
		n = read(w->err_fd, &e, sizeof e);
	} while (n < 0 && errno == EINTR);
	close(w->err_fd);
	w->err_fd = -1;
	if (n == (ssize_t)sizeof e && e > 0)
		return -e;
	return 0;
}

static int reap(struct workload *w, int flags)
{
	int st;
	pid_t r;

	if (w->reaped)
		return 1;
	do {
		r = wait4(w->pid, &st, flags, &w->ru);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	w->reaped = 1;
	w->status = st;
	return 1;
}

int workload__wait(struct workload *w, int *status)
{
	int r = reap(w, 0);

	if (r < 0)
		return r;
	*status = w->status;
	return 0;
}

int workload__try_wait(struct workload *w, int *status)
{
	int r = reap(w, WNOHANG);

	if (r == 1)
		*status = w->status;
	return r;
}

int workload__rusage(const struct workload *w, unsigned long long *user_ns,
		     unsigned long long *sys_ns)
{
	if (!w->reaped)
		return -EAGAIN;
	*user_ns = (unsigned long long)w->ru.ru_utime.tv_sec * 1000000000ULL +
		   (unsigned long long)w->ru.ru_utime.tv_usec * 1000ULL;
	*sys_ns = (unsigned long long)w->ru.ru_stime.tv_sec * 1000000000ULL +
		  (unsigned long long)w->ru.ru_stime.tv_usec * 1000ULL;
	return 0;
}

static volatile sig_atomic_t got_sigint;

static void on_sigint(int sig)
{
	(void)sig;
	got_sigint = 1;
}

/*
 * Waits for fd (-1: none) to become readable or timeout_ms; SIGINT is
 * blocked except inside ppoll, so a ^C between the check and the wait is
 * not lost.  Returns 1 readable, 0 timeout, -EINTR, -errno.
 */
static int wait_fd(int fd, int timeout_ms, int catch_sigint)
{
	struct sigaction sa, old_sa;
	sigset_t block, old_mask;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec ts, *tsp = NULL;
	int r, e;

	if (timeout_ms >= 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
		tsp = &ts;
	}
	if (catch_sigint) {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_sigint;
		sigemptyset(&sa.sa_mask);
		sigemptyset(&block);
		sigaddset(&block, SIGINT);
		sigprocmask(SIG_BLOCK, &block, &old_mask);
		got_sigint = 0;
		sigaction(SIGINT, &sa, &old_sa);
	}
	{
		sigset_t during;
		sigemptyset(&during);
		if (catch_sigint) {
			during = old_mask;
			sigdelset(&during, SIGINT);
		}
		r = ppoll(&pfd, fd >= 0 ? 1 : 0, tsp, catch_sigint ? &during : NULL);
		e = errno;
	}
	if (catch_sigint) {
		sigaction(SIGINT, &old_sa, NULL);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		if (got_sigint)
			return -EINTR;
	}
	if (r < 0)
		return -e;
	return r > 0 ? 1 : 0;
}

static int pidfd_open_(pid_t pid)
{
#ifdef SYS_pidfd_open
	long fd = syscall(SYS_pidfd_open, pid, 0);
	return fd < 0 ? -errno : (int)fd;
#else
	(void)pid;
	return -ENOSYS;
#endif
}

int workload__wait_timeout(struct workload *w, int timeout_ms, int catch_sigint,
			   int *status)
{
	int fd, r;

	r = reap(w, WNOHANG);
	if (r != 0) {
		if (r == 1)
			*status = w->status;
		return r;
	}
	fd = pidfd_open_(w->pid);
	if (fd < 0) {
		/* Old kernels: no pidfd; poll the child every millisecond. */
		int waited = 0;
		while ((r = reap(w, WNOHANG)) == 0 && (timeout_ms < 0 || waited < timeout_ms)) {
			r = wait_fd(-1, 1, catch_sigint);
			if (r < 0)
				return r;
			waited++;
		}
	} else {
		r = wait_fd(fd, timeout_ms, catch_sigint);
		close(fd);
		if (r < 0)
			return r;
		r = reap(w, WNOHANG);
	}
	if (r == 1)
		*status = w->status;
	return r;
}

int workload__sleep(pid_t pid, int timeout_ms, int catch_sigint)
{
	int fd = -1, r;

	if (pid > 0) {
		fd = pidfd_open_(pid);
		if (fd < 0 && fd != -ENOSYS)
			return fd;
		if (fd == -ENOSYS) {
			/* No pidfd: sleep and report the pid only when gone. */
			int waited = 0;
			while (kill(pid, 0) == 0 || errno == EPERM) {
				if (timeout_ms >= 0 && waited >= timeout_ms)
					return 0;
				r = wait_fd(-1, 10, catch_sigint);
				if (r < 0)
					return r;
				waited += 10;
			}
			return 1;
		}
	}
	r = wait_fd(fd, timeout_ms, catch_sigint);
	if (fd >= 0)
		close(fd);
	return r;
}

void workload__delete(struct workload *w)
{
	if (w == NULL)
		return;
	if (w->go_fd >= 0)
		close(w->go_fd); /* an unstarted child reads EOF and exits */
	if (w->err_fd >= 0)
		close(w->err_fd);
	if (!w->reaped) {
		if (w->started)
			kill(w->pid, SIGKILL);
		(void)reap(w, 0);
	}
	free(w);
}
