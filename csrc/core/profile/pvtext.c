/*
 * Each cell is formatted once into a scratch buffer: first to size the
 * columns over every row, then again for the rows shown (few, usually).
 */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "profile/profview.h"
#include "profile/pvreport.h"
#include "profile/pvtext.h"
#include "profile/stacktab.h"

struct sbuf {
	char *p;
	size_t n, cap;
	int err;
	FILE *out;          /* NULL: the text is kept whole */
	size_t written;     /* bytes gone to out */
};

#define SB_FLUSH_AT 65536

static void sb_flush(struct sbuf *b)
{
	if (b->err || !b->out || !b->n)
		return;
	errno = 0;
	if (fwrite(b->p, 1, b->n, b->out) != b->n) {
		b->err = errno ? -errno : -EIO;
		return;
	}
	b->written += b->n;
	b->n = 0;
}

static void sb_grow(struct sbuf *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->out && b->n + more + 1 > SB_FLUSH_AT)
		sb_flush(b);
	if (b->err || b->n + more + 1 <= b->cap)
		return;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->n + more + 1)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->err = -ENOMEM;
		return;
	}
	b->p = p;
	b->cap = cap;
}

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	sb_grow(b, n);
	if (b->err || !b->p)
		return;
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

static void sb_fill(struct sbuf *b, char c, size_t n)
{
	sb_grow(b, n);
	if (b->err || !b->p)
		return;
	memset(b->p + b->n, c, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char small[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof small) {
		sb_put(b, small, (size_t)n);
		return;
	}
	sb_grow(b, (size_t)n);
	if (b->err)
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
}

/*
 * A percentage as printf's "%.2f%%" spells it, without printf (a report
 * prints two a row, 10^5 rows).  x * 100 is exact in a long double of 64
 * or more significand bits (53 + 7), so its fraction decides the
 * rounding, ties to even, as glibc rounds the exact value.
 */
static void sb_pct(struct sbuf *b, double x)
{
#if LDBL_MANT_DIG >= 64
	if (x >= 0 && x < 1e15) {
		long double y = (long double)x * 100.0L, whole = floorl(y), frac = y - whole;
		uint64_t n = (uint64_t)whole;
		char buf[32];
		size_t k = sizeof buf;

		if (frac > 0.5L || (frac == 0.5L && (n & 1)))
			n++;
		buf[--k] = '%';
		buf[--k] = (char)('0' + n % 10);
		buf[--k] = (char)('0' + n / 10 % 10);
		buf[--k] = '.';
		n /= 100;
		do {
			buf[--k] = (char)('0' + n % 10);
			n /= 10;
		} while (n);
		sb_put(b, buf + k, sizeof buf - k);
		return;
	}
#endif
	sb_printf(b, "%.2f%%", x);
}

/* perf's headers: the thread's lines up its name with "%7d:" */
static const char *const titles[] = {
	"Children", "Self", "Overhead", "Command", "Shared Object", "Symbol",
	"    Pid:Command", "    Tid:Command", "CPU", "Source:Line", "Parent symbol",
	"Samples", "Period",
};

static int right_aligned(enum pvt_col c)
{
	return c <= PVT_OVERHEAD || c == PVT_SAMPLES || c == PVT_PERIOD;
}

/* perf's counts are "%*" PRIu64 at 12: a longer one overflows its column
 * rather than widening it */
static int fixed_width(enum pvt_col c)
{
	return c == PVT_SAMPLES || c == PVT_PERIOD;
}

static const char *str_or(struct profview *pv, uint32_t id, const char *def, size_t *len)
{
	if (id == PV_NONE) {
		*len = strlen(def);
		return def;
	}
	*len = profview__strlen(pv, id);
	return profview__str(pv, id);
}

/* The cell of row r in column c, into cell (reset first). */
static void cell(struct profview *pv, const struct pvreport_row *r, const struct pvtext_opts *o,
		 enum pvt_col c, struct sbuf *cellb)
{
	struct stacktab_entry e;
	const char *s;
	size_t len;
	uint32_t comm;

	cellb->n = 0;
	switch (c) {
	case PVT_CHILDREN:
		sb_pct(cellb, o->base > 0 ? 100.0 * (double)r->total / o->base : 0.0);
		break;
	case PVT_SELF:
	case PVT_OVERHEAD:
		sb_pct(cellb, o->base > 0 ? 100.0 * (double)r->self / o->base : 0.0);
		break;
	case PVT_COMM:
		s = str_or(pv, r->comm, "[unknown]", &len);
		if (o->comm_cut > 0 && len > o->comm_cut)
			len = o->comm_cut;
		sb_put(cellb, s, len);
		break;
	case PVT_DSO:
		s = str_or(pv, r->dsoname, "[unknown]", &len);
		sb_put(cellb, s, len);
		break;
	case PVT_SYM:
		sb_str(cellb, r->kind == PV_KERNEL ? "[k] " : "[.] ");
		s = str_or(pv, r->symname, "[unknown]", &len);
		sb_put(cellb, s, len);
		break;
	case PVT_PID:
	case PVT_TID:
		stacktab__get(profview__table(pv), r->stack, &e);
		comm = profview__thread_comm(pv, r->stack);
		if (comm == PV_NONE)
			comm = profview__comm(pv, r->stack);
		s = str_or(pv, comm, "[unknown]", &len);
		sb_printf(cellb, "%7d:", (int)e.tid);
		sb_put(cellb, s, len);
		break;
	case PVT_CPU:
		/* perf's "%*.*d" at width 3 (000, 001), -001 where the sample
		 * has none; a profile not split by CPU keeps none */
		stacktab__get(profview__table(pv), r->stack, &e);
		sb_printf(cellb, "%3.3d",
			  stacktab__split(profview__table(pv), NULL) == STACKTAB_SPLIT_CPU ?
			  (int)(int32_t)e.tag : -1);
		break;
	case PVT_SRCLINE:
		s = str_or(pv, r->srcline, "??:0", &len);
		sb_put(cellb, s, len);
		break;
	case PVT_PARENT:
		s = str_or(pv, r->parent, "[other]", &len);
		sb_put(cellb, s, len);
		break;
	case PVT_SAMPLES:
		sb_printf(cellb, "%" PRIu64, r->samples);
		break;
	case PVT_PERIOD:
		sb_printf(cellb, "%" PRIu64, r->period);
		break;
	}
}

/* The length of row r's cell in column c (the width pass reads every
 * row's: lengths, not copies, where the cell is a string of the view). */
static size_t cell_len(struct profview *pv, const struct pvreport_row *r,
		       const struct pvtext_opts *o, enum pvt_col c, struct sbuf *cellb)
{
	size_t len;

	switch (c) {
	case PVT_COMM:
		str_or(pv, r->comm, "[unknown]", &len);
		return o->comm_cut > 0 && len > o->comm_cut ? o->comm_cut : len;
	case PVT_DSO:
		str_or(pv, r->dsoname, "[unknown]", &len);
		return len;
	case PVT_SYM:
		str_or(pv, r->symname, "[unknown]", &len);
		return 4 + len;   /* "[k] " or "[.] " */
	case PVT_SRCLINE:
		str_or(pv, r->srcline, "??:0", &len);
		return len;
	case PVT_PARENT:
		str_or(pv, r->parent, "[other]", &len);
		return len;
	default:
		cell(pv, r, o, c, cellb);
		return cellb->n;
	}
}

/* Whether perf pads a cell of c to the column's width when it is the
 * last: the symbol and the source line are printed to a precision, not a
 * width (and the CPU is right-aligned); a title always is. */
static int pads_last(enum pvt_col c)
{
	return c == PVT_COMM || c == PVT_DSO || c == PVT_PID || c == PVT_TID || c == PVT_PARENT;
}

static void pad_cell(struct sbuf *b, const struct pvtext_opts *o, const size_t *width,
		     unsigned i, const char *s, size_t n, int title)
{
	if (i > 0)
		sb_put(b, "  ", 2);
	if (right_aligned(o->cols[i])) {
		sb_fill(b, ' ', width[i] > n ? width[i] - n : 0);
		sb_put(b, s, n);
	} else {
		sb_put(b, s, n);
		if (i + 1 < o->ncols || title || pads_last(o->cols[i]))
			sb_fill(b, ' ', width[i] > n ? width[i] - n : 0);
	}
}

/* A call graph's node: an address with no symbol is perf's "%#lx" there
 * (0x7f27ef4f2ad7), not the row's 16 digits. */
static void name_of(struct sbuf *b, struct profview *pv, uint32_t id)
{
	size_t len, z = 2;
	const char *s = str_or(pv, id, "", &len);

	if (len == 18 && s[0] == '0' && s[1] == 'x' && strspn(s + 2, "0123456789abcdef") == 16) {
		while (z < 17 && s[z] == '0')
			z++;
		sb_put(b, "0x", 2);
		sb_put(b, s + z, len - z);
		return;
	}
	/* address 0, which "%#.16lx" prints without its 0x: "%#lx" is "0" */
	if (len == 16 && strspn(s, "0") == 16) {
		sb_put(b, "0", 1);
		return;
	}
	sb_put(b, s, len);
}

struct graph_ctx {
	struct profview *pv;
	const struct pvgraph *g;
	double total, min;
	struct sbuf *b;
	char *prefix;        /* grows with depth */
	size_t prefix_cap;
};

/* The kids of a node that reach the threshold. */
static void branches(struct graph_ctx *c, const struct pvgraph_node *node, size_t plen, int depth)
{
	uint32_t j, nshown = 0, k = 0;

	if (depth > 10000 || c->b->err)
		return;
	for (j = 0; j < node->nkids; j++)
		if ((double)pvgraph__node(c->g, pvgraph__kid(c->g, node, j))->w >= c->min)
			nshown++;
	for (j = 0; j < node->nkids; j++) {
		const struct pvgraph_node *kid = pvgraph__node(c->g, pvgraph__kid(c->g, node, j));
		const struct pvgraph_node *n = kid;
		int last;
		size_t sub = plen + 11;

		if ((double)kid->w < c->min)
			continue;
		last = ++k == nshown;
		sb_put(c->b, c->prefix, plen);
		sb_str(c->b, "|          \n");
		sb_put(c->b, c->prefix, plen);
		sb_str(c->b, last ? " --" : "|--");
		sb_pct(c->b, 100.0 * (double)kid->w / c->total);
		sb_str(c->b, "--");
		name_of(c->b, c->pv, kid->name);
		sb_put(c->b, "\n", 1);
		if (sub + 1 > c->prefix_cap) {
			size_t cap = c->prefix_cap * 2 > sub + 1 ? c->prefix_cap * 2 : sub + 64;
			char *p = realloc(c->prefix, cap);
			if (!p) {
				c->b->err = -ENOMEM;
				return;
			}
			c->prefix = p;
			c->prefix_cap = cap;
		}
		c->prefix[plen] = last ? ' ' : '|';
		memset(c->prefix + plen + 1, ' ', 10);
		/* a chain continues without percentages while it does not split */
		while (n->nkids == 1 && pvgraph__node(c->g, pvgraph__kid(c->g, n, 0))->w == n->w) {
			n = pvgraph__node(c->g, pvgraph__kid(c->g, n, 0));
			sb_put(c->b, c->prefix, sub);
			name_of(c->b, c->pv, n->name);
			sb_put(c->b, "\n", 1);
		}
		branches(c, n, sub, depth + 1);
	}
}

static void graph(struct graph_ctx *c, uint32_t root_id)
{
	const struct pvgraph_node *root = pvgraph__node(c->g, root_id);

	memset(c->prefix, ' ', 15);
	if (root->nkids == 1 && pvgraph__node(c->g, pvgraph__kid(c->g, root, 0))->w == root->w) {
		const struct pvgraph_node *n = pvgraph__node(c->g, pvgraph__kid(c->g, root, 0));
		sb_str(c->b, "            |\n            ---");
		name_of(c->b, c->pv, n->name);
		sb_put(c->b, "\n", 1);
		while (n->nkids == 1 && pvgraph__node(c->g, pvgraph__kid(c->g, n, 0))->w == n->w) {
			n = pvgraph__node(c->g, pvgraph__kid(c->g, n, 0));
			sb_put(c->b, c->prefix, 15);
			name_of(c->b, c->pv, n->name);
			sb_put(c->b, "\n", 1);
		}
		branches(c, n, 15, 0);
	} else {
		uint32_t j, any = 0;
		for (j = 0; j < root->nkids && !any; j++)
			any = (double)pvgraph__node(c->g, pvgraph__kid(c->g, root, j))->w >= c->min;
		/* perf ends a graph with a blank line, when it printed one */
		if (!any)
			return;
		branches(c, root, 12, 0);
	}
	sb_put(c->b, "\n", 1);
}

/* Whether row r passes o's filters. */
static int row_shown(struct profview *pv, const struct pvreport_row *r, const struct pvtext_opts *o)
{
	return pvreport__row_passes(pv, r, &o->filter);
}

/* perf's Command width over the rows it shows: the longest last name of
 * a thread that made one (never narrower than the title). */
static size_t rows_comm_width(struct profview *pv, const struct pvreport *r,
			      const struct pvtext_opts *o)
{
	size_t i, w = 7, n = pvreport__count(r);

	for (i = 0; i < n; i++) {
		const struct pvreport_row *row = pvreport__row_at(r, i);
		uint32_t comm;
		if (!row_shown(pv, row, o))
			continue;
		comm = profview__thread_comm(pv, row->stack);
		if (comm == PV_NONE)
			comm = row->comm;
		if (comm != PV_NONE && profview__strlen(pv, comm) > w)
			w = profview__strlen(pv, comm);
	}
	return w;
}

/* opts with the Command width the rows give, when asked (comm_of_rows). */
static struct pvtext_opts with_comm_cut(struct profview *pv, const struct pvreport *r,
					const struct pvtext_opts *opts)
{
	struct pvtext_opts o = *opts;

	if (o.comm_of_rows)
		o.comm_cut = rows_comm_width(pv, r, opts);
	return o;
}

int pvreport__text(struct profview *pv, const struct pvreport *r, const struct pvtext_opts *opts,
		   char **text, size_t *len)
{
	size_t width[PVT_MAX_COLS] = { 0 }, n = pvreport__count(r), i, nshown = 0;
	struct sbuf b = { 0 }, cb = { 0 };
	uint32_t *grows = NULL;      /* the shown rows, for their graphs */
	struct pvgraph *g = NULL;
	const struct pvtext_opts oc = with_comm_cut(pv, r, opts);
	const struct pvtext_opts *o = &oc;
	unsigned c;
	int rc = 0;

	*text = NULL;
	*len = 0;
	if (o->ncols == 0 || o->ncols > PVT_MAX_COLS)
		return -EINVAL;
	b.out = o->out;
	for (c = 0; c < o->ncols; c++) {
		size_t t = strlen(titles[o->cols[c]]);
		width[c] = fixed_width(o->cols[c]) ? 12 : right_aligned(o->cols[c]) && t < 8 ? 8 : t;
		/* perf's Command column is as wide as the longest thread name
		 * its rows were made by, whatever names the rows print */
		if (o->cols[c] == PVT_COMM && o->comm_cut > width[c])
			width[c] = o->comm_cut;
	}
	/* as perf: columns sized by every row, shown or not; a percentage
	 * (never negative) is widest for the heaviest row, made once */
	if (n) {
		size_t most_total = 0, most_self = 0;
		/* (in the rows' own order: the sorted one is random in memory) */
		for (i = 0; i < n; i++) {
			const struct pvreport_row *row = pvreport__row_at(r, i);
			if (!row_shown(pv, row, o))
				continue;   /* (perf sizes columns by entries shown) */
			if (row->total > pvreport__row_at(r, most_total)->total)
				most_total = i;
			if (row->self > pvreport__row_at(r, most_self)->self)
				most_self = i;
			for (c = 0; c < o->ncols; c++) {
				size_t w;
				if (right_aligned(o->cols[c]))
					continue;
				w = cell_len(pv, row, o, o->cols[c], &cb);
				/* perf widens the object column to an address's 16
				 * digits for an entry with no map (not under --dsos) */
				if (o->cols[c] == PVT_DSO && w < 16 && !o->filter.ndsos &&
				    (row->frame == PV_NONE || !profview__frame(pv, row->frame)->has_dso))
					w = 16;
				/* and the symbol's to "[.] 0x" and 16 digits for one
				 * with no symbol */
				if (o->cols[c] == PVT_SYM && w < 22 &&
				    (row->frame == PV_NONE || profview__frame(pv, row->frame)->name == PV_NONE))
					w = 22;
				if (w > width[c])
					width[c] = w;
			}
		}
		for (c = 0; c < o->ncols; c++) {
			if (!right_aligned(o->cols[c]) || fixed_width(o->cols[c]))
				continue;
			cell(pv, pvreport__row_at(r, o->cols[c] == PVT_CHILDREN ? most_total : most_self),
			     o, o->cols[c], &cb);
			if (cb.n > width[c])
				width[c] = cb.n;
		}
	}
	for (i = 0; i < n; i++) {
		const struct pvreport_row *row = pvreport__row(r, i);
		double p = o->base > 0 ? 100.0 * (double)(o->children ? row->total : row->self) / o->base : 0;
		if (p < o->percent_limit || (o->max_rows && nshown >= o->max_rows) ||
		    !row_shown(pv, row, o))
			continue;
		nshown++;
	}
	if (o->graph) {
		/* the graphs of every shown row, built in one pass */
		grows = calloc(nshown ? nshown : 1, sizeof *grows);
		if (!grows) {
			rc = -ENOMEM;
			goto done;
		}
	}
	if (o->head)
		sb_put(&b, o->head, o->headlen);
	if (!o->quiet) {
		sb_str(&b, "# ");
		for (c = 0; c < o->ncols; c++)
			pad_cell(&b, o, width, c, titles[o->cols[c]], strlen(titles[o->cols[c]]), 1);
		sb_str(&b, "\n# ");
		for (c = 0; c < o->ncols; c++) {
			if (c > 0)
				sb_put(&b, "  ", 2);
			sb_fill(&b, '.', width[c]);
		}
		sb_str(&b, "\n#\n");
	}
	if (grows) {     /* (o->graph) */
		size_t k = 0, ng = 0;
		for (i = 0; i < n && k < nshown; i++) {
			const struct pvreport_row *row = pvreport__row(r, i);
			double p = o->base > 0 ? 100.0 * (double)(o->children ? row->total : row->self) / o->base : 0;
			if (p < o->percent_limit || !row_shown(pv, row, o))
				continue;
			k++;
			grows[ng++] = (uint32_t)(row - pvreport__row_at(r, 0));
		}
		if ((rc = pvgraph__new(pv, o->graph_opts, r, grows, ng,
				       o->graph_total * o->graph_pct / 100, &g)))
			goto done;
	}
	{
		struct graph_ctx gc = { pv, g, o->graph_total, o->graph_total * o->graph_pct / 100, &b,
					malloc(256), 256 };
		size_t k = 0, ng = 0;

		if (!gc.prefix) {
			rc = -ENOMEM;
			goto done;
		}
		for (i = 0; i < n && k < nshown && !b.err; i++) {
			const struct pvreport_row *row = pvreport__row(r, i);
			double p = o->base > 0 ? 100.0 * (double)(o->children ? row->total : row->self) / o->base : 0;
			if (p < o->percent_limit || !row_shown(pv, row, o))
				continue;
			k++;
			sb_str(&b, "  ");
			for (c = 0; c < o->ncols; c++) {
				cell(pv, row, o, o->cols[c], &cb);
				pad_cell(&b, o, width, c, cb.p ? cb.p : "", cb.n, 0);
			}
			sb_put(&b, "\n", 1);
			if (g)
				graph(&gc, pvgraph__root(g, ng++));
		}
		free(gc.prefix);
	}
	sb_flush(&b);
	rc = b.err ? b.err : cb.err;
done:
	pvgraph__delete(g);
	free(grows);
	free(cb.p);
	if (rc) {
		free(b.p);
		return rc;
	}
	if (b.out) {
		free(b.p);
		*len = b.written;
		return 0;
	}
	if (!b.p) {
		b.p = calloc(1, 1);
		if (!b.p)
			return -ENOMEM;
	}
	*text = b.p;
	*len = b.n;
	return 0;
}
