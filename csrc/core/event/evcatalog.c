/* The event catalog: symbolic names, cache names, tracepoints, suggestions, list. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "event/evcatalog.h"
#include "base/perf_sys.h"
#include "event/pmu.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Sorted within each type, as perf list prints them. */
static const struct evcatalog_symbol symbols[] = {
	{ "branch-instructions", "branches", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "retired branch instructions" },
	{ "branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES,
	  "mispredicted branch instructions" },
	{ "bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES,
	  "bus cycles" },
	{ "cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES,
	  "cache misses (usually the last level cache)" },
	{ "cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES,
	  "cache accesses (usually the last level cache)" },
	{ "cpu-cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
	  "CPU cycles" },
	{ "instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,
	  "retired instructions" },
	{ "ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES,
	  "reference cycles, not scaled by frequency changes" },
	{ "stalled-cycles-backend", "idle-cycles-backend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "cycles stalled in instruction retirement" },
	{ "stalled-cycles-frontend", "idle-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "cycles stalled in instruction issue" },

	{ "alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS,
	  "unaligned accesses the kernel fixed up" },
	{ "bpf-output", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT,
	  "output channel for BPF programs" },
	{ "cgroup-switches", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CGROUP_SWITCHES,
	  "context switches to a task in another cgroup" },
	{ "context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES,
	  "context switches" },
	{ "cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
	  "per-CPU high resolution timer" },
	{ "cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS,
	  "moves of the task to another CPU" },
	{ "dummy", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY,
	  "counts nothing; carries side-band records" },
	{ "emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS,
	  "instructions the kernel emulated" },
	{ "major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ,
	  "page faults that needed I/O" },
	{ "minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN,
	  "page faults served without I/O" },
	{ "page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
	  "page faults" },
	{ "task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK,
	  "CPU time of the task" },
};

const struct evcatalog_symbol *evcatalog__symbols(size_t *n)
{
	*n = ARRAY_SIZE(symbols);
	return symbols;
}

const struct evcatalog_symbol *evcatalog__symbol(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(symbols); i++)
		if (strcmp(symbols[i].name, name) == 0 ||
		    (symbols[i].alias != NULL && strcmp(symbols[i].alias, name) == 0))
			return &symbols[i];
	return NULL;
}

/* perf's hardware-cache vocabulary; the first name of each row is canonical. */
#define MAX_ALIASES 6
static const char *const cache_types[PERF_COUNT_HW_CACHE_MAX][MAX_ALIASES] = {
	{ "L1-dcache", "l1-d", "l1d", "L1-data" },
	{ "L1-icache", "l1-i", "l1i", "L1-instruction" },
	{ "LLC", "L2" },
	{ "dTLB", "d-tlb", "Data-TLB" },
	{ "iTLB", "i-tlb", "Instruction-TLB" },
	{ "branch", "branches", "bpu", "btb", "bpc" },
	{ "node" },
};
static const char *const cache_ops[PERF_COUNT_HW_CACHE_OP_MAX][MAX_ALIASES] = {
	{ "load", "loads", "read" },
	{ "store", "stores", "write" },
	{ "prefetch", "prefetches", "speculative-read", "speculative-load" },
};
static const char *const cache_results[PERF_COUNT_HW_CACHE_RESULT_MAX][MAX_ALIASES] = {
	{ "refs", "Reference", "ops", "access" },
	{ "misses", "miss" },
};
/* Which operations each cache has (perf's table). */
#define OPS_R   (1u << PERF_COUNT_HW_CACHE_OP_READ)
#define OPS_RWP (OPS_R | (1u << PERF_COUNT_HW_CACHE_OP_WRITE) | \
		 (1u << PERF_COUNT_HW_CACHE_OP_PREFETCH))
static const unsigned cache_valid_ops[PERF_COUNT_HW_CACHE_MAX] = {
	OPS_RWP, OPS_R | (1u << PERF_COUNT_HW_CACHE_OP_PREFETCH), OPS_RWP,
	OPS_RWP, OPS_R, OPS_R, OPS_RWP,
};

