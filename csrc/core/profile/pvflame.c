/*
 * The flame graph tree of a view, and its layout, as lua/perf/flame.lua's
 * M.tree and M.render make them (see pvflame.h).  Stacks are merged first
 * (v:list{merge=true}'s keys), so a tree node exists exactly when a merged
 * stack with some weight passes through it; nodes are found by (parent,
 * name, kind) in one open-addressed table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "profile/profview.h"
#include "profile/pvflame.h"
#include "profile/stacktab.h"

#define NIL UINT32_MAX

struct node {
	uint64_t value;
	uint32_t parent, name;
	uint32_t first, last, next;    /* children in first-seen order */
	uint32_t depth, nkids;
	uint8_t kind;
};

struct pvflame {
	struct pvflame_box *boxes;
	size_t nboxes;
	struct pvflame_info info;
};

struct tree {
	struct node *nodes;
	size_t n, cap;
	uint32_t *slots;               /* node ids, NIL: empty */
	size_t nslots;                 /* a power of two */
};

static const char *const kind_names[] = { "user", "kernel", "jit", "inline", "lua", "comm",
					  "root" };

const char *pvflame__kind_name(uint8_t kind)
{
	return kind < sizeof kind_names / sizeof kind_names[0] ? kind_names[kind] : "user";
}

static size_t slot_of(uint32_t parent, uint32_t name, uint8_t kind, size_t mask)
{
	uint64_t h = ((uint64_t)parent << 32 | name) * 0x9E3779B97F4A7C15ULL;

	h ^= (uint64_t)kind * 0xC2B2AE3D27D4EB4FULL;
	return (size_t)(h ^ h >> 29) & mask;
}

static int tree__grow_slots(struct tree *t)
{
	size_t ns = t->nslots * 2, i;
	uint32_t *s = malloc(ns * sizeof *s);

	if (!s)
		return -ENOMEM;
	memset(s, 0xff, ns * sizeof *s);
	for (i = 0; i < t->n; i++) {
		const struct node *nd = &t->nodes[i];
		size_t k = slot_of(nd->parent, nd->name, nd->kind, ns - 1);
		while (s[k] != NIL)
			k = (k + 1) & (ns - 1);
		s[k] = (uint32_t)i;
	}
	free(t->slots);
	t->slots = s;
	t->nslots = ns;
	return 0;
}

/* The child of parent named name of kind kind, added when new. */
static int tree__child(struct tree *t, uint32_t parent, uint32_t name, uint8_t kind,
		       uint32_t *id)
{
	size_t k;
	struct node *nd;

	if (2 * (t->n + 1) > t->nslots && tree__grow_slots(t))
		return -ENOMEM;
	k = slot_of(parent, name, kind, t->nslots - 1);
	for (; t->slots[k] != NIL; k = (k + 1) & (t->nslots - 1)) {
		nd = &t->nodes[t->slots[k]];
		if (nd->parent == parent && nd->name == name && nd->kind == kind) {
			*id = t->slots[k];
			return 0;
		}
	}
	if (t->n >= NIL - 1)
		return -E2BIG;
	if (t->n == t->cap) {
		struct node *nn = realloc(t->nodes, 2 * t->cap * sizeof *nn);
		if (!nn)
			return -ENOMEM;
		t->nodes = nn;
		t->cap *= 2;
	}
	*id = (uint32_t)t->n;
	nd = &t->nodes[t->n++];
	memset(nd, 0, sizeof *nd);
	nd->parent = parent;
	nd->name = name;
	nd->kind = kind;
	nd->first = nd->last = nd->next = NIL;
	if (parent != NIL) {
		struct node *p = &t->nodes[parent];
		nd->depth = p->depth + 1;
		if (p->last == NIL)
			p->first = *id;
		else
			t->nodes[p->last].next = *id;
		p->last = *id;
		p->nkids++;
	}
	t->slots[k] = *id;
	return 0;
}

/* The merged stacks (v:list{merge=true}'s: event, command, frame labels
 * and kinds), first seen first: their first stack and weight. */
struct merged {
	size_t first;
	uint64_t weight;
};

