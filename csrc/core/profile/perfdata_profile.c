/*
 * perf.data -> profile (perfdata_profile.h): one pass over the records of
 * a file into a stack table, in one of three ways:
 *   unwinding   the file has DWARF events: every record decoded, in time
 *               order, maps into the symbolizer the unwinder reads;
 *   streaming   in time order (a file opened unordered is read ordered for
 *               the pass): samples counted as they come, each under the
 *               name its thread has then (threads.h), maps fed as they
 *               come;
 *   holding     no thread names wanted (opts.no_thread_comms), a symbolizer
 *               or comm callback over a file read unordered: samples
 *               counted as they come, maps records held and fed in time
 *               order at the end.
 */
#include "profile/perfdata_profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata/perfdata.h"
#include "perfdata/maporder.h"
#include "profile/profview.h"
#include "profile/stacktab.h"
#include "profile/threads.h"
#include "base/u64map.h"
#include "record/record.h"
#include "symbol/symbolizer.h"
#include "unwind/unwind.h"

#define MAX_CHAIN 1024
/* kernel pages -> object frames: kallsyms is searched once a page */
#define KPAGE_CACHE 1024

struct pass {
	struct perfdata *pd;
	const struct perfdata_profile_opts *o;
	struct stacktab *st;
	struct symbolizer *sym;     /* the caller's, or own (own_sym) */
	int own_sym;
	struct unwinder *u;         /* unwinding, else NULL */
	uint64_t *chain;            /* MAX_CHAIN entries when unwinding */
	struct maporder *mo;        /* holding, else NULL */
	struct threads *th;         /* thread names, else NULL */
	struct perfdata_profile_stats stats;
	/* leaf objects: the object frame of each object path (pointers the
	 * symbolizer keeps), and of recent kernel pages (page + 1, frame) */
	struct u64map objects;
	uint64_t (*kpages)[2];
	/* leaf symbols: their objects (path pointer ^ kind -> id + 1; not
	 * objects above, whose values are object frames) and the symbols
	 * (symbol_frame's key -> index into sym_of) */
	struct u64map sym_objs, syms;
	/* sym_objs keys looked up lately, by a hash of the key, and their ids */
#define OBJ_CACHE 64
	uint64_t recent_obj[OBJ_CACHE];
	uint32_t recent_obj_id[OBJ_CACHE];
	struct leaf_sym {
		const char *name;   /* the symbolizer's: one pointer per name */
		uint32_t frame;     /* its symbol frame's index */
	} *sym_of;
	size_t sym_cap;
	/* leaf symbols found as samples come: a kernel address, or a file
	 * place (object id << 48 | offset), -> its symbol frame's index
	 * (NO_SHARED_FRAME: a place of its own, left to the fold) */
	struct u64map kleaves, uleaves;
};

#define NO_SHARED_FRAME UINT32_MAX

/* Whether the pass must be ready to unwind: a DWARF event, or a pipe (its
 * events come in the stream). */
static int wants_unwind(const struct perfdata *pd)
{
	const struct evtab *t = perfdata__evtab(pd);
	int i;

	if (perfdata__info(pd)->pipe)
		return 1;
	for (i = 0; i < evtab__count(t); i++)
		if (unwind__wants(evtab__attr(t, i)))
			return 1;
	return 0;
}

int perfdata__prime_symbolizer(struct perfdata *pd, struct symbolizer *sym)
{
	const struct perfdata_info *in = perfdata__info(pd);
	unsigned i;
	int e;

	/* As sym:recording(f): nothing read from /proc for the file's pids,
	 * its kernel read as a recording's, each object by its build id. */
	symbolizer__set_offline(sym, 1);
	symbolizer__set_recorded(sym);
	for (i = 0; i < in->nr_build_ids; i++) {
		const struct perfdata_build_id *b = &in->build_ids[i];
		if (b->filename == NULL)
			continue;
		if (b->cpumode == PERF_RECORD_MISC_KERNEL || b->cpumode == PERF_RECORD_MISC_GUEST_KERNEL)
			e = symbolizer__set_kernel_build_id(sym, b->filename, b->id, b->size);
		else
			e = symbolizer__set_build_id(sym, b->filename, b->id, b->size);
		if (e < 0)
			return e;
	}
	return 0;
}

