/*
 * The stack table: entries in insertion order, their addresses in one
 * arena, an open-addressing hash of entry indices keyed by a hash of the
 * whole stack and its (event, pid, tid).  A known stack costs one hash, one
 * probe and one compare; nothing is allocated per sample.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/bits.h"
#include "profile/stacktab.h"
#include "base/bigmem.h"
#include "base/keytab.h"
#include "base/slots.h"
#include "record/record.h"

/* The index of stacks (base/slots.h): entry index + 1 under the stack's
 * hash, so growing it reads the old slots alone, not the entries. */

/* 48 bytes: a system-wide file has hundreds of thousands (the slot holds
 * the hash's high bits, all a probe and a growth need of it) */
struct st_entry {
	uint32_t key;               /* its addresses (markers removed) in the arena,
				       then a discarded chain's own ip */
	uint16_t nr, nkernel;
	uint8_t own;                /* a discarded chain's own ip follows the
				       addresses: 1 a user one, 2 a kernel one */
	uint16_t ev;
	int32_t pid, tid;
	uint32_t comm;              /* comm object + 1; 0: none */
	uint32_t tag;               /* the split's value (stacktab__set_split); 0 */
	uint32_t gen;               /* the address space's generation (set_space_gen) */
	uint64_t count, period;
};

/* A sample's thread as stacktab__comm_width reads it. */
struct st_note {
	uint32_t ev;
	int32_t pid, tid;
	uint32_t comm;              /* comm object + 1; 0: none */
};

/* An int32 -> name map (pid -> last COMM, tid -> a thread's last name). */
struct st_comm {
	int32_t pid;
	char *comm;                 /* NULL: empty slot */
	uint64_t time;              /* of the COMM record that set it; 0: unknown */
};

struct st_commmap {
	struct st_comm *slots;
	size_t n, nslots;
};

struct stacktab {
	struct st_entry *e;
	size_t nr, cap;
	uint64_t *arena;
	size_t arena_len, arena_cap;
	uint64_t *slots;            /* hash high bits | entry index + 1; 0 empty:
				       a probe reads an entry only when they agree */
	size_t nslots;
	char **events;
	uint32_t nevents;
	uint32_t last;              /* entry index + 1 of the previous sample's stack */
	unsigned max_depth;         /* addresses kept from the leaf; 0: all */
	int no_frames;              /* addresses dropped: stacks by thread alone */
	enum stacktab_split split;
	uint64_t split_ns, split_t0;
	int split_timed;            /* split_t0 is set */
	struct st_commmap comms;    /* by pid */
	struct st_commmap thread_comms;   /* by tid */
	/* Comm objects: each a name index (into names), renamed in place when
	 * perf would override a thread's first name; entries key on them. */
	uint32_t *cobj;
	uint32_t ncobj, cobj_cap;
	/* by name index: the comm object stacktab__comm_named made (0: none) */
	uint32_t *named_cobj;
	uint32_t nnamed_cobj;
	int (*sample_comm)(void *arg, int32_t pid, int32_t tid, uint32_t *comm);
	void *sample_comm_arg;
	int (*leaf_frame)(void *arg, int32_t pid, int kernel, uint64_t addr, uint64_t *frame);
	void *leaf_frame_arg;
	int leaf_threads_merged;    /* stacktab__merge_leaf_threads */
	/* Symbol frames: their places, interned (id = index). */
	struct keytab *places;
	/* Threads folded by stacktab__fold_leaves: the (event, pid, tid,
	 * comm) of each entry that was folded (struct st_note), for
	 * stacktab__comm_width; NULL when none was. */
	struct keytab *notes;
	/* the notes made lately, by a hash of the note (all ones: none) */
#define NOTE_CACHE 256
	struct st_note last_notes[NOTE_CACHE];
	uint32_t (*space_gen)(void *arg, int32_t pid);
	void *space_gen_arg;
	/* The last evtab's index -> our event index, so names are looked up
	 * once per event, not per sample. */
	const struct evtab *cache_t;
	int32_t cache_ev[64];
	uint64_t scratch[PERF_MAX_STACK_DEPTH * 4 + 8];
	uint64_t *stripped;          /* a chain's addresses as add() keys them */
	size_t stripped_cap;
	struct stacktab_meta meta;
	/* Named frames: the names, and a hash of their indices. */
	char **names;
	uint32_t nnames, names_cap;
	uint32_t *name_slots;        /* name index + 1; 0 empty */
	size_t name_nslots;
	/* Weights: STACKTAB_MAX_WEIGHTS a stack (NULL until one is declared). */
	char *wnames[STACKTAB_MAX_WEIGHTS];
	unsigned nweights;
	uint64_t *w;
};

struct stacktab *stacktab__new(void)
{
	struct stacktab *st = calloc(1, sizeof *st);

	if (!st)
		return NULL;
	st->nslots = 1024;
	st->slots = bigmem__calloc(st->nslots, sizeof *st->slots);
	if (!st->slots) {
		free(st);
		return NULL;
	}
	memset(st->last_notes, 0xff, sizeof st->last_notes);
	return st;
}

/* A thread whose entry is keyed by its name from now on, noted for
 * stacktab__comm_width; a thread's samples repeat it: a note made lately
 * is not looked up again. */
static int note_thread(struct stacktab *st, uint32_t ev, int32_t pid, int32_t tid, uint32_t comm)
{
	struct st_note note = { ev, pid, tid, comm };
	struct st_note *last = &st->last_notes[((uint32_t)tid * 2654435761u ^ comm ^ ev << 8) >> 24];
	uint32_t id;

	if (!memcmp(&note, last, sizeof note))
		return 0;
	if (!st->notes && !(st->notes = keytab__new()))
		return -ENOMEM;
	if (keytab__intern(st->notes, &note, sizeof note, &id, NULL))
		return -ENOMEM;
	*last = note;
	return 0;
}

static void commmap_free(struct st_commmap *m)
{
	size_t i;

	for (i = 0; i < m->nslots; i++)
		free(m->slots[i].comm);
	free(m->slots);
}

void stacktab__delete(struct stacktab *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->nevents; i++)
		free(st->events[i]);
	commmap_free(&st->comms);
	commmap_free(&st->thread_comms);
	free(st->cobj);
	free(st->named_cobj);
	for (i = 0; i < st->nnames; i++)
		free(st->names[i]);
	for (i = 0; i < st->nweights; i++)
		free(st->wnames[i]);
	free(st->names);
	free(st->name_slots);
	keytab__delete(st->places);
	keytab__delete(st->notes);
	bigmem__free(st->w);
	free(st->events);
	bigmem__free(st->e);
	bigmem__free(st->arena);
	bigmem__free(st->slots);
	free(st->stripped);
	free(st);
}

static inline uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v * UINT64_C(0x9e3779b97f4a7c15);
	h = rotl(h, 27);
	return h * UINT64_C(0xbf58476d1ce4e5b9);
}

/* A polynomial hash mod 2^64 (odd multiplier: a single changed address
 * always changes its lane) in four lanes, so a deep stack costs about a
 * cycle per address instead of a multiply latency per address; equal
 * hashes are confirmed by a compare anyway. */
