/*
 * A profile view: unique addresses gathered per address space in the order
 * they first appear (the kernel's one space, each pid's own), resolved
 * space by space, then every stack mapped to frame ids.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/keytab.h"
#include "base/slots.h"
#include "base/bigmem.h"
#include "base/u64map.h"
#include "profile/profview.h"
#include "profile/stacktab.h"
#include "symbol/kspace.h"
#include "symbol/symbolizer.h"

#define KERNEL_SPACE INT64_C(-2)
/* A user space: the pid, and its generation + 1 (0: the latest mappings)
 * above it, so that addresses resolve in the mappings of their samples. */
static int64_t user_space(int32_t pid, uint32_t gen)
{
	return pid < 0 ? (int64_t)pid : (int64_t)(((uint64_t)gen << 32) | (uint32_t)pid);
}

/* An interned address of a space (its space list says which): the frames
 * it became. */
struct pv_addr {
	uint64_t addr;
	uint32_t first, n;     /* frames [first, first + n) */
};

struct pv_stack {
	size_t off;            /* into ids */
	unsigned n, depth;
	uint32_t comm, thread_comm, event;
	uint32_t own;          /* a discarded chain's own ip's frame, or PV_NONE */
};

struct profview {
	const struct stacktab *st;
	struct keytab *strs;
	struct pv_frame *frames;
	size_t nframes, frames_cap;
	struct pv_stack *stacks;
	size_t nstacks;
	uint32_t *ids;
	size_t nids, ids_cap;
	/* named frames of st: 3 x name index (+ 1: an object's user frame,
	 * + 2: its kernel frame) -> frame id + 1 */
	uint32_t *named;
	size_t nnamed;
	int lines;
	/* While building: the symbolizer's strings (stable until it is
	 * deleted) interned by address; an object's short name by its id. */
	struct u64map by_ptr, dsonames, dsolabels;  /* dso id -> short name, folded label */
	/* Unnamed frames' address names (symname, abs_symname) are made on
	 * the first profview__symnames: flame graphs and folded stacks never
	 * print them, and on a system-wide profile they are most strings. */
	int symnames_pending;
	/* by_label: (label << 8 | kind) -> frame id, while building */
	int by_label;
	struct u64map labels;
	/* by_symbol: a frame per symbol as reports tell it apart (an index
	 * of the frames by symbol, base/slots.h, while building: the frames
	 * are its keys) */
	int by_symbol;
	uint64_t *sym_slots;
	size_t nsym_slots, nsyms;
};

int profview__intern(struct profview *pv, const char *s, size_t len, uint32_t *id)
{
	return keytab__intern(pv->strs, s, len, id, NULL);
}

static uint32_t intern(struct profview *pv, const char *s, int *rc);

/* intern() for a string of the symbolizer's: once per address. */
static uint32_t intern_sym(struct profview *pv, const char *s, int *rc)
{
	uint32_t *v, id;
	int added;

	if (!s || *rc)
		return PV_NONE;
	v = u64map__find(&pv->by_ptr, (uint64_t)(uintptr_t)s);
	if (v)
		return *v;
	id = intern(pv, s, rc);
	if (!*rc && !u64map__insert(&pv->by_ptr, (uint64_t)(uintptr_t)s, id, &added))
		*rc = -ENOMEM;
	return id;
}

static uint32_t intern(struct profview *pv, const char *s, int *rc)
{
	uint32_t id = PV_NONE;

	if (s && *rc == 0)
		*rc = keytab__intern(pv->strs, s, strlen(s), &id, NULL);
	return *rc ? PV_NONE : id;
}

const char *profview__str(const struct profview *pv, uint32_t id)
{
	return keytab__str(pv->strs, id);
}

size_t profview__strlen(const struct profview *pv, uint32_t id)
{
	size_t n;

	keytab__key(pv->strs, id, &n);
	return n;
}

size_t profview__nstrs(const struct profview *pv)
{
	return keytab__count(pv->strs);
}

int profview__strcmp(const struct profview *pv, uint32_t a, uint32_t b)
{
	size_t la, lb;
	const void *x = keytab__key(pv->strs, a, &la), *y = keytab__key(pv->strs, b, &lb);
	int c;

	if (a == b)
		return 0;
	c = memcmp(x, y, la < lb ? la : lb);
	if (c)
		return c;
	return la < lb ? -1 : la > lb;
}

static struct pv_frame *new_frame(struct profview *pv, uint32_t *id)
{
	struct pv_frame *f;

	if (pv->nframes == pv->frames_cap) {
		size_t cap = pv->frames_cap ? pv->frames_cap * 2 : 1024;
		f = bigmem__realloc(pv->frames, cap * sizeof *f);
		if (!f)
			return NULL;
		pv->frames = f;
		pv->frames_cap = cap;
	}
	*id = (uint32_t)pv->nframes;
	f = &pv->frames[pv->nframes++];
	memset(f, 0, sizeof *f);
	f->name = f->mangled = f->dso = f->file = f->build_id = f->srcline = PV_NONE;
	return f;
}

static const char *basename_of(const char *path, char *buf, size_t size)
{
	size_t n = strlen(path);
	const char *b;

	while (n > 0 && path[n - 1] == '/')
		n--;
	b = path + n;
	while (b > path && b[-1] != '/')
		b--;
	n = (size_t)(path + n - b);
	if (n >= size)
		n = size - 1;
	memcpy(buf, b, n);
	buf[n] = '\0';
	return buf;
}