/* stacktab__set_leaf_frame's fn for leaf objects: the object addr is in
 * now, as a frame. */
static int leaf_object(void *arg, int32_t pid, int kernel, uint64_t addr, uint64_t *frame)
{
	struct pass *p = arg;
	uint64_t *kp = kernel ? p->kpages[(addr >> 12) % KPAGE_CACHE] : NULL;
	const char *path;
	uint32_t *idx;
	int added, e;

	if (kp && kp[0] == (addr >> 12) + 1) {
		*frame = kp[1];
		return 1;
	}
	path = symbolizer__object_of(p->sym, (uint32_t)pid, addr, kernel);
	if (!path)
		return 0;
	if ((idx = u64map__find(&p->objects, (uintptr_t)path)) != NULL) {
		*frame = STACKTAB_OBJECT | *idx;
	} else {
		if ((e = stacktab__intern_object(p->st, path, frame)) < 0)
			return e;
		if (!u64map__insert(&p->objects, (uintptr_t)path,
				    (uint32_t)(*frame & ~STACKTAB_NAMED_MASK), &added))
			return -ENOMEM;
	}
	if (kp) {
		kp[0] = (addr >> 12) + 1;
		kp[1] = *frame;
	}
	return 1;
}

/*
 * A symbol is told apart by its object (the symbolizer's interned path:
 * one pointer per path), its start (in its object's ELF space, which every
 * process mapping the object shares; for the kernel, its address) and its
 * name; an address no symbol covers in a file's mapping, by its object and
 * its place in the file, as reports name it (profview's rel).  That is
 * finer than what reports key a symbol by (object, name and start).  The
 * key packs an object's id + 1 (user, kernel and unnamed ones apart) over
 * the start's low 48 bits; what does not fit stays a place of its own.
 */
enum { OBJ_USER, OBJ_KERNEL, OBJ_UNNAMED };

/* A place that is a symbol frame of its own: 1, or -errno. */
static int own_place(struct pass *p, const struct stacktab_place *pl, uint64_t *frame)
{
	int e = stacktab__intern_symbol(p->st, pl, frame);

	return e < 0 ? e : 1;
}

/* The id of an object (sym_objs' key), 0 when out of memory: a sample's
 * object is usually one of a few seen lately. */
static uint32_t object_id(struct pass *p, uint64_t okey)
{
	size_t h = (size_t)(u64map__hash(okey) % OBJ_CACHE);
	uint32_t *v;
	int added;

	if (p->recent_obj_id[h] && p->recent_obj[h] == okey)
		return p->recent_obj_id[h];
	if (!(v = u64map__insert(&p->sym_objs, okey, (uint32_t)p->sym_objs.n + 1, &added)))
		return 0;
	p->recent_obj[h] = okey;
	p->recent_obj_id[h] = *v;
	return *v;
}

/* The symbol's frame: the frame of the first place it was sampled at.
 * 1: set; 0: the place is a frame of its own, which shared_only leaves
 * unmade. */
