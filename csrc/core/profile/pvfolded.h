/*
 * Folded stacks of a profile view (profview.h), in C: one line per unique
 * stack, root first, frames joined by ';', a space and the weight, lines
 * sorted (stackcollapse-perf.pl's format; lua/perf/folded.lua holds the
 * same rules for stack lists and reads the text back).  A frame is its
 * label (symbol, else "[object]", else "[unknown]") with ';', '\' and
 * newlines escaped; annotate adds flamegraph.pl's _[k], _[j], _[i].
 * Plain C, no Lua; -errno returns.  Implemented in pvfolded.c.
 */
#ifndef LUAPERF_PVFOLDED_H
#define LUAPERF_PVFOLDED_H

#include <stddef.h>
#include <stdint.h>

struct profview;

struct pvfolded_opts {
	int annotate;          /* kind suffixes */
	int with_comm;         /* the command as the root frame (spaces as '_') */
	int by_period;         /* weight: period, else sample counts */
	const uint8_t *keep;   /* per stack, nonzero to count it; NULL: all */
};

/* The folded text into *text (malloc'd, *len bytes, NUL-terminated).
 * 0 or -ENOMEM. */
int profview__folded(struct profview *pv, const struct pvfolded_opts *o, char **text,
		     size_t *len);

#endif