/* perf's short name of a JIT map (dso__set_basename): "[JIT] tid N". */
static int jit_map_tid(const char *dso, unsigned long *tid)
{
	const char *p = dso + 10;
	char *end;

	if (strncmp(dso, "/tmp/perf-", 10) != 0 || *p < '0' || *p > '9')
		return 0;
	*tid = strtoul(p, &end, 10);
	return strcmp(end, ".map") == 0;
}

int profview__dso_name(const char *dso, int kernel, char *buf, size_t size)
{
	unsigned long tid;
	char *mod = NULL;
	int kmod = 0;

	/* perf's short name of a kernel module: "[ath9k]" for .../ath9k.ko
	 * (kmod_path__parse_name), also when its path came from the build-id
	 * table */
	if (kernel && !(mod = kspace__module_name(dso, &kmod)))
		return -ENOMEM;
	if (jit_map_tid(dso, &tid))
		snprintf(buf, size, "[JIT] tid %lu", tid);
	else if (kmod)
		snprintf(buf, size, "%s", mod);
	else
		basename_of(dso, buf, size);
	free(mod);
	return 0;
}

/* "0x%016" PRIx64 without printf: every unnamed frame has one or two. */
static const char *hex16(char *buf, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	int i;

	buf[0] = '0';
	buf[1] = 'x';
	for (i = 17; i >= 2; i--, v >>= 4)
		buf[i] = digits[v & 15];
	buf[18] = '\0';
	return buf;
}

/* The label of an unnamed frame of object dso: "[libfoo.so]" (folded
 * stacks' spelling), made once per object. */
static uint32_t dso_label(struct profview *pv, uint32_t dso_id, const char *dso, int *rc)
{
	uint32_t *v = u64map__find(&pv->dsolabels, dso_id), id;
	char b[4096], buf[4200];
	int added;

	if (v)
		return *v;
	basename_of(dso, b, sizeof b);
	if (b[0] == '[') {
		id = intern(pv, b, rc);
	} else {
		snprintf(buf, sizeof buf, "[%s]", b);
		id = intern(pv, buf, rc);
	}
	if (!*rc && !u64map__insert(&pv->dsolabels, dso_id, id, &added))
		*rc = -ENOMEM;
	return id;
}

/* The strings reports print and key on (see pv_frame). */
static int derive(struct profview *pv, struct pv_frame *f)
{
	char buf[4200];
	int rc = 0;
	const char *dso = f->dso != PV_NONE ? profview__str(pv, f->dso) : NULL;

	f->has_dso = dso && strcmp(dso, "[unknown]") != 0;
	if (f->name != PV_NONE) {
		f->symname = f->abs_symname = f->label = f->name;
	} else {
		f->symname = f->abs_symname = PV_PENDING;
		pv->symnames_pending = 1;
		/* folded stacks: the object as "[libfoo.so]" */
		if (dso && *dso && strcmp(dso, "[unknown]") != 0) {
			f->label = dso_label(pv, f->dso, dso, &rc);
		} else {
			f->label = intern(pv, "[unknown]", &rc);
		}
	}
	if (dso && *dso) {
		uint32_t *v = u64map__find(&pv->dsonames, f->dso);
		int added;

		if (v) {
			f->dsoname = *v;
		} else {
			if ((rc = profview__dso_name(dso, f->kind == PV_KERNEL, buf, sizeof buf)) == 0)
				f->dsoname = intern(pv, buf, &rc);
			if (!rc && !u64map__insert(&pv->dsonames, f->dso, f->dsoname, &added))
				rc = -ENOMEM;
		}
	} else {
		f->dsoname = intern(pv, "[unknown]", &rc);
	}
	return rc;
}

int profview__symnames(struct profview *pv)
{
	char buf[32];
	size_t i;
	int rc = 0;

	if (pv->by_label)
		return -EOPNOTSUPP;

	if (!pv->symnames_pending)
		return 0;
	for (i = 0; i < pv->nframes && !rc; i++) {
		struct pv_frame *f = &pv->frames[i];
		uint32_t abs, rel;
		if (f->abs_symname != PV_PENDING)
			continue;
		/* perf's "%#.16llx": no 0x before a zero */
		abs = intern(pv, f->addr == 0 ? "0000000000000000" : hex16(buf, f->addr), &rc);
		rel = f->has_rel ? intern(pv, hex16(buf, f->rel), &rc) : abs;
		/* both or neither: a call after a failed one takes it up again */
		if (!rc) {
			f->abs_symname = abs;
			f->symname = rel;
		}
	}
	if (!rc)
		pv->symnames_pending = 0;
	return rc;
}

/* "[Lua] name src:line": the source and line a Lua frame names. */
static void lua_frame_place(struct profview *pv, struct pv_frame *f, const char *name, int *rc)
{
	size_t n = strlen(name), colon, i;
	const char *sp;

	if (strncmp(name, "[Lua] ", 6) != 0 || n < 8)
		return;
	i = n;
	while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
		i--;
	if (i == n || i == 0 || name[i - 1] != ':')
		return;
	colon = i - 1;
	sp = memchr(name + 6, ' ', colon > 6 ? colon - 6 : 0);
	if (!sp)
		return;
	if (*rc == 0)
		*rc = keytab__intern(pv->strs, sp + 1, (size_t)(name + colon - (sp + 1)), &f->file, NULL);
	f->line = (uint32_t)strtoul(name + colon + 1, NULL, 10);
}

