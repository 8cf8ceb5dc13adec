/*
 * Rows: a key table of binary keys (one uint64_t per sort key: a symbol is
 * its name's string id and level, an object its short name's id, a command
 * its name's id, a thread or CPU its number), each row's sums beside it.
 * A row seen on a stack is stamped with the stack's index, so a key counts
 * once per stack in O(1).
 *
 * perf 6.1's children mode, followed here as lua/perf/report.lua does:
 * it adds the sample's own entry, then walks the chain root first, and an
 * entry no object maps takes the level ([k]/[.]) of the entry before it
 * (the sample's own level before the first); such an entry is keyed by its
 * address alone (as a user one) and shows the level of the entry that
 * made its row.  An unnamed frame of a mapped object is keyed, as the
 * sample's own entry, by its address in the object, and as a call chain
 * entry by its raw address: in children mode a leaf counts under both.
 */
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/keytab.h"
#include "base/slots.h"
#include "base/u64map.h"
#include "profile/profview.h"
#include "base/bigmem.h"
#include "profile/pvreport.h"
#include "profile/stacktab.h"

/* An entry a stack was counted in (o->entry_rows): the frame it was made
 * from (its index in the report stack) and its row. */
struct pv_erow {
	uint32_t at, row;             /* row: UINT32_MAX when not kept */
};

struct pvreport {
	struct pvreport_row *rows;    /* all rows, then the kept ones */
	uint32_t *order;              /* the kept rows' indices, sorted */
	size_t n;
	uint64_t total;
	char *keys;                   /* the key strings, one block */
	/* o->entry_rows: each stack's entries, erows[eoff[i]..][0..ecnt[i]) */
	uint32_t *eoff, *ecnt;
	struct pv_erow *erows;
	size_t nerows, erows_cap;
};

/* Keys read from a frame (the others from the stack). */
static int is_frame_key(enum pvr_key k)
{
	return k == PVR_SYM || k == PVR_DSO || k == PVR_SRCLINE;
}

/* How many uint64_t a frame key takes in a key: a symbol is its name and
 * level, then its object and start (0, 0 for a symbol without a start). */
static unsigned frame_key_parts(enum pvr_key k)
{
	return k == PVR_SYM ? 3 : is_frame_key(k) ? 1 : 0;
}

/* The value of a stack key for stack i (parent: its parent's name id). */
static uint64_t stack_part(struct profview *pv, enum pvr_key k, size_t i,
			   const struct stacktab_entry *e, uint32_t unknown, uint32_t parent)
{
	uint32_t c;

	switch (k) {
	case PVR_PARENT:
		return parent;
	case PVR_COMM:
		c = profview__comm(pv, i);
		return c == PV_NONE ? unknown : c;
	case PVR_PID:
		return (uint64_t)(int64_t)e->pid;
	case PVR_TID:
		return (uint64_t)(int64_t)e->tid;
	case PVR_EVENT:
		c = profview__event(pv, i);
		return c == PV_NONE ? unknown : c;
	case PVR_CPU:
		/* a profile not split by CPU keeps none: -1, one row */
		return stacktab__split(profview__table(pv), NULL) == STACKTAB_SPLIT_CPU ?
		       (uint64_t)(int64_t)(int32_t)e->tag : (uint64_t)(int64_t)-1;
	case PVR_TIME:
		return stacktab__split(profview__table(pv), NULL) == STACKTAB_SPLIT_TIME ?
		       e->tag : 0;
	default:   /* frame keys have no stack part */
		return 0;
	}
}

static uint64_t sym_part(uint32_t symname, int kind)
{
	return ((uint64_t)symname << 1) | (kind == PV_KERNEL);
}

/* A symbol as rows and call graphs tell it apart: its name and level,
 * and for a named symbol of an object, the object and its start. */
struct sym_key {
	uint64_t name, dso, start;
};

static struct sym_key sym_key_of(const struct pv_frame *f, uint32_t symname, int kind)
{
	struct sym_key k;

	k.name = sym_part(symname, kind);
	k.dso = f && f->has_offset ? (uint64_t)f->dsoname + 1 : 0;
	k.start = f && f->has_offset ? f->sym_start : 0;
	return k;
}

struct acc {
	struct profview *pv;
	const struct pvreport_opts *o;
	struct pvreport *r;           /* its entries kept there (o->entry_rows) */
	/* Frame parts of keys: each id's first frame and variant (frame * 4 +
	 * variant; id 0: no parts), whose parts are made again to compare,
	 * under an index of their hashes (no key kept: 10^5 ids) */
	uint32_t *fp_rep;
	size_t fp_n, fp_cap;
	uint64_t *fp_slots;           /* base/slots.h */
	size_t fp_nslots;
	struct keytab *skt;           /* stack parts of keys */
	uint32_t *fk;                 /* per frame and variant: its frame parts' id + 1 */
	struct pvreport_row *rows;
	size_t nrows, cap;
	size_t *stamp;                /* per row: stack index + 1 last counted */
	uint32_t sk;                  /* the current stack's parts id */
	uint32_t nosk;                /* the id of no stack parts */
	/* per frame parts id: its row with the current stack parts, when it
	 * has one (stacks are counted grouped by their parts: see
	 * group_stacks, so a row with other parts is never needed again) */
	struct { uint32_t sk, row1; } *fkrow;
	size_t nfkrow;
	int frame_keys;               /* a key is read from frames (sym, dso, srcline) */
	/* by parent: the regex, a verdict per frame (0 unknown, 1 match,
	 * 2 no match), "[other]"'s id and the current stack's parent */
	regex_t parent_re;
	int has_parent;
	uint8_t *parent_seen;
	uint32_t other, parent;
};

/* The frame parts of the keys (parts, for n of them) of frame seen with
 * variant: absolute (by its raw address: 2) and kernel level (1). */
static unsigned frame_parts(const struct acc *a, uint32_t frame, unsigned variant,
			    uint64_t *parts)
{
	const struct pv_frame *f = profview__frame(a->pv, frame);
	unsigned k, n = 0;

	for (k = 0; k < a->o->nkeys; k++) {
		if (a->o->keys[k] == PVR_SYM) {
			/* perf's sort__sym_cmp: a named symbol is its object and
			 * start; an address no symbol covers, its name (a raw
			 * address is never a named symbol's) */
			struct sym_key sk = sym_key_of(f, variant & 2 ? f->abs_symname : f->symname,
						       variant & 1 ? PV_KERNEL : PV_USER);
			parts[n++] = sk.name;
			parts[n++] = sk.dso;
			parts[n++] = sk.start;
		} else if (a->o->keys[k] == PVR_DSO) {
			parts[n++] = f->dsoname;
		} else if (a->o->keys[k] == PVR_SRCLINE) {
			parts[n++] = f->srcline;
		}
	}
	return n;
}

/* Frame parts id fk's parts (none for id 0); their count. */
static unsigned parts_of(const struct acc *a, uint32_t fk, uint64_t *parts)
{
	if (fk == 0)
		return 0;
	return frame_parts(a, a->fp_rep[fk] >> 2, a->fp_rep[fk] & 3, parts);
}

static uint64_t parts_hash(const uint64_t *parts, unsigned n)
{
	uint64_t h = n;
	unsigned i;

	for (i = 0; i < n; i++)
		h = slots__mix(h, parts[i]);
	return h;
}

/* The id of frame f's parts seen as (symname, kind): one per frame and
 * variant (raw address or not, kernel level or not), made once. */