static uint64_t stack_hash(const uint64_t *a, unsigned nr, uint64_t shape, uint32_t ev,
			   int32_t pid, int32_t tid, uint32_t comm, uint32_t tag)
{
	const uint64_t K = UINT64_C(0x9e3779b97f4a7c15);
	uint64_t h0 = 1, h1 = 2, h2 = 3, h3 = 4;
	unsigned i = 0;

	for (; i + 4 <= nr; i += 4) {
		h0 = (h0 + a[i]) * K;
		h1 = (h1 + a[i + 1]) * K;
		h2 = (h2 + a[i + 2]) * K;
		h3 = (h3 + a[i + 3]) * K;
	}
	for (; i < nr; i++)
		h0 = (h0 + a[i]) * K;
	h0 = mix(h0, h1);
	h0 = mix(h0, h2);
	h0 = mix(h0, h3);
	h0 = mix(h0, shape ^ ev ^ ((uint64_t)comm << 40));
	h0 = mix(h0, (((uint64_t)(uint32_t)pid << 32) | (uint32_t)tid) ^ ((uint64_t)tag * K));
	return h0 ^ (h0 >> 29);
}

/* The index of event name, or nevents when the table has none of it. */
static uint32_t event_find(const struct stacktab *st, const char *name)
{
	uint32_t i;

	for (i = 0; i < st->nevents && strcmp(st->events[i], name ? name : ""); i++)
		;
	return i;
}

static int event_index(struct stacktab *st, const char *name, uint32_t *out)
{
	char **ev;

	if (!name)
		name = "";
	if ((*out = event_find(st, name)) < st->nevents)
		return 0;
	if (st->nevents > UINT16_MAX)   /* an entry's ev is 16 bits */
		return -E2BIG;
	ev = realloc(st->events, (st->nevents + 1) * sizeof *ev);
	if (!ev)
		return -ENOMEM;
	st->events = ev;
	ev[st->nevents] = strdup(name);
	if (!ev[st->nevents])
		return -ENOMEM;
	*out = st->nevents++;
	return 0;
}

/* Empty slots for n entries (at least twice as many: add_stripped's
 * load), in place of the old ones.  0 or -ENOMEM (the old ones kept). */
static int new_slots(struct stacktab *st, size_t n)
{
	size_t ns = 1024;
	uint64_t *s;

	while (ns < 2 * n + 2)
		ns *= 2;
	if (!(s = bigmem__calloc(ns, sizeof *s)))
		return -ENOMEM;
	bigmem__free(st->slots);
	st->slots = s;
	st->nslots = ns;
	return 0;
}

void stacktab__drop_index(struct stacktab *st)
{
	bigmem__free(st->slots);
	st->slots = NULL;
	st->nslots = 0;
}

/* Addresses of a chain with its context markers removed, and how many
 * leading ones are kernel addresses.  perf discards a chain with a context
 * it does not know: no frames (perf script prints none), but perf report
 * still counts the sample's own ip, the chain's first address: it goes to
 * out[0], and *own says whose it is (1 user, 2 kernel; 0: none). */
static unsigned strip(const uint64_t *cc, unsigned n, uint64_t *out, unsigned *nkernel,
		      unsigned *own)
{
	unsigned i, nr = 0, nk = 0;
	int kernel = 0, leading = 1;

	*own = 0;
	if (!record__callchain_usable(cc, n)) {
		for (i = 0; i < n; i++) {
			if (cc[i] >= (uint64_t)PERF_CONTEXT_MAX) {
				kernel = record__kernel_context(cc[i]);
				continue;
			}
			out[0] = cc[i];
			*own = kernel ? 2 : 1;
			break;
		}
		*nkernel = 0;
		return 0;
	}
	for (i = 0; i < n; i++) {
		uint64_t v = cc[i];
		if (v >= (uint64_t)PERF_CONTEXT_MAX) {
			kernel = leading && record__kernel_context(v);
			if (!kernel)
				leading = 0;
			continue;
		}
		nk += kernel;
		leading &= kernel;
		out[nr++] = v;
	}
	*nkernel = nk;
	return nr;
}

static int reserve(struct stacktab *st, size_t n)
{
	size_t cap;
	uint64_t *ar;

	if (st->arena_len + n <= st->arena_cap)
		return 0;
	cap = st->arena_cap ? st->arena_cap * 2 : 4096;
	while (cap < st->arena_len + n)
		cap *= 2;
	ar = bigmem__realloc(st->arena, cap * sizeof *ar);
	if (!ar)
		return -ENOMEM;
	st->arena = ar;
	st->arena_cap = cap;
	return 0;
}