/*
 * perf report's srcline of a frame (util/srcline.c, perf 6.1): the line
 * table's "file:line" with the file's base name; where there is none,
 * "sym+offset" (offset in decimal) or, without a symbol, the object's
 * short name and its own address ("ls[6b33]"); without an object, "??:0".
 */
static int frame_srcline(struct profview *pv, struct pv_frame *f)
{
	char buf[4200], base[4096];
	int rc = 0;

	if (f->file != PV_NONE) {
		basename_of(profview__str(pv, f->file), base, sizeof base);
		snprintf(buf, sizeof buf, "%s:%u", base, f->line);
	} else if (f->name != PV_NONE && f->has_offset) {
		snprintf(buf, sizeof buf, "%s+%" PRIu64, profview__str(pv, f->name), f->offset);
	} else if (f->has_dso) {
		uint64_t a = f->has_dso_addr ? f->dso_addr : f->has_rel ? f->rel : f->addr;
		snprintf(buf, sizeof buf, "%s[%" PRIx64 "]", profview__str(pv, f->dsoname), a);
	} else {
		snprintf(buf, sizeof buf, "??:0");
	}
	f->srcline = intern(pv, buf, &rc);
	return rc;
}

/* The cache slot of a named or object frame (table_frame's index), grown
 * to hold it; NULL: out of memory. */
static uint32_t *named_slot(struct profview *pv, size_t idx)
{
	if (idx >= pv->nnamed) {
		size_t n = pv->nnamed ? pv->nnamed : 48;
		uint32_t *m;
		while (n <= idx)
			n *= 2;
		m = realloc(pv->named, n * sizeof *m);
		if (!m)
			return NULL;
		memset(m + pv->nnamed, 0, (n - pv->nnamed) * sizeof *m);
		pv->named = m;
		pv->nnamed = n;
	}
	return &pv->named[idx];
}

/* A frame of the table's own, made once: a named frame (a Lua function, a
 * VM state) or an object frame (a leaf the pass collapsed to its object,
 * stacktab__set_leaf_frame: no address, no symbol). */
static int table_frame(struct profview *pv, uint64_t frame, int kernel, int lines, uint32_t *id)
{
	int object = stacktab__is_object(frame);
	const char *name = object ? stacktab__object(pv->st, frame) : stacktab__name(pv->st, frame);
	uint32_t *slot = named_slot(pv, 3 * (size_t)(frame & ~STACKTAB_NAMED_MASK) +
				    (object ? 1 + (kernel != 0) : 0));
	struct pv_frame *f;
	int rc = 0;

	if (!slot)
		return -ENOMEM;
	if (*slot) {
		*id = *slot - 1;
		return 0;
	}
	f = new_frame(pv, id);
	if (!f)
		return -ENOMEM;
	if (object) {
		f->kind = kernel ? PV_KERNEL : PV_USER;
		f->dso = intern(pv, name ? name : "", &rc);
	} else {
		f->kind = PV_LUA;
		f->name = intern(pv, name ? name : "", &rc);
		if (name)
			lua_frame_place(pv, f, name, &rc);
	}
	if (!rc)
		rc = derive(pv, f);
	if (!rc && lines)
		rc = frame_srcline(pv, f);
	*slot = *id + 1;
	return rc;
}

int profview__anon_path(const char *p)
{
	return !strcmp(p, "//anon") || !strncmp(p, "/dev/zero", 9) ||
	       !strncmp(p, "/anon_hugepage", 14);
}

/* by_symbol: what a report reads of a frame (pvreport.c) tells symbols
 * apart: a named symbol's kind, object, name and start; an unnamed
 * address's kind, object, place in its mapping and raw address. */
static uint64_t symbol_hash(const struct pv_frame *f)
{
	uint64_t h = slots__mix((uint64_t)f->kind << 32 | f->dso, f->name);

	if (f->has_offset)
		return slots__mix(h, f->sym_start);
	return slots__mix(slots__mix(h ^ UINT64_C(1) << 63, f->rel ^ (uint64_t)f->has_rel << 62),
			  f->addr);
}

static int same_symbol(const struct pv_frame *a, const struct pv_frame *b)
{
	if (a->kind != b->kind || a->dso != b->dso || a->name != b->name ||
	    a->has_offset != b->has_offset)
		return 0;
	if (a->has_offset)
		return a->sym_start == b->sym_start;
	return a->has_rel == b->has_rel && a->rel == b->rel && a->addr == b->addr;
}

/* by_symbol: the new frame id (the last) becomes the first of its symbol
 * (a->first), or stays when it is the first. */
static int share_symbol(struct profview *pv, struct pv_addr *a, uint32_t id)
{
	const struct pv_frame *f = &pv->frames[id];
	uint64_t h = symbol_hash(f);
	size_t j, mask;

	if (2 * (pv->nsyms + 1) > pv->nsym_slots && slots__grow(&pv->sym_slots, &pv->nsym_slots))
		return -ENOMEM;
	mask = pv->nsym_slots - 1;
	for (j = SLOTS_HOME(h, pv->nsym_slots); pv->sym_slots[j]; j = (j + 1) & mask) {
		uint32_t other = (uint32_t)pv->sym_slots[j] - 1;
		if (SLOTS_TAG(pv->sym_slots[j]) == SLOTS_TAG(h) && same_symbol(&pv->frames[other], f)) {
			pv->nframes--;   /* the new frame was the last: its slot is reused */
			a->first = other;
			return 0;
		}
	}
	pv->sym_slots[j] = SLOTS_TAG(h) | ((uint64_t)id + 1);
	pv->nsyms++;
	return 0;
}