static int frame_key(struct acc *a, uint32_t frame, int absolute, int kind, uint32_t *out)
{
	unsigned variant = (absolute ? 2 : 0) | (kind == PV_KERNEL);
	size_t slot = (size_t)frame * 4 + variant, j;
	uint64_t parts[PVR_MAX_KEYS * 3], other[PVR_MAX_KEYS * 3], h;
	unsigned n;

	if (a->fk[slot]) {
		*out = a->fk[slot] - 1;
		return 0;
	}
	if (frame >= UINT32_C(1) << 30 || a->fp_n >= UINT32_MAX - 1)
		return -E2BIG;
	n = frame_parts(a, frame, variant, parts);
	h = parts_hash(parts, n);
	if (2 * (a->fp_n + 1) > a->fp_nslots && slots__grow(&a->fp_slots, &a->fp_nslots))
		return -ENOMEM;
	for (j = SLOTS_HOME(h, a->fp_nslots); a->fp_slots[j]; j = (j + 1) & (a->fp_nslots - 1)) {
		uint32_t id = (uint32_t)a->fp_slots[j] - 1;
		if (SLOTS_TAG(a->fp_slots[j]) == SLOTS_TAG(h) && parts_of(a, id, other) == n &&
		    !memcmp(other, parts, n * sizeof *parts)) {
			*out = id;
			a->fk[slot] = id + 1;
			return 0;
		}
	}
	if (a->fp_n == a->fp_cap) {
		size_t cap = a->fp_cap ? a->fp_cap * 2 : 1024;
		uint32_t *rep = bigmem__realloc(a->fp_rep, cap * sizeof *rep);
		if (!rep)
			return -ENOMEM;
		a->fp_rep = rep;
		a->fp_cap = cap;
	}
	a->fp_rep[a->fp_n] = (uint32_t)slot;
	*out = (uint32_t)a->fp_n++;
	a->fp_slots[j] = SLOTS_TAG(h) | ((uint64_t)*out + 1);
	a->fk[slot] = *out + 1;
	return 0;
}

/* The row of (frame parts fk, the stack's parts); a new one is made from
 * stack i and the frame as it shows. */
static int row_of(struct acc *a, uint32_t fk, size_t i, uint32_t frame, int kind, int absolute,
		  struct pvreport_row **out)
{
	struct pvreport_row *r;

	if (fk < a->nfkrow && a->fkrow[fk].row1 && a->fkrow[fk].sk == a->sk) {
		*out = &a->rows[a->fkrow[fk].row1 - 1];
		return 0;
	}
	if (fk >= a->nfkrow) {
		size_t n = a->nfkrow ? a->nfkrow : 1024;
		void *m;
		while (n <= fk)
			n *= 2;
		if (!(m = realloc(a->fkrow, n * sizeof *a->fkrow)))
			return -ENOMEM;
		a->fkrow = m;
		memset(a->fkrow + a->nfkrow, 0, (n - a->nfkrow) * sizeof *a->fkrow);
		a->nfkrow = n;
	}
	if (a->nrows >= UINT32_MAX - 1)
		return -E2BIG;
	if (a->nrows == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 1024, *st;
		r = bigmem__realloc(a->rows, cap * sizeof *r);
		if (!r)
			return -ENOMEM;
		a->rows = r;
		st = bigmem__realloc(a->stamp, cap * sizeof *st);
		if (!st)
			return -ENOMEM;
		a->stamp = st;
		a->cap = cap;
	}
	r = &a->rows[a->nrows];
	memset(r, 0, sizeof *r);
	a->stamp[a->nrows] = 0;
	a->nrows++;
	r->stack = i;
	r->frame = frame;
	r->fkey = fk;
	r->skey = a->sk;
	r->symname = r->dsoname = r->srcline = PV_NONE;
	r->parent = a->parent;
	r->comm = profview__comm(a->pv, i);
	if (frame != PV_NONE) {
		const struct pv_frame *f = profview__frame(a->pv, frame);
		r->kind = (uint8_t)kind;
		r->symname = absolute ? f->abs_symname : f->symname;
		r->dsoname = f->dsoname;
		r->srcline = f->srcline;
	}
	a->fkrow[fk].sk = a->sk;
	a->fkrow[fk].row1 = (uint32_t)a->nrows;
	*out = r;
	return 0;
}

static int has_key(const struct pvreport_opts *o, int (*is)(enum pvr_key))
{
	unsigned k;

	for (k = 0; k < o->nkeys; k++)
		if (is(o->keys[k]))
			return 1;
	return 0;
}

static int is_parent_key(enum pvr_key k)
{
	return k == PVR_PARENT;
}

static int is_stack_key(enum pvr_key k)
{
	return !is_frame_key(k);
}

/*
 * The frames of a stack's chain (root first, ids[nf - 1] the leaf) that
 * perf walks with --max-stack: [*lo, *hi), the max_stack nearest the root
 * when it walks caller first (children unless callee, or caller graphs),
 * else nearest the leaf; the whole chain without a max.
 */
static void chain_window(const struct pvreport_opts *o, unsigned nf, unsigned *lo, unsigned *hi)
{
	*lo = 0;
	*hi = nf;
	if (!o->max_stack || nf <= o->max_stack)
		return;
	if (!o->callee && (o->children || o->caller))
		*hi = o->max_stack;
	else
		*lo = nf - o->max_stack;
}

/*
 * perf's parent of a sample (machine.c, add_callchain_ip): the first
 * entry of its call chain whose symbol matches the regex, in the order
 * perf walks the chain: from the leaf up, but root first in children
 * mode (perf report's callchain order is then "caller").  Frames with no
 * symbol never match.
 */
static uint32_t parent_of(struct acc *a, const uint32_t *ids, unsigned nf)
{
	unsigned j, lo, hi;

	chain_window(a->o, nf, &lo, &hi);
	for (j = 0; j < hi - lo; j++) {
		uint32_t id = ids[a->o->children ? lo + j : hi - 1 - j];
		const struct pv_frame *f = profview__frame(a->pv, id);

		if (f->name == PV_NONE || f->kind == PV_INLINE)
			continue;
		if (!a->parent_seen[id])
			a->parent_seen[id] = regexec(&a->parent_re, profview__str(a->pv, f->name),
						     0, NULL, 0) == 0 ? 1 : 2;
		if (a->parent_seen[id] == 1)
			return f->name;
	}
	return a->other;
}

/* Stack i was counted in row, from its frame at: kept for its graphs,
 * which in self mode read the own entry alone. */
static int note_entry(struct acc *a, size_t i, long at, size_t row, int own)
{
	struct pvreport *r = a->r;

	if (!a->o->entry_rows || !(own || a->o->children))
		return 0;
	if (r->nerows >= UINT32_MAX)
		return -E2BIG;
	if (r->nerows == r->erows_cap) {
		size_t cap = r->erows_cap ? 2 * r->erows_cap : 4096;
		struct pv_erow *e = bigmem__realloc(r->erows, cap * sizeof *e);
		if (!e)
			return -ENOMEM;
		r->erows = e;
		r->erows_cap = cap;
	}
	if (r->ecnt[i]++ == 0)
		r->eoff[i] = (uint32_t)r->nerows;
	r->erows[r->nerows].at = (uint32_t)at;
	r->erows[r->nerows++].row = (uint32_t)row;
	return 0;
}

/* Count weight w of stack i under the entry of frame id (at in the
 * stack): its row keyed by the frame seen as keykind (absolute: by its
 * raw address) and shown as kind; own: the sample's own entry, which also
 * takes self. */
static int count_entry(struct acc *a, size_t i, long at, uint32_t id, int kind, int keykind,
		       int absolute, int own, uint64_t w, uint64_t count, uint64_t period,
		       uint32_t depth)
{
	struct pvreport_row *r;
	uint32_t fk;
	int rc;

	if ((rc = frame_key(a, id, absolute, keykind, &fk)) ||
	    (rc = row_of(a, fk, i, id, kind, absolute, &r)))
		return rc;
	if (a->stamp[r - a->rows] == i + 1)
		return 0;
	a->stamp[r - a->rows] = i + 1;
	if (depth > r->depth)
		r->depth = depth;
	if ((rc = note_entry(a, i, at, (size_t)(r - a->rows), own)))
		return rc;
	r->total += w;
	if (own) {
		r->self += w;
		r->samples += count;
		r->period += period;
	}
	return 0;
}