/*
 * Matches s against one row table: an alias that is a prefix of s and ends
 * at '\0' or '-'.  Tries candidates from index *from on, so the caller can
 * backtrack; returns the row or -1 and sets *len to the alias length.
 */
static int match_word(const char *s, const char *const table[][MAX_ALIASES],
		      int rows, int *from, size_t *len)
{
	for (; *from < rows * MAX_ALIASES; (*from)++) {
		const char *a = table[*from / MAX_ALIASES][*from % MAX_ALIASES];
		size_t n;
		if (a == NULL)
			continue;
		n = strlen(a);
		if (strncmp(s, a, n) == 0 && (s[n] == '\0' || s[n] == '-')) {
			*len = n;
			return (*from)++ / MAX_ALIASES;
		}
	}
	return -1;
}

/* An op or result word: returns 0..2 for ops, 10..11 for results, -1. */
static int match_op_result(const char *s, int *from, size_t *len)
{
	int r;

	if (*from < PERF_COUNT_HW_CACHE_OP_MAX * MAX_ALIASES) {
		r = match_word(s, cache_ops, PERF_COUNT_HW_CACHE_OP_MAX, from, len);
		if (r >= 0)
			return r;
	}
	{
		int sub = *from - PERF_COUNT_HW_CACHE_OP_MAX * MAX_ALIASES;
		r = match_word(s, cache_results, PERF_COUNT_HW_CACHE_RESULT_MAX, &sub, len);
		*from = sub + PERF_COUNT_HW_CACHE_OP_MAX * MAX_ALIASES;
		return r < 0 ? -1 : 10 + r;
	}
}

/* Splits name into type[-word[-word]]; words[] get op/result codes. */
static int split_cache(const char *name, int *type, int words[2], int *nwords)
{
	int tf = 0, t;
	size_t tl;

	while ((t = match_word(name, cache_types, PERF_COUNT_HW_CACHE_MAX, &tf, &tl)) >= 0) {
		const char *r = name + tl;
		int f1 = 0, w1;
		size_t l1;

		if (*r == '\0') {
			*type = t;
			*nwords = 0;
			return 0;
		}
		while ((w1 = match_op_result(r + 1, &f1, &l1)) >= 0) {
			const char *r2 = r + 1 + l1;
			int f2 = 0, w2;
			size_t l2;

			if (*r2 == '\0') {
				*type = t;
				words[0] = w1;
				*nwords = 1;
				return 0;
			}
			while ((w2 = match_op_result(r2 + 1, &f2, &l2)) >= 0) {
				if (r2[1 + l2] == '\0') {
					*type = t;
					words[0] = w1;
					words[1] = w2;
					*nwords = 2;
					return 0;
				}
			}
		}
	}
	return -ENOENT;
}

int evcatalog__cache(const char *name, uint64_t *config, char *msg, size_t len)
{
	int type, words[2], nwords, i, op = -1, result = -1;

	if (split_cache(name, &type, words, &nwords) != 0)
		return -ENOENT;
	/* As perf: the first operation and the first result count; a second
	 * word of the same sort ("L1-dcache-load-store") is ignored. */
	for (i = 0; i < nwords; i++) {
		if (words[i] < 10 && op < 0) {
			op = words[i];
			if (!(cache_valid_ops[type] & (1u << op)))
				break;
		} else if (words[i] >= 10 && result < 0) {
			result = words[i] - 10;
		}
	}
	if (op < 0)
		op = PERF_COUNT_HW_CACHE_OP_READ;
	if (result < 0)
		result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
	if (!(cache_valid_ops[type] & (1u << op))) {
		snprintf(msg, len, "the %s has no %s operation", cache_types[type][0],
			 cache_ops[op][0]);
		return -EINVAL;
	}
	*config = (uint64_t)type | ((uint64_t)op << 8) | ((uint64_t)result << 16);
	return 0;
}