static int symbol_frame(struct pass *p, const struct stacktab_place *pl, const void *obj,
			int how, uint64_t start, const char *name, int shared_only,
			uint64_t *frame)
{
	uint64_t okey = (uint64_t)(uintptr_t)obj ^ (uint64_t)how << 62, key;
	uint32_t *v, id;
	int added, e;

	if (!(id = object_id(p, okey)))
		return -ENOMEM;
	if (id >= 0x8000 || (how == OBJ_KERNEL ? start >> 47 != 0x1ffff : start >> 48 != 0))
		return shared_only ? 0 : own_place(p, pl, frame);
	key = (uint64_t)id << 48 | (start & UINT64_C(0xffffffffffff));
	if (!(v = u64map__insert(&p->syms, key, (uint32_t)p->syms.n, &added)))
		return -ENOMEM;
	if (added) {
		if (p->syms.n > p->sym_cap) {
			size_t cap = p->sym_cap ? 2 * p->sym_cap : 1024;
			struct leaf_sym *n = realloc(p->sym_of, cap * sizeof *n);
			if (!n)
				return -ENOMEM;
			p->sym_of = n;
			p->sym_cap = cap;
		}
		if ((e = stacktab__intern_symbol(p->st, pl, frame)) < 0)
			return e;
		p->sym_of[*v].name = name;
		p->sym_of[*v].frame = (uint32_t)(*frame & ~STACKTAB_NAMED_MASK);
		return 1;
	}
	/* an alias of another name at the same start: a place of its own */
	if (p->sym_of[*v].name != name)
		return shared_only ? 0 : own_place(p, pl, frame);
	*frame = STACKTAB_SYMBOL | p->sym_of[*v].frame;
	return 1;
}

/* The frame of the symbol a place is in, in the mappings of its samples'
 * time (an address of JIT code, or in no file, is a place of its own:
 * reports key it by its address; a kernel place is no thread's).  1: set;
 * 0: a user place of its own, which shared_only leaves unmade; -errno. */
static int place_symbol(struct pass *p, const struct stacktab_place *pl, int shared_only,
			uint64_t *frame)
{
	uint32_t pid = pl->kernel ? UINT32_MAX : (uint32_t)pl->pid;
	uint32_t gen = pl->gen ? pl->gen - 1 : UINT32_MAX;
	struct sym_result r;
	struct sym_map m;

	memset(&r, 0, sizeof r);
	if (symbolizer__resolve_at(p->sym, pid, gen, pl->addr, pl->kernel ? SYM_KERNEL : SYM_USER,
				   &r) == 0 && r.name && r.dso) {
		if (r.kind == SYM_KIND_KERNEL)
			return symbol_frame(p, pl, r.dso, OBJ_KERNEL, r.sym_start, r.name, 0,
					    frame);
		if (r.kind == SYM_KIND_USER && r.dso_addr)
			return symbol_frame(p, pl, r.dso, OBJ_USER, r.dso_addr - r.offset, r.name,
					    shared_only, frame);
	} else if (!pl->kernel && !symbolizer__find_map_at(p->sym, pid, gen, pl->addr, &m) &&
		   !profview__anon_path(m.path) && pl->addr >= m.start) {
		return symbol_frame(p, pl, m.path, OBJ_UNNAMED, pl->addr - m.start + m.pgoff, NULL,
				    shared_only, frame);
	}
	return shared_only && !pl->kernel ? 0 : own_place(p, pl, frame);
}

/* stacktab__fold_leaves' fn. */
static int leaf_symbol(void *arg, const struct stacktab_place *pl, uint64_t *frame)
{
	return place_symbol(arg, pl, 0, frame);
}

/*
 * stacktab__set_leaf_frame's fn for leaf symbols: what the fold would make
 * of addr, found as the samples come, once per kernel address and once per
 * place in a file (every process mapping the file shares it), so the
 * table keeps an entry per symbol, not one per address of each thread.  A
 * user place that is a frame of its own (in no file, JIT code, an alias)
 * keeps its address for the fold.
 */