/* The id of stack i's parts of the keys (a->parent set first). */
static int stack_key(struct acc *a, size_t i, const struct stacktab_entry *e, uint32_t unknown,
		     uint32_t *sk)
{
	const struct pvreport_opts *o = a->o;
	uint64_t parts[PVR_MAX_KEYS];
	unsigned k, n = 0;

	if (a->has_parent) {
		const uint32_t *ids;
		unsigned nf;
		profview__report_stack(a->pv, i, &ids, &nf);
		a->parent = parent_of(a, ids, nf);
	}
	for (k = 0; k < o->nkeys; k++)
		if (!is_frame_key(o->keys[k]))
			parts[n++] = stack_part(a->pv, o->keys[k], i, e, unknown, a->parent);
	if (n == 0) {
		*sk = a->nosk;
		return 0;
	}
	return keytab__intern(a->skt, parts, n * sizeof parts[0], sk, NULL);
}

/* Count stack i (sk: its stack_key, or PV_NONE to find it). */
static int count_stack(struct acc *a, size_t i, uint32_t sk, uint8_t *view, uint32_t unknown)
{
	const struct pvreport_opts *o = a->o;
	struct profview *pv = a->pv;
	struct stacktab_entry e;
	const uint32_t *ids;
	unsigned nf;
	uint64_t w;
	struct pvreport_row *r;
	int level, rc;
	long j, k;
	unsigned lo, hi;
	int discarded;

	stacktab__get(profview__table(pv), i, &e);
	profview__report_stack(pv, i, &ids, &nf);
	w = o->by_period ? e.period : e.count;
	if (sk != PV_NONE) {
		if (a->has_parent)
			a->parent = parent_of(a, ids, nf);
		a->sk = sk;
	} else if ((rc = stack_key(a, i, &e, unknown, &a->sk))) {
		return rc;
	}
	if (!a->frame_keys) {
		rc = row_of(a, 0, i, nf ? ids[nf - 1] : PV_NONE,
			    nf ? profview__frame(pv, ids[nf - 1])->kind : 0, 0, &r);
		if (rc || (rc = note_entry(a, i, nf ? (long)nf - 1 : 0, (size_t)(r - a->rows), 1)))
			return rc;
		r->self += w;
		r->total += w;
		r->samples += e.count;
		r->period += e.period;
		return 0;
	}
	if (nf == 0)
		return 0;
	if (!o->children) {
		for (j = (long)nf - 1; j >= (o->self_only ? (long)nf - 1 : 0); j--) {
			int kind = profview__frame(pv, ids[j])->kind;
			if ((rc = count_entry(a, i, j, ids[j], kind, kind, 0, j == (long)nf - 1, w,
					       e.count, e.period, 0)))
				return rc;
		}
		return 0;
	}
	level = profview__frame(pv, ids[nf - 1])->kind;
	chain_window(o, nf, &lo, &hi);
	view[nf - 1] = 0xff;   /* the own entry's, in the window or not */
	for (k = 0; k < (long)(hi - lo); k++) {
		/* in the order perf walks the chain (leaf first for callee) */
		const struct pv_frame *f;
		j = o->callee ? (long)hi - 1 - k : (long)lo + k;
		f = profview__frame(pv, ids[j]);
		view[j] = 0xff;
		if (f->has_dso)
			level = f->kind;
		else if (f->kind != level && f->kind != PV_LUA && j < (long)nf - 1)
			view[j] = (uint8_t)level;
	}
	/* perf makes the sample's own entry first, then one per call chain
	 * entry in the graphs' order, root first unless callee (none for a
	 * chain it discarded): a row keyed by an
	 * address alone shows the level of the entry that made it */
	discarded = profview__discarded(pv, i);
	for (j = -1; j < (discarded ? 0 : (long)(hi - lo)); j++) {
		/* (leaf first in perf's callee order) */
		long at = j < 0 ? (long)nf - 1 : o->callee ? (long)hi - 1 - j : (long)lo + j;
		const struct pv_frame *f = profview__frame(pv, ids[at]);
		int kind = view[at] != 0xff ? view[at] : f->kind;
		int keykind = !f->has_dso && kind != PV_LUA ? PV_USER : kind;
		/* the chain perf appends to the entry: the whole of it for the
		 * sample's own, else from the entry on (none when discarded) */
		uint32_t depth = discarded ? 0 : j < 0 ? hi - lo : (uint32_t)(hi - lo - j);

		if (j >= 0 && f->has_rel)
			rc = count_entry(a, i, at, ids[at], kind, kind, 1, 0, w, 0, 0, depth);
		else
			rc = count_entry(a, i, at, ids[at], kind, keykind, 0, j < 0, w, e.count,
					 e.period, depth);
		if (rc)
			return rc;
	}
	return 0;
}

/* The key string of lua/perf/report.lua: frame parts joined by "\2"
 * (a symbol is its name, "\1", k or u, then for a named symbol of an
 * object "\1", the object and "\1" its start in hex; a srcline its
 * text), then "\3" and each stack part. */
static size_t key_string(const struct pvreport_opts *o, struct profview *pv,
			 const uint64_t *fparts, const uint64_t *sparts, char *buf, size_t size)
{
	size_t n = 0;
	unsigned k, nf = 0, ns = 0;
	int nframe = 0;

#define PUT(s, l) do { size_t l_ = (l); if (n + l_ < size) memcpy(buf + n, (s), l_); n += l_; } while (0)
#define PUTID(id) PUT(profview__str(pv, (uint32_t)(id)), profview__strlen(pv, (uint32_t)(id)))
	for (k = 0; k < o->nkeys; k++) {
		const uint64_t *f = fparts + nf;
		if (!is_frame_key(o->keys[k]))
			continue;
		nf += frame_key_parts(o->keys[k]);
		if (nframe++)
			PUT("\2", 1);
		if (o->keys[k] == PVR_SYM) {
			PUTID(f[0] >> 1);
			PUT(f[0] & 1 ? "\1k" : "\1u", 2);
			if (f[1]) {
				char hex[32];
				int l = snprintf(hex, sizeof hex, "\1" "0x%016" PRIx64, f[2]);
				PUT("\1", 1);
				PUTID(f[1] - 1);
				PUT(hex, (size_t)l);
			}
		} else if (f[0] != PV_NONE) {
			PUTID(f[0]);
		}
	}
	for (k = 0; k < o->nkeys; k++) {
		char num[32];
		uint64_t v;
		if (is_frame_key(o->keys[k]))
			continue;
		v = sparts[ns++];
		PUT("\3", 1);
		if (o->keys[k] == PVR_COMM || o->keys[k] == PVR_EVENT || o->keys[k] == PVR_PARENT) {
			PUTID(v);
		} else {
			int l = snprintf(num, sizeof num, "%" PRId64, (int64_t)v);
			PUT(num, (size_t)l);
		}
	}
#undef PUTID
#undef PUT
	return n;
}

static int keycmp(const struct pvreport_row *a, const struct pvreport_row *b)
{
	int c = memcmp(a->key, b->key, a->keylen < b->keylen ? a->keylen : b->keylen);

	if (c)
		return c;
	return a->keylen < b->keylen ? -1 : a->keylen > b->keylen;
}

/*
 * Rows are sorted as perf orders its entries (hists__output_resort): by
 * total (children), else self, then self; a tie by the sort keys in the
 * order given, each as perf's sort function compares it: commands,
 * objects, symbol names, srclines and parents by name, A to Z, threads
 * and CPUs by number; an entry without an object, symbol or parent after
 * one with.  Two unnamed symbols tie there; perf then keeps the order its
 * entries were made in, by the keys' collapse functions: their addresses,
 * a difference taken as signed (so not an order at all for addresses
 * 2^63 or more apart: junk ones; signed order is what it comes to for the
 * rest).  Last, the row's key (distinct rows, distinct keys).
 *
 * The sums are radix-sorted; each run of equal sums is sorted as records
 * of the first 24 bytes of a string that orders as those rules do
 * (tie_key: big-endian words compare as memcmp does), so most
 * comparisons touch no row.  Commands, objects, parents and events are
 * few: their names are ranked once and the string holds the rank.
 */
struct sort_rec {
	uint64_t major, minor;
	uint32_t row;
};

#define KEY_WORDS 3

struct key_rec {
	uint64_t prefix[KEY_WORDS];
	uint32_t row;
};

struct tie_ctx {
	struct profview *pv;
	const struct pvreport_opts *o;
	const struct pvreport_row *rows;
	struct u64map rank;           /* string id -> rank + 1 */
	uint32_t other;               /* "[other]", the parent of none */
	/* the order perf's collapse tree keeps (its entries' insertion order
	 * into the output tree): a named symbol by its object, then its
	 * start (sort__sym_cmp), not by its name */
	int collapse;
};