/* The frames of one address of a space. */
static int resolve_addr(struct profview *pv, const struct profview_opts *o, int64_t space,
			struct pv_addr *a)
{
	int kernel = space == KERNEL_SPACE;
	uint32_t pid = kernel ? UINT32_MAX : (uint32_t)((uint64_t)space & UINT32_MAX);
	uint32_t gen = space >= 0 && (space >> 32) > 0 ? (uint32_t)(space >> 32) - 1 :
		       UINT32_MAX;
	unsigned flags = (kernel ? SYM_KERNEL : SYM_USER) |
			 (o->lines ? SYM_LINES : 0) | (o->inlines ? SYM_INLINES : 0);
	struct sym_result r;
	struct pv_frame *f;
	uint32_t id;
	int resolved = 0, rc = 0;
	unsigned ninl = 0, j;
	const struct sym_inline *inl = NULL;

	memset(&r, 0, sizeof r);
	if (o->sym)
		resolved = symbolizer__resolve_at(o->sym, pid, gen, a->addr, flags, &r) == 0;
	f = new_frame(pv, &id);
	if (!f)
		return -ENOMEM;
	a->first = id;
	a->n = 1;
	f->kind = kernel ? PV_KERNEL : PV_USER;
	f->addr = a->addr;
	f->has_addr = 1;
	if (resolved) {
		if (r.kind == SYM_KIND_KERNEL)
			f->kind = PV_KERNEL;
		else if (r.kind == SYM_KIND_JIT)
			f->kind = PV_JIT;
		else
			f->kind = PV_USER;
		f->name = intern_sym(pv, r.name, &rc);
		if (r.raw_name && r.name && strcmp(r.raw_name, r.name) != 0)
			f->mangled = intern_sym(pv, r.raw_name, &rc);
		f->dso = intern_sym(pv, r.dso, &rc);
		if (r.file) {
			f->file = intern_sym(pv, r.file, &rc);
			f->line = r.line;
		}
		if (r.build_id[0])
			f->build_id = intern(pv, r.build_id, &rc);
		f->offset = r.offset;
		f->has_offset = 1;
		f->sym_start = r.dso_addr - r.offset;
		if (o->inlines && r.nr_inlined > 0) {
			ninl = r.nr_inlined;
			inl = r.inlined;
			if (r.name && inl[ninl - 1].name && !strcmp(inl[ninl - 1].name, r.name))
				ninl--;
		}
	}
	if (r.dso && r.dso_addr) {
		f->dso_addr = r.dso_addr;
		f->has_dso_addr = 1;
	}
	if (!kernel && a->addr == PV_TRUNCATED_ADDR && o->truncated_marks) {
		f->name = intern(pv, "[truncated]", &rc);
	} else if (!resolved && o->sym) {
		if (kernel) {
			const char *dso;
			uint64_t mod;
			if (symbolizer__find_kernel_map(o->sym, a->addr, &dso, &mod) == 0) {
				f->dso = intern_sym(pv, dso, &rc);
				/* perf prints a module's unnamed address within
				 * its map (map__map_ip), the kernel's as it is */
				if (mod != UINT64_MAX && a->addr >= mod) {
					f->rel = a->addr - mod;
					f->has_rel = 1;
				}
			}
		} else if (r.in_file_map && r.dso && !profview__anon_path(r.dso)) {
			/* the mapping the resolve found: not looked up again */
			f->dso = intern_sym(pv, r.dso, &rc);
			if (a->addr >= r.map_start) {
				f->rel = a->addr - r.map_start + r.map_pgoff;
				f->has_rel = 1;
			}
		} else {
			struct sym_map m;
			if (symbolizer__find_map_at(o->sym, pid, gen, a->addr, &m) == 0) {
				if (profview__anon_path(m.path)) {
					char buf[64];
					snprintf(buf, sizeof buf, "/tmp/perf-%d.map", (int)pid);
					f->dso = intern(pv, buf, &rc);
					f->kind = PV_JIT;
				} else {
					f->dso = intern_sym(pv, m.path, &rc);
					if (a->addr >= m.start) {
						f->rel = a->addr - m.start + m.pgoff;
						f->has_rel = 1;
					}
				}
			}
		}
	}
	if (rc || (rc = derive(pv, f)) || (o->lines && (rc = frame_srcline(pv, f))))
		return rc;
	/* one frame per label and kind (an address with inlined functions
	 * keeps its run of frames: a run is contiguous) */
	if (pv->by_label && ninl == 0) {
		int added;
		uint32_t *v = u64map__insert(&pv->labels, (uint64_t)f->label << 8 | f->kind, id,
					     &added);
		if (!v)
			return -ENOMEM;
		if (!added) {
			pv->nframes--;   /* the new frame was the last: its slot is reused */
			a->first = *v;
		}
		return 0;
	}
	if (pv->by_symbol && ninl == 0)
		return share_symbol(pv, a, id);
	/* the functions inlined here: outermost first, innermost deepest */
	for (j = ninl; j > 0; j--) {
		struct pv_frame *h, *g = new_frame(pv, &id);
		if (!g)
			return -ENOMEM;
		h = &pv->frames[a->first];   /* new_frame may move the array */
		g->kind = PV_INLINE;
		g->addr = a->addr;
		g->has_addr = 1;
		g->dso = h->dso;
		g->name = intern(pv, inl[j - 1].name, &rc);
		if (inl[j - 1].file) {
			g->file = intern(pv, inl[j - 1].file, &rc);
			g->line = inl[j - 1].line;
		}
		if (rc || (rc = derive(pv, g)) || (o->lines && (rc = frame_srcline(pv, g))))
			return rc;
		a->n++;
	}
	return 0;
}