static int leaf_symbol_now(void *arg, int32_t pid, int kernel, uint64_t addr, uint64_t *frame)
{
	struct pass *p = arg;
	struct u64map *cache = kernel ? &p->kleaves : &p->uleaves;
	struct stacktab_place pl;
	uint64_t key = addr;
	uint32_t *v;
	int added, e;

	if (!kernel) {
		uint64_t off, okey;
		int bound;
		const void *obj = symbolizer__file_place(p->sym, (uint32_t)pid, addr, &off, &bound);
		uint32_t id;

		if (!obj || off >> 48)
			return 0;
		/* OBJ_USER: a bound object; OBJ_UNNAMED: a path */
		okey = (uint64_t)(uintptr_t)obj ^ (uint64_t)(bound ? OBJ_USER : OBJ_UNNAMED) << 62;
		if (!(id = object_id(p, okey)))
			return -ENOMEM;
		if (id >= 0x8000)
			return 0;
		key = (uint64_t)id << 48 | off;
	}
	if ((v = u64map__find(cache, key)) != NULL) {
		if (*v == NO_SHARED_FRAME)
			return 0;
		*frame = STACKTAB_SYMBOL | *v;
		return 1;
	}
	memset(&pl, 0, sizeof pl);
	pl.pid = kernel ? -1 : pid;
	pl.gen = kernel ? 0 : symbolizer__space_gen(p->sym, (uint32_t)pid) + 1;
	pl.kernel = kernel != 0;
	pl.addr = addr;
	if ((e = place_symbol(p, &pl, 1, frame)) < 0)
		return e;
	if (!u64map__insert(cache, key,
			    e ? (uint32_t)(*frame & ~STACKTAB_NAMED_MASK) : NO_SHARED_FRAME, &added))
		return -ENOMEM;
	return e;
}

/* stacktab__set_space_gen's fn: the generation (+ 1) of pid's maps now. */
static uint32_t space_gen(void *arg, int32_t pid)
{
	const struct pass *p = arg;

	return symbolizer__space_gen(p->sym, (uint32_t)pid) + 1;
}

static int note_comm(const struct pass *p, const struct record *r)
{
	int e;

	if (p->th && (e = threads__feed(p->th, r)) < 0)
		return e;
	if (!p->o->comm || r->type != PERF_RECORD_COMM)
		return 0;
	return p->o->comm(p->o->comm_arg, r->u.comm.pid, r->u.comm.tid, r->u.comm.comm);
}

/* A record into the table, a DWARF sample with its unwound chain. */
static int add_unwound(struct pass *p, const struct record *r, const struct evtab *t)
{
	struct record copy;
	unsigned status;
	int n, e;

	if (r->type != PERF_RECORD_SAMPLE) {
		if ((e = unwind__feed(p->u, p->sym, r)) < 0)
			return e;
		return stacktab__add_record(p->st, r, t);
	}
	/* one entry spare for the truncation mark */
	n = unwind__chain(p->u, p->sym, r, t, p->chain, MAX_CHAIN - 1, &status);
	if (n <= 0)
		return stacktab__add_record(p->st, r, t);
	if (p->o->mark_truncated && (status & UNWIND_TRUNCATED))
		p->chain[n++] = PERFDATA_PROFILE_TRUNCATED_ADDR;
	copy = *r;
	copy.s.type |= PERF_SAMPLE_CALLCHAIN;
	copy.s.callchain = p->chain;
	copy.s.nr_callchain = (uint64_t)n;
	return stacktab__add_record(p->st, &copy, t);
}

/* The held maps records, in time order, to the comm callback and sym. */
static int feed_held(struct pass *p, const struct evtab *t)
{
	size_t i, n = maporder__sort(p->mo);
	struct record r;
	int e;

	for (i = 0; i < n; i++) {
		if (maporder__get(p->mo, i, t, &r) < 0)
			continue;
		if ((e = note_comm(p, &r)) < 0)
			return e;
		if (p->sym && (e = symbolizer__feed(p->sym, &r)) < 0)
			return e;
	}
	return 0;
}