struct tie_buf {
	unsigned char *b;
	size_t n, cap;
};

static void tie_put(struct tie_buf *t, const void *s, size_t len)
{
	if (t->n < t->cap)
		memcpy(t->b + t->n, s, len < t->cap - t->n ? len : t->cap - t->n);
	t->n += len;
}

static void tie_put32(struct tie_buf *t, uint32_t v)
{
	unsigned char w[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16),
			       (unsigned char)(v >> 8), (unsigned char)v };

	tie_put(t, w, 4);
}

static void tie_str(struct tie_buf *t, const struct profview *pv, uint32_t id)
{
	if (id != PV_NONE && id != PV_PENDING)
		tie_put(t, profview__str(pv, id), profview__strlen(pv, id));
	tie_put(t, "", 1);
}

static uint32_t tie_rank(const struct tie_ctx *c, uint32_t id)
{
	const uint32_t *v = u64map__find(&c->rank, id);

	return v ? *v : 0;
}

/* The string that orders row as perf's rules do; its length (bytes past
 * cap are not written). */
static size_t tie_key(const struct tie_ctx *c, const struct pvreport_row *row, unsigned char *buf,
		      size_t cap)
{
	const struct pvreport_opts *o = c->o;
	const struct pv_frame *f = row->frame != PV_NONE ? profview__frame(c->pv, row->frame) : NULL;
	struct tie_buf t = { buf, 0, cap };
	struct stacktab_entry e;
	unsigned k;
	int have_entry = 0;

	for (k = 0; k < o->nkeys; k++) {
		enum pvr_key key = o->keys[k];
		if ((key == PVR_PID || key == PVR_TID || key == PVR_CPU || key == PVR_TIME) &&
		    !have_entry) {
			stacktab__get(profview__table(c->pv), row->stack, &e);
			have_entry = 1;
		}
		switch (key) {
		case PVR_COMM:
			tie_put32(&t, tie_rank(c, row->comm));
			break;
		case PVR_EVENT:
			tie_put32(&t, tie_rank(c, profview__event(c->pv, row->stack)));
			break;
		case PVR_PID:
			tie_put32(&t, (uint32_t)e.pid ^ 0x80000000u);
			break;
		case PVR_TID:
			tie_put32(&t, (uint32_t)e.tid ^ 0x80000000u);
			break;
		case PVR_CPU:
			tie_put32(&t, (uint32_t)(int32_t)e.tag ^ 0x80000000u);
			break;
		case PVR_TIME:
			tie_put32(&t, e.tag);
			break;
		case PVR_PARENT:
			if (row->parent == c->other) {
				tie_put(&t, "\2", 1);
			} else {
				tie_put(&t, "\1", 1);
				tie_put32(&t, tie_rank(c, row->parent));
			}
			break;
		case PVR_DSO:
			if (f && f->has_dso) {
				tie_put(&t, "\1", 1);
				tie_put32(&t, tie_rank(c, row->dsoname));
			} else {
				tie_put(&t, "\2", 1);
			}
			break;
		case PVR_SYM:
			if (f && f->name != PV_NONE && c->collapse) {
				uint64_t start = f->has_offset ? f->sym_start : f->addr;
				tie_put(&t, "\1", 1);
				tie_put32(&t, tie_rank(c, row->dsoname));
				tie_put32(&t, (uint32_t)(start >> 32));
				tie_put32(&t, (uint32_t)start);
			} else if (f && f->name != PV_NONE) {
				tie_put(&t, "\1", 1);
				tie_str(&t, c->pv, row->symname);
			} else {
				tie_put(&t, "\2", 1);
			}
			break;
		case PVR_SRCLINE:
			tie_str(&t, c->pv, row->srcline);
			break;
		}
	}
	/* unnamed symbols by the address they print, as perf's
	 * _sort__addr_cmp: a difference taken as signed, so high (kernel,
	 * junk) addresses come first */
	for (k = 0; k < o->nkeys; k++)
		if (o->keys[k] == PVR_SYM && !(f && f->name != PV_NONE)) {
			uint64_t addr = row->symname == PV_NONE || row->symname == PV_PENDING ? 0 :
					strtoull(profview__str(c->pv, row->symname), NULL, 16);
			tie_put32(&t, (uint32_t)(addr >> 32) ^ 0x80000000u);
			tie_put32(&t, (uint32_t)addr);
		}
	return t.n;
}

/* Two rows' tie_key strings compared whole (their prefixes agreed). */
static int tie_cmp(const struct tie_ctx *c, const struct pvreport_row *a,
		   const struct pvreport_row *b)
{
	unsigned char sa[512], sb[512], *ha = sa, *hb = sb;
	size_t la = tie_key(c, a, sa, sizeof sa), lb = tie_key(c, b, sb, sizeof sb);
	int r;

	/* (a longer string is made again whole) */
	if (la > sizeof sa && (ha = malloc(la)) != NULL)
		tie_key(c, a, ha, la);
	if (lb > sizeof sb && (hb = malloc(lb)) != NULL)
		tie_key(c, b, hb, lb);
	if (!ha || !hb) {
		r = 0;     /* out of memory: the key decides */
	} else {
		r = memcmp(ha, hb, la < lb ? la : lb);
		if (!r)
			r = la < lb ? -1 : la > lb;
	}
	if (ha != sa)
		free(ha);
	if (hb != sb)
		free(hb);
	return r ? r : keycmp(a, b);
}

static int key_order(const void *x, const void *y, void *ctx)
{
	const struct tie_ctx *c = ctx;
	const struct key_rec *a = x, *b = y;
	unsigned k;

	for (k = 0; k < KEY_WORDS; k++)
		if (a->prefix[k] != b->prefix[k])
			return a->prefix[k] < b->prefix[k] ? -1 : 1;
	return tie_cmp(c, &c->rows[a->row], &c->rows[b->row]);
}

static void key_prefix(const struct tie_ctx *c, const struct pvreport_row *row, struct key_rec *kr)
{
	unsigned char b[sizeof kr->prefix];
	size_t n = tie_key(c, row, b, sizeof b), k;

	memset(kr->prefix, 0, sizeof kr->prefix);
	for (k = 0; k < sizeof kr->prefix; k++)
		kr->prefix[k / 8] = kr->prefix[k / 8] << 8 | (k < n ? b[k] : 0);
}

static int by_name(const void *x, const void *y, void *arg)
{
	const struct profview *pv = arg;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	size_t la = profview__strlen(pv, a), lb = profview__strlen(pv, b);
	int r = memcmp(profview__str(pv, a), profview__str(pv, b), la < lb ? la : lb);

	return r ? r : la < lb ? -1 : la > lb;
}

static int rank_add(struct u64map *m, uint32_t **ids, size_t *n, size_t *cap, uint32_t id)
{
	int added;

	if (id == PV_NONE || id == PV_PENDING)
		return 0;
	if (!u64map__insert(m, id, 0, &added))
		return -ENOMEM;
	if (!added)
		return 0;
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 64;
		uint32_t *t = realloc(*ids, nc * sizeof *t);
		if (!t)
			return -ENOMEM;
		*ids = t;
		*cap = nc;
	}
	(*ids)[(*n)++] = id;
	return 0;
}

/* The names of the keys tie_key ranks, ranked A to Z. */
static int rank_names(struct tie_ctx *c, size_t n)
{
	const struct pvreport_opts *o = c->o;
	uint32_t *ids = NULL;
	size_t nids = 0, cap = 0, i;
	unsigned k;
	int rc = 0;

	for (i = 0; i < n && !rc; i++) {
		const struct pvreport_row *row = &c->rows[i];
		for (k = 0; k < o->nkeys && !rc; k++) {
			switch (o->keys[k]) {
			case PVR_COMM: rc = rank_add(&c->rank, &ids, &nids, &cap, row->comm); break;
			case PVR_DSO: rc = rank_add(&c->rank, &ids, &nids, &cap, row->dsoname); break;
			case PVR_SYM:
				if (c->collapse)
					rc = rank_add(&c->rank, &ids, &nids, &cap, row->dsoname);
				break;
			case PVR_PARENT: rc = rank_add(&c->rank, &ids, &nids, &cap, row->parent); break;
			case PVR_EVENT:
				rc = rank_add(&c->rank, &ids, &nids, &cap,
					      profview__event(c->pv, row->stack));
				break;
			default: break;
			}
		}
	}
	if (!rc && nids > 0) {
		qsort_r(ids, nids, sizeof *ids, by_name, c->pv);
		for (i = 0; i < nids; i++)
			*u64map__find(&c->rank, ids[i]) = (uint32_t)i + 1;
	}
	free(ids);
	return rc;
}