static int merge_stacks(const struct profview *pv, const struct pvflame_opts *o,
			struct merged *m, size_t *nm)
{
	const struct stacktab *st = profview__table(pv);
	size_t ns = profview__nstacks(pv), i, seen = 0;
	uint32_t *group = malloc((ns ? ns : 1) * sizeof *group);
	int rc;

	*nm = 0;
	rc = group ? profview__flame_groups(pv, o->keep, group, nm) : -ENOMEM;

	for (i = 0; i < ns && !rc; i++) {
		struct stacktab_entry e;
		uint32_t g = group[i];

		if (g == PV_NONE)
			continue;
		if (g == seen) {
			m[g].first = i;
			m[g].weight = 0;
			seen++;
		}
		stacktab__get(st, i, &e);
		m[g].weight += o->by_period ? e.period : e.count;
	}
	free(group);
	return rc;
}

static int build_tree(const struct profview *pv, const struct pvflame_opts *o, struct tree *t)
{
	size_t ns = profview__nstacks(pv), nm, g;
	struct merged *m = calloc(ns ? ns : 1, sizeof *m);
	uint32_t root;
	int rc;

	if (!m)
		return -ENOMEM;
	rc = merge_stacks(pv, o, m, &nm);
	if (!rc)
		rc = tree__child(t, NIL, PV_NONE, PVFLAME_ROOT, &root);
	for (g = 0; g < nm && !rc; g++) {
		uint64_t w = m[g].weight;
		const uint32_t *ids;
		unsigned n, j;
		uint32_t node = root, comm;

		if (w == 0)
			continue;
		t->nodes[root].value += w;
		comm = profview__comm(pv, m[g].first);
		if (o->with_comm && comm != PV_NONE) {
			if ((rc = tree__child(t, node, comm, PVFLAME_COMM, &node)))
				break;
			t->nodes[node].value += w;
		}
		profview__stack(pv, m[g].first, &ids, &n);
		for (j = 0; j < n; j++) {
			const struct pv_frame *f = profview__frame(pv, ids[j]);
			if ((rc = tree__child(t, node, f->label, f->kind, &node)))
				break;
			t->nodes[node].value += w;
		}
	}
	free(m);
	return rc;
}

/* Ranks the wide boxes when there are too many: heavier, then shallower,
 * then first seen. */
struct rank {
	uint64_t value;
	uint32_t depth, id;
};

static int rank_order(const void *pa, const void *pb)
{
	const struct rank *a = pa, *b = pb;

	if (a->value != b->value)
		return a->value > b->value ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* Siblings in drawing order: name (bytes), then kind name. */
struct kid {
	const char *s;
	size_t len;
	uint32_t id;
	uint8_t kind;
};

static int kid_order(const void *pa, const void *pb)
{
	const struct kid *a = pa, *b = pb;
	int c = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);

	if (c)
		return c;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return strcmp(pvflame__kind_name(a->kind), pvflame__kind_name(b->kind));
}

struct visit {
	uint32_t id;
	uint64_t start;
};

static int lay_out(const struct profview *pv, const struct pvflame_opts *o, const struct tree *t,
		   struct pvflame *fl)
{
	const struct node *nodes = t->nodes;
	size_t n = t->n, i, sp = 0;
	uint64_t total = nodes[0].value;
	double scale = total > 0 ? (o->width - 2 * o->xpad) / (double)total : 0;
	uint64_t *sizes = calloc(n, sizeof *sizes);
	uint8_t *keep = NULL;
	struct visit *stack = calloc(n, sizeof *stack);
	struct kid *kids = calloc(n, sizeof *kids);
	int rc = 0;