/* Chains are short (a few words to a few dozen): a loop beats memcmp's call. */
static inline int same_key(const uint64_t *a, const uint64_t *b, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/*
 * The hot path.  Stacks are keyed by the chain as the kernel wrote it,
 * context markers included (they are implied by the addresses and the
 * kernel count, so equal keys mean equal stacks), and hashed in place: a
 * known stack costs a hash, a probe and one compare, no copy.  The
 * addresses without markers are made once, when a stack is new.
 */
static void add_weights(struct stacktab *st, size_t i, const uint64_t *w)
{
	uint64_t *d = st->w + i * STACKTAB_MAX_WEIGHTS;
	unsigned k;

	for (k = 0; k < st->nweights; k++)
		d[k] += w[k];
}

/* The length of the chain's first depth addresses, markers included (a
 * chain strip() discards stays whole, so it is discarded the same). */
static unsigned cut_depth(const uint64_t *key, unsigned nkey, unsigned depth)
{
	unsigned i, n = 0;

	if (!record__callchain_usable(key, nkey))
		return nkey;
	for (i = 0; i < nkey; i++)
		if (key[i] < (uint64_t)PERF_CONTEXT_MAX && ++n == depth)
			return i + 1;
	return nkey;
}

static uint32_t sample_tag(struct stacktab *st, uint64_t stype, uint32_t cpu, uint64_t time);

/* A stack's hash, from what keys it (entry_is's fields). */
static inline uint64_t key_hash(const uint64_t *addrs, unsigned nr, unsigned nk, unsigned own,
				uint32_t ev, int32_t pid, int32_t tid, uint32_t comm, uint32_t tag,
				uint32_t gen)
{
	uint64_t shape = (uint64_t)nr << 32 | (uint64_t)nk << 8 | own;

	return stack_hash(addrs, nr + (own ? 1 : 0), shape, ev, pid, tid, comm, tag ^ (gen << 16));
}

/* The index made again from the entries (all distinct). */
static int index_entries(struct stacktab *st)
{
	size_t i;

	if (new_slots(st, st->nr))
		return -ENOMEM;
	for (i = 0; i < st->nr; i++) {
		const struct st_entry *e = &st->e[i];
		uint64_t h = key_hash(st->arena + e->key, e->nr, e->nkernel, e->own, e->ev,
				      e->pid, e->tid, e->comm, e->tag, e->gen);
		size_t j;

		for (j = SLOTS_HOME(h, st->nslots); st->slots[j]; j = (j + 1) & (st->nslots - 1))
			;
		st->slots[j] = SLOTS_TAG(h) | (i + 1);
	}
	return 0;
}

/* Whether entry e is that stack. */
static inline int entry_is(const struct stacktab *st, const struct st_entry *e,
			   const uint64_t *addrs, unsigned nr, unsigned nk, unsigned own,
			   uint32_t ev, int32_t pid, int32_t tid, uint32_t comm, uint32_t tag,
			   uint32_t gen)
{
	return e->nr == nr && e->nkernel == nk && e->own == own && e->ev == ev &&
	       e->pid == pid && e->tid == tid && e->comm == comm && e->tag == tag &&
	       e->gen == gen && same_key(st->arena + e->key, addrs, nr + (own ? 1 : 0));
}

/*
 * The hot path, on a stack as the table keeps it: its addresses (context
 * markers removed; with the count of leading kernel ones, they say all the
 * markers did) and a discarded chain's own ip after them.  A known stack
 * costs a hash, a probe and one compare; nothing is allocated.
 */
static int add_stripped(struct stacktab *st, const uint64_t *addrs, unsigned nr, unsigned nk,
			unsigned own, uint32_t ev, int32_t pid, int32_t tid, uint32_t comm,
			uint32_t tag, uint32_t gen, uint64_t count, uint64_t period,
			const uint64_t *w)
{
	unsigned nw = nr + (own ? 1 : 0);
	uint64_t h;
	size_t j;
	struct st_entry *e;

	if (st->space_gen && pid >= 0 && nw)
		gen = st->space_gen(st->space_gen_arg, pid);
	/* Hot loops repeat a stack sample after sample: try the previous one
	 * first (a miss usually differs at the leaf, the first word). */
	if (st->last) {
		e = &st->e[st->last - 1];
		if (entry_is(st, e, addrs, nr, nk, own, ev, pid, tid, comm, tag, gen)) {
			e->count += count;
			e->period += period;
			if (w && st->w)
				add_weights(st, st->last - 1, w);
			goto done;
		}
	}
	if (!st->slots && index_entries(st))
		return -ENOMEM;
	h = key_hash(addrs, nr, nk, own, ev, pid, tid, comm, tag, gen);
	j = SLOTS_HOME(h, st->nslots);
	while (st->slots[j]) {
		if (SLOTS_TAG(st->slots[j]) != SLOTS_TAG(h)) {
			j = (j + 1) & (st->nslots - 1);
			continue;
		}
		e = &st->e[(uint32_t)st->slots[j] - 1];
		if (entry_is(st, e, addrs, nr, nk, own, ev, pid, tid, comm, tag, gen)) {
			e->count += count;
			e->period += period;
			st->last = (uint32_t)st->slots[j];
			if (w && st->w)
				add_weights(st, st->last - 1, w);
			goto done;
		}
		j = (j + 1) & (st->nslots - 1);
	}
	if (st->nr >= UINT32_MAX - 1 || nr > 65535)
		return nr > 65535 ? -E2BIG : -ENOMEM;
	if (st->nr == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 256;
		e = bigmem__realloc(st->e, cap * sizeof *e);
		if (!e)
			return -ENOMEM;
		st->e = e;
		if (st->w) {
			uint64_t *nw2 = bigmem__recalloc(st->w, cap * STACKTAB_MAX_WEIGHTS * sizeof *nw2);
			if (!nw2)
				return -ENOMEM;
			st->w = nw2;
		}
		st->cap = cap;
	}
	if (st->arena_len + nw + 1 > UINT32_MAX)
		return -E2BIG;
	if (reserve(st, (size_t)nw + 1))  /* + 1: never a NULL arena, even for an empty stack */
		return -ENOMEM;
	e = &st->e[st->nr];
	e->key = (uint32_t)st->arena_len;
	memcpy(st->arena + st->arena_len, addrs, nw * sizeof *addrs);
	st->arena_len += nw;
	e->nr = (uint16_t)nr;
	e->nkernel = (uint16_t)nk;
	e->own = (uint8_t)own;
	e->ev = (uint16_t)ev;
	e->pid = pid;
	e->tid = tid;
	e->comm = comm;
	e->tag = tag;
	e->gen = gen;
	e->count = count;
	e->period = period;
	if (w && st->w)
		add_weights(st, st->nr, w);
	st->slots[j] = SLOTS_TAG(h) | ++st->nr;
	st->last = (uint32_t)st->slots[j];
	if (st->nr * 2 > st->nslots && slots__grow(&st->slots, &st->nslots))
		return -ENOMEM;
done:
	st->meta.samples += count;
	st->meta.period += period;
	return 0;
}

/* Room for n stripped words; NULL: out of memory. */
static uint64_t *stripped_room(struct stacktab *st, size_t n)
{
	if (n > st->stripped_cap) {
		size_t cap = st->stripped_cap ? st->stripped_cap : 256;
		uint64_t *p;
		while (cap < n)
			cap *= 2;
		p = realloc(st->stripped, cap * sizeof *p);
		if (!p)
			return NULL;
		st->stripped = p;
		st->stripped_cap = cap;
	}
	return st->stripped;
}

/* The frame the table's leaf_frame gives addr in place of it: 1 (set),
 * 0 (kept), -errno. */
static int leaf_frame(struct stacktab *st, int32_t pid, int kernel, uint64_t *addr)
{
	uint64_t frame;
	int rc = st->leaf_frame(st->leaf_frame_arg, pid, kernel, *addr, &frame);

	if (rc > 0)
		*addr = frame;
	return rc;
}

/* A chain as the kernel wrote it (context markers included), cut to the
 * table's depth, its leaf made a frame of the table in a table of leaf
 * frames. */
static int add(struct stacktab *st, const uint64_t *key, unsigned nkey,
	       uint32_t ev, int32_t pid, int32_t tid, uint32_t comm, uint32_t tag, uint32_t gen,
	       uint64_t count, uint64_t period, const uint64_t *w)
{
	uint64_t okey[4], *out;
	unsigned nr, nk, own, framed = 0;
	int leaves = st->leaf_frame && st->max_depth == 1, rc;

	if (st->no_frames)
		nkey = 0;
	else if (st->max_depth && nkey > st->max_depth)
		nkey = cut_depth(key, nkey, st->max_depth);
	if (nkey > 65535)
		return -E2BIG;
	if (leaves && nkey > 1 && nkey <= 4 && key[nkey - 1] < (uint64_t)PERF_CONTEXT_MAX &&
	    key[nkey - 2] >= (uint64_t)PERF_CONTEXT_MAX) {
		/* [markers..., leaf]: the leaf's own marker says whose it is */
		memcpy(okey, key, nkey * sizeof *key);
		if ((rc = leaf_frame(st, pid, record__kernel_context(key[nkey - 2]),
				     &okey[nkey - 1])) < 0)
			return rc;
		framed += rc > 0;
		key = okey;
	}
	if (!(out = stripped_room(st, (size_t)nkey + 1)))
		return -ENOMEM;
	nr = strip(key, nkey, out, &nk, &own);
	/* In a table of leaf frames a discarded chain's own ip, the one
	 * address a report counts for it, becomes a frame too. */
	if (own && leaves) {
		if ((rc = leaf_frame(st, pid, own == 2, &out[nr])) < 0)
			return rc;
		framed += rc > 0;
	}
	/* nothing left to resolve in the thread's space: keyed by its name
	 * now, as stacktab__fold_leaves would key it */
	if (st->leaf_threads_merged && framed && framed == nr + (own ? 1 : 0) && comm &&
	    pid != -1) {
		if ((rc = note_thread(st, ev, pid, tid, comm)) < 0)
			return rc;
		pid = tid = -1;
	}
	return add_stripped(st, out, nr, nk, own, ev, pid, tid, comm, tag, gen, count, period, w);
}

/* The key the kernel would write for these addresses: kernel markers
 * before kernel addresses, user markers before user ones. */
static unsigned canonical(const uint64_t *addrs, unsigned nr, unsigned nk, uint64_t *out)
{
	unsigned n = 0;

	if (nk) {
		out[n++] = (uint64_t)PERF_CONTEXT_KERNEL;
		memcpy(out + n, addrs, nk * sizeof *addrs);
		n += nk;
	}
	if (nr > nk) {
		out[n++] = (uint64_t)PERF_CONTEXT_USER;
		memcpy(out + n, addrs + nk, (nr - nk) * sizeof *addrs);
		n += nr - nk;
	}
	return n;
}

int stacktab__add_stack(struct stacktab *st, const uint64_t *addrs, unsigned nr,
			unsigned nkernel, int32_t pid, int32_t tid, const char *event,
			uint64_t count, uint64_t period)
{
	return stacktab__add_stack_w(st, addrs, nr, nkernel, pid, tid, event, count, period, NULL);
}

int stacktab__add_stack_w(struct stacktab *st, const uint64_t *addrs, unsigned nr,
			  unsigned nkernel, int32_t pid, int32_t tid, const char *event,
			  uint64_t count, uint64_t period, const uint64_t *w)
{
	return stacktab__add_stack_cw(st, addrs, nr, nkernel, pid, tid, 0, event, count,
				      period, w);
}

int stacktab__add_stack_cw(struct stacktab *st, const uint64_t *addrs, unsigned nr,
			   unsigned nkernel, int32_t pid, int32_t tid, uint32_t comm,
			   const char *event, uint64_t count, uint64_t period, const uint64_t *w)
{
	uint64_t *key = st->scratch;
	uint32_t ev;
	int rc;

	if (nr > 65533)
		return -E2BIG;
	if (nkernel > nr)
		nkernel = nr;
	rc = event_index(st, event, &ev);
	if (rc)
		return rc;
	if (nr + 2 > sizeof st->scratch / sizeof st->scratch[0]) {
		key = malloc((nr + 2) * sizeof *key);
		if (!key)
			return -ENOMEM;
	}
	if (comm > st->ncobj)
		comm = 0;
	rc = add(st, key, canonical(addrs, nr, nkernel, key), ev, pid, tid, comm, 0, 0, count,
		 period, w);
	if (key != st->scratch)
		free(key);
	return rc;
}

static int sample_event(struct stacktab *st, int i, const struct evtab *t, uint32_t *ev)
{
	if (t != st->cache_t) {
		st->cache_t = t;
		memset(st->cache_ev, 0xff, sizeof st->cache_ev);
	}
	if (i >= 0 && i < 64 && st->cache_ev[i] >= 0) {
		*ev = (uint32_t)st->cache_ev[i];
		return 0;
	}
	if (event_index(st, t && i >= 0 ? evtab__name(t, i) : "", ev))
		return -ENOMEM;
	if (i >= 0 && i < 64)
		st->cache_ev[i] = (int32_t)*ev;
	return 0;
}

static int add_sample(struct stacktab *st, const struct record *r, const struct evtab *t)
{
	const struct record_sample *s = &r->s;
	const struct perf_event_attr *a = t && r->evidx >= 0 ? evtab__attr(t, r->evidx) : NULL;
	const uint64_t *key;
	uint64_t period, one[2];
	unsigned nkey;
	uint32_t ev, comm = 0, tag;
	int rc;

	if ((s->type & PERF_SAMPLE_CALLCHAIN) && s->nr_callchain && s->nr_callchain <= 65535) {
		key = s->callchain;     /* 8-aligned in the record: used in place */
		nkey = (unsigned)s->nr_callchain;
	} else {
		uint16_t m = r->misc & PERF_RECORD_MISC_CPUMODE_MASK;
		int k = m == PERF_RECORD_MISC_KERNEL || m == PERF_RECORD_MISC_GUEST_KERNEL;
		uint64_t ip = s->ip;
		nkey = (s->type & PERF_SAMPLE_IP) ? canonical(&ip, 1, (unsigned)k, one) : 0;
		key = one;
	}
	if (s->type & PERF_SAMPLE_PERIOD)
		period = s->period;
	else if (a && !a->freq && a->sample_period)
		period = a->sample_period;
	else
		period = 1;
	if (sample_event(st, r->evidx, t, &ev))
		return -ENOMEM;
	tag = st->split ? sample_tag(st, s->type, s->cpu, s->time) : 0;
	if (!(s->type & PERF_SAMPLE_TID))
		return add(st, key, nkey, ev, -1, -1, 0, tag, 0, 1, period, NULL);
	if (st->sample_comm &&
	    (rc = st->sample_comm(st->sample_comm_arg, (int32_t)s->pid, (int32_t)s->tid, &comm)) != 0)
		return rc < 0 ? rc : 0;     /* > 0: left out */
	return add(st, key, nkey, ev, (int32_t)s->pid, (int32_t)s->tid, comm, tag, 0, 1, period,
		   NULL);
}

/* Fixed-size u64 fields a sample may have before its callchain, in order. */
#define FIXED_BEFORE_CHAIN (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
			    PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | \
			    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

int stacktab__set_split(struct stacktab *st, enum stacktab_split how, uint64_t bucket_ns)
{
	if (how == STACKTAB_SPLIT_TIME && bucket_ns == 0)
		return -EINVAL;
	st->split = how;
	st->split_ns = bucket_ns;
	return 0;
}

enum stacktab_split stacktab__split(const struct stacktab *st, uint64_t *bucket_ns)
{
	if (bucket_ns)
		*bucket_ns = st->split_ns;
	return st->split;
}

uint64_t stacktab__split_origin(const struct stacktab *st)
{
	return st->split_t0;
}

/* A sample's tag: has says which of cpu and time it carries. */
static uint32_t sample_tag(struct stacktab *st, uint64_t stype, uint32_t cpu, uint64_t time)
{
	uint64_t b;

	if (st->split == STACKTAB_SPLIT_CPU)
		return (stype & PERF_SAMPLE_CPU) ? cpu : UINT32_MAX;   /* -1: none */
	if (st->split != STACKTAB_SPLIT_TIME || !(stype & PERF_SAMPLE_TIME))
		return 0;
	if (!st->split_timed) {
		st->split_t0 = time;
		st->split_timed = 1;
	}
	/* an unordered pass may go back before the first: bucket 0 */
	b = time > st->split_t0 ? (time - st->split_t0) / st->split_ns : 0;
	return b > UINT32_MAX ? UINT32_MAX : (uint32_t)b;
}

int stacktab__add_sample_raw(struct stacktab *st, const struct evtab *t, const void *buf,
			     size_t len)
{
	const uint8_t *p = buf;
	const struct perf_event_attr *a;
	struct perf_event_header h;
	uint64_t stype, nr, period = 1;
	size_t tid_at = 0, time_at, cpu_at, period_at = 0, pos;
	uint32_t pid = 0, tid = 0, ev, comm = 0, tag = 0;
	int has_tid, idx, rc;

	if (len < sizeof h || ((uintptr_t)buf & 7) || !t)
		return 0;
	memcpy(&h, p, sizeof h);
	if (h.type != PERF_RECORD_SAMPLE || h.size < sizeof h || h.size > len)
		return 0;
	/* The event record__decode would find (system-wide files have a
	 * second, perf's tracking event), and a layout of fixed fields then
	 * the callchain, nothing after it: where record__decode reads each. */
	if ((idx = record__sample_event(t, p, h.size)) < 0)
		return 0;
	a = evtab__attr(t, idx);
	stype = a->sample_type;
	if (!(stype & PERF_SAMPLE_CALLCHAIN) ||
	    (stype & ~(FIXED_BEFORE_CHAIN | PERF_SAMPLE_CALLCHAIN)))
		return 0;
	has_tid = (stype & PERF_SAMPLE_TID) != 0;
	pos = 8 + 8 * (size_t)bits_count(stype & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP));
	tid_at = pos;
	pos += 8 * (size_t)has_tid;
	time_at = pos;
	pos += 8 * (size_t)bits_count(stype & (PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
		PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID));
	cpu_at = pos;
	pos += 8 * (size_t)((stype & PERF_SAMPLE_CPU) != 0);
	period_at = pos;
	pos += 8 * (size_t)((stype & PERF_SAMPLE_PERIOD) != 0);
	if (pos + 8 > h.size)
		return 0;
	memcpy(&nr, p + pos, 8);
	pos += 8;
	/* exactly the chain's bytes left, as record__decode insists; an empty
	 * or overlong chain takes the general path */
	if (nr == 0 || nr > 65535 || nr != (h.size - pos) / 8 || (h.size - pos) % 8)
		return 0;
	if (has_tid) {
		memcpy(&pid, p + tid_at, 4);
		memcpy(&tid, p + tid_at + 4, 4);
	}
	if (stype & PERF_SAMPLE_PERIOD)
		memcpy(&period, p + period_at, 8);
	else if (!a->freq && a->sample_period)
		period = a->sample_period;
	if (st->split) {
		uint64_t time = 0;
		uint32_t cpu = 0;
		if (stype & PERF_SAMPLE_TIME)
			memcpy(&time, p + time_at, 8);
		if (stype & PERF_SAMPLE_CPU)
			memcpy(&cpu, p + cpu_at, 4);
		tag = sample_tag(st, stype, cpu, time);
	}
	if (sample_event(st, idx, t, &ev))
		return -ENOMEM;
	if (has_tid && st->sample_comm &&
	    (rc = st->sample_comm(st->sample_comm_arg, (int32_t)pid, (int32_t)tid, &comm)) != 0)
		return rc < 0 ? rc : 1;     /* > 0: left out, and handled */
	if (add(st, (const uint64_t *)(const void *)(p + pos), (unsigned)nr, ev,
		has_tid ? (int32_t)pid : -1, has_tid ? (int32_t)tid : -1, comm, tag, 0, 1, period, NULL))
		return -ENOMEM;
	return 1;
}