/* Pass 0 sorts by minor, pass 1 by major. */
static uint64_t sum_of(const struct sort_rec *r, size_t pass)
{
	return pass ? r->major : r->minor;
}

/* A stable LSD radix sort of rec[0..n) by major, then minor, both
 * descending (tmp: room for n); bytes every record shares are skipped. */
static void radix_desc(struct sort_rec *rec, struct sort_rec *tmp, size_t n)
{
	struct sort_rec *src = rec, *dst = tmp, *t;
	size_t count[256], f, i, shift;

	for (f = 0; f < 2; f++) {
		for (shift = 0; shift < 64; shift += 8) {
			size_t at = 0;
			memset(count, 0, sizeof count);
			for (i = 0; i < n; i++)
				count[255 - ((sum_of(&src[i], f) >> shift) & 0xff)]++;
			if (count[255 - ((sum_of(&src[0], f) >> shift) & 0xff)] == n)
				continue;
			for (i = 0; i < 256; i++) {
				size_t c = count[i];
				count[i] = at;
				at += c;
			}
			for (i = 0; i < n; i++)
				dst[count[255 - ((sum_of(&src[i], f) >> shift) & 0xff)]++] = src[i];
			t = src;
			src = dst;
			dst = t;
		}
	}
	if (src != rec)
		memcpy(rec, src, n * sizeof *rec);
}

/* The end of the run of equal sums that starts at i. */
static size_t run_end(const struct sort_rec *rec, size_t i, size_t n)
{
	size_t j = i + 1;

	while (j < n && rec[j].major == rec[i].major && rec[j].minor == rec[i].minor)
		j++;
	return j;
}

/* order: r->rows sorted as perf sorts its entries (above). */
static int order_rows(struct pvreport *r, struct profview *pv, const struct pvreport_opts *o,
		      int collapse, uint32_t *order)
{
	struct tie_ctx c = { pv, o, r->rows, { 0 }, PV_NONE, collapse };
	struct sort_rec *rec, *tmp;
	struct key_rec *kr = NULL;
	size_t i, j, k, n = r->n;
	int rc = -ENOMEM;

	rec = bigmem__malloc((n ? n : 1) * sizeof *rec);
	tmp = bigmem__malloc((n ? n : 1) * sizeof *tmp);
	if (!rec || !tmp)
		goto out;
	for (i = 0; i < n; i++) {
		const struct pvreport_row *row = &r->rows[i];
		rec[i].major = o->keys_only ? 0 : o->children ? row->total : row->self;
		rec[i].minor = o->keys_only || !o->children ? 0 : row->self;
		rec[i].row = (uint32_t)i;
	}
	if (n)
		radix_desc(rec, tmp, n);
	bigmem__free(tmp);
	tmp = NULL;
	/* the runs' key records: room for the longest run */
	for (i = 0, k = 1; i < n; i = j)
		if ((j = run_end(rec, i, n)) - i > k)
			k = j - i;
	if (k > 1 && ((rc = profview__intern(pv, "[other]", 7, &c.other)) ||
		      (rc = rank_names(&c, n))))
		goto out;
	rc = -ENOMEM;
	if (!(kr = bigmem__malloc(k * sizeof *kr)))
		goto out;
	for (i = 0; i < n; i = j) {
		j = run_end(rec, i, n);
		if (j - i == 1) {
			order[i] = rec[i].row;
			continue;
		}
		for (k = i; k < j; k++) {
			key_prefix(&c, &r->rows[rec[k].row], &kr[k - i]);
			kr[k - i].row = rec[k].row;
		}
		qsort_r(kr, j - i, sizeof *kr, key_order, &c);
		for (k = i; k < j; k++)
			order[k] = kr[k - i].row;
	}
	rc = 0;
out:
	u64map__exit(&c.rank);
	bigmem__free(kr);
	bigmem__free(rec);
	bigmem__free(tmp);
	return rc;
}

/*
 * With call graphs shown in children mode perf breaks a tie of totals
 * between two entries of one thread by their chains' depth, caller first
 * (__hpp__sort_acc), before self and the keys.  Between entries of two
 * threads there is no such step, so this is not an order, and where the
 * entries end up depends on the tree perf inserts them into: its output
 * tree (a red-black tree, ties to the right), filled in the order of its
 * collapse tree (order_rows' collapse).  That tree is built here the same
 * way, over row indices.
 */
struct tie_tree {
	const struct pvreport_row *rows;
	const uint32_t *pos;          /* a row's place in the order without depths */
	const int32_t *tid;           /* its first stack's thread */
	int callee;
	uint32_t *left, *right, *up;  /* row + 1, 0 for none */
	uint8_t *red;
	uint32_t root;
};

/* Whether row a goes before row b (perf: hist_entry__sort(a, b) > 0). */
static int tie_before(const struct tie_tree *t, uint32_t a, uint32_t b)
{
	const struct pvreport_row *x = &t->rows[a], *y = &t->rows[b];

	if (x->total != y->total)
		return x->total > y->total;
	if (t->tid[a] == t->tid[b] && x->depth != y->depth)
		return t->callee ? x->depth < y->depth : x->depth > y->depth;
	return t->pos[a] < t->pos[b];   /* self, then the keys */
}

/* Node x (row + 1) turned with its child on the other side up. */
static void tie_rotate(struct tie_tree *t, uint32_t x, int left)
{
	uint32_t *down = left ? t->right : t->left, *other = left ? t->left : t->right;
	uint32_t y = down[x - 1], p = t->up[x - 1];

	down[x - 1] = other[y - 1];
	if (other[y - 1])
		t->up[other[y - 1] - 1] = x;
	t->up[y - 1] = p;
	if (!p)
		t->root = y;
	else if (t->left[p - 1] == x)
		t->left[p - 1] = y;
	else
		t->right[p - 1] = y;
	other[y - 1] = x;
	t->up[x - 1] = y;
}

/* Row z inserted as perf's rb_insert_color inserts (the usual fix-up). */
static void tie_insert(struct tie_tree *t, uint32_t z)
{
	uint32_t p = 0, at = t->root, x = z + 1;
	int left = 0;

	while (at) {
		p = at;
		left = tie_before(t, z, at - 1);
		at = left ? t->left[at - 1] : t->right[at - 1];
	}
	t->up[z] = p;
	t->left[z] = t->right[z] = 0;
	t->red[z] = 1;
	if (!p)
		t->root = x;
	else if (left)
		t->left[p - 1] = x;
	else
		t->right[p - 1] = x;
	while ((p = t->up[x - 1]) && t->red[p - 1]) {
		uint32_t g = t->up[p - 1];
		int on_left = t->left[g - 1] == p;
		uint32_t uncle = on_left ? t->right[g - 1] : t->left[g - 1];

		if (uncle && t->red[uncle - 1]) {
			t->red[p - 1] = t->red[uncle - 1] = 0;
			t->red[g - 1] = 1;
			x = g;
			continue;
		}
		if (x == (on_left ? t->right[p - 1] : t->left[p - 1])) {
			tie_rotate(t, p, on_left);
			x = p;
			p = t->up[x - 1];
		}
		t->red[p - 1] = 0;
		t->red[g - 1] = 1;
		tie_rotate(t, g, !on_left);
	}
	t->red[t->root - 1] = 0;
}