	fl->boxes = calloc(n, sizeof *fl->boxes);
	if (!sizes || !stack || !kids || !fl->boxes) {
		rc = -ENOMEM;
		goto out;
	}
	/* subtree sizes: a child is made after its parent */
	for (i = n; i-- > 0;) {
		sizes[i] += 1;
		if (nodes[i].parent != NIL)
			sizes[nodes[i].parent] += sizes[i];
	}
	fl->info.total = total;
	fl->info.nodes = n;
	fl->info.capped = n > o->maxboxes;
	if (fl->info.capped) {
		/* a narrow box is left out anyway: only the wide ones are ranked */
		struct rank *wide = calloc(n, sizeof *wide);
		size_t nw = 0;
		if (!wide) {
			rc = -ENOMEM;
			goto out;
		}
		for (i = 0; i < n; i++)
			if (nodes[i].depth == 0 || (double)nodes[i].value * scale >= o->minwidth)
				wide[nw++] = (struct rank){ nodes[i].value, nodes[i].depth,
							    (uint32_t)i };
		if (nw > o->maxboxes) {
			keep = calloc(n, 1);
			if (!keep) {
				free(wide);
				rc = -ENOMEM;
				goto out;
			}
			qsort(wide, nw, sizeof *wide, rank_order);
			for (i = 0; i < o->maxboxes; i++)
				keep[wide[i].id] = 1;
		}
		free(wide);
	}
	if (total == 0)
		goto out;
	stack[sp++] = (struct visit){ 0, 0 };
	while (sp > 0) {
		struct visit v = stack[--sp];
		const struct node *nd = &nodes[v.id];
		struct pvflame_box *b;
		uint64_t x;
		uint32_t c;
		size_t nk = 0;

		if (nd->depth > 0 &&
		    ((double)nd->value * scale < o->minwidth || (keep && !keep[v.id]))) {
			fl->info.omitted += sizes[v.id];
			fl->info.omitted_weight += nd->value;
			continue;
		}
		b = &fl->boxes[fl->nboxes++];
		b->start = v.start;
		b->value = nd->value;
		b->name = nd->name;
		b->depth = nd->depth;
		b->kind = nd->kind;
		if (nd->depth > fl->info.maxdepth)
			fl->info.maxdepth = nd->depth;
		for (c = nd->first; c != NIL; c = nodes[c].next) {
			struct kid *k = &kids[nk++];
			k->s = profview__str(pv, nodes[c].name);
			k->len = profview__strlen(pv, nodes[c].name);
			k->id = c;
			k->kind = nodes[c].kind;
		}
		if (nk > 1)
			qsort(kids, nk, sizeof *kids, kid_order);
		/* pushed last first, so the first is drawn next */
		x = v.start;
		for (i = 0; i < nk; i++) {
			stack[sp + nk - 1 - i] = (struct visit){ kids[i].id, x };
			x += nodes[kids[i].id].value;
		}
		sp += nk;
	}
out:
	free(sizes);
	free(keep);
	free(stack);
	free(kids);
	return rc;
}

int profview__flame(const struct profview *pv, const struct pvflame_opts *o,
		    struct pvflame **out)
{
	struct tree t;
	struct pvflame *fl;
	int rc;

	*out = NULL;
	if (o->maxboxes == 0)
		return -EINVAL;
	memset(&t, 0, sizeof t);
	t.cap = 1024;
	t.nslots = 2048;
	t.nodes = calloc(t.cap, sizeof *t.nodes);
	t.slots = malloc(t.nslots * sizeof *t.slots);
	fl = calloc(1, sizeof *fl);
	if (!t.nodes || !t.slots || !fl) {
		rc = -ENOMEM;
		goto out;
	}
	memset(t.slots, 0xff, t.nslots * sizeof *t.slots);
	rc = build_tree(pv, o, &t);
	if (!rc)
		rc = lay_out(pv, o, &t, fl);
out:
	free(t.nodes);
	free(t.slots);
	if (rc) {
		pvflame__delete(fl);
		return rc;
	}
	*out = fl;
	return 0;
}

void pvflame__delete(struct pvflame *fl)
{
	if (!fl)
		return;
	free(fl->boxes);
	free(fl);
}

size_t pvflame__nboxes(const struct pvflame *fl)
{
	return fl->nboxes;
}

const struct pvflame_box *pvflame__box(const struct pvflame *fl, size_t i)
{
	return &fl->boxes[i];
}

const struct pvflame_info *pvflame__info(const struct pvflame *fl)
{
	return &fl->info;
}