static int push_id(struct profview *pv, uint32_t id)
{
	if (pv->nids == pv->ids_cap) {
		size_t cap = pv->ids_cap ? pv->ids_cap * 2 : 4096;
		uint32_t *n = bigmem__realloc(pv->ids, cap * sizeof *n);
		if (!n)
			return -ENOMEM;
		pv->ids = n;
		pv->ids_cap = cap;
	}
	pv->ids[pv->nids++] = id;
	return 0;
}

/* The stacktab's strings are its own, stable while the view is built:
 * interned by pointer first, so a stack's names cost no hash of text. */
#define PTR_CACHE 1024
struct ptr_cache {
	const char *p[PTR_CACHE];
	uint32_t id[PTR_CACHE];
};

static uint32_t intern_ptr(struct profview *pv, struct ptr_cache *c, const char *s, int *rc)
{
	size_t h = ((uintptr_t)s >> 3) * 0x9e3779b1u % PTR_CACHE;

	if (!s)
		return PV_NONE;
	if (c->p[h] != s) {
		c->id[h] = intern(pv, s, rc);
		c->p[h] = *rc ? NULL : s;
	}
	return c->id[h];
}

/* by_label: stack i, just pushed at the end of the ids, takes the ids of
 * an earlier stack of the same frames instead (a system-wide file's
 * stacks are mostly the same functions in many processes). */
static int share_ids(struct profview *pv, struct u64map *seqs, size_t i)
{
	struct pv_stack *s = &pv->stacks[i];
	const uint32_t *ids = pv->ids + s->off;
	uint64_t h = s->n;
	uint32_t *v;
	unsigned j;
	int added;

	for (j = 0; j < s->n; j++)
		h = (h ^ ids[j]) * UINT64_C(0x9e3779b97f4a7c15);
	v = u64map__insert(seqs, h ^ (h >> 29), (uint32_t)i, &added);
	if (!v)
		return -ENOMEM;
	if (!added) {
		const struct pv_stack *o = &pv->stacks[*v];
		if (o->n == s->n && !memcmp(pv->ids + o->off, ids, s->n * sizeof *ids)) {
			pv->nids = s->off;
			s->off = o->off;
		}
	}
	return 0;
}

/* Growable arrays of address ids, one per space in first-seen order. */
struct space_list {
	int64_t space;
	uint32_t *ids;
	size_t n, cap;
};

/* (space list index, address) -> its pv_addr id, for every space in one
 * table: a system-wide profile has thousands of spaces, and a table each
 * cost a growth of its own and fresh pages each. */
struct addr_slot {
	uint64_t addr;
	uint32_t sid1;         /* space list index + 1; 0: empty */
	uint32_t id;
};

struct addr_map {
	struct addr_slot *slots;
	size_t n, nslots;
};

static uint64_t addr_hash(uint64_t addr, uint32_t sid1)
{
	return u64map__hash(addr ^ ((uint64_t)sid1 * UINT64_C(0x9e3779b97f4a7c15)));
}

static uint64_t addr_slot_hash(const void *entry)
{
	const struct addr_slot *s = entry;

	return addr_hash(s->addr, s->sid1);
}

static int addr_grow(struct addr_map *m)
{
	void *t = m->slots;

	if (!m->nslots) {
		if (!(m->slots = bigmem__calloc(4096, sizeof *m->slots)))
			return -ENOMEM;
		m->nslots = 4096;
		return 0;
	}
	if (slots__double(&t, &m->nslots, sizeof *m->slots, addr_slot_hash))
		return -ENOMEM;
	m->slots = t;
	return 0;
}

/* The id of (sid, addr), inserted as id when new (*added set); h is
 * addr_hash(addr, sid + 1). */
static int addr_insert(struct addr_map *m, size_t sid, uint64_t addr, uint64_t h, uint32_t id,
		       uint32_t *out, int *added)
{
	uint32_t sid1 = (uint32_t)sid + 1;
	size_t j;

	*added = 0;
	/* three quarters full at most: it is the view's largest block while
	 * it is built (16 bytes a distinct address) */
	if (4 * (m->n + 1) > 3 * m->nslots && addr_grow(m))
		return -ENOMEM;
	for (j = h & (m->nslots - 1); m->slots[j].sid1;
	     j = (j + 1) & (m->nslots - 1))
		if (m->slots[j].addr == addr && m->slots[j].sid1 == sid1) {
			*out = m->slots[j].id;
			return 0;
		}
	m->slots[j].addr = addr;
	m->slots[j].sid1 = sid1;
	m->slots[j].id = id;
	m->n++;
	*added = 1;
	*out = id;
	return 0;
}

