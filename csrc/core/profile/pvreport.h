/*
 * Reports over a profile view (profview.h), in C: rows keyed by perf's
 * sort keys, self and children sums, sorted; and the call graph under
 * rows, as perf report -g draws it.  lua/perf/report.lua holds the same
 * rules for stack lists built in Lua; `luaperf report` runs these.
 *
 * A row's key is a tuple of the sort keys' values: a frame's symbol
 * (perf's [k]/[.] level with it; a named symbol of an object is told
 * apart by its start there, as perf's sort__sym_cmp: two static
 * functions of one name are two rows), object and srcline, the stack's
 * command, thread, CPU and parent.  Self: samples whose leaf has the key; children (total): samples
 * that have the key anywhere on their stack, counted once.  Children mode
 * follows perf 6.1's quirks for frames no object maps (see pvreport.c).
 *
 * Plain C, no Lua; -errno returns.  Implemented in pvreport.c.
 */
#ifndef LUAPERF_PVREPORT_H
#define LUAPERF_PVREPORT_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

struct profview;

enum pvr_key {
	PVR_SYM = 0,
	PVR_DSO,
	PVR_COMM,
	PVR_PID,
	PVR_TID,
	PVR_CPU,               /* a profile split by CPU (stacktab__set_split) */
	PVR_EVENT,
	PVR_TIME,              /* a profile split by time: the bucket's index */
	PVR_SRCLINE,           /* the frame's srcline (a view made with lines) */
	PVR_PARENT,            /* the stack's first frame from the leaf up whose
				  symbol matches the parent regex, else "[other]" */
};
#define PVR_MAX_KEYS 8

struct pvreport_opts {
	enum pvr_key keys[PVR_MAX_KEYS];
	unsigned nkeys;
	int children;          /* rows by total (callees included) */
	int by_period;         /* weight: period, else sample counts */
	int self_only;         /* without children: rows of leaves only, total
				* left equal to self (callers not walked) */
	const uint8_t *keep;   /* per stack, nonzero to count it; NULL: all */
	const char *parent;    /* PVR_PARENT's POSIX extended regex; NULL:
				  perf's default, PVR_DEFAULT_PARENT */
	int caller;            /* call graphs of self mode root first (perf
				  report -g's "caller"), as children mode's are */
	int callee;            /* call graphs leaf first in both modes (-g
				  callee): a row's entry, then its callers */
	int keys_only;         /* rows sorted by their keys alone, as perf
				  breaks a tie of sums (a group view sorts
				  by the members' sums first) */
	int entry_rows;        /* keep which row each stack's entries went to,
				  for its call graphs (pvgraph__new) */
	int graph_ties;        /* children mode with call graphs shown: rows
				  whose totals tie in one thread ordered by the
				  depth of their chains, caller first, as perf
				  sorts its entries then */
	unsigned max_stack;    /* perf's --max-stack: the entries of each chain
				  walked, in the graphs' order (the sample's own
				  entry still counts); 0: all */
};
#define PVR_DEFAULT_PARENT "^sys_|^do_page_fault"


struct pvreport_row {
	uint64_t self, total;
	uint64_t samples, period;  /* of the samples whose own entry it is */
	size_t stack;          /* the first stack counted in the row */
	uint32_t frame;        /* its frame, PV_NONE when the row has none */
	uint8_t kind;          /* the level it shows (enum pv_kind) */
	uint32_t symname;      /* the symbol it prints (string id), or PV_NONE */
	uint32_t dsoname;      /* the object's short name, or PV_NONE */
	uint32_t srcline;      /* the frame's srcline, or PV_NONE */
	uint32_t parent;       /* by parent: the parent's name or "[other]" */
	uint32_t comm;         /* its first stack's command (string id), or PV_NONE */
	uint32_t depth;        /* children: its longest chain, perf's max_depth
				  (from its entry to the chain's end, in the
				  graphs' order; the whole chain for its own) */
	/* The row's key as lua/perf/report.lua spells it (ties sort by it). */
	const char *key;
	size_t keylen;
	uint32_t fkey, skey;   /* (internal) its frame and stack parts */
};

struct pvreport;

/* perf report's --comms, --pid, --tid, --dsos and --symbols.  perf marks an
 * entry by the sample that creates it, and later samples of any thread
 * still add to it: a row passes when the sample that made it (its first
 * stack) had one of these commands, processes, threads, and its leaf one
 * of these objects (short name or path) and symbols (n = 0: any). */
struct pvreport_filter {
	const char *const *comms, *const *dsos, *const *syms;
	size_t ncomms, ndsos, nsyms;
	const int32_t *pids, *tids;
	size_t npids, ntids;
};

int pvreport__row_passes(struct profview *pv, const struct pvreport_row *r,
			 const struct pvreport_filter *f);

/* Rows of pv (sorted: by total in children mode, else by self; then
 * self; then key), rows without self left out unless children.  0 or
 * -ENOMEM / -EINVAL (a bad key list or parent regex). */
int pvreport__new(struct profview *pv, const struct pvreport_opts *o, struct pvreport **out);
void pvreport__delete(struct pvreport *r);
/* Compiles a parent regex (POSIX extended, no captures; NULL: perf's
 * default) into re, to be regfree'd.  0 or -EINVAL. */
int pvreport__parent_regex(regex_t *re, const char *regex);
/* 0 when regex compiles as a parent regex, else -EINVAL. */
int pvreport__check_parent(const char *regex);
size_t pvreport__count(const struct pvreport *r);
const struct pvreport_row *pvreport__row(const struct pvreport *r, size_t i);
/* The same rows in the order they were made (cheaper to walk). */
const struct pvreport_row *pvreport__row_at(const struct pvreport *r, size_t i);
/* The weight of the stacks counted (those o->keep keeps). */
uint64_t pvreport__total(const struct pvreport *r);

/*
 * Call graphs: one tree per row asked for, of the samples perf's entry of
 * that row holds (its callchain), built in one pass over the stacks of a
 * report made with o->entry_rows.  Children mode: a sample whose own entry
 * is the row gives its whole chain, root first; one whose chain entry is
 * the row, the chain from that frame down to the leaf.  Self mode: the
 * samples whose own entry is the row, leaf first (o->caller: root first).
 * Nodes are named by their frames' symbols; each node's kids are sorted
 * by weight, then name.
 */
struct pvgraph;
struct pvgraph_node {
	uint32_t name;         /* string id (root: PV_NONE) */
	uint64_t w;
	uint32_t kids, nkids;  /* kids: index of the first in pvgraph__kid order */
};
/* rows: n indices of r's rows in pvreport__row_at order; o: the report's
 * options (children, caller, by_period).  min > 0: a tree lighter than
 * min (a weight) is built only as far as perf report -g prints one whose
 * branches are all under its threshold: the chain every one of its
 * samples shares (each node as heavy as the root, the last without
 * kids).  0: whole trees.  -EINVAL: r was made without o->entry_rows. */
int pvgraph__new(struct profview *pv, const struct pvreport_opts *o, const struct pvreport *r,
		 const uint32_t *rows, size_t n, double min, struct pvgraph **out);
void pvgraph__delete(struct pvgraph *g);
/* The root node of keys[i]. */
uint32_t pvgraph__root(const struct pvgraph *g, size_t i);
const struct pvgraph_node *pvgraph__node(const struct pvgraph *g, uint32_t id);
/* The j-th kid of a node (0 <= j < nkids). */
uint32_t pvgraph__kid(const struct pvgraph *g, const struct pvgraph_node *n, uint32_t j);

#endif