/* Sets pid's name as of time (0: unknown, always taken); a name set at a
 * later time stays: records come ring by ring, not in time order. */
static int commmap_set_at(struct st_commmap *m, int32_t pid, const char *comm, uint64_t time)
{
	size_t j;
	char *c;

	if ((m->n + 1) * 2 > m->nslots) {
		size_t n = m->nslots ? m->nslots * 2 : 64, i;
		struct st_comm *s = calloc(n, sizeof *s);
		if (!s)
			return -ENOMEM;
		for (i = 0; i < m->nslots; i++) {
			if (!m->slots[i].comm)
				continue;
			j = (size_t)(uint32_t)m->slots[i].pid * 2654435761u & (n - 1);
			while (s[j].comm)
				j = (j + 1) & (n - 1);
			s[j] = m->slots[i];
		}
		free(m->slots);
		m->slots = s;
		m->nslots = n;
	}
	j = (size_t)(uint32_t)pid * 2654435761u & (m->nslots - 1);
	while (m->slots[j].comm && m->slots[j].pid != pid)
		j = (j + 1) & (m->nslots - 1);
	if (m->slots[j].comm && time) {
		if (m->slots[j].time > time)
			return 0;
		m->slots[j].time = time;
	}
	if (m->slots[j].comm && !strcmp(m->slots[j].comm, comm))
		return 0;
	c = strdup(comm);
	if (!c)
		return -ENOMEM;
	if (!m->slots[j].comm)
		m->n++;
	free(m->slots[j].comm);
	m->slots[j].pid = pid;
	m->slots[j].comm = c;
	m->slots[j].time = time;
	return 0;
}