/* An address of one stack as build's first step reads it: the address,
 * its space list index (or a frame of the table's, kernel or not) and its
 * hash in the address map. */
#define TABLE_FRAME (UINT32_MAX - 1)
#define TABLE_FRAME_KERNEL UINT32_MAX
struct stack_addr_key {
	uint64_t addr, hash;
	uint32_t sid;
};

static int build(struct profview *pv, const struct profview_opts *o)
{
	const struct stacktab *st = pv->st;
	size_t ns = stacktab__count(st), i, k;
	struct keytab *spaces = keytab__new();
	/* the kernel's space list and the last user one: a stack goes back
	 * and forth between the two */
	int64_t last_space = INT64_MIN;
	size_t kernel_sid = SIZE_MAX, last_sid = 0;
	size_t sid = 0;
	/* room from the start; each grows as it fills */
	size_t nav = 0, avcap = 1024, nsl = 0, slcap = 16, nsa = 0, sacap = 4096;
	struct pv_addr *av = bigmem__calloc(avcap, sizeof *av);
	struct space_list *sl = calloc(slcap, sizeof *sl);
	uint32_t *stack_addr = bigmem__calloc(sacap, sizeof *stack_addr);  /* per stack address:
								   its pv_addr id or named */
	struct ptr_cache *pc = calloc(1, sizeof *pc);
	struct addr_map am = { NULL, 0, 0 };
	struct u64map seqs;   /* by_label: the hash of a stack's ids -> the stack */
	int single = 1;       /* every address is one frame */
	struct stack_addr_key *fr = NULL;   /* one stack's addresses */
	size_t fcap = 0;
	int rc = 0;

	u64map__init(&seqs);

	pv->stacks = bigmem__calloc(ns ? ns : 1, sizeof *pv->stacks);
	if (!spaces || !pv->stacks || !pc || !av || !sl || !stack_addr) {
		rc = -ENOMEM;
		goto out;
	}
	/* 1: unique addresses per space, in the order they come */
	for (i = 0; i < ns && !rc; i++) {
		struct stacktab_entry e;
		unsigned j, nk, nw;

		stacktab__get(st, i, &e);
		nk = e.nkernel > e.nr ? e.nr : e.nkernel;
		pv->stacks[i].depth = e.nr;
		if (o->no_frames)
			continue;
		nw = e.nr + (e.own ? 1 : 0);
		if (nw > fcap) {
			struct stack_addr_key *n = realloc(fr, nw * sizeof *n);
			if (!n) { rc = -ENOMEM; break; }
			fr = n;
			fcap = nw;
		}
		/* a: the addresses, then a discarded chain's own ip: each one's
		 * space and hash, its home slot fetched ahead (a system-wide view
		 * probes millions of slots, each a cache miss if taken one by
		 * one) */
		for (j = 0; j < nw; j++) {
			int own = j == e.nr, kernel = own ? e.own == 2 : j < nk;
			uint64_t a = own ? e.own_ip : e.addrs[j];
			struct { int64_t space; uint64_t addr; } key;
			int added;

			/* a named frame of the table (a junk word of a frame-pointer
			 * walk may look like one: it is an address); an own ip may be
			 * an object frame (stacktab__set_leaf_frame) */
			if ((!own && stacktab__is_named(a) && stacktab__name(st, a)) ||
			    (stacktab__is_object(a) && stacktab__object(st, a))) {
				fr[j].addr = a;
				fr[j].sid = kernel ? TABLE_FRAME_KERNEL : TABLE_FRAME;
				continue;
			}
			key.space = kernel ? KERNEL_SPACE : user_space(e.pid, e.gen);
			/* a symbol frame: the place it stands for */
			if (stacktab__is_symbol(a)) {
				struct stacktab_place pl;
				if (stacktab__symbol(st, a, &pl) == 0) {
					kernel = pl.kernel != 0;
					key.space = kernel ? KERNEL_SPACE : user_space(pl.pid, pl.gen);
					a = pl.addr;
				}
			}
			key.addr = a;
			if (key.space == KERNEL_SPACE && kernel_sid != SIZE_MAX) {
				sid = kernel_sid;
			} else if (key.space == last_space) {
				sid = last_sid;
			} else {
				uint32_t sk;
				if ((rc = keytab__intern(spaces, &key.space, sizeof key.space, &sk, &added)))
					break;
				if (added) {
					if (nsl == slcap) {
						size_t cap = slcap ? slcap * 2 : 16;
						struct space_list *n = realloc(sl, cap * sizeof *n);
						if (!n) { rc = -ENOMEM; break; }
						sl = n;
						slcap = cap;
					}
					memset(&sl[nsl], 0, sizeof sl[nsl]);
					sl[nsl++].space = key.space;
				}
				sid = sk;
				if (key.space == KERNEL_SPACE) {
					kernel_sid = sk;
				} else {
					last_space = key.space;
					last_sid = sk;
				}
			}
			if (sid >= TABLE_FRAME) { rc = -E2BIG; break; }
			fr[j].addr = a;
			fr[j].sid = (uint32_t)sid;
			fr[j].hash = addr_hash(a, (uint32_t)sid + 1);
			if (am.nslots)
				__builtin_prefetch(&am.slots[fr[j].hash & (am.nslots - 1)]);
		}
		/* b: each in its order */
		for (j = 0; j < nw && !rc; j++) {
			uint64_t a = fr[j].addr;
			uint32_t id = 0;
			int added;

			if (nsa == sacap) {
				size_t cap = sacap ? sacap * 2 : 4096;
				uint32_t *n = bigmem__realloc(stack_addr, cap * sizeof *n);
				if (!n) { rc = -ENOMEM; break; }
				stack_addr = n;
				sacap = cap;
			}
			if (fr[j].sid >= TABLE_FRAME) {
				rc = table_frame(pv, a, fr[j].sid == TABLE_FRAME_KERNEL, o->lines, &id);
				stack_addr[nsa++] = id | UINT32_C(0x80000000);
				if (rc)
					break;
				continue;
			}
			sid = fr[j].sid;
			if ((rc = addr_insert(&am, sid, a, fr[j].hash, (uint32_t)nav, &id, &added)))
				break;
			if (id >= UINT32_C(0x80000000)) { rc = -E2BIG; break; }
			stack_addr[nsa++] = id;
			if (!added)
				continue;
			if (nav == avcap) {
				size_t cap = avcap ? avcap * 2 : 1024;
				struct pv_addr *n = bigmem__realloc(av, cap * sizeof *n);
				if (!n) { rc = -ENOMEM; break; }
				av = n;
				avcap = cap;
			}
			av[nav].addr = a;
			av[nav].first = av[nav].n = 0;
			nav++;
			if (sl[sid].n == sl[sid].cap) {
				size_t cap = sl[sid].cap ? sl[sid].cap * 2 : 64;
				uint32_t *n = realloc(sl[sid].ids, cap * sizeof *n);
				if (!n) { rc = -ENOMEM; break; }
				sl[sid].ids = n;
				sl[sid].cap = cap;
			}
			sl[sid].ids[sl[sid].n++] = id;
		}
	}
	/* the address table is done with: its pages go before the frames'
	 * come (16 bytes a distinct address: 17 MB of a system-wide file's
	 * view) */
	bigmem__free(am.slots);
	am.slots = NULL;
	/* 2: each space's addresses resolved, in their order */
	for (k = 0; k < nsl && !rc; k++) {
		for (i = 0; i < sl[k].n && !rc; i++) {
			rc = resolve_addr(pv, o, sl[k].space, &av[sl[k].ids[i]]);
			single = single && av[sl[k].ids[i]].n == 1;
		}
		free(sl[k].ids);
		sl[k].ids = NULL;
	}
	/* 3: stacks as frame ids, root first.  With a frame per address (no
	 * inlined runs) a stack's ids take the place of its address ids, moved
	 * down over the own ips and shared runs: a system-wide view's largest
	 * array is made once, not twice */
	if (single && !rc && !o->no_frames) {
		pv->ids = stack_addr;
		pv->ids_cap = sacap;
		stack_addr = NULL;
	}
	nsa = 0;
	for (i = 0; i < ns && !rc; i++) {
		struct pv_stack *s = &pv->stacks[i];
		struct stacktab_entry e;
		const char *c;
		size_t base = nsa;
		unsigned j;

		stacktab__get(st, i, &e);
		c = e.comm ? e.comm : stacktab__comm(st, e.pid);
		s->comm = intern_ptr(pv, pc, c, &rc);
		s->thread_comm = intern_ptr(pv, pc, stacktab__thread_comm(st, e.tid), &rc);
		s->event = e.event ? intern_ptr(pv, pc, e.event, &rc) : intern(pv, "", &rc);
		s->off = pv->nids;
		s->own = PV_NONE;
		if (o->no_frames)
			continue;
		nsa += e.nr + (e.own ? 1 : 0);
		if (e.own) {
			uint32_t x = (stack_addr ? stack_addr : pv->ids)[base + e.nr];
			s->own = x & UINT32_C(0x80000000) ? x & ~UINT32_C(0x80000000) :
				 av[x].n ? av[x].first : PV_NONE;
		}
		if (!stack_addr) {
			/* in place: nids <= base, so reversed first, then moved */
			uint32_t *w = pv->ids + base;
			for (j = 0; j < e.nr / 2; j++) {
				uint32_t t = w[j];
				w[j] = w[e.nr - 1 - j];
				w[e.nr - 1 - j] = t;
			}
			for (j = 0; j < e.nr; j++)
				w[j] = w[j] & UINT32_C(0x80000000) ? w[j] & ~UINT32_C(0x80000000) :
				       av[w[j]].first;
			memmove(pv->ids + pv->nids, w, e.nr * sizeof *w);
			pv->nids += e.nr;
		}
		for (j = stack_addr ? e.nr : 0; j > 0 && !rc; j--) {
			uint32_t x = stack_addr[base + j - 1], m;
			if (x & UINT32_C(0x80000000)) {
				rc = push_id(pv, x & ~UINT32_C(0x80000000));
				continue;
			}
			for (m = 0; m < av[x].n && !rc; m++)
				rc = push_id(pv, av[x].first + m);
		}
		s->n = (unsigned)(pv->nids - s->off);
		if (pv->by_label && !rc)
			rc = share_ids(pv, &seqs, i);
	}
	pv->nstacks = ns;
out:
	u64map__exit(&seqs);
	for (k = 0; k < nsl; k++)
		free(sl[k].ids);
	bigmem__free(am.slots);
	free(sl);
	bigmem__free(av);
	bigmem__free(stack_addr);
	free(fr);
	free(pc);
	keytab__delete(spaces);
	return rc;
}

