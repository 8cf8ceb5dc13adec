/*
 * perf script's listing in C (script_text.h).  The text is the Lua
 * listing's (script_fields.lua: M.print), field by field; the comments
 * name the perf behaviour each rule reproduces.
 *
 * Per sample: its event's output type picks the fields; the thread's
 * name comes from threads.c (perf's rules); each address goes through a
 * cache keyed by (address space, address) whose entries hold what a
 * frame prints (name, offset, object, the address shown), kept until the
 * maps of their space change (script_cache.h).
 */
#include "perfdata/script_text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/tracefmt.h"
#include "perfdata/perfdata.h"
#include "perfdata/script_cache.h"
#include "profile/perfdata_profile.h"
#include "profile/stacktab.h"
#include "profile/threads.h"
#include "record/record.h"
#include "symbol/symbolizer.h"
#include "unwind/unwind.h"

#define OUT_CAP ((size_t)1 << 20)
#define MAX_STACK 127               /* perf's --max-stack default */
#define MAX_CHAIN 1024              /* unwound entries per sample, as f:records */
#define TRACE_TEXT 4096             /* the Lua listing's f:trace_text buffer */

/* ------------------------------------------------------------ output */

struct out {
	char *buf;
	size_t len;
	int err;                    /* first write error: nothing more is written */
	int (*write)(void *arg, const void *buf, size_t len);
	void *arg;
};

static void out_flush(struct out *o)
{
	if (o->len && !o->err)
		o->err = o->write(o->arg, o->buf, o->len);
	o->len = 0;
}

/* Room for n more bytes (n <= OUT_CAP): the write position. */
static char *out_room(struct out *o, size_t n)
{
	if (OUT_CAP - o->len < n)
		out_flush(o);
	return o->buf + o->len;
}

static void out_put(struct out *o, const char *s, size_t n)
{
	if (n > OUT_CAP / 2) {
		out_flush(o);
		if (!o->err)
			o->err = o->write(o->arg, s, n);
		return;
	}
	memcpy(out_room(o, n), s, n);
	o->len += n;
}

static void out_str(struct out *o, const char *s)
{
	out_put(o, s, strlen(s));
}

static void out_chr(struct out *o, char c)
{
	*out_room(o, 1) = c;
	o->len++;
}

static void out_spaces(struct out *o, size_t n)
{
	while (n > 0) {
		size_t k = n < 64 ? n : 64;
		memset(out_room(o, k), ' ', k);
		o->len += k;
		n -= k;
	}
}

/* s right-aligned in width columns ("%*s"). */
static void out_rpad(struct out *o, const char *s, size_t n, size_t width)
{
	if (n < width)
		out_spaces(o, width - n);
	out_put(o, s, n);
}

/* A number's text, built from its last digit: digits[at..NUM_MAX). */
#define NUM_MAX 24
struct num {
	char digits[NUM_MAX];
	size_t at;
};