static int commmap_set(struct st_commmap *m, int32_t pid, const char *comm)
{
	return commmap_set_at(m, pid, comm, 0);
}

static const char *commmap_get(const struct st_commmap *m, int32_t pid)
{
	size_t j;

	if (!m->nslots)
		return NULL;
	j = (size_t)(uint32_t)pid * 2654435761u & (m->nslots - 1);
	while (m->slots[j].comm) {
		if (m->slots[j].pid == pid)
			return m->slots[j].comm;
		j = (j + 1) & (m->nslots - 1);
	}
	return NULL;
}

int stacktab__set_comm(struct stacktab *st, int32_t pid, const char *comm)
{
	return commmap_set(&st->comms, pid, comm);
}

const char *stacktab__comm(const struct stacktab *st, int32_t pid)
{
	return commmap_get(&st->comms, pid);
}

int stacktab__set_thread_comm(struct stacktab *st, int32_t tid, const char *comm)
{
	return commmap_set(&st->thread_comms, tid, comm);
}

const char *stacktab__thread_comm(const struct stacktab *st, int32_t tid)
{
	return commmap_get(&st->thread_comms, tid);
}

/* The name index of a name (a named frame's index). */
static int name_index(struct stacktab *st, const char *name, uint32_t *out)
{
	uint64_t frame;
	int rc = stacktab__intern(st, name, &frame);

	if (rc == 0)
		*out = (uint32_t)(frame & ~STACKTAB_NAMED_MASK);
	return rc;
}

int stacktab__comm_new(struct stacktab *st, const char *name, uint32_t *id)
{
	uint32_t ni = 0;
	int rc;

	if (st->ncobj >= UINT32_MAX - 1)
		return -ENOMEM;
	if (st->ncobj == st->cobj_cap) {
		uint32_t cap = st->cobj_cap ? st->cobj_cap * 2 : 64;
		uint32_t *c = realloc(st->cobj, cap * sizeof *c);
		if (!c)
			return -ENOMEM;
		st->cobj = c;
		st->cobj_cap = cap;
	}
	if ((rc = name_index(st, name, &ni)) < 0)
		return rc;
	st->cobj[st->ncobj++] = ni;
	*id = st->ncobj;
	return 0;
}

int stacktab__comm_named(struct stacktab *st, const char *name, uint32_t *id)
{
	uint32_t ni = 0;
	int rc;

	if ((rc = name_index(st, name, &ni)) < 0)
		return rc;
	if (ni >= st->nnamed_cobj) {
		uint32_t n = st->nnamed_cobj ? st->nnamed_cobj : 64, *v;
		while (n <= ni)
			n *= 2;
		if (!(v = realloc(st->named_cobj, n * sizeof *v)))
			return -ENOMEM;
		memset(v + st->nnamed_cobj, 0, (n - st->nnamed_cobj) * sizeof *v);
		st->named_cobj = v;
		st->nnamed_cobj = n;
	}
	if (!st->named_cobj[ni] && (rc = stacktab__comm_new(st, name, &st->named_cobj[ni])) < 0)
		return rc;
	*id = st->named_cobj[ni];
	return 0;
}