int profview__new(const struct stacktab *st, const struct profview_opts *o,
		  struct profview **out)
{
	struct profview *pv = calloc(1, sizeof *pv);
	int rc;

	*out = NULL;
	if (!pv)
		return -ENOMEM;
	pv->st = st;
	pv->lines = o->lines;
	pv->strs = keytab__new();
	if (!pv->strs) {
		profview__delete(pv);
		return -ENOMEM;
	}
	u64map__init(&pv->by_ptr);
	u64map__init(&pv->dsonames);
	u64map__init(&pv->dsolabels);
	u64map__init(&pv->labels);
	pv->by_label = o->by_label && !o->no_frames;
	/* (lines and inline chains are an address's, not a symbol's) */
	pv->by_symbol = o->by_symbol && !pv->by_label && !o->no_frames && !o->lines &&
			!o->inlines;
	rc = build(pv, o);
	u64map__exit(&pv->by_ptr);
	u64map__exit(&pv->dsonames);
	u64map__exit(&pv->dsolabels);
	u64map__exit(&pv->labels);
	bigmem__free(pv->sym_slots);
	pv->sym_slots = NULL;
	if (rc) {
		profview__delete(pv);
		return rc;
	}
	*out = pv;
	return 0;
}

void profview__delete(struct profview *pv)
{
	if (!pv)
		return;
	keytab__delete(pv->strs);
	bigmem__free(pv->frames);
	bigmem__free(pv->stacks);
	bigmem__free(pv->ids);
	free(pv->named);
	u64map__exit(&pv->by_ptr);
	u64map__exit(&pv->dsonames);
	u64map__exit(&pv->dsolabels);
	free(pv);
}