static void num_dec(struct num *n, uint64_t v)
{
	n->at = NUM_MAX;
	do {
		n->digits[--n->at] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
}

static void num_hex(struct num *n, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";

	n->at = NUM_MAX;
	do {
		n->digits[--n->at] = hex[v & 15];
		v >>= 4;
	} while (v);
}

/* Prepends c (a sign, a zero); the text stays below NUM_MAX bytes. */
static void num_prepend(struct num *n, char c)
{
	if (n->at > 0)
		n->digits[--n->at] = c;
}

static void out_num(struct out *o, const struct num *n, size_t width, int left)
{
	size_t len = NUM_MAX - n->at;

	if (left) {
		out_put(o, n->digits + n->at, len);
		if (len < width)
			out_spaces(o, width - len);
	} else {
		out_rpad(o, n->digits + n->at, len, width);
	}
}

/* "%<width>d" (left: "%-<width>d") of a signed value. */
static void out_int(struct out *o, int64_t v, size_t width, int left)
{
	struct num n;

	num_dec(&n, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
	if (v < 0)
		num_prepend(&n, '-');
	out_num(o, &n, width, left);
}

/* "%<width>u", or "%0<width>u" with zero set (width < NUM_MAX). */
static void out_uint(struct out *o, uint64_t v, size_t width, int zero)
{
	struct num n;

	num_dec(&n, v);
	while (zero && NUM_MAX - n.at < width && n.at > 0)
		num_prepend(&n, '0');
	out_num(o, &n, width, 0);
}

static void out_hex(struct out *o, uint64_t v, size_t width)
{
	struct num n;

	num_hex(&n, v);
	out_num(o, &n, width, 0);
}

/* ------------------------------------------------------------ events */

/* What a sample's line takes from its event: the Lua listing looks the
 * event up by name (the first of that name in the header). */
struct evinfo {
	unsigned type;              /* output type */
	int chain;                  /* that event records call chains */
	int has_fallback;           /* a period for samples that carry none */
	uint64_t fallback;
};

static unsigned output_type(const struct perf_event_attr *a)
{
	return a->type < 6 ? a->type : SCRIPT_TYPE_OTHER;
}

static const struct evinfo unknown_event = { SCRIPT_TYPE_OTHER, 0, 0, 0 };

/* The events of the header, as the pass starts (a pipe may add more:
 * those are looked up by name among these). */
struct events {
	const struct evtab *t;
	int n;
	struct evinfo *info;
	size_t name_width;
};

static const char *evname(const struct evtab *t, int i)
{
	const char *s = evtab__name(t, i);
	return s ? s : "";
}

static struct evinfo by_name(const struct events *ev, const char *name)
{
	struct evinfo e = unknown_event;
	int i, found = 0;

	for (i = 0; i < ev->n; i++) {
		const struct perf_event_attr *a = evtab__attr(ev->t, i);
		if (strcmp(evname(ev->t, i), name) != 0)
			continue;
		if (!found) {
			e.type = output_type(a);
			e.chain = (a->sample_type & PERF_SAMPLE_CALLCHAIN) != 0;
			found = 1;
		}
		/* the last fixed-period event of the name gives it */
		if (!a->freq) {
			e.has_fallback = 1;
			e.fallback = a->sample_period;
		}
	}
	return e;
}

static int events_init(struct events *ev, const struct evtab *t)
{
	int i;

	ev->t = t;
	ev->n = evtab__count(t);
	ev->name_width = 0;
	ev->info = calloc(ev->n > 0 ? (size_t)ev->n : 1, sizeof *ev->info);
	if (!ev->info)
		return -ENOMEM;
	for (i = 0; i < ev->n; i++) {
		size_t w = strlen(evname(t, i));
		ev->info[i] = by_name(ev, evname(t, i));
		if (w > ev->name_width)
			ev->name_width = w;
	}
	return 0;
}

static struct evinfo event_of(const struct events *ev, const struct evtab *t, int idx)
{
	if (idx < 0 || !evtab__name(t, idx))
		return unknown_event;
	if (idx < ev->n)
		return ev->info[idx];
	return by_name(ev, evtab__name(t, idx));
}

/* ------------------------------------------------------------ the pass */

struct pass {
	struct perfdata *pd;
	struct symbolizer *sym;
	struct unwinder *u;         /* opts->unwind, else NULL */
	uint64_t *chain;            /* MAX_CHAIN entries with u */
	const struct script_text_opts *o;
	struct out out;
	struct events ev;
	struct script_cache cache;
	struct stacktab *names;     /* the comm objects threads.c names threads with */
	struct threads *th;
	unsigned max_stack;
	struct script_text_stats stats;
};

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* perf's anonymous memory: no object, perf names it after the JIT map it
 * reads (/tmp/perf-PID.map). */
static int is_anon(const char *path)
{
	return !strcmp(path, "//anon") || starts(path, "/dev/zero") || starts(path, "/anon_hugepage");
}

/* Maps whose chain addresses perf prints as they are, not relative to
 * the map: anonymous memory, stacks, SysV shared memory, the heap. */
static int absolute_map(const char *path)
{
	return is_anon(path) || starts(path, "[stack") || starts(path, "/SYSV") ||
	       !strcmp(path, "[heap]");
}

static void take_warnings(struct pass *p)
{
	const char *w;

	while ((w = symbolizer__take_warning(p->sym)) != NULL)
		if (p->o->warn)
			p->o->warn(p->o->warn_arg, w);
}

/* Fills f for addr of pid (kernel: the kernel's address space), as the
 * Lua listing's resolve(): the symbol, else the object of the map that
 * holds addr (the kernel map names its object without a symbol). */
static int resolve(struct pass *p, struct script_frame *f, int32_t pid, uint64_t addr, int kernel,
		   int inlines)
{
	struct script_cache *c = &p->cache;
	struct sym_result r;
	struct sym_map m;
	unsigned i;
	int ok;

	p->stats.resolves++;
	f->name = f->dso = f->func = NULL;
	f->inl = NULL;
	f->ninl = 0;
	f->has_offset = f->jit = 0;
	f->offset = 0;
	f->shown = addr;
	ok = symbolizer__resolve(p->sym, (uint32_t)pid, addr,
				 kernel ? SYM_KERNEL : inlines ? SYM_USER | SYM_LINES | SYM_INLINES :
				 SYM_USER, &r) == 0;
	/* the inline chain lasts until the next resolve: copied */
	if (ok && inlines && r.nr_inlined > 0) {
		f->inl = script_cache__keep(c, calloc(r.nr_inlined, sizeof *f->inl));
		if (!f->inl)
			return -ENOMEM;
		for (i = 0; i < r.nr_inlined; i++) {
			const char *name = r.inlined[i].name;
			if (!(f->inl[i] = script_cache__keep_name(c, name ? name : "")))
				return -ENOMEM;
		}
		f->ninl = r.nr_inlined;
	}
	if (ok && inlines && r.func && !(f->func = script_cache__keep_name(c, r.func)))
		return -ENOMEM;
	if (ok) {
		f->name = r.name;
		/* a perf map's names go when it is read again */
		if (r.kind == SYM_KIND_JIT && r.name && !(f->name = script_cache__keep_name(c, r.name)))
			return -ENOMEM;
		f->offset = r.offset;
		f->has_offset = 1;
		f->dso = r.dso;
	}
	if (kernel) {
		const char *dso;
		if (!ok && symbolizer__find_kernel_map(p->sym, addr, &dso, NULL) == 0)
			f->dso = dso;
	} else if (symbolizer__find_map(p->sym, (uint32_t)pid, addr, &m) == 0) {
		if (!(ok && r.dso))
			f->dso = m.path;
		if (!ok && is_anon(m.path))
			f->jit = 1;
		if (!absolute_map(m.path))
			f->shown = addr - m.start + m.pgoff;
	}
	take_warnings(p);
	return 0;
}

/* The frame of addr, resolved once per generation of its space. */
static const struct script_frame *frame_of(struct pass *p, int32_t pid, uint64_t addr, int kernel,
				    int inlines, uint64_t gen)
{
	uint64_t space = kernel ? SCRIPT_KSPACE :
			 (uint64_t)(uint32_t)pid | (inlines ? SCRIPT_INLINED : 0);
	int fresh;
	struct script_frame *f = script_cache__get(&p->cache, space, addr, &fresh);

	if (!f)
		return NULL;
	if (!fresh && f->gen == gen)
		return f;
	/* new, or resolved before its space changed (a failed resolve
	 * leaves it to be tried again) */
	f->gen = gen;
	if (resolve(p, f, pid, addr, kernel, inlines) < 0) {
		f->gen = UINT64_MAX;
		return NULL;
	}
	return f;
}

/* A map change: the cache entries of the space it changed go stale. */
static int note_maps(struct pass *p, const struct record *r)
{
	switch (r->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (r->misc & PERF_RECORD_MISC_MMAP_DATA)
			return 0;
		if ((r->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
			return script_cache__changed(&p->cache, SCRIPT_KSPACE);
		if (r->u.mmap.pid == (uint32_t)-1)
			return 0;
		return script_cache__changed(&p->cache, r->u.mmap.pid);
	case PERF_RECORD_FORK:
		if (r->u.task.pid == r->u.task.ppid)
			return 0;
		return script_cache__changed(&p->cache, r->u.task.pid);
	}
	return 0;
}

/* name, or name+0xOFF (symoff), "[unknown]" without a symbol; an inlined
 * function's name (as) takes the offset of the symbol it is inlined in */
static void out_symname(struct out *o, const struct script_frame *f, unsigned F, const char *as)
{
	const char *name = as ? as : f->name ? f->name : "[unknown]";

	out_str(o, name);
	if ((F & SCRIPT_F_SYMOFF) && f->has_offset && strcmp(name, "[unknown]") != 0) {
		out_put(o, "+0x", 3);
		out_hex(o, f->offset, 0);
	}
}

static void out_dso(struct out *o, const struct script_frame *f, int32_t pid)
{
	out_put(o, " (", 2);
	if (f->jit) {
		out_str(o, "/tmp/perf-");
		out_int(o, pid, 0, 0);
		out_str(o, ".map");
	} else {
		out_str(o, f->dso ? f->dso : "[unknown]");
	}
	out_chr(o, ')');
}

/* One chain line: the frame's own, or (as) a function inlined there. */
static void out_frame_line(struct out *o, const struct script_frame *f, unsigned F, int32_t pid,
			   const char *as)
{
	out_chr(o, '\t');
	out_hex(o, f->shown, 16);
	if (F & SCRIPT_F_SYM) {
		out_chr(o, ' ');
		out_symname(o, f, F, as);
	}
	if (as)
		out_str(o, " (inlined)");
	else if (F & SCRIPT_F_DSO)
		out_dso(o, f, pid);
	out_chr(o, '\n');
}

/* unwound: the chain is a DWARF unwind's (truncated: it ran off the stack) */
static int print_chain(struct pass *p, const struct record *r, unsigned F, int32_t pid,
		       int unwound, int truncated)
{
	const struct record_sample *s = &r->s;
	uint64_t i, nr, ctx = 0;
	uint64_t kgen = script_cache__gen(&p->cache, SCRIPT_KSPACE);
	uint64_t ugen = script_cache__gen(&p->cache, (uint64_t)(uint32_t)pid);
	unsigned printed = 0, k;
	int leading = 1, expand;
	struct out *o = &p->out;

	/* perf drops a chain with a context mark it does not know */
	nr = record__callchain_usable(s->callchain, s->nr_callchain) ? s->nr_callchain : 0;
	for (i = 0; i < nr && printed < p->max_stack; i++) {
		const struct script_frame *f;
		uint64_t a;
		int kernel;

		memcpy(&a, s->callchain + i, sizeof a);
		if (a >= (uint64_t)PERF_CONTEXT_MAX) {
			ctx = a;
			continue;
		}
		/* the kernel's frames are the leading ones under a kernel mark */
		kernel = leading && record__kernel_context(ctx);
		if (!kernel)
			leading = 0;
		printed++;
		expand = unwound && p->o->inlines && !kernel;
		if (!(f = frame_of(p, pid, a, kernel, expand, kernel ? kgen : ugen)))
			return -ENOMEM;
		if (!expand) {
			out_frame_line(o, f, F, pid, NULL);
			continue;
		}
		/* perf's DWARF frames: the inlined functions, then the
		 * function by its DWARF name where that is not the symbol's */
		for (k = 0; k < f->ninl; k++)
			out_frame_line(o, f, F, pid, f->inl[k]);
		out_frame_line(o, f, F, pid, f->func && strcmp(f->func, f->name ? f->name :
				"[unknown]") != 0 ? f->func : NULL);
	}
	/* an unwind that ran off the captured stack: perf ends it with -1,
	 * when the whole chain was printed */
	for (; truncated && i < nr; i++) {
		uint64_t a;
		memcpy(&a, s->callchain + i, sizeof a);
		if (a < (uint64_t)PERF_CONTEXT_MAX)
			truncated = 0;
	}
	if (truncated) {
		out_str(o, "\tffffffffffffffff");
		if (F & SCRIPT_F_SYM)
			out_str(o, " [unknown]");
		if (F & SCRIPT_F_DSO)
			out_str(o, " ([unknown])");
		out_chr(o, '\n');
	}
	out_chr(o, '\n');
	return 0;
}

static int in_list(const int32_t *v, size_t n, int32_t x)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

/* perf script's filters: time first, then CPU, then the thread. */
static int shown(const struct script_text_opts *o, const struct record_sample *s,
		 const char *comm)
{
	uint64_t st = s->type;
	size_t i;

	if (!record_window__keeps(&o->window, st, s->time, s->cpu))
		return 0;
	if (o->comms) {
		for (i = 0; i < o->nr_comms; i++)
			if (!strcmp(o->comms[i], comm))
				break;
		if (i == o->nr_comms)
			return 0;
	}
	if (o->pids && (!(st & PERF_SAMPLE_TID) || !in_list(o->pids, o->nr_pids, (int32_t)s->pid)))
		return 0;
	if (o->tids && (!(st & PERF_SAMPLE_TID) || !in_list(o->tids, o->nr_tids, (int32_t)s->tid)))
		return 0;
	return 1;
}

/* The period perf prints: the sample's, else its event's fixed one, else
 * that of the header's event of the same name; 0 when there is none. */
static int period_of(const struct record *r, const struct evtab *t, const struct evinfo *e,
		     uint64_t *period)
{
	if (r->s.type & PERF_SAMPLE_PERIOD) {
		*period = r->s.period;
		return 1;
	}
	if (r->evidx >= 0 && r->evidx < evtab__count(t)) {
		const struct perf_event_attr *a = evtab__attr(t, r->evidx);
		if (a && !a->freq && a->sample_period) {
			*period = a->sample_period;
			return 1;
		}
	}
	*period = e->fallback;
	return e->has_fallback;
}

static void out_time(struct out *o, uint64_t t, int ns)
{
	out_uint(o, t / 1000000000u, 5, 0);
	out_chr(o, '.');
	if (ns)
		out_uint(o, t % 1000000000u, 9, 1);
	else
		out_uint(o, t % 1000000000u / 1000u, 6, 1);
}

static int print_sample(struct pass *p, const struct record *r0, const struct evtab *t)
{
	const struct script_text_opts *o = p->o;
	struct record copy;
	const struct record *r = r0;
	const struct record_sample *s = &r->s;
	unsigned status = 0;
	int unwound = 0, nu;
	const struct evinfo e = event_of(&p->ev, t, r->evidx);
	unsigned F = o->fields[e.type];
	int has_tid = (s->type & PERF_SAMPLE_TID) != 0;
	int32_t pid = has_tid ? (int32_t)s->pid : -1, tid = has_tid ? (int32_t)s->tid : -1;
	int chain;
	const char *comm = ":-1";
	struct out *o_ = &p->out;
	uint64_t period;
	uint32_t id;
	int rc;

	/* a DWARF sample: its user stack unwound, in place of its chain (one
	 * entry spare, as f:records leaves it) */
	if (p->u && (nu = unwind__chain(p->u, p->sym, r0, t, p->chain, MAX_CHAIN - 1, &status)) > 0) {
		copy = *r0;
		copy.s.type |= PERF_SAMPLE_CALLCHAIN;
		copy.s.type &= ~(uint64_t)(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
		copy.s.callchain = p->chain;
		copy.s.nr_callchain = (uint64_t)nu;
		r = &copy;
		s = &r->s;
		unwound = 1;
	}
	chain = (F & SCRIPT_F_IP) && o->callchain && (s->type & PERF_SAMPLE_CALLCHAIN);

	/* every sample makes its thread, as perf's do (threads.c) */
	if (has_tid) {
		if ((rc = threads__sample_comm(p->th, pid, tid, &id)) < 0)
			return rc;
		comm = stacktab__comm_name(p->names, id);
		if (!comm)
			comm = "";
	}
	if (!shown(o, s, comm))
		return 0;
	p->stats.printed++;
	if (!F)
		return 0;
	if (F & SCRIPT_F_COMM) {
		/* perf pads the command only on lines without a chain after them */
		if ((F & SCRIPT_F_IP) && o->callchain && e.chain)
			out_str(o_, comm);
		else
			out_rpad(o_, comm, strlen(comm), 16);
		out_chr(o_, ' ');
	}
	if ((F & SCRIPT_F_PID) && (F & SCRIPT_F_TID)) {
		out_int(o_, pid, 5, 0);
		out_chr(o_, '/');
		out_int(o_, tid, 5, 1);
		out_chr(o_, ' ');
	} else if (F & (SCRIPT_F_PID | SCRIPT_F_TID)) {
		out_int(o_, (F & SCRIPT_F_PID) ? pid : tid, 5, 0);
		out_chr(o_, ' ');
	}
	if ((F & SCRIPT_F_CPU) && (s->type & PERF_SAMPLE_CPU)) {
		out_chr(o_, '[');
		out_uint(o_, s->cpu, 3, 1);
		out_put(o_, "] ", 2);
	}
	if ((F & SCRIPT_F_TIME) && (s->type & PERF_SAMPLE_TIME)) {
		out_time(o_, s->time, o->ns);
		out_put(o_, ": ", 2);
	}
	if ((F & SCRIPT_F_PERIOD) && period_of(r, t, &e, &period)) {
		out_uint(o_, period, 10, 0);
		out_chr(o_, ' ');
	}
	if (F & SCRIPT_F_EVENT) {
		const char *name = r->evidx >= 0 ? evtab__name(t, r->evidx) : NULL;
		if (!name)
			name = "[unknown]";
		out_rpad(o_, name, strlen(name), p->ev.name_width);
		out_put(o_, ": ", 2);
	}
	if ((F & SCRIPT_F_TRACE) && (s->type & PERF_SAMPLE_RAW) && o->tracefmt) {
		/* a payload its format cannot print prints nothing */
		int n = tracefmt__format(o->tracefmt, s->raw, s->raw_size,
					 (s->type & PERF_SAMPLE_CPU) ? (int)s->cpu : 0,
					 out_room(o_, TRACE_TEXT), TRACE_TEXT);
		if (n > 0)
			o_->len += (size_t)n < TRACE_TEXT ? (size_t)n : TRACE_TEXT - 1;
	}
	if (chain) {
		out_chr(o_, '\n');
		return print_chain(p, r, F, pid, unwound, unwound && (status & UNWIND_TRUNCATED));
	}
	if ((F & SCRIPT_F_IP) && (s->type & PERF_SAMPLE_IP)) {
		out_chr(o_, ' ');
		out_hex(o_, s->ip, 16);
		if (F & (SCRIPT_F_SYM | SCRIPT_F_DSO)) {
			int kernel = (r->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
			uint64_t space = kernel ? SCRIPT_KSPACE : (uint64_t)(uint32_t)pid;
			const struct script_frame *f = frame_of(p, pid, s->ip, kernel, 0,
							 script_cache__gen(&p->cache, space));
			if (!f)
				return -ENOMEM;
			if (F & SCRIPT_F_SYM) {
				out_chr(o_, ' ');
				out_symname(o_, f, F, NULL);
			}
			if (F & SCRIPT_F_DSO)
				out_dso(o_, f, pid);
		}
	}
	out_chr(o_, '\n');
	return 0;
}

static int one_record(struct pass *p, const struct perfdata_rec *pr, char *err, size_t errlen)
{
	const struct evtab *t = perfdata__evtab(p->pd);
	struct record r;
	char msg[256];
	int rc;

	if (record__decode(t, pr->hdr, pr->hdr->size, &r, msg, sizeof msg) < 0) {
		/* as the Lua reader says it */
		snprintf(err, errlen, "perf.data: %soffset %llu: %s",
			 pr->compressed ? "in the COMPRESSED record at " : "",
			 (unsigned long long)pr->offset, msg);
		return -EINVAL;
	}
	/* the unwinder's maps are the symbolizer's, fed through it */
	if (p->u && r.type != PERF_RECORD_SAMPLE) {
		if ((rc = unwind__feed(p->u, p->sym, &r)) < 0)
			return rc;
	}
	/* perf's own records (attrs, rounds, ...) are no part of the listing */
	if (r.type >= REC_HEADER_ATTR)
		return 0;
	switch (r.type) {
	case PERF_RECORD_SAMPLE:
		p->stats.samples++;
		return print_sample(p, &r, t);
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
		if ((rc = threads__feed(p->th, &r)) < 0)
			return rc;
		/* fall through */
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_EXIT:
		if (!p->u && (rc = symbolizer__feed(p->sym, &r)) < 0)
			return rc;
		return note_maps(p, &r);
	}
	return 0;
}

int perfdata__script_text(struct perfdata *pd, struct symbolizer *sym,
			  const struct script_text_opts *opts, struct script_text_stats *stats,
			  char *err, size_t errlen)
{
	struct pass *p = calloc(1, sizeof *p);
	struct perfdata_rec pr;
	char msg[512] = "";
	int n = 0, rc = 0;

	if (!p)
		return -ENOMEM;
	p->pd = pd;
	p->sym = sym;
	p->o = opts;
	p->max_stack = opts->max_stack ? opts->max_stack : MAX_STACK;
	p->out.write = opts->write;
	p->out.arg = opts->write_arg;
	if (!(p->out.buf = malloc(OUT_CAP)) || events_init(&p->ev, perfdata__evtab(pd)) < 0 ||
	    !(p->names = stacktab__new()) || !(p->th = threads__new(p->names))) {
		rc = -ENOMEM;
		goto out;
	}
	/* as f:records{unwind = true} readies the symbolizer it feeds */
	if (opts->unwind && ((rc = perfdata__prime_symbolizer(pd, sym)) < 0 ||
			     (rc = unwinder__new(&p->u)) < 0 ||
			     !(p->chain = malloc(MAX_CHAIN * sizeof *p->chain)))) {
		rc = rc < 0 ? rc : -ENOMEM;
		goto out;
	}
	while ((n = perfdata__next(pd, &pr)) > 0) {
		p->stats.records++;
		if ((rc = one_record(p, &pr, msg, sizeof msg)) < 0 || p->out.err)
			break;
	}
	if (n < 0 && rc == 0) {
		snprintf(msg, sizeof msg, "%s", perfdata__errmsg(pd));
		rc = n;
	}
	/* what was listed before an error is written too */
	out_flush(&p->out);
	if (rc == 0 && p->out.err)
		rc = p->out.err;
out:
	if (rc < 0 && err && errlen)
		snprintf(err, errlen, "%s", msg[0] ? msg : rc == -ENOMEM ? "out of memory" : strerror(-rc));
	if (stats)
		*stats = p->stats;
	unwinder__delete(p->u);
	free(p->chain);
	threads__delete(p->th);
	stacktab__delete(p->names);
	script_cache__exit(&p->cache);
	free(p->ev.info);
	free(p->out.buf);
	free(p);
	return rc;
}