int evcatalog__cache_name(uint64_t config, char *buf, size_t len)
{
	unsigned type = config & 0xff, op = (config >> 8) & 0xff,
		 result = (config >> 16) & 0xff;

	if ((config >> 24) != 0 || type >= PERF_COUNT_HW_CACHE_MAX ||
	    op >= PERF_COUNT_HW_CACHE_OP_MAX || result >= PERF_COUNT_HW_CACHE_RESULT_MAX ||
	    !(cache_valid_ops[type] & (1u << op)))
		return -EINVAL;
	/* perf's spelling: "L1-dcache-loads", "L1-dcache-load-misses". */
	if (result == PERF_COUNT_HW_CACHE_RESULT_ACCESS)
		snprintf(buf, len, "%s-%s", cache_types[type][0], cache_ops[op][1]);
	else
		snprintf(buf, len, "%s-%s-%s", cache_types[type][0], cache_ops[op][0],
			 cache_results[result][0]);
	return 0;
}

static int safe_component(const char *s)
{
	size_t n = strlen(s);
	return n > 0 && n < 256 && strchr(s, '/') == NULL && strcmp(s, ".") != 0 &&
	       strcmp(s, "..") != 0;
}

const char *evcatalog__tracefs(int *err)
{
	static const char *const roots[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	const char *root = perf_sys__tracefs();
	size_t i;

	*err = 0;
	if (root != NULL)
		return root;
	/* Mounted but closed to this user looks like "not there" to stat. */
	for (i = 0; i < ARRAY_SIZE(roots); i++) {
		char path[64];
		struct stat st;
		snprintf(path, sizeof path, "%s/events", roots[i]);
		if (stat(path, &st) != 0 && errno == EACCES) {
			*err = -EACCES;
			return roots[i];
		}
	}
	*err = -ENODEV;
	return NULL;
}

int evcatalog__tracepoint_id(const char *sys, const char *event, uint64_t *id,
			     int *sys_missing)
{
	int err;
	const char *root = evcatalog__tracefs(&err);
	char path[1024];
	long long v;
	struct stat st;

	*sys_missing = 0;
	if (err != 0)
		return err;
	if (!safe_component(sys)) {
		*sys_missing = 1;
		return -ENOENT;
	}
	snprintf(path, sizeof path, "%s/events/%s", root, sys);
	if (stat(path, &st) != 0) {
		*sys_missing = errno == ENOENT;
		return -errno;
	}
	if (!safe_component(event))
		return -ENOENT;
	snprintf(path, sizeof path, "%s/events/%s/%s/id", root, sys, event);
	err = perf_sys__read_int(path, &v);
	if (err == -ENOTDIR)
		err = -ENOENT;
	if (err != 0)
		return err;
	if (v < 0)
		return -EINVAL;
	*id = (uint64_t)v;
	return 0;
}

size_t evcatalog__distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	/* Three rows: the optimal-string-alignment distance counts a swap of
	 * neighbours ("schde" for "sched") as one edit. */
	size_t rows[3][256], *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

	if (la > 255 || lb > 255)
		return (size_t)-1;
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		size_t *t;
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t best = prev[j - 1] + (a[i - 1] != b[j - 1]);
			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
		t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

/* The nearest candidate so far. */
struct nearest {
	const char *word;
	size_t best;
	char name[EVSPEC_NAME_MAX];
};

static void consider(struct nearest *n, const char *cand)
{
	size_t d;

	if (cand == NULL || strlen(cand) >= sizeof n->name)
		return;
	d = evcatalog__distance(n->word, cand);
	if (d < n->best) {
		n->best = d;
		strcpy(n->name, cand);
	}
}

/* Close enough to be a typo: a third of the word, at least one edit. */
static int near_enough(const struct nearest *n)
{
	size_t len = strlen(n->word), limit = len / 3;

	if (limit < 1)
		limit = 1;
	return n->name[0] != '\0' && n->best > 0 && n->best <= limit;
}

static int give(const struct nearest *n, char *out, size_t len)
{
	if (!near_enough(n) || strlen(n->name) >= len)
		return -ENOENT;
	strcpy(out, n->name);
	return 0;
}

struct nearest_in_pmu {
	struct nearest *n;
	const char *pmu;
};

static int consider_pmu_event(const char *event, const char *terms, void *arg)
{
	struct nearest_in_pmu *q = arg;
	char full[EVSPEC_NAME_MAX];

	(void)terms;
	consider(q->n, event);
	snprintf(full, sizeof full, "%s/%s/", q->pmu, event);
	consider(q->n, full);
	return 0;
}

static int consider_pmu(const char *pmu, uint32_t type, void *arg)
{
	struct nearest_in_pmu q = { arg, pmu };

	(void)type;
	pmu__foreach_event(pmu, consider_pmu_event, &q);
	return 0;
}

int evcatalog__suggest(const char *word, char *out, size_t len)
{
	struct nearest n;
	size_t i;
	unsigned t, op, res;

	memset(&n, 0, sizeof n);
	n.word = word;
	n.best = (size_t)-1;
	for (i = 0; i < ARRAY_SIZE(symbols); i++) {
		consider(&n, symbols[i].name);
		consider(&n, symbols[i].alias);
	}
	for (t = 0; t < PERF_COUNT_HW_CACHE_MAX; t++)
		for (op = 0; op < PERF_COUNT_HW_CACHE_OP_MAX; op++)
			for (res = 0; res < PERF_COUNT_HW_CACHE_RESULT_MAX; res++) {
				char name[64];
				if (evcatalog__cache_name(t | op << 8 | res << 16, name,
							  sizeof name) == 0)
					consider(&n, name);
			}
	pmu__foreach(consider_pmu, &n);
	return give(&n, out, len);
}

struct term_list {
	char *out;
	size_t len, used;
};

static int add_term(const char *term, const char *text, void *arg);

static int consider_pmu_name(const char *pmu, uint32_t type, void *arg)
{
	(void)type;
	consider(arg, pmu);
	return 0;
}

int evcatalog__suggest_pmu(const char *name, char *out, size_t len)
{
	struct nearest n;

	memset(&n, 0, sizeof n);
	n.word = name;
	n.best = (size_t)-1;
	pmu__foreach(consider_pmu_name, &n);
	return give(&n, out, len);
}

static int add_pmu_name(const char *pmu, uint32_t type, void *arg)
{
	(void)type;
	return add_term(pmu, NULL, arg);
}

void evcatalog__pmu_names(char *out, size_t len)
{
	struct term_list l = { out, len, 0 };

	if (len == 0)
		return;
	out[0] = '\0';
	pmu__foreach(add_pmu_name, &l);
}

/* Byte order, not the locale's: listings must not depend on LANG. */
static int byte_order(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/*
 * Tracepoint systems in the order of their "sys:" prefixes, so the list
 * is sorted by full name as perf prints it ("fib6:..." before "fib:...").
 */
static int system_order(const struct dirent **a, const struct dirent **b)
{
	const unsigned char *x = (const unsigned char *)(*a)->d_name;
	const unsigned char *y = (const unsigned char *)(*b)->d_name;

	for (;; x++, y++) {
		unsigned cx = *x ? *x : ':', cy = *y ? *y : ':';
		if (cx != cy)
			return cx < cy ? -1 : 1;
		if (*x == '\0' || *y == '\0')
			return (*x != '\0') - (*y != '\0');
	}
}

/* Calls fn for the visible entries of a directory, sorted. */
static int foreach_dir_sorted(const char *dir, int (*fn)(const char *name, void *arg),
			      void *arg,
			      int (*order)(const struct dirent **, const struct dirent **))
{
	struct dirent **list;
	int n, i, rc = 0;

	n = scandir(dir, &list, NULL, order);
	if (n < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		const char *name = list[i]->d_name;
		if (rc == 0 && name[0] != '.')
			rc = fn(name, arg);
		free(list[i]);
	}
	free(list);
	return rc;
}

static int foreach_dir(const char *dir, int (*fn)(const char *name, void *arg), void *arg)
{
	return foreach_dir_sorted(dir, fn, arg, byte_order);
}

static int consider_name(const char *name, void *arg)
{
	consider(arg, name);
	return 0;
}

int evcatalog__suggest_tracepoint(const char *sys, const char *event, char *out,
				  size_t len)
{
	const char *root = perf_sys__tracefs();
	char dir[1024];
	struct nearest n;
	struct stat st;

	if (root == NULL)
		return -ENODEV;
	memset(&n, 0, sizeof n);
	n.best = (size_t)-1;
	snprintf(dir, sizeof dir, "%s/events/%s", root, sys);
	if (safe_component(sys) && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
		n.word = event;
		foreach_dir(dir, consider_name, &n);
		if (!near_enough(&n) || strlen(sys) + strlen(n.name) + 2 > len)
			return -ENOENT;
		snprintf(out, len, "%s:%s", sys, n.name);
		return 0;
	}
	n.word = sys;
	snprintf(dir, sizeof dir, "%s/events", root);
	foreach_dir(dir, consider_name, &n);
	return give(&n, out, len);
}

/* perf's built-in PMU terms that luaperf understands. */
static const char *const builtin_terms[] = {
	"config", "config1", "config2", "name", "period", "freq",
};

static int consider_term(const char *term, const char *text, void *arg)
{
	(void)text;
	consider(arg, term);
	return 0;
}

int evcatalog__suggest_term(const char *pmu, const char *term, char *out, size_t len)
{
	struct nearest n;
	size_t i;

	memset(&n, 0, sizeof n);
	n.word = term;
	n.best = (size_t)-1;
	for (i = 0; i < ARRAY_SIZE(builtin_terms); i++)
		consider(&n, builtin_terms[i]);
	pmu__foreach_format(pmu, consider_term, &n);
	pmu__foreach_event(pmu, consider_term, &n);
	return give(&n, out, len);
}

static int add_term(const char *term, const char *text, void *arg)
{
	struct term_list *l = arg;
	int w;

	(void)text;
	if (l->used >= l->len)
		return 1;
	w = snprintf(l->out + l->used, l->len - l->used, "%s%s",
		     l->used > 0 ? "," : "", term);
	if (w < 0 || (size_t)w >= l->len - l->used) {
		l->out[l->used] = '\0';
		return 1;
	}
	l->used += (size_t)w;
	return 0;
}

void evcatalog__pmu_terms(const char *pmu, char *out, size_t len)
{
	struct term_list l = { out, len, 0 };
	size_t i;

	if (len == 0)
		return;
	out[0] = '\0';
	if (pmu__foreach_format(pmu, add_term, &l) != 0)
		return;
	for (i = 0; i < ARRAY_SIZE(builtin_terms); i++)
		if (add_term(builtin_terms[i], NULL, &l) != 0)
			return;
	pmu__foreach_event(pmu, add_term, &l);
}

int evcatalog__opens(const struct perf_event_attr *attr)
{
	struct perf_event_attr a = *attr;
	int fd;

	a.size = sizeof a;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = perf_sys__open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	/* Only "this PMU has no such event" means unavailable; a full fd
	 * table or a policy refusal says nothing about the hardware. */
	return !(fd == -ENOENT || fd == -EOPNOTSUPP || fd == -ENODEV || fd == -EINVAL);
}

/* ---- perf list ---- */

struct walk {
	const char *pattern;       /* NULL, or a glob wrapped in '*' */
	int only_kind;             /* -1: all */
	int (*fn)(const struct evcatalog_entry *e, void *arg);
	void *arg;
	const char *cur_pmu;
	const char *cur_sys;
	const char *tracefs;
};

static int glob_hit(const char *glob, const char *s)
{
	return s != NULL && fnmatch(glob, s, 0) == 0;
}

static int emit(struct walk *w, const struct evcatalog_entry *e, const char *extra)
{
	if (w->only_kind >= 0 && (int)e->kind != w->only_kind)
		return 0;
	if (w->pattern != NULL && !glob_hit(w->pattern, e->name) &&
	    !glob_hit(w->pattern, e->alias) && !glob_hit(w->pattern, extra))
		return 0;
	return w->fn(e, w->arg);
}

static int list_symbols(struct walk *w)
{
	size_t i;
	int rc;

	for (i = 0; i < ARRAY_SIZE(symbols); i++) {
		struct perf_event_attr a;
		struct evcatalog_entry e;
		int hw = symbols[i].type == PERF_TYPE_HARDWARE;

		memset(&a, 0, sizeof a);
		a.type = symbols[i].type;
		a.config = symbols[i].config;
		e.name = symbols[i].name;
		e.alias = symbols[i].alias;
		e.kind = hw ? EVSPEC_HARDWARE : EVSPEC_SOFTWARE;
		e.pmu = hw ? "cpu" : "software";
		e.desc = symbols[i].desc;
		if (w->only_kind >= 0 && (int)e.kind != w->only_kind)
			continue;
		e.available = evcatalog__opens(&a);
		rc = emit(w, &e, NULL);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int list_cache(struct walk *w)
{
	unsigned t, op, res;
	int rc;

	if (w->only_kind >= 0 && w->only_kind != EVSPEC_CACHE)
		return 0;
	for (t = 0; t < PERF_COUNT_HW_CACHE_MAX; t++)
		for (op = 0; op < PERF_COUNT_HW_CACHE_OP_MAX; op++)
			for (res = 0; res < PERF_COUNT_HW_CACHE_RESULT_MAX; res++) {
				struct perf_event_attr a;
				struct evcatalog_entry e;
				char name[64];
				uint64_t config = t | op << 8 | res << 16;

				if (evcatalog__cache_name(config, name, sizeof name) != 0)
					continue;
				memset(&a, 0, sizeof a);
				a.type = PERF_TYPE_HW_CACHE;
				a.config = config;
				e.name = name;
				e.alias = NULL;
				e.kind = EVSPEC_CACHE;
				e.pmu = "cpu";
				e.desc = "Hardware cache event";
				if (w->pattern != NULL && !glob_hit(w->pattern, name))
					continue;
				e.available = evcatalog__opens(&a);
				rc = emit(w, &e, NULL);
				if (rc != 0)
					return rc;
			}
	return 0;
}

static int list_pmu_event(const char *event, const char *terms, void *arg)
{
	struct walk *w = arg;
	struct evcatalog_entry e;
	char name[EVSPEC_NAME_MAX];

	(void)terms;
	snprintf(name, sizeof name, "%s/%s/", w->cur_pmu, event);
	e.name = name;
	e.alias = NULL;
	e.kind = EVSPEC_PMU;
	e.pmu = w->cur_pmu;
	e.desc = "Kernel PMU event";
	e.available = 1;
	return emit(w, &e, event);
}

static int list_pmu(const char *pmu, uint32_t type, void *arg)
{
	struct walk *w = arg;

	(void)type;
	w->cur_pmu = pmu;
	return pmu__foreach_event(pmu, list_pmu_event, w);
}

static int list_tp_event(const char *event, void *arg)
{
	struct walk *w = arg;
	struct evcatalog_entry e;
	char name[EVSPEC_NAME_MAX], path[1024];
	struct stat st;

	if (strlen(w->cur_sys) + strlen(event) + 2 > sizeof name)
		return 0;
	/* Only directories with an id are events (not "enable", "filter"). */
	snprintf(path, sizeof path, "%s/events/%s/%s/id", w->tracefs, w->cur_sys, event);
	if (stat(path, &st) != 0)
		return 0;
	snprintf(name, sizeof name, "%s:%s", w->cur_sys, event);
	e.name = name;
	e.alias = NULL;
	e.kind = EVSPEC_TRACEPOINT;
	e.pmu = "tracepoint";
	e.desc = "Tracepoint event";
	e.available = 1;
	return emit(w, &e, event);
}

static int list_tp_sys(const char *sys, void *arg)
{
	struct walk *w = arg;
	char dir[1024];
	struct stat st;

	snprintf(dir, sizeof dir, "%s/events/%s", w->tracefs, sys);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	w->cur_sys = sys;
	return foreach_dir(dir, list_tp_event, w);
}

static int list_tracepoints(struct walk *w)
{
	char dir[1024];
	int rc;

	if (w->only_kind >= 0 && w->only_kind != EVSPEC_TRACEPOINT)
		return 0;
	w->tracefs = perf_sys__tracefs();
	if (w->tracefs == NULL)
		return 0;
	snprintf(dir, sizeof dir, "%s/events", w->tracefs);
	rc = foreach_dir_sorted(dir, list_tp_sys, w, system_order);
	/* Unreadable tracefs (not root): no tracepoints to list. */
	return rc < 0 ? 0 : rc;
}

static int list_descriptors(struct walk *w)
{
	struct evcatalog_entry raw = { "rNNN", NULL, EVSPEC_RAW, "cpu",
				       "Raw hardware event descriptor", 1 };
	struct evcatalog_entry pmu = { "pmu/t1=v1[,t2=v2,t3 ...]/modifier", NULL,
				       EVSPEC_PMU, NULL, "Raw hardware event descriptor", 1 };
	struct evcatalog_entry bp = { "mem:<addr>[/len][:access]", NULL, EVSPEC_BREAKPOINT,
				      "breakpoint", "Hardware breakpoint", 1 };
	struct perf_event_attr a;
	int rc;

	memset(&a, 0, sizeof a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	if (w->only_kind < 0 || w->only_kind == EVSPEC_RAW)
		raw.available = evcatalog__opens(&a);
	if ((rc = emit(w, &raw, NULL)) != 0 || (rc = emit(w, &pmu, NULL)) != 0)
		return rc;
	return emit(w, &bp, NULL);
}

static int kind_word(const char *p)
{
	static const struct { const char *word; int kind; } words[] = {
		{ "hw", EVSPEC_HARDWARE }, { "hardware", EVSPEC_HARDWARE },
		{ "sw", EVSPEC_SOFTWARE }, { "software", EVSPEC_SOFTWARE },
		{ "cache", EVSPEC_CACHE }, { "hwcache", EVSPEC_CACHE },
		{ "pmu", EVSPEC_PMU }, { "tracepoint", EVSPEC_TRACEPOINT },
		{ "raw", EVSPEC_RAW }, { "breakpoint", EVSPEC_BREAKPOINT },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(words); i++)
		if (strcmp(p, words[i].word) == 0)
			return words[i].kind;
	return -1;
}

int evcatalog__foreach(const char *pattern,
		       int (*fn)(const struct evcatalog_entry *e, void *arg), void *arg)
{
	struct walk w;
	char glob[EVSPEC_NAME_MAX + 3];
	int rc;

	memset(&w, 0, sizeof w);
	w.fn = fn;
	w.arg = arg;
	w.only_kind = -1;
	if (pattern != NULL && pattern[0] != '\0') {
		w.only_kind = kind_word(pattern);
		if (w.only_kind < 0) {
			if (strlen(pattern) > EVSPEC_NAME_MAX - 1)
				return -E2BIG;
			/* As perf list: the pattern matches anywhere in a name. */
			snprintf(glob, sizeof glob, "*%s*", pattern);
			w.pattern = glob;
		}
	}
	if ((rc = list_symbols(&w)) != 0 || (rc = list_cache(&w)) != 0)
		return rc;
	/* No sysfs PMU directory: nothing to list from it, not an error. */
	if ((rc = pmu__foreach(list_pmu, &w)) > 0 || (rc = list_descriptors(&w)) != 0)
		return rc;
	return list_tracepoints(&w);
}
