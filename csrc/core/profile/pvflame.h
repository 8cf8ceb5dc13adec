/*
 * Flame graph layout of a profile view (profview.h), in C: the merged call
 * tree and the boxes a flame graph draws, as lua/perf/flame.lua's tree and
 * layout make them from a merged stack list (v:list{merge=true}), so the
 * renderer formats only the boxes it draws.
 *
 * The tree: a node is a frame's label and kind (or the command, the root's
 * children when with_comm), children in first-seen order, each node's
 * weight the sum of its stacks'.  Stacks merge as v:list{merge=true}
 * merges them (event, command, labels and kinds); merged stacks that weigh
 * nothing are left out.  The layout: boxes in preorder, children sorted by
 * name then kind name (Lua's `<` in the C locale), x and width in weight
 * units; a box narrower than minwidth pixels is left out with its subtree
 * (counted in omitted); past maxboxes nodes only the maxboxes widest boxes
 * are drawn (shallower first among equals, then the first made, as
 * flame.lua ranks them).
 *
 *   struct pvflame_opts o = { .with_comm = 1, .width = 1200, .xpad = 10,
 *                             .minwidth = 0.1, .maxboxes = 10000 };
 *   struct pvflame *fl;
 *   if (profview__flame(pv, &o, &fl) < 0) ...
 *   for (i = 0; i < pvflame__nboxes(fl); i++) pvflame__box(fl, i) ...
 *   pvflame__delete(fl);
 *
 * Plain C, no Lua; -errno returns.  Implemented in pvflame.c.
 */
#ifndef LUAPERF_PVFLAME_H
#define LUAPERF_PVFLAME_H

#include <stddef.h>
#include <stdint.h>

struct profview;
struct pvflame;

/* Box kinds beyond enum pv_kind's (profview.h). */
#define PVFLAME_COMM 5   /* a command name */
#define PVFLAME_ROOT 6   /* the root ("all"; name PV_NONE) */

struct pvflame_opts {
	int with_comm;         /* the command as the root's children */
	int by_period;         /* weight: period, else sample counts */
	const uint8_t *keep;   /* per stack, nonzero to count it; NULL: all */
	double width;          /* image width, px */
	double xpad;           /* px each side */
	double minwidth;       /* px: narrower boxes are left out */
	size_t maxboxes;       /* cap on the boxes drawn (past that many nodes) */
};

struct pvflame_box {
	uint64_t start, value; /* x and width, in weight units */
	uint32_t name;         /* string id of the view (PV_NONE: the root) */
	uint32_t depth;        /* 0: the root */
	uint8_t kind;          /* enum pv_kind, PVFLAME_COMM or PVFLAME_ROOT */
};

struct pvflame_info {
	uint64_t total;            /* the root's weight */
	uint64_t omitted;          /* nodes left out (subtrees of narrow boxes) */
	uint64_t omitted_weight;   /* their weight (the left-out boxes' roots) */
	size_t nodes;              /* nodes of the tree, the root included */
	unsigned maxdepth;         /* of the drawn boxes */
	int capped;                /* more nodes than maxboxes */
};

/* The layout into *out.  0, -EINVAL (maxboxes 0) or -ENOMEM. */
int profview__flame(const struct profview *pv, const struct pvflame_opts *o,
		    struct pvflame **out);
void pvflame__delete(struct pvflame *fl);

size_t pvflame__nboxes(const struct pvflame *fl);
/* Box i, in drawing order (the root first). */
const struct pvflame_box *pvflame__box(const struct pvflame *fl, size_t i);
const struct pvflame_info *pvflame__info(const struct pvflame *fl);
/* The name of a kind, as lua/perf/flame.lua's nodes carry it. */
const char *pvflame__kind_name(uint8_t kind);

#endif