/* r->order made again as perf's tree orders rows of equal totals. */
static int depth_ties(struct pvreport *r, struct profview *pv, const struct pvreport_opts *o)
{
	struct pvreport_opts by_keys = *o;
	struct tie_tree t = { r->rows, NULL, NULL, o->callee, NULL, NULL, NULL, NULL, 0 };
	uint32_t *pos = NULL, *keys = NULL, *stack = NULL;
	int32_t *tid = NULL;
	size_t i, n = r->n, k = 0, sp = 0;
	int rc = -ENOMEM;

	pos = bigmem__malloc(n * sizeof *pos);
	keys = bigmem__malloc(n * sizeof *keys);
	tid = bigmem__malloc(n * sizeof *tid);
	t.left = bigmem__malloc(n * sizeof *t.left);
	t.right = bigmem__malloc(n * sizeof *t.right);
	t.up = bigmem__malloc(n * sizeof *t.up);
	t.red = bigmem__malloc(n);
	stack = bigmem__malloc(n * sizeof *stack);
	if (!pos || !keys || !tid || !t.left || !t.right || !t.up || !t.red || !stack)
		goto out;
	by_keys.keys_only = 1;
	if ((rc = order_rows(r, pv, &by_keys, 1, keys)))
		goto out;
	for (i = 0; i < n; i++) {
		struct stacktab_entry e;
		stacktab__get(profview__table(pv), r->rows[i].stack, &e);
		pos[r->order[i]] = (uint32_t)i;
		tid[i] = e.tid;
	}
	t.pos = pos;
	t.tid = tid;
	for (i = 0; i < n; i++)
		tie_insert(&t, keys[i]);
	/* in order, without recursion */
	for (i = t.root; i || sp;) {
		if (i) {
			stack[sp++] = (uint32_t)i;
			i = t.left[i - 1];
			continue;
		}
		i = stack[--sp];
		r->order[k++] = (uint32_t)i - 1;
		i = t.right[i - 1];
	}
	rc = 0;
out:
	bigmem__free(pos);
	bigmem__free(keys);
	bigmem__free(tid);
	bigmem__free(t.left);
	bigmem__free(t.right);
	bigmem__free(t.up);
	bigmem__free(t.red);
	bigmem__free(stack);
	return rc;
}

/* r->order: r->rows sorted as perf sorts its entries (above). */
static int sort_rows(struct pvreport *r, struct profview *pv, const struct pvreport_opts *o)
{
	int rc;

	r->order = bigmem__malloc((r->n ? r->n : 1) * sizeof *r->order);
	if (!r->order)
		return -ENOMEM;
	if ((rc = order_rows(r, pv, o, 0, r->order)))
		return rc;
	if (o->graph_ties && o->children && !o->keys_only && r->n > 1)
		return depth_ties(r, pv, o);
	return 0;
}

static int in_list(struct profview *pv, uint32_t id, const char *const *list, size_t n)
{
	size_t i, len;
	const char *s;

	if (id == PV_NONE || id == PV_PENDING)
		return 0;
	s = profview__str(pv, id);
	len = profview__strlen(pv, id);
	for (i = 0; i < n; i++)
		if (strlen(list[i]) == len && !memcmp(list[i], s, len))
			return 1;
	return 0;
}

static int in_ints(int32_t v, const int32_t *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (list[i] == v)
			return 1;
	return 0;
}

int pvreport__row_passes(struct profview *pv, const struct pvreport_row *r,
			 const struct pvreport_filter *o)
{
	const struct pv_frame *f;
	const uint32_t *ids;
	unsigned nf;

	if (!o->ncomms && !o->npids && !o->ntids && !o->ndsos && !o->nsyms)
		return 1;
	if (o->ncomms && !in_list(pv, r->comm, o->comms, o->ncomms))
		return 0;
	if (o->npids || o->ntids) {
		struct stacktab_entry e;
		stacktab__get(profview__table(pv), r->stack, &e);
		if ((o->npids && !in_ints(e.pid, o->pids, o->npids)) ||
		    (o->ntids && !in_ints(e.tid, o->tids, o->ntids)))
			return 0;
	}
	if (!o->ndsos && !o->nsyms)
		return 1;
	profview__report_stack(pv, r->stack, &ids, &nf);
	if (nf == 0)
		return 0;
	f = profview__frame(pv, ids[nf - 1]);
	if (o->ndsos && !in_list(pv, f->dsoname, o->dsos, o->ndsos) &&
	    !in_list(pv, f->dso, o->dsos, o->ndsos))
		return 0;
	return !o->nsyms || (f->name != PV_NONE && in_list(pv, f->symname, o->syms, o->nsyms));
}

/* By parent: the regex compiled, the verdicts' room, "[other]". */
static int parent_init(struct acc *a, struct profview *pv, const struct pvreport_opts *o)
{
	int rc;

	if (!has_key(o, is_parent_key))
		return 0;
	if ((rc = profview__intern(pv, "[other]", 7, &a->other)))
		return rc;
	a->parent = a->other;
	a->parent_seen = calloc(profview__nframes(pv) + 1, 1);
	if (!a->parent_seen)
		return -ENOMEM;
	if ((rc = pvreport__parent_regex(&a->parent_re, o->parent)))
		return rc;
	a->has_parent = 1;
	return 0;
}

static void parent_exit(struct acc *a)
{
	if (a->has_parent)
		regfree(&a->parent_re);
	a->has_parent = 0;
	free(a->parent_seen);
	a->parent_seen = NULL;
}

int pvreport__parent_regex(regex_t *re, const char *regex)
{
	return regcomp(re, regex ? regex : PVR_DEFAULT_PARENT, REG_EXTENDED | REG_NOSUB) ? -EINVAL : 0;
}

int pvreport__check_parent(const char *regex)
{
	regex_t re;
	int rc = pvreport__parent_regex(&re, regex);

	if (!rc)
		regfree(&re);
	return rc;
}

/*
 * A row is a frame's parts and a stack's parts (comm,dso,sym: the symbol
 * and object, then the command).  Stacks are counted grouped by their
 * parts, each group in file order (so a row's first stack is the one it
 * would have in file order), and a group's rows are all made in it: the
 * row of a frame's parts is the one it had last in this group, or a new
 * one, without a map of rows.  *sks gets each stack's parts id, *grouped
 * the order; both NULL when stacks have no parts (one group).
 */
static int group_stacks(struct acc *a, uint32_t unknown, uint32_t **sks, uint32_t **grouped)
{
	const struct pvreport_opts *o = a->o;
	size_t ns = profview__nstacks(a->pv), i, nsk;
	uint32_t *s, *g, *start;
	int rc;

	*sks = *grouped = NULL;
	if (!has_key(o, is_stack_key) || ns < 2)
		return 0;
	if (ns > UINT32_MAX)
		return -E2BIG;
	s = bigmem__malloc(ns * sizeof *s);
	g = bigmem__malloc(ns * sizeof *g);
	if (!s || !g) {
		rc = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < ns; i++) {
		struct stacktab_entry e;
		s[i] = PV_NONE;
		if (o->keep && !o->keep[i])
			continue;
		stacktab__get(profview__table(a->pv), i, &e);
		if ((rc = stack_key(a, i, &e, unknown, &s[i])))
			goto fail;
	}
	/* a counting sort by parts id (kept out stacks last) */
	nsk = keytab__count(a->skt) + 1;
	if (!(start = calloc(nsk + 1, sizeof *start))) {
		rc = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < ns; i++)
		start[(s[i] == PV_NONE ? nsk - 1 : s[i]) + 1]++;
	for (i = 1; i <= nsk; i++)
		start[i] += start[i - 1];
	for (i = 0; i < ns; i++)
		g[start[s[i] == PV_NONE ? nsk - 1 : s[i]]++] = (uint32_t)i;
	free(start);
	*sks = s;
	*grouped = g;
	return 0;
fail:
	bigmem__free(s);
	bigmem__free(g);
	return rc;
}