/* One record of the stream; 0 or -errno. */
static int add_one(struct pass *p, const struct perfdata_rec *pr, const struct evtab *t)
{
	struct record r;
	char err[256];
	int e;

	if (p->o->window && pr->hdr->type == PERF_RECORD_SAMPLE &&
	    !record__window_keeps(p->o->window, t, pr->hdr, pr->hdr->size))
		return 0;
	/* most samples need no decoding: their chain goes straight in */
	if (!p->u && pr->hdr->type == PERF_RECORD_SAMPLE &&
	    (e = stacktab__add_sample_raw(p->st, t, pr->hdr, pr->hdr->size)) != 0)
		return e < 0 ? e : 0;
	if (record__decode(t, pr->hdr, pr->hdr->size, &r, err, sizeof err) < 0) {
		p->stats.skipped++;
		return 0;
	}
	if (p->mo) {
		if (maporder__wants(r.type) && (e = maporder__add(p->mo, &r)) < 0)
			return e;
		return stacktab__add_record(p->st, &r, t);
	}
	if ((e = note_comm(p, &r)) < 0)
		return e;
	if (p->u)
		return add_unwound(p, &r, t);
	if (p->sym && maporder__wants(r.type) && (e = symbolizer__feed(p->sym, &r)) < 0)
		return e;
	/* a kernel map (a module's) may cover pages seen before */
	if ((r.type == PERF_RECORD_MMAP || r.type == PERF_RECORD_MMAP2) &&
	    (r.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL) {
		if (p->kpages)
			memset(p->kpages, 0, KPAGE_CACHE * sizeof *p->kpages);
		u64map__exit(&p->kleaves);
	}
	return stacktab__add_record(p->st, &r, t);
}

static int fail(char *err, size_t errlen, int e, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg ? msg : e == -ENOMEM ? "out of memory" : strerror(-e));
	return e;
}

static int run(struct pass *p, char *err, size_t errlen)
{
	struct perfdata_rec pr;
	int n, e = 0;

	while ((n = perfdata__next(p->pd, &pr)) > 0) {
		p->stats.records++;
		/* the evtab is looked up per record: a pipe's attrs add events */
		if ((e = add_one(p, &pr, perfdata__evtab(p->pd))) < 0)
			break;
		if (p->o->progress && (p->stats.records & 0xffff) == 0) {
			uint64_t total, done = perfdata__progress(p->pd, &total);
			if ((e = p->o->progress(p->o->progress_arg, done, total)) < 0)
				break;
		}
	}
	if (n < 0) {
		const char *msg = perfdata__errmsg(p->pd);
		return msg[0] ? fail(err, errlen, -EINVAL, msg) : fail(err, errlen, n, NULL);
	}
	if (e >= 0 && p->mo)
		e = feed_held(p, perfdata__evtab(p->pd));
	return e < 0 ? fail(err, errlen, e, NULL) : 0;
}

