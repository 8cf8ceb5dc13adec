/*
 * perf.luaprofile (lprof.h says how it works and which file does what):
 * the userdata, built from its options with its sampling event, counters,
 * context-switch event and allocation sampler, closed, and registered.
 */
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "luaprofile/lprof.h"
#include "event/errmsg.h"
#include "base/perf_sys.h"
#include "record/record.h"
#include "sample/ring.h"
#include "profile/allocsample.h"
#include "symbol/symbolizer.h"

/* Evspec's parser when the module has it (evspec.c); a few names otherwise. */
extern int evspec__parse(const char *spec, struct evspec *out, char *err,
			 size_t errlen) __attribute__((weak));

char lp_registry_key;                 /* &lp_registry_key: the started profiler's
					 userdata, held there while started */
char lp_cache_key;                    /* &lp_cache_key: function -> frame name */

/* ---- the userdata ---------------------------------------------------- */

struct lprof *lp_check_open(lua_State *L)
{
	struct lprof *p = luaL_checkudata(L, 1, LP_CLASS);
	if (p->ss == NULL)
		luaL_error(L, "attempt to use a closed perf.LuaProfile");
	return p;
}

static void fbuf_free(struct lp_fbuf *b)
{
	free(b->r);
	memset(b, 0, sizeof *b);
}

static void lp_release(lua_State *L, struct lprof *p)
{
	if (p->ss == NULL)
		return;
	lp_halt(L, p);
	ring__unmap(p->ring);
	p->ring = NULL;
	sigsample__close(p->ss);
	p->ss = NULL;
	evtab__delete(p->evtab);
	p->evtab = NULL;
	stacktab__delete(p->st);
	p->st = NULL;
	free(p->frames);
	p->frames = NULL;
	ring__unmap(p->wring);
	p->wring = NULL;
	sigsample__close(p->ws);
	p->ws = NULL;
	evtab__delete(p->wtab);
	p->wtab = NULL;
	if (p->as != NULL) {
		allocsample__fini(p->as);
		free(p->as);
		p->as = NULL;
	}
	fbuf_free(&p->fcur);
	if (p->kept != NULL) {
		unsigned k;
		for (k = 0; k < p->keep; k++)
			fbuf_free(&p->kept[k]);
		free(p->kept);
		p->kept = NULL;
	}
	symbolizer__delete(p->sym);
	p->sym = NULL;
}

static int lp_close(lua_State *L)
{
	lp_release(L, luaL_checkudata(L, 1, LP_CLASS));
	return 0;
}

/* ---- construction ---------------------------------------------------- */