int pvreport__new(struct profview *pv, const struct pvreport_opts *o, struct pvreport **out)
{
	struct acc a;
	struct pvreport *r;
	size_t ns = profview__nstacks(pv), i, k, nrows, kept, bytes = 0;
	uint32_t *sks = NULL, *grouped = NULL;
	uint8_t *view = NULL;
	size_t viewcap = 0;
	uint64_t fparts[PVR_MAX_KEYS * 3] = { 0 };
	uint32_t unknown;
	int rc;

	*out = NULL;
	if (o->nkeys == 0 || o->nkeys > PVR_MAX_KEYS)
		return -EINVAL;
	if ((rc = profview__symnames(pv)))
		return rc;
	memset(&a, 0, sizeof a);
	a.pv = pv;
	a.o = o;
	a.parent = PV_NONE;
	a.frame_keys = has_key(o, is_frame_key);
	a.skt = keytab__new();
	a.fk = bigmem__calloc(profview__nframes(pv) * 4 + 1, sizeof *a.fk);
	a.fp_rep = bigmem__malloc((a.fp_cap = 1024) * sizeof *a.fp_rep);
	r = calloc(1, sizeof *r);
	view = malloc(viewcap = 256);
	if (!a.skt || !a.fk || !a.fp_rep || !r || !view) {
		rc = -ENOMEM;
		goto fail;
	}
	a.r = r;
	if (o->entry_rows && (!(r->eoff = bigmem__malloc((ns ? ns : 1) * sizeof *r->eoff)) ||
			      !(r->ecnt = bigmem__calloc(ns ? ns : 1, sizeof *r->ecnt)))) {
		rc = -ENOMEM;
		goto fail;
	}
	/* frame parts id 0: none (rows keyed by the stack alone) */
	a.fp_rep[a.fp_n++] = 0;
	if ((rc = profview__intern(pv, "[unknown]", 9, &unknown)) ||
	    (rc = keytab__intern(a.skt, "", 0, &a.nosk, NULL)) ||
	    (rc = parent_init(&a, pv, o)))
		goto fail;
	if ((rc = group_stacks(&a, unknown, &sks, &grouped)))
		goto fail;
	for (k = 0; k < ns; k++) {
		struct stacktab_entry e;
		const uint32_t *ids;
		unsigned nf;

		i = grouped ? grouped[k] : k;
		if (o->keep && !o->keep[i])
			continue;
		profview__report_stack(pv, i, &ids, &nf);
		if (nf > viewcap) {
			uint8_t *v = realloc(view, nf);
			if (!v) { rc = -ENOMEM; goto fail; }
			view = v;
			viewcap = nf;
		}
		if ((rc = count_stack(&a, i, sks ? sks[i] : PV_NONE, view, unknown)))
			goto fail;
		stacktab__get(profview__table(pv), i, &e);
		r->total += o->by_period ? e.period : e.count;
	}
	bigmem__free(sks);
	bigmem__free(grouped);
	sks = grouped = NULL;
	nrows = a.nrows;
	/* kept rows first, their key strings in one block; the entries'
	 * rows follow (a.stamp, no longer needed, maps them) */
	for (i = kept = 0; i < nrows; i++) {
		a.stamp[i] = SIZE_MAX;
		if (!(o->children || a.rows[i].self > 0))
			continue;
		a.stamp[i] = kept;
		a.rows[kept] = a.rows[i];
		parts_of(&a, a.rows[i].fkey, fparts);
		a.rows[kept].keylen = key_string(o, pv, fparts,
						 keytab__key(a.skt, a.rows[i].skey, NULL), NULL, 0);
		bytes += a.rows[kept].keylen + 1;
		kept++;
	}
	for (i = 0; i < r->nerows; i++)
		r->erows[i].row = a.stamp[r->erows[i].row] == SIZE_MAX ? UINT32_MAX :
				  (uint32_t)a.stamp[r->erows[i].row];
	r->keys = bigmem__malloc(bytes ? bytes : 1);
	if (!r->keys) {
		rc = -ENOMEM;
		goto fail;
	}
	bytes = 0;
	for (i = 0; i < kept; i++) {
		parts_of(&a, a.rows[i].fkey, fparts);
		key_string(o, pv, fparts, keytab__key(a.skt, a.rows[i].skey, NULL), r->keys + bytes,
			   a.rows[i].keylen + 1);
		r->keys[bytes + a.rows[i].keylen] = '\0';
		a.rows[i].key = r->keys + bytes;
		bytes += a.rows[i].keylen + 1;
	}
	/* the counting's tables go before the sort's come (fresh pages are
	 * what a system-wide report pays most for) */
	parent_exit(&a);
	bigmem__free(a.stamp);
	free(view);
	bigmem__free(a.fk);
	free(a.fkrow);
	bigmem__free(a.fp_rep);
	bigmem__free(a.fp_slots);
	keytab__delete(a.skt);
	a.fp_rep = NULL;
	a.fp_slots = NULL;
	a.skt = NULL;
	a.stamp = NULL;
	a.fk = NULL;
	a.fkrow = NULL;
	view = NULL;
	r->rows = a.rows;
	r->n = kept;
	if ((rc = sort_rows(r, pv, o)))
		goto fail;
	*out = r;
	return 0;
fail:
	bigmem__free(sks);
	bigmem__free(grouped);
	parent_exit(&a);
	bigmem__free(a.rows);
	bigmem__free(a.stamp);
	free(view);
	bigmem__free(a.fk);
	free(a.fkrow);
	bigmem__free(a.fp_rep);
	bigmem__free(a.fp_slots);
	keytab__delete(a.skt);
	if (r) {
		bigmem__free(r->keys);
		bigmem__free(r->order);
		bigmem__free(r->eoff);
		bigmem__free(r->ecnt);
		bigmem__free(r->erows);
	}
	free(r);
	return rc;
}

void pvreport__delete(struct pvreport *r)
{
	if (!r)
		return;
	bigmem__free(r->rows);
	bigmem__free(r->keys);
	bigmem__free(r->order);
	bigmem__free(r->eoff);
	bigmem__free(r->ecnt);
	bigmem__free(r->erows);
	free(r);
}

size_t pvreport__count(const struct pvreport *r) { return r->n; }
const struct pvreport_row *pvreport__row(const struct pvreport *r, size_t i)
{
	return &r->rows[r->order[i]];
}
const struct pvreport_row *pvreport__row_at(const struct pvreport *r, size_t i)
{
	return &r->rows[i];
}
uint64_t pvreport__total(const struct pvreport *r) { return r->total; }

/* Call graphs. */

struct pvgraph {
	struct pvgraph_node *nodes;
	size_t n, cap;
	uint32_t *kids;          /* every node's kids, sorted, in one array */
	uint32_t *sib;           /* while building: a node's next sibling */
	uint32_t *roots;
	const struct profview *pv;
};

static int graph_node(struct pvgraph *g, uint32_t name, uint32_t *id)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 1024;
		struct pvgraph_node *n = bigmem__realloc(g->nodes, cap * sizeof *n);
		uint32_t *sib;
		if (!n)
			return -ENOMEM;
		g->nodes = n;
		sib = bigmem__realloc(g->sib, cap * sizeof *sib);
		if (!sib)
			return -ENOMEM;
		g->sib = sib;
		g->cap = cap;
	}
	if (g->n >= UINT32_MAX - 1)
		return -E2BIG;
	*id = (uint32_t)g->n;
	memset(&g->nodes[g->n], 0, sizeof g->nodes[0]);
	g->nodes[g->n++].name = name;
	return 0;
}

/* The edges of the trees being built: a node's kids are found in its list
 * while it has at most LIST_KIDS of them (nearly all nodes: a system-wide
 * file's children graphs have millions of nodes, nine in ten with one
 * kid), then in a map, (parent node, name) -> node, which thus holds a
 * few percent of the edges.  A small direct-mapped memo (a few hundred
 * KB, in cache) is in front of both: the stacks under one row repeat
 * their chains. */
#define LIST_KIDS 8
#define EDGE_MEMO 16384
struct edge_memo {
	uint64_t key;
	uint32_t node, used;
};

struct edges {
	struct u64map map;
	struct edge_memo *memo;
};

/* A new kid of parent named name, linked first in its list (kids: the
 * first, sib: the next; sorted at the end anyway).  When the list grows
 * past LIST_KIDS, its kids go into the map. */
