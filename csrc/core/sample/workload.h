/*
 * A command to measure: fork a child that waits on a pipe before execvp
 * (never a shell), so counters and sessions can be opened on its pid with
 * enable_on_exec before it runs a single instruction of the command.
 * Plain C, no Lua.
 *
 *   struct workload *w;
 *   workload__prepare(argv, &w);          child forked, blocked
 *   ...open events on workload__pid(w) with attr.enable_on_exec = 1...
 *   workload__start(w);                   child execs (or -errno of execvp)
 *   workload__wait(w, &status);           waitpid; status as from waitpid
 *   workload__delete(w);
 *
 * All functions return 0 or -errno.  The child unblocks all signals and
 * restores default SIGINT/SIGQUIT/SIGPIPE/SIGCHLD dispositions before exec.
 */
#ifndef LUAPERF_WORKLOAD_H
#define LUAPERF_WORKLOAD_H

#include <sys/types.h>

struct workload;

/* argv is NULL-terminated, argv[0] looked up in PATH.  The child is forked
 * here and blocks until workload__start; argv need not outlive this call. */
int workload__prepare(char *const argv[], struct workload **out);

pid_t workload__pid(const struct workload *w);

/* Releases the child to execvp.  Returns -errno of a failed execvp (e.g.
 * -ENOENT: no such command); the child has then exited with status 127. */
int workload__start(struct workload *w);

/* Waits for the child to exit; *status is the raw waitpid status
 * (WIFEXITED/WEXITSTATUS/WIFSIGNALED apply).  Calling it again after the
 * child was reaped returns the same status. */
int workload__wait(struct workload *w, int *status);

/* Non-blocking wait: returns 1 and sets *status when the child has exited,
 * 0 while it runs, or -errno. */
int workload__try_wait(struct workload *w, int *status);

/*
 * Waits up to timeout_ms (-1: no limit) for the child to exit: 1 (exited,
 * *status set), 0 (timed out) or -errno.  With catch_sigint, SIGINT is
 * caught for the duration (so ^C, which also reaches the child, does not
 * kill the caller) and ends the wait with -EINTR.
 */
int workload__wait_timeout(struct workload *w, int timeout_ms, int catch_sigint,
			   int *status);

/* CPU time of the reaped child, in ns (-EAGAIN before it was reaped). */
int workload__rusage(const struct workload *w, unsigned long long *user_ns,
		     unsigned long long *sys_ns);

/*
 * Sleeps up to timeout_ms (-1: no limit) or until process pid (> 0, any
 * process, not only a child) exits: 1 exited, 0 timed out, -EINTR on
 * SIGINT with catch_sigint, -errno (-ESRCH: no such pid).
 */
int workload__sleep(pid_t pid, int timeout_ms, int catch_sigint);

/* Frees w.  A never-started child is told to exit without exec'ing; a
 * started child not yet reaped is killed (SIGKILL); either way it is
 * reaped, so no zombie is left.  NULL is fine. */
void workload__delete(struct workload *w);

#endif
