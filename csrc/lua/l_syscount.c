/*
 * System call summaries of a session (s:syscalls(), count/syscount.h) and
 * system call names (perf.syscall_name, perf.syscall_number).  The pairing
 * runs in C as the rings drain; Lua sees one row per thread and call.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "base/perf_sys.h"
#include "count/syscount.h"
#include "event/syscalls.h"
#include "record/record.h"
#include "sample/session.h"
#include "binding.h"

static int add_rec(void *arg, const struct record *r)
{
	return syscount__add_record(arg, r);
}

/* The syscount of a session, made on first use; NULL with a message pushed. */
static struct syscount *make(lua_State *L, struct session *s)
{
	const struct evtab *t = session__evtab(s);
	int i, enter = -1, exit = -1;
	unsigned id_off, ret_off;
	struct syscount *sc;
	int rc;

	for (i = 0; i < evtab__count(t); i++) {
		if (!strcmp(evtab__name(t, i), "raw_syscalls:sys_enter"))
			enter = i;
		else if (!strcmp(evtab__name(t, i), "raw_syscalls:sys_exit"))
			exit = i;
	}
	if (enter < 0 || exit < 0) {
		lperf_fail(L, "s:syscalls() needs a session of raw_syscalls:sys_enter and "
			      "raw_syscalls:sys_exit", EINVAL);
		return NULL;
	}
	rc = syscount__offsets(perf_sys__tracefs(), &id_off, &ret_off);
	if (rc < 0) {
		lperf_fail(L, "cannot read the raw_syscalls formats in tracefs (is it mounted "
			      "at /sys/kernel/tracing?)", -rc);
		return NULL;
	}
	sc = syscount__new(enter, exit, id_off, ret_off);
	if (sc == NULL)
		lperf_fail(L, "out of memory", ENOMEM);
	return sc;
}

static void push_rows(lua_State *L, const struct syscount *sc)
{
	const struct syscount_row *rows;
	const struct syscount_thread *th;
	size_t n, nt, i;

	rows = syscount__rows(sc, &n);
	th = syscount__threads(sc, &nt);
	lua_createtable(L, (int)n, 1);
	for (i = 0; i < n; i++) {
		const struct syscount_row *w = &rows[i];
		const char *name = syscalls__name(w->nr);
		double var = w->calls > 1 ? w->m2 / (double)(w->calls - 1) : 0;

		lua_createtable(L, 0, 12);
		lperf_setint(L, "pid", w->pid);
		lperf_setint(L, "tid", w->tid);
		lperf_setint(L, "nr", w->nr);
		if (name != NULL)
			lperf_setstr(L, "name", name);
		lperf_setu64(L, "calls", w->calls);
		lperf_setu64(L, "errors", w->errors);
		lperf_setu64(L, "total", w->total);
		lperf_setu64(L, "min", w->calls ? w->min : 0);
		lperf_setu64(L, "max", w->max);
		lperf_setnum(L, "mean", w->mean);
		lperf_setnum(L, "stddev", sqrt(var));
		lua_rawseti(L, -2, (int)i + 1);
	}
	lua_createtable(L, (int)nt, 0);
	for (i = 0; i < nt; i++) {
		lua_createtable(L, 0, 4);
		lperf_setint(L, "pid", th[i].pid);
		lperf_setint(L, "tid", th[i].tid);
		lperf_setu64(L, "events", th[i].events);
		lperf_setstr(L, "comm", th[i].comm);
		lua_rawseti(L, -2, (int)i + 1);
	}
	lua_setfield(L, -2, "threads");
}

int lperf_session_syscalls(lua_State *L, struct session *s, struct syscount **scp)
{
	int rc;

	if (*scp == NULL && (*scp = make(L, s)) == NULL)
		return 3;
	rc = session__drain(s, add_rec, *scp);
	/* what was batched is paired even when the drain stopped early */
	if (rc >= 0)
		rc = syscount__flush(*scp);
	else
		(void)syscount__flush(*scp);
	if (rc < 0)
		return lperf_fail(L, session__last_error(s) ? session__last_error(s)
				  : "draining the session failed", -rc);
	push_rows(L, *scp);
	return 1;
}

/* perf.syscall_name(nr) -> name | nil */
static int l_syscall_name(lua_State *L)
{
	const char *name = syscalls__name((long)luaL_checkinteger(L, 1));

	if (name == NULL)
		return 0;
	lua_pushstring(L, name);
	return 1;
}

/* perf.syscall_number(name) -> nr | nil */
static int l_syscall_number(lua_State *L)
{
	long nr = syscalls__number(luaL_checkstring(L, 1));

	if (nr < 0)
		return 0;
	lua_pushinteger(L, nr);
	return 1;
}

void lperf_open_syscount(lua_State *L)
{
	lua_pushcfunction(L, l_syscall_name);
	lua_setfield(L, -2, "syscall_name");
	lua_pushcfunction(L, l_syscall_number);
	lua_setfield(L, -2, "syscall_number");
}