const struct stacktab *profview__table(const struct profview *pv) { return pv->st; }
int profview__has_lines(const struct profview *pv) { return pv->lines; }
size_t profview__nstacks(const struct profview *pv) { return pv->nstacks; }
size_t profview__nframes(const struct profview *pv) { return pv->nframes; }

int profview__discarded(const struct profview *pv, size_t i)
{
	return pv->stacks[i].n == 0 && pv->stacks[i].own != PV_NONE;
}

void profview__report_stack(const struct profview *pv, size_t i, const uint32_t **ids,
			    unsigned *n)
{
	const struct pv_stack *s = &pv->stacks[i];

	if (s->n == 0 && s->own != PV_NONE) {
		*ids = &s->own;
		*n = 1;
		return;
	}
	profview__stack(pv, i, ids, n);
}

void profview__stack(const struct profview *pv, size_t i, const uint32_t **ids, unsigned *n)
{
	*ids = pv->ids ? pv->ids + pv->stacks[i].off : NULL;
	*n = pv->stacks[i].n;
}

unsigned profview__depth(const struct profview *pv, size_t i) { return pv->stacks[i].depth; }

int profview__flame_groups(const struct profview *pv, const uint8_t *keep, uint32_t *group,
			   size_t *ngroups)
{
	size_t ns = profview__nstacks(pv), i, keycap = 256;
	struct keytab *kt = keytab__new();
	uint32_t *key = malloc(keycap * sizeof *key);
	int rc = kt && key ? 0 : -ENOMEM;

	*ngroups = 0;
	for (i = 0; i < ns && !rc; i++) {
		const uint32_t *ids;
		unsigned n, j;
		int added;

		group[i] = PV_NONE;
		if (keep && !keep[i])
			continue;
		profview__stack(pv, i, &ids, &n);
		if ((size_t)n + 3 > keycap) {
			uint32_t *nk = realloc(key, ((size_t)n + 3) * sizeof *nk);
			if (!nk) {
				rc = -ENOMEM;
				break;
			}
			key = nk;
			keycap = (size_t)n + 3;
		}
		key[0] = profview__event(pv, i);
		key[1] = profview__comm(pv, i);
		key[2] = n ? 0 : profview__depth(pv, i);
		/* a flame graph's node is a frame's label and kind */
		for (j = 0; j < n && ids; j++) {
			const struct pv_frame *f = profview__frame(pv, ids[j]);
			key[3 + j] = f->label << 3 | f->kind;
		}
		rc = keytab__intern(kt, key, ((size_t)n + 3) * sizeof *key, &group[i], &added);
		if (!rc && added)
			(*ngroups)++;
	}
	free(key);
	keytab__delete(kt);
	return rc;
}
uint32_t profview__comm(const struct profview *pv, size_t i) { return pv->stacks[i].comm; }
uint32_t profview__thread_comm(const struct profview *pv, size_t i) { return pv->stacks[i].thread_comm; }
uint32_t profview__event(const struct profview *pv, size_t i) { return pv->stacks[i].event; }

const struct pv_frame *profview__frame(const struct profview *pv, uint32_t id)
{
	return &pv->frames[id];
}

size_t profview__bytes(const struct profview *pv)
{
	return sizeof *pv + keytab__bytes(pv->strs) + pv->frames_cap * sizeof *pv->frames +
	       pv->nstacks * sizeof *pv->stacks + pv->ids_cap * sizeof *pv->ids;
}