int perfdata__profile(struct perfdata *pd, const struct perfdata_profile_opts *opts,
		      struct stacktab *st, struct perfdata_profile_stats *stats,
		      char *err, size_t errlen)
{
	static const struct perfdata_profile_opts defaults;
	struct pass p;
	int e, frames, reorder = 0;

	memset(&p, 0, sizeof p);
	p.pd = pd;
	p.o = opts ? opts : &defaults;
	p.st = st;
	/* Stacks that keep no address (reports by thread, CPU or time
	 * alone) need no maps and no unwinding: the pass only counts. */
	frames = stacktab__frames(st);
	p.sym = frames ? p.o->sym : NULL;
	if (frames && p.o->unwind != PERFDATA_PROFILE_UNWIND_OFF && wants_unwind(pd)) {
		if (!p.sym) {
			if (!(p.sym = symbolizer__new()))
				return fail(err, errlen, -ENOMEM,
					    "cannot create a symbolizer: out of memory");
			p.own_sym = 1;
		}
		p.chain = malloc(MAX_CHAIN * sizeof *p.chain);
		if (!p.chain || unwinder__new(&p.u) < 0) {
			e = fail(err, errlen, -ENOMEM, NULL);
			goto out;
		}
		if (p.o->unwind_slow)
			unwinder__set_fast(p.u, 0);
		p.stats.unwinding = 1;
		/* maps must come before the samples that need them */
		reorder = perfdata__unordered(pd);
	} else if (!p.o->no_thread_comms) {
		/* a sample's name is its thread's at that time: records in time order */
		reorder = perfdata__unordered(pd);
	} else if ((p.sym || p.o->comm) && perfdata__unordered(pd)) {
		if (!(p.mo = maporder__new())) {
			e = fail(err, errlen, -ENOMEM, NULL);
			goto out;
		}
	}
	if (p.sym && (e = perfdata__prime_symbolizer(pd, p.sym)) < 0) {
		e = fail(err, errlen, e, NULL);
		goto out;
	}
	if (!p.o->no_thread_comms) {
		if (!(p.th = threads__new(st))) {
			e = fail(err, errlen, -ENOMEM, NULL);
			goto out;
		}
		threads__keep(p.th, p.o->keep_comms, p.o->nkeep_comms);
		stacktab__set_sample_comm(st, threads__sample_comm, p.th);
	}
	u64map__init(&p.objects);
	u64map__init(&p.sym_objs);
	u64map__init(&p.syms);
	u64map__init(&p.kleaves);
	u64map__init(&p.uleaves);
	/* maps fed in time order: each sample knows its space's generation */
	if (p.sym && !p.mo)
		stacktab__set_space_gen(st, space_gen, &p);
	if (p.o->leaf_objects && p.sym && !p.mo && !p.u) {
		if (!(p.kpages = calloc(KPAGE_CACHE, sizeof *p.kpages))) {
			e = fail(err, errlen, -ENOMEM, NULL);
			goto out;
		}
		stacktab__set_leaf_frame(st, leaf_object, &p);
		stacktab__merge_leaf_threads(st, p.o->merge_threads);
	} else if (p.o->leaf_symbols && p.sym && !p.mo && !p.u) {
		stacktab__set_leaf_frame(st, leaf_symbol_now, &p);
		stacktab__merge_leaf_threads(st, p.o->merge_threads);
	}
	if (reorder)
		perfdata__rewind_order(pd, 0);
	else
		perfdata__rewind(pd);
	e = run(&p, err, errlen);
	stacktab__set_leaf_frame(st, NULL, NULL);
	stacktab__merge_leaf_threads(st, 0);
	stacktab__set_space_gen(st, NULL, NULL);
	/* A pipe's build ids come in the stream: known now, before any resolve. */
	if (e >= 0 && p.sym && perfdata__info(pd)->pipe &&
	    (e = perfdata__prime_symbolizer(pd, p.sym)) < 0)
		e = fail(err, errlen, e, NULL);
	if (reorder)
		perfdata__rewind_order(pd, 1);
	if (p.u)
		unwinder__stats(p.u, &p.stats.unwind);
	if (p.th) {
		stacktab__set_sample_comm(st, NULL, NULL);
		if (e >= 0 && (e = threads__publish(p.th)) < 0)
			e = fail(err, errlen, e, NULL);
	}
	/* the maps and names final: each leaf's symbol, as the view would
	 * resolve it, keys its stack; or, leaf objects made, their threads
	 * fold (a leaf left an address keeps its thread) */
	if (e >= 0 && p.sym && (p.o->leaf_symbols || (p.o->leaf_objects && p.o->merge_threads)) &&
	    (e = stacktab__fold_leaves(st, p.o->leaf_symbols ? leaf_symbol : NULL, &p,
				       !p.o->merge_threads)) < 0)
		e = fail(err, errlen, e, NULL);
	/* the file is all in: what finds a stack again is not needed */
	if (e >= 0)
		stacktab__drop_index(st);
out:
	stacktab__set_leaf_frame(st, NULL, NULL);
	stacktab__merge_leaf_threads(st, 0);
	stacktab__set_space_gen(st, NULL, NULL);
	free(p.kpages);
	u64map__exit(&p.objects);
	u64map__exit(&p.sym_objs);
	u64map__exit(&p.syms);
	u64map__exit(&p.kleaves);
	u64map__exit(&p.uleaves);
	free(p.sym_of);
	if (p.th)
		stacktab__set_sample_comm(st, NULL, NULL);
	threads__delete(p.th);
	if (stats)
		*stats = p.stats;
	unwinder__delete(p.u);
	free(p.chain);
	maporder__delete(p.mo);
	if (p.own_sym)
		symbolizer__delete(p.sym);
	return e;
}