int stacktab__comm_rename(struct stacktab *st, uint32_t id, const char *name)
{
	if (id == 0 || id > st->ncobj)
		return -EINVAL;
	return name_index(st, name, &st->cobj[id - 1]);
}

const char *stacktab__comm_name(const struct stacktab *st, uint32_t id)
{
	if (id == 0 || id > st->ncobj)
		return NULL;
	return st->names[st->cobj[id - 1]];
}

/* One comm object per name for stacks that come with a name (merges, Lua):
 * the newest object of that name, else a new one. */
int stacktab__comm_intern(struct stacktab *st, const char *name, uint32_t *id)
{
	uint32_t ni = 0, i;
	int rc;

	if ((rc = name_index(st, name, &ni)) < 0)
		return rc;
	for (i = st->ncobj; i > 0; i--)
		if (st->cobj[i - 1] == ni) {
			*id = i;
			return 0;
		}
	return stacktab__comm_new(st, name, id);
}

void stacktab__set_sample_comm(struct stacktab *st,
			       int (*fn)(void *arg, int32_t pid, int32_t tid, uint32_t *comm),
			       void *arg)
{
	st->sample_comm = fn;
	st->sample_comm_arg = arg;
	st->last = 0;
}

int stacktab__add_record(struct stacktab *st, const struct record *r, const struct evtab *t)
{
	switch (r->type) {
	case PERF_RECORD_SAMPLE:
		return add_sample(st, r, t);
	case PERF_RECORD_COMM:
		/* A thread's rename is not the process's name; exec renames both. */
		if (r->u.comm.pid == r->u.comm.tid || (r->misc & PERF_RECORD_MISC_COMM_EXEC))
			return commmap_set_at(&st->comms, (int32_t)r->u.comm.pid, r->u.comm.comm,
					      r->s.time);
		return 0;
	case PERF_RECORD_LOST:
		st->meta.lost += r->u.lost.lost;
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		st->meta.lost += r->u.lost_samples.lost;
		return 0;
	case PERF_RECORD_THROTTLE:
		st->meta.throttled++;
		return 0;
	case PERF_RECORD_UNTHROTTLE:
		st->meta.unthrottled++;
		return 0;
	}
	return 0;
}

long stacktab__add_records(struct stacktab *st, const struct evtab *t,
			   const void *buf, size_t len, char *err, size_t errlen)
{
	const uint8_t *p = buf;
	size_t off = 0;
	struct record r;
	int first = 1;

	if (err && errlen)
		err[0] = 0;
	while (len - off >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		memcpy(&h, p + off, sizeof h);
		if (h.size < sizeof h || (h.size & 7)) {
			if (err && errlen && first)
				snprintf(err, errlen, "record at offset %zu has size %u", off, h.size);
			return -EINVAL;
		}
		if (h.size > len - off)
			break;
		if (record__decode(t, p + off, h.size, &r, first ? err : NULL,
				   first ? errlen : 0)) {
			st->meta.errors++;
			first = 0;
		} else if (stacktab__add_record(st, &r, t)) {
			return -ENOMEM;
		}
		off += h.size;
	}
	return (long)off;
}

/* src's key with its named frames renamed into dst's names (out holds n). */
static int remap_names(struct stacktab *dst, const struct stacktab *src,
		       const uint64_t *key, unsigned n, uint64_t *out)
{
	unsigned i;
	int rc;

	for (i = 0; i < n; i++) {
		out[i] = key[i];
		if (stacktab__is_named(key[i]) &&
		    (rc = stacktab__intern(dst, stacktab__name(src, key[i]), &out[i])))
			return rc;
		if (stacktab__is_object(key[i]) && stacktab__object(src, key[i]) &&
		    (rc = stacktab__intern_object(dst, stacktab__object(src, key[i]), &out[i])))
			return rc;
		if (stacktab__is_symbol(key[i])) {
			struct stacktab_place p;
			if (!stacktab__symbol(src, key[i], &p) &&
			    (rc = stacktab__intern_symbol(dst, &p, &out[i])))
				return rc;
		}
	}
	return 0;
}

size_t stacktab__last(const struct stacktab *st)
{
	return (size_t)st->last - 1;
}

int stacktab__add_weight_at(struct stacktab *st, size_t i, unsigned k, uint64_t v)
{
	if (i >= st->nr || k >= st->nweights || !st->w)
		return -EINVAL;
	st->w[i * STACKTAB_MAX_WEIGHTS + k] += v;
	return 0;
}

/* Another table's entry e (its words: addrs) into dst, cut to dst's depth. */
static int add_entry(struct stacktab *dst, const uint64_t *addrs, const struct st_entry *e,
		     uint32_t ev, uint32_t comm, uint64_t count, uint64_t period,
		     const uint64_t *w)
{
	unsigned nr = e->nr, nk = e->nkernel, own = e->own;

	if (dst->no_frames) {
		nr = nk = own = 0;
	} else if (dst->max_depth && nr > dst->max_depth) {
		nr = dst->max_depth;
		if (nk > nr)
			nk = nr;
	}
	return add_stripped(dst, addrs, nr, nk, own, ev, e->pid, e->tid, comm, e->tag, e->gen,
			    count, period, w);
}

int stacktab__copy_entry(struct stacktab *dst, const struct stacktab *src, size_t i,
			 uint64_t count, uint64_t period, const uint64_t *w)
{
	uint64_t dw[STACKTAB_MAX_WEIGHTS] = { 0 }, *key;
	const struct st_entry *e;
	unsigned k;
	uint32_t ev;
	int rc, wk;

	if (i >= src->nr)
		return -EINVAL;
	e = &src->e[i];
	for (k = 0; w && k < src->nweights; k++) {
		if ((wk = stacktab__weight(dst, src->wnames[k])) < 0)
			return wk;
		dw[wk] = w[k];
	}
	key = malloc(((size_t)e->nr + 2) * sizeof *key);
	if (!key)
		return -ENOMEM;
	rc = remap_names(dst, src, src->arena + e->key, e->nr + (e->own ? 1 : 0), key);
	if (!rc)
		rc = event_index(dst, src->events[e->ev], &ev);
	if (!rc)
		rc = add_entry(dst, key, e, ev, 0, count, period, dst->nweights ? dw : NULL);
	free(key);
	return rc;
}

void stacktab__set_max_depth(struct stacktab *st, unsigned depth)
{
	st->max_depth = depth;
}

void stacktab__set_frames(struct stacktab *st, int keep)
{
	st->no_frames = !keep;
}

int stacktab__frames(const struct stacktab *st)
{
	return !st->no_frames;
}