/* Software events by name, for builds without evspec.c. */
static int parse_event(const char *spec, struct evspec *ev, char *err, size_t errlen)
{
	static const struct { const char *name; uint32_t type; uint64_t config; } names[] = {
		{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
		{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
		{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
		{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
		{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
		{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
		{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
		{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
		{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	};
	size_t i, len = strcspn(spec, ":");
	if (evspec__parse != NULL)
		return evspec__parse(spec, ev, err, errlen);
	memset(ev, 0, sizeof *ev);
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (strlen(names[i].name) == len && strncmp(spec, names[i].name, len) == 0) {
			ev->attr.size = sizeof ev->attr;
			ev->attr.type = names[i].type;
			ev->attr.config = names[i].config;
			if (spec[len] == ':' && strchr(spec + len, 'u') != NULL) {
				ev->attr.exclude_kernel = 1;
				ev->attr.exclude_hv = 1;
			}
			snprintf(ev->name, sizeof ev->name, "%s", spec);
			return 0;
		}
	}
	snprintf(err, errlen, "unknown event '%s'", spec);
	return -ENOENT;
}

/* errmsg.c's explanation of a refused open, without its "cannot open ..."
 * head (the caller's names the thread); its ":u" advice is for event specs,
 * the luaprofile way to stay in user space is leaving out kernel=true. */
static void explain_refusal(char *buf, size_t len, int err, const char *name,
			    const struct perf_event_attr *attr)
{
	char head[EVSPEC_NAME_MAX + 128];
	char *u;
	int n;

	errmsg__open(buf, len, err, name, attr, 0, -1);
	n = snprintf(head, sizeof head, "cannot open '%s' (%s): ", name, strerror(err));
	if (n > 0 && (size_t)n < sizeof head && !strncmp(buf, head, (size_t)n))
		memmove(buf, buf + n, strlen(buf + n) + 1);
	u = strstr(buf, "add :u");
	if (u != NULL)
		snprintf(u, len - (size_t)(u - buf), "drop kernel=true to profile user space only");
}

/*
 * wait = true: the thread's context switches, a sample each (period 1) at
 * the switch out, whose SIGTRAP the kernel sends as the thread returns to
 * user space, so the safe point that reads the stack it blocked in comes
 * right after the wait; the SWITCH records carry the times.  SIGTRAP
 * only: a real-time signal would be sent at the switch out and wake the
 * thread from the very sleep being measured.  The event fires in the
 * scheduler, in kernel mode: it is not user-only.  0 or -errno, err set.
 */
static int open_wait(struct lprof *p, int max_stack, char *err, size_t errlen)
{
	struct sigsample_opts *o = calloc(1, sizeof *o);
	int rc;
	if (o == NULL)
		return -ENOMEM;
	o->attr.size = sizeof o->attr;
	o->attr.type = PERF_TYPE_SOFTWARE;
	o->attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	o->attr.sample_period = 1;
	o->attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	if (p->native) {
		o->attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
		o->attr.exclude_callchain_kernel = 1;
		o->attr.sample_max_stack = (uint16_t)max_stack;
	}
	o->attr.context_switch = 1;
	o->attr.sample_id_all = 1;
	o->attr.exclude_hv = 1;
	o->signal = SIGSAMPLE_SIGNAL_TRAP;
	o->notify = lp_notify;
	o->arg = p;
	rc = sigsample__open(o, &p->ws, NULL);
	free(o);
	if (rc == 0) {
		p->wtab = evtab__new();
		if (p->wtab == NULL || evtab__add(p->wtab, sigsample__attr(p->ws), "context-switches") < 0)
			rc = -ENOMEM;
		else
			rc = ring__mmap(sigsample__fd(p->ws), 16, 0, &p->wring);
	}
	if (rc == -EOPNOTSUPP)
		snprintf(err, errlen, "wait = true needs Linux 5.18 or later "
			 "(the thread's context switches signal it by SIGTRAP)");
	else if (rc == -EACCES || rc == -EPERM)
		snprintf(err, errlen, "wait = true: cannot open the thread's context-switch event (%s): "
			 "it fires in the kernel's scheduler, so it needs CAP_PERFMON or "
			 "kernel.perf_event_paranoid<=1", strerror(-rc));
	else if (rc < 0)
		snprintf(err, errlen, "wait = true: cannot open the thread's context-switch event: %s",
			 strerror(-rc));
	return rc;
}

/* A full collection in protected mode: a finalizer may raise (5.1, LuaJIT)
 * and the caller holds memory no userdata owns. */
static int lp_collect(lua_State *L)
{
	lua_gc(L, LUA_GCCOLLECT, 0);
	return 0;
}

static int lp_new(lua_State *L)
{
	struct lprof *p;
	struct sigsample_opts *o;
	struct evspec ev;
	char err[512];
	const char *event, *sigmode;
	enum sigsample_signal signal;
	lua_Integer freq, period, max_stack, nframes, alloc, keep;
	int pages, rc, failed = 0, kernel, wait;
	unsigned k;

	if (lua_isnoneornil(L, 1))
		lua_newtable(L);
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 1);
	event = lperf_optfield_str(L, 1, "event", "cpu-clock");
	freq = lperf_optfield_int(L, 1, "freq", 0);
	period = lperf_optfield_int(L, 1, "period", 0);
	pages = lperf_optfield_int(L, 1, "pages", 16);
	kernel = lperf_optfield_bool(L, 1, "kernel", 0);
	sigmode = lperf_optfield_str(L, 1, "signal", "auto");
	if (!strcmp(sigmode, "auto"))
		signal = SIGSAMPLE_SIGNAL_AUTO;
	else if (!strcmp(sigmode, "trap"))
		signal = SIGSAMPLE_SIGNAL_TRAP;
	else if (!strcmp(sigmode, "realtime"))
		signal = SIGSAMPLE_SIGNAL_REALTIME;
	else
		return luaL_error(L, "signal must be \"auto\", \"trap\" or \"realtime\", not \"%s\"", sigmode);
	if (freq < 0 || period < 0 || (freq > 0 && period > 0))
		return luaL_error(L, "give freq= or period= (a positive number), not both");
	if (freq == 0 && period == 0)
		freq = 999;
	if (pages < 1 || pages > 4096 || (pages & (pages - 1)))
		return luaL_error(L, "pages must be a power of two between 1 and 4096");
	wait = lperf_optfield_bool(L, 1, "wait", 0);
	alloc = lperf_optfield_int(L, 1, "alloc", 0);
	keep = lperf_optfield_int(L, 1, "frame_profiles", 8);
	if (alloc < 0)
		return luaL_error(L, "alloc (bytes between allocation samples) must be positive");
	if (keep < 0 || keep > LP_MAX_KEEP)
		return luaL_error(L, "frame_profiles must be between 0 and %d", LP_MAX_KEEP);
	lua_getfield(L, 1, "counters");
	if (!lua_isnil(L, -1))
		luaL_checktype(L, -1, LUA_TTABLE);
	if (lua_istable(L, -1) && lua_rawlen(L, -1) > LP_NCTR)
		return luaL_error(L, "at most %d counters", LP_NCTR);

	o = calloc(1, sizeof *o);
	if (o == NULL)
		return lperf_fail(L, NULL, ENOMEM);
	p = lua_newuserdatauv(L, sizeof *p, 1);
	memset(p, 0, sizeof *p);
	p->ref_colib = p->ref_resume = p->ref_wrap = p->base_ref = LUA_NOREF;
	p->w_wait = p->w_alloc = p->w_live = -1;
	luaL_setmetatable(L, LP_CLASS);     /* closed: p->ss == NULL */

	if (parse_event(event, &ev, err, sizeof err) < 0) {
		free(o);
		return lperf_fail(L, err, EINVAL);
	}
	snprintf(p->names[0], sizeof p->names[0], "%s", ev.name);
	o->attr = ev.attr;
	if (!kernel) {
		o->attr.exclude_kernel = 1;
		o->attr.exclude_hv = 1;
	}
	if (!ev.has_period) {
		o->attr.freq = freq > 0;
		o->attr.sample_period = freq > 0 ? (uint64_t)freq : (uint64_t)period;
	}
	if (o->attr.type == PERF_TYPE_SOFTWARE && o->attr.freq && o->attr.sample_freq > 0 &&
	    (o->attr.config == PERF_COUNT_SW_CPU_CLOCK ||
	     o->attr.config == PERF_COUNT_SW_TASK_CLOCK)) {
		/* (freq= or the event's own freq: sample_freq either way) */
		uint64_t hz = o->attr.sample_freq;
		/* A clock's frequency is a period of 1/freq s (the kernel makes
		 * it one too), drawn again around it after each sample: a game
		 * loop at the sampler's rate (1 kHz against 999 Hz) locked in
		 * phase with a fixed one and put its samples in one part of the
		 * frame.  The rate limit the kernel checks in frequency mode is
		 * checked here. */
		if ((long long)hz > perf_sys__sysctl("perf_event_max_sample_rate", 1LL << 40)) {
			snprintf(err, sizeof err, "freq %llu is above kernel.perf_event_max_sample_rate "
				 "(%lld): lower freq= or raise the sysctl", (unsigned long long)hz,
				 perf_sys__sysctl("perf_event_max_sample_rate", 0));
			free(o);
			return lperf_fail(L, err, EINVAL);
		}
		o->attr.freq = 0;
		o->attr.sample_period = 1000000000ULL / hz;
		if (o->attr.sample_period == 0)
			o->attr.sample_period = 1;
		o->jitter = 1;
	}
	p->fixed_period = o->attr.freq ? 1 : o->attr.sample_period;
	p->native = lperf_optfield_bool(L, 1, "native", 1);
	max_stack = lperf_optfield_int(L, 1, "max_stack", 32);
	nframes = lperf_optfield_int(L, 1, "frames", 65536);
	if (nframes < 1 || nframes > (1 << 24)) {
		free(o);
		return luaL_error(L, "frames (how many frames to keep) must be between 1 and %d", 1 << 24);
	}
	p->frames_cap = (size_t)nframes;
	if (max_stack < 1 || max_stack > LP_MAX_NATIVE) {
		free(o);
		return luaL_error(L, "max_stack must be between 1 and %d", LP_MAX_NATIVE);
	}
	p->vmstate_frames = lperf_optfield_bool(L, 1, "vmstate", 1);
	o->attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	/* Only in frequency mode: with a fixed period, a software event that
	 * records PERIOD samples every single event (the kernel's
	 * perf_swevent_event takes period = nr), whatever the period. */
	if (o->attr.freq)
		o->attr.sample_type |= PERF_SAMPLE_PERIOD;
	if (p->native) {
		o->attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
		o->attr.exclude_callchain_kernel = 1;
		/* The kernel walks frame pointers through a runtime built
		 * without them until its limit, each step a read of the
		 * thread's memory, and we keep only what lies in code: 32
		 * frames cost ~4 us a sample less than 127 here.  The host's
		 * frames above its Lua call come from our own unwind. */
		o->attr.sample_max_stack = (uint16_t)max_stack;

	}
	for (k = 0; lua_istable(L, 2) && k < lua_rawlen(L, 2); k++) {
		struct evspec cev;
		lua_rawgeti(L, 2, (int)k + 1);
		if (lua_type(L, -1) != LUA_TSTRING) {
			free(o);
			return luaL_error(L, "counters[%d] must be an event name", (int)k + 1);
		}
		if (parse_event(lua_tostring(L, -1), &cev, err, sizeof err) < 0) {
			free(o);
			return lperf_fail(L, err, EINVAL);
		}
		lua_pop(L, 1);
		o->counters[k] = cev.attr;
		if (!kernel) {
			o->counters[k].exclude_kernel = 1;
			o->counters[k].exclude_hv = 1;
		}
		snprintf(p->names[k + 1], sizeof p->names[k + 1], "%s", cev.name);
	}
	o->nr_counters = k;
	p->nctr = k;
	p->nw = k;
	if (wait)
		p->w_wait = (int)p->nw++;
	if (alloc > 0) {
		p->w_alloc = (int)p->nw++;
		p->w_live = (int)p->nw++;
	}
	if (k > 0)
		o->attr.sample_type |= PERF_SAMPLE_READ;
	o->notify = lp_notify;
	o->arg = p;
	o->signal = signal;

	rc = sigsample__open(o, &p->ss, &failed);
	if (rc == -EMFILE) {
		/* Unreachable luaprofiles keep their slot (and fds) until collected. */
		lua_pushcfunction(L, lp_collect);
		if (lua_pcall(L, 0, 0, 0) != 0)
			lua_pop(L, 1);
		rc = sigsample__open(o, &p->ss, &failed);
	}
	if (rc == -EMFILE && failed < 0) {
		free(o);
		snprintf(err, sizeof err, "at most %d luaprofiles can be open at once: "
			 "close() the ones you no longer use", SIGSAMPLE_MAX_OPEN);
		return lperf_fail(L, err, EMFILE);
	}
	if (rc == -EINVAL && !failed && o->attr.freq &&
	    (long long)o->attr.sample_freq > perf_sys__sysctl("perf_event_max_sample_rate", 1LL << 40)) {
		snprintf(err, sizeof err, "freq %llu is above kernel.perf_event_max_sample_rate (%lld): "
			 "lower freq= or raise the sysctl",
			 (unsigned long long)o->attr.sample_freq,
			 perf_sys__sysctl("perf_event_max_sample_rate", 0));
		free(o);
		return lperf_fail(L, err, EINVAL);
	}
	if (rc == -EOPNOTSUPP && signal == SIGSAMPLE_SIGNAL_TRAP) {
		free(o);
		return lperf_fail(L, "signal=\"trap\" is not supported before Linux 5.18 "
				  "(a blocked SIGTRAP was forced): use \"auto\" or \"realtime\"", EOPNOTSUPP);
	}
	if (rc < 0) {
		char why[512] = "";
		if (rc == -EACCES || rc == -EPERM)
			explain_refusal(why, sizeof why, -rc, p->names[failed],
					failed ? &o->counters[failed - 1] : &o->attr);
		snprintf(err, sizeof err, "cannot open %s '%.64s' for sampling this thread: %s%s%s%.300s%s",
			 failed ? "counter" : "event", p->names[failed], strerror(-rc),
			 rc == -ENOENT ? " (no such event on this machine: hardware events need a PMU)" : "",
			 why[0] ? " (" : "", why[0] ? why : "", why[0] ? ")" : "");
		free(o);
		return lperf_fail(L, err, -rc);
	}
	free(o);
	/* The ring carries call chains and counter values; without one the
	 * counters are read at each safe point and stacks are Lua-only. */
	if (p->native || p->nctr > 0) {
		p->evtab = evtab__new();
		if (p->evtab == NULL || evtab__add(p->evtab, sigsample__attr(p->ss), p->names[0]) < 0 ||
		    (rc = ring__mmap(sigsample__fd(p->ss), (size_t)pages, 0, &p->ring)) < 0) {
			if (p->evtab == NULL)
				rc = -ENOMEM;
			lp_release(L, p);
			return lperf_fail(L, "cannot map the sampling ring (raise pages= or the mlock limit)",
					  rc < 0 ? -rc : ENOMEM);
		}
	}
	if (wait && (rc = open_wait(p, (int)max_stack, err, sizeof err)) < 0) {
		lp_release(L, p);
		return lperf_fail(L, err, -rc);
	}
	if (alloc > 0) {
		p->alloc_rate = (uint64_t)alloc;
		p->as = calloc(1, sizeof *p->as);
		if (p->as == NULL ||
		    allocsample__init(p->as, p->alloc_rate, lp_now_ns() ^ (uint64_t)(uintptr_t)p) < 0) {
			lp_release(L, p);
			return lperf_fail(L, "cannot make the allocation sampler", ENOMEM);
		}
	}
	if (keep > 0) {
		p->kept = calloc((size_t)keep, sizeof *p->kept);
		if (p->kept == NULL) {
			lp_release(L, p);
			return lperf_fail(L, NULL, ENOMEM);
		}
		p->keep = (unsigned)keep;
	}
	dl_iterate_phdr(lp_rt_phdr, p);
	lua_settop(L, 3);
	return 1;
}

static const luaL_Reg lp_methods[] = {
	{ "start", lp_start },
	{ "stop", lp_stop },
	{ "stats", lp_stats },
	{ "frame", lp_frame },
	{ "close", lp_close },
	{ NULL, NULL },
};

void lperf_open_luaprofile(lua_State *L)
{
	lperf_newclass(L, LP_CLASS, lp_methods, lp_close);
	lperf_exportclass(L, -1, LP_CLASS, "LuaProfile");
	/* The frame-name cache: weak keys, so functions are not kept alive. */
	lperf_weakmap_new(L, &lp_cache_key);
	lua_pushcfunction(L, lp_new);
	lua_setfield(L, -2, "luaprofile");
}