static int new_kid(struct pvgraph *g, struct edges *edges, uint32_t parent, uint32_t name,
		   uint32_t *out)
{
	uint32_t id, c, k;
	int added, rc;

	if ((rc = graph_node(g, name, &id)))
		return rc;
	g->sib[id] = g->nodes[parent].nkids ? g->nodes[parent].kids : UINT32_MAX;
	g->nodes[parent].kids = id;
	if (++g->nodes[parent].nkids == LIST_KIDS + 1)
		for (k = 0, c = id; k < LIST_KIDS + 1; k++, c = g->sib[c])
			if (!u64map__insert(&edges->map, (uint64_t)parent << 32 | g->nodes[c].name, c,
					    &added))
				return -ENOMEM;
	*out = id;
	return 0;
}

/* The kid of parent named name, made when new. */
static int graph_kid(struct pvgraph *g, struct edges *edges, uint32_t parent,
		     uint32_t name, uint32_t *out)
{
	uint64_t key = (uint64_t)parent << 32 | name;
	struct edge_memo *m = &edges->memo[u64map__hash(key) & (EDGE_MEMO - 1)];
	uint32_t node = UINT32_MAX, *slot;
	int added, rc;

	if (m->used && m->key == key) {
		*out = m->node;
		return 0;
	}
	if (g->nodes[parent].nkids <= LIST_KIDS) {
		uint32_t c = g->nodes[parent].kids, k;
		for (k = 0; k < g->nodes[parent].nkids; k++, c = g->sib[c])
			if (g->nodes[c].name == name) {
				node = c;
				break;
			}
		if (node == UINT32_MAX && (rc = new_kid(g, edges, parent, name, &node)))
			return rc;
	} else {
		if (!(slot = u64map__insert(&edges->map, key, 0, &added)))
			return -ENOMEM;
		/* (new_kid leaves the map alone here: the list went past
		 * LIST_KIDS before) */
		if (added && (rc = new_kid(g, edges, parent, name, slot)))
			return rc;
		node = *slot;
	}
	m->key = key;
	m->node = node;
	m->used = 1;
	*out = node;
	return 0;
}

static int kid_order(const void *x, const void *y, void *arg)
{
	const struct pvgraph *g = arg;
	const struct pvgraph_node *a = &g->nodes[*(const uint32_t *)x];
	const struct pvgraph_node *b = &g->nodes[*(const uint32_t *)y];

	if (a->w != b->w)
		return a->w > b->w ? -1 : 1;
	return profview__strcmp(g->pv, a->name, b->name);
}

/* (The call graphs read the chains as they are: a chain perf discards adds
 * no path, as in perf's callchain_append, though its own ip counts in its
 * row.) */
int pvgraph__new(struct profview *pv, const struct pvreport_opts *o, const struct pvreport *r,
		 const uint32_t *rows, size_t n, double min, struct pvgraph **out)
{
	struct pvgraph *g = calloc(1, sizeof *g);
	struct edges edges;
	uint32_t *shown = NULL;
	uint64_t *rootw = NULL;
	size_t ns = profview__nstacks(pv), i, at;
	int rc = 0, pass, root_first = !o->callee && (o->children || o->caller);

	*out = NULL;
	if (!r->ecnt) {
		free(g);
		return -EINVAL;
	}
	u64map__init(&edges.map);
	edges.memo = calloc(EDGE_MEMO, sizeof *edges.memo);
	if ((rc = profview__symnames(pv)))
		goto done;
	if (!g || !edges.memo || !(g->roots = calloc(n ? n : 1, sizeof *g->roots)) ||
	    !(rootw = calloc(n ? n : 1, sizeof *rootw)) ||
	    !(shown = calloc(r->n ? r->n : 1, sizeof *shown))) {
		rc = -ENOMEM;
		goto done;
	}
	g->pv = pv;
	/* room from the start: the roots go in first */
	if (!(g->nodes = bigmem__calloc(1024, sizeof *g->nodes)) ||
	    !(g->sib = bigmem__calloc(1024, sizeof *g->sib))) {
		rc = -ENOMEM;
		goto done;
	}
	g->cap = 1024;
	/* a tree per row asked for: shown[row] is its index + 1 */
	for (i = 0; i < n && !rc; i++) {
		if (rows[i] >= r->n) {
			rc = -EINVAL;
			break;
		}
		rc = graph_node(g, PV_NONE, &g->roots[i]);
		shown[rows[i]] = (uint32_t)i + 1;
	}
	/* Pass 0 weighs each tree (only when min is given); pass 1 builds
	 * those that print. */
	for (pass = min > 0 ? 0 : 1; pass < 2 && !rc; pass++) {
		for (i = 0; i < ns && !rc; i++) {
			struct stacktab_entry e;
			const struct pv_erow *er;
			const uint32_t *ids;
			unsigned nf, k, lo, hi;
			uint64_t w;
			long m;

			if (!r->ecnt[i])
				continue;
			profview__stack(pv, i, &ids, &nf);
			if (nf == 0)
				continue;
			chain_window(o, nf, &lo, &hi);
			stacktab__get(profview__table(pv), i, &e);
			w = o->by_period ? e.period : e.count;
			er = r->erows + r->eoff[i];
			for (k = 0; k < r->ecnt[i] && !rc; k++) {
				uint32_t wi, node;
				long start;

				if (er[k].row == UINT32_MAX || !shown[er[k].row] || er[k].at >= nf)
					continue;
				wi = shown[er[k].row] - 1;
				/* the own entry, and the leaf's chain entry, give the whole chain
				 * (perf's cursor: the window --max-stack leaves) */
				start = o->children && er[k].at != nf - 1 ? (long)er[k].at : (long)lo;
				if (pass == 0) {
					rootw[wi] += w;
					continue;
				}
				/* perf drops a root's kids lighter than min: a tree
				 * lighter than min prints nothing */
				if (min > 0 && (double)rootw[wi] < min)
					continue;
				node = g->roots[wi];
				g->nodes[node].w += w;
				if (root_first) {
					for (m = start; m < (long)hi && !rc; m++) {
						rc = graph_kid(g, &edges, node, profview__frame(pv, ids[m])->symname,
							       &node);
						if (!rc)
							g->nodes[node].w += w;
					}
				} else {
					/* from the row's entry (the leaf for its own) to the root */
					for (m = (long)er[k].at; m >= (long)lo && !rc; m--) {
						rc = graph_kid(g, &edges, node, profview__frame(pv, ids[m])->symname,
							       &node);
						if (!rc)
							g->nodes[node].w += w;
					}
				}
			}
		}
	}
	if (rc)
		goto done;
	/* the kids lists: from the linked ones into one sorted array */
	g->kids = bigmem__malloc((g->n ? g->n : 1) * sizeof *g->kids);
	if (!g->kids) {
		rc = -ENOMEM;
		goto done;
	}
	at = 0;
	for (i = 0; i < g->n; i++) {
		struct pvgraph_node *nd = &g->nodes[i];
		uint32_t c = nd->kids, m;
		nd->kids = (uint32_t)at;
		for (m = 0; m < nd->nkids; m++) {
			g->kids[at + m] = c;
			c = g->sib[c];
		}
		at += nd->nkids;
	}
	for (i = 0; i < g->n; i++)
		qsort_r(g->kids + g->nodes[i].kids, g->nodes[i].nkids, sizeof *g->kids, kid_order, g);
	bigmem__free(g->sib);
	g->sib = NULL;
done:
	free(shown);
	free(rootw);
	u64map__exit(&edges.map);
	free(edges.memo);
	if (rc) {
		pvgraph__delete(g);
		return rc;
	}
	*out = g;
	return 0;
}

void pvgraph__delete(struct pvgraph *g)
{
	if (!g)
		return;
	bigmem__free(g->nodes);
	bigmem__free(g->sib);
	bigmem__free(g->kids);
	free(g->roots);
	free(g);
}

uint32_t pvgraph__root(const struct pvgraph *g, size_t i) { return g->roots[i]; }
const struct pvgraph_node *pvgraph__node(const struct pvgraph *g, uint32_t id) { return &g->nodes[id]; }
uint32_t pvgraph__kid(const struct pvgraph *g, const struct pvgraph_node *n, uint32_t j)
{
	return g->kids[n->kids + j];
}