int stacktab__merge(struct stacktab *dst, const struct stacktab *src)
{
	uint64_t w[STACKTAB_MAX_WEIGHTS], *key = NULL;
	uint32_t *cmap = NULL;
	int wmap[STACKTAB_MAX_WEIGHTS] = { 0 };
	size_t i, keycap = 0;
	unsigned k;
	int rc = 0;

	for (k = 0; k < src->nweights; k++)
		if ((wmap[k] = stacktab__weight(dst, src->wnames[k])) < 0)
			return wmap[k];
	/* src's comm objects -> dst's, by name (0: not mapped yet) */
	if (src->ncobj && !(cmap = calloc(src->ncobj, sizeof *cmap)))
		return -ENOMEM;
	dst->last = 0;
	for (i = 0; i < src->nr && !rc; i++) {
		const struct st_entry *e = &src->e[i];
		const uint64_t *ekey = src->arena + e->key;
		unsigned nw = e->nr + (e->own ? 1 : 0);
		uint32_t ev;
		if (src->nnames > 0 || src->places) {
			if (nw > keycap) {
				uint64_t *nk = realloc(key, nw * sizeof *nk);
				if (!nk) {
					rc = -ENOMEM;
					break;
				}
				key = nk;
				keycap = nw;
			}
			if ((rc = remap_names(dst, src, ekey, nw, key)))
				break;
			ekey = key;
		}
		memset(w, 0, sizeof w);
		for (k = 0; src->w && k < src->nweights; k++)
			w[wmap[k]] = src->w[i * STACKTAB_MAX_WEIGHTS + k];
		rc = event_index(dst, src->events[e->ev], &ev);
		if (!rc && e->comm) {
			/* every entry's comm object is one of src's */
			if (cmap == NULL || e->comm > src->ncobj)
				rc = -EINVAL;
			else if (!cmap[e->comm - 1])
				rc = stacktab__comm_intern(dst, stacktab__comm_name(src, e->comm),
							   &cmap[e->comm - 1]);
		}
		if (!rc)
			rc = add_entry(dst, ekey, e, ev, e->comm ? cmap[e->comm - 1] : 0, e->count,
				       e->period, src->nweights ? w : NULL);
	}
	free(key);
	free(cmap);
	if (rc)
		return rc;
	for (i = 0; i < src->comms.nslots; i++)
		if (src->comms.slots[i].comm &&
		    (rc = stacktab__set_comm(dst, src->comms.slots[i].pid, src->comms.slots[i].comm)))
			return rc;
	for (i = 0; i < src->thread_comms.nslots; i++)
		if (src->thread_comms.slots[i].comm &&
		    (rc = stacktab__set_thread_comm(dst, src->thread_comms.slots[i].pid,
						    src->thread_comms.slots[i].comm)))
			return rc;
	dst->meta.lost += src->meta.lost;
	dst->meta.throttled += src->meta.throttled;
	dst->meta.unthrottled += src->meta.unthrottled;
	dst->meta.errors += src->meta.errors;
	return 0;
}

size_t stacktab__count(const struct stacktab *st)
{
	return st->nr;
}

void stacktab__get(const struct stacktab *st, size_t i, struct stacktab_entry *out)
{
	const struct st_entry *e = &st->e[i];

	out->addrs = st->arena + e->key;
	out->nr = e->nr;
	out->nkernel = e->nkernel;
	out->pid = e->pid;
	out->tid = e->tid;
	out->comm = stacktab__comm_name(st, e->comm);
	out->tag = e->tag;
	out->gen = e->gen;
	out->own = e->own;
	out->own_ip = e->own ? st->arena[e->key + e->nr] : 0;
	out->event = st->events[e->ev];
	out->count = e->count;
	out->period = e->period;
	out->weights = st->w && st->nweights ? st->w + i * STACKTAB_MAX_WEIGHTS : NULL;
}

/* FNV-1a over a name. */
static uint64_t name_hash(const char *s)
{
	uint64_t h = UINT64_C(1469598103934665603);

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
	return h;
}

static int grow_names(struct stacktab *st)
{
	size_t n = st->name_nslots ? st->name_nslots * 2 : 256, i;
	uint32_t *s = calloc(n, sizeof *s);

	if (!s)
		return -ENOMEM;
	for (i = 0; i < st->nnames; i++) {
		size_t j = name_hash(st->names[i]) & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = (uint32_t)(i + 1);
	}
	free(st->name_slots);
	st->name_slots = s;
	st->name_nslots = n;
	return 0;
}

int stacktab__intern(struct stacktab *st, const char *name, uint64_t *frame)
{
	size_t j;

	if (!name)
		name = "";
	if (2 * ((size_t)st->nnames + 1) > st->name_nslots && grow_names(st))
		return -ENOMEM;
	for (j = name_hash(name) & (st->name_nslots - 1); st->name_slots[j];
	     j = (j + 1) & (st->name_nslots - 1)) {
		uint32_t i = st->name_slots[j] - 1;
		if (!strcmp(st->names[i], name)) {
			*frame = STACKTAB_NAMED | i;
			return 0;
		}
	}
	if (st->nnames == st->names_cap) {
		uint32_t cap = st->names_cap ? st->names_cap * 2 : 64;
		char **nn = realloc(st->names, cap * sizeof *nn);
		if (!nn)
			return -ENOMEM;
		st->names = nn;
		st->names_cap = cap;
	}
	st->names[st->nnames] = strdup(name);
	if (!st->names[st->nnames])
		return -ENOMEM;
	st->name_slots[j] = ++st->nnames;
	*frame = STACKTAB_NAMED | (st->nnames - 1);
	return 0;
}

int stacktab__intern_object(struct stacktab *st, const char *path, uint64_t *frame)
{
	int rc = stacktab__intern(st, path, frame);

	if (rc == 0)
		*frame = STACKTAB_OBJECT | (*frame & ~STACKTAB_NAMED_MASK);
	return rc;
}

const char *stacktab__object(const struct stacktab *st, uint64_t frame)
{
	uint64_t i = frame & ~STACKTAB_NAMED_MASK;

	if (!stacktab__is_object(frame) || i >= st->nnames)
		return NULL;
	return st->names[i];
}

void stacktab__set_space_gen(struct stacktab *st, uint32_t (*fn)(void *arg, int32_t pid),
			     void *arg)
{
	st->space_gen = fn;
	st->space_gen_arg = arg;
	st->last = 0;
}

void stacktab__set_leaf_frame(struct stacktab *st,
			      int (*fn)(void *arg, int32_t pid, int kernel, uint64_t addr,
					uint64_t *frame),
			      void *arg)
{
	st->leaf_frame = fn;
	st->leaf_frame_arg = arg;
	st->last = 0;
}

void stacktab__merge_leaf_threads(struct stacktab *st, int on)
{
	st->leaf_threads_merged = on != 0;
	st->last = 0;
}

/* Entries that became equal (their leaves made frames, their threads
 * dropped) become one, first come first; the comm objects of folded
 * entries (pid and tid -1) are taken by name.  The index is made anew for
 * the entries kept, growing with them: a system-wide file's leaves fold
 * several to one, and an index the size of the pass's would be probed at
 * random over megabytes. */
