/*
 * perf report's --stdio table, from report rows (pvreport.h): the column
 * titles, the dotted rule, one line per row and, with call graphs, the
 * graph under each row in perf's ASCII style (graph,0.5 absolute: a
 * branch lighter than the threshold left out, a chain that does not
 * split printed without percentages).  Columns are as wide as their
 * widest value over every row, shown or not, as perf sizes them.
 * lua/perf/cli/report.lua prints the same for stack lists built in Lua.
 * Plain C, no Lua; -errno returns.  Implemented in pvtext.c.
 */
#ifndef LUAPERF_PVTEXT_H
#define LUAPERF_PVTEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "profile/pvreport.h"

struct profview;
struct pvreport;
struct pvreport_opts;

enum pvt_col {
	PVT_CHILDREN = 0,   /* total, percent */
	PVT_SELF,           /* self, percent */
	PVT_OVERHEAD,       /* self, percent, titled Overhead */
	PVT_COMM,
	PVT_DSO,
	PVT_SYM,
	PVT_PID,            /* "%7d:name" of the row's thread */
	PVT_TID,
	PVT_CPU,
	PVT_SRCLINE,        /* the row's srcline (a view made with lines) */
	PVT_PARENT,         /* the row's parent symbol, or "[other]" */
	PVT_SAMPLES,        /* the samples whose own entry the row is (perf -n) */
	PVT_PERIOD,         /* their period (perf --show-total-period) */
};
#define PVT_MAX_COLS 12

struct pvtext_opts {
	enum pvt_col cols[PVT_MAX_COLS];
	unsigned ncols;
	double base;                 /* the weight percentages are of */
	size_t comm_cut;             /* Command cut to this width (0: none) */
	double percent_limit;        /* rows under it (by total when children) left out */
	int children;
	size_t max_rows;             /* 0: all */
	int quiet;                   /* no titles and rule (perf report -q) */
	struct pvreport_filter filter;   /* rows shown (pvreport.h) */
	/* comm_cut from the rows shown (perf sizes columns by the entries it
	 * does not filter): filtered reports (threads kept apart) */
	int comm_of_rows;
	/* Call graphs under the rows (graph != 0): of the stacks counted in
	 * each (the report made with graph_opts->entry_rows; graph_opts its
	 * options), percentages of graph_total, branches under graph_pct left
	 * out. */
	int graph;
	const struct pvreport_opts *graph_opts;
	double graph_total, graph_pct;
	/* Where the text goes as it is made (a few KiB held at a time);
	 * NULL: into *text.  A system-wide report's table is tens of MB. */
	FILE *out;
	/* Text put before the table (NULL: none). */
	const char *head;
	size_t headlen;
};

/* The table into *text (malloc'd, *len bytes, NUL-terminated), or with
 * o->out written there (*text NULL, *len the bytes written; the stream's
 * -errno when a write fails): o->head, the two header lines ("# "
 * titles, "# " rule), "#", then the rows. */
int pvreport__text(struct profview *pv, const struct pvreport *r, const struct pvtext_opts *o,
		   char **text, size_t *len);

#endif