static int fold(struct stacktab *st)
{
	uint32_t *first, *canon;
	size_t i, n = 0;
	uint32_t c;

	first = calloc(st->nnames ? st->nnames : 1, sizeof *first);
	canon = malloc((st->ncobj ? st->ncobj : 1) * sizeof *canon);
	if (!first || !canon || new_slots(st, 0)) {
		free(first);
		free(canon);
		return -ENOMEM;
	}
	/* comm objects of one name (names are interned) -> the first of them */
	for (c = 1; c <= st->ncobj; c++) {
		uint32_t name = st->cobj[c - 1];
		if (!first[name])
			first[name] = c;
		canon[c - 1] = first[name];
	}
	for (i = 0; i < st->nr; i++) {
		struct st_entry *e = &st->e[i];
		const uint64_t *a;
		uint64_t h;
		size_t j;

		if (e->pid == -1 && e->tid == -1 && e->comm)
			e->comm = canon[e->comm - 1];
		a = st->arena + e->key;
		h = key_hash(a, e->nr, e->nkernel, e->own, e->ev, e->pid, e->tid, e->comm, e->tag,
			     e->gen);
		for (j = SLOTS_HOME(h, st->nslots); st->slots[j]; j = (j + 1) & (st->nslots - 1)) {
			struct st_entry *k = &st->e[(uint32_t)st->slots[j] - 1];
			if (SLOTS_TAG(st->slots[j]) == SLOTS_TAG(h) &&
			    entry_is(st, k, a, e->nr, e->nkernel, e->own, e->ev, e->pid, e->tid,
				     e->comm, e->tag, e->gen)) {
				k->count += e->count;
				k->period += e->period;
				if (st->w)
					add_weights(st, (size_t)(k - st->e),
						    st->w + i * STACKTAB_MAX_WEIGHTS);
				break;
			}
		}
		if (st->slots[j])
			continue;
		/* kept: moved down over the folded ones, in order */
		if (n != i) {
			st->e[n] = *e;
			if (st->w)
				memcpy(st->w + n * STACKTAB_MAX_WEIGHTS, st->w + i * STACKTAB_MAX_WEIGHTS,
				       STACKTAB_MAX_WEIGHTS * sizeof *st->w);
		}
		st->slots[j] = SLOTS_TAG(h) | ++n;
		if (n * 2 > st->nslots && slots__grow(&st->slots, &st->nslots)) {
			/* the table is half folded: its first n stacks alone */
			st->nr = n;
			st->last = 0;
			free(first);
			free(canon);
			return -ENOMEM;
		}
	}
	if (st->w && n < st->nr)
		memset(st->w + n * STACKTAB_MAX_WEIGHTS, 0,
		       (st->nr - n) * STACKTAB_MAX_WEIGHTS * sizeof *st->w);
	st->nr = n;
	st->last = 0;
	free(first);
	free(canon);
	return 0;
}

int stacktab__fold_leaves(struct stacktab *st,
			  int (*fn)(void *arg, const struct stacktab_place *place,
				    uint64_t *frame),
			  void *arg, int threads)
{
	size_t i;
	int rc;

	if (st->max_depth != 1)
		return 0;
	for (i = 0; i < st->nr; i++) {
		struct st_entry *e = &st->e[i];
		uint64_t *w = st->arena + e->key;
		unsigned n = e->nr + (e->own ? 1 : 0), j, done = 0;

		if (n > 1)
			continue;
		for (j = 0; j < n; j++) {
			struct stacktab_place pl;
			int kernel = j == e->nr ? e->own == 2 : j < e->nkernel;
			/* a frame of the table already (a named, object or symbol one) */
			if (stacktab__name(st, w[j]) || stacktab__object(st, w[j]) ||
			    !stacktab__symbol(st, w[j], &pl)) {
				done++;
				continue;
			}
			if (!fn)
				continue;
			memset(&pl, 0, sizeof pl);
			pl.pid = kernel ? -1 : e->pid;
			pl.gen = kernel ? 0 : e->gen;
			pl.kernel = kernel != 0;
			pl.addr = w[j];
			if ((rc = fn(arg, &pl, &w[j])) < 0)
				return rc;
			done += rc > 0;
		}
		/* nothing left to resolve in the thread's space: its name keys it */
		if (!threads && e->comm && done == n && e->pid != -1) {
			if ((rc = note_thread(st, e->ev, e->pid, e->tid, e->comm)) < 0)
				return rc;
			e->pid = e->tid = -1;
			e->gen = 0;
		}
	}
	return fold(st);
}

int stacktab__comm_width(const struct stacktab *st, const char *event, size_t *width)
{
	size_t i, n, len, w = 0;
	uint32_t ev = event ? event_find(st, event) : UINT32_MAX;

	if (!st->notes || !(n = keytab__count(st->notes)))
		return 0;
	for (i = 0; i < n; i++) {
		const struct st_note *note = keytab__key(st->notes, (uint32_t)i, &len);
		const char *c;
		if (event && note->ev != ev)
			continue;
		/* as a thread's stacks name it: its last name, else its sample's */
		c = stacktab__thread_comm(st, note->tid);
		if (!c)
			c = note->comm ? stacktab__comm_name(st, note->comm) :
			    stacktab__comm(st, note->pid);
		if (c && strlen(c) > w)
			w = strlen(c);
	}
	*width = w;
	return 1;
}

int stacktab__intern_symbol(struct stacktab *st, const struct stacktab_place *place,
			    uint64_t *frame)
{
	struct stacktab_place p = *place;
	uint32_t id;
	int added;

	p.pad = 0;
	if (!st->places && !(st->places = keytab__new()))
		return -ENOMEM;
	if (keytab__intern(st->places, &p, sizeof p, &id, &added))
		return -ENOMEM;
	*frame = STACKTAB_SYMBOL | id;
	return 0;
}

int stacktab__symbol(const struct stacktab *st, uint64_t frame, struct stacktab_place *place)
{
	uint64_t i = frame & ~STACKTAB_NAMED_MASK;
	const void *k;
	size_t len;

	if (!stacktab__is_symbol(frame) || !st->places || i >= keytab__count(st->places))
		return -ENOENT;
	k = keytab__key(st->places, (uint32_t)i, &len);
	memcpy(place, k, sizeof *place);
	return 0;
}

const char *stacktab__name(const struct stacktab *st, uint64_t frame)
{
	uint64_t i = frame & ~STACKTAB_NAMED_MASK;

	if (!stacktab__is_named(frame) || i >= st->nnames)
		return NULL;
	return st->names[i];
}

int stacktab__weight(struct stacktab *st, const char *name)
{
	unsigned k;

	for (k = 0; k < st->nweights; k++)
		if (!strcmp(st->wnames[k], name))
			return (int)k;
	if (st->nweights == STACKTAB_MAX_WEIGHTS)
		return -E2BIG;
	if (!st->w) {
		st->w = bigmem__calloc((st->cap ? st->cap : 1) * STACKTAB_MAX_WEIGHTS, sizeof *st->w);
		if (!st->w)
			return -ENOMEM;
	}
	st->wnames[st->nweights] = strdup(name);
	if (!st->wnames[st->nweights])
		return -ENOMEM;
	return (int)st->nweights++;
}

unsigned stacktab__nweights(const struct stacktab *st)
{
	return st->nweights;
}

const char *stacktab__weight_name(const struct stacktab *st, unsigned k)
{
	return k < st->nweights ? st->wnames[k] : NULL;
}

void stacktab__meta(const struct stacktab *st, struct stacktab_meta *m)
{
	*m = st->meta;
}

void stacktab__add_lost(struct stacktab *st, uint64_t lost, uint64_t throttled)
{
	st->meta.lost += lost;
	st->meta.throttled += throttled;
}
