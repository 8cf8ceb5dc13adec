/*
 * Symbolizer benchmark: loading libc's symbol table cold, and warm lookups
 * of unique addresses (names only, then with file:line) in this process's
 * own libc, as a report resolves them after aggregation.  Prints one line
 * per figure; bench/symbols.sh runs it and the references (nm, addr2line).
 *
 *   symbols_bench [N addresses] [addr file to write for addr2line] [another ELF to load]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "symbol/symbolizer.h"
#include "symbol/dso.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* 9 passes resolving all addrs: addresses/s of the median and the best
 * pass (the machine is shared: the best is the least disturbed). */
static double lookups(struct symbolizer *s, const uint64_t *addrs, size_t n, unsigned flags,
		      struct sym_result *out, size_t *resolved, double *best)
{
	double t[9];
	int i;

	for (i = 0; i < 9; i++) {
		double t0 = now();
		*resolved = symbolizer__resolve_many(s, (uint32_t)getpid(), addrs, n, flags, out, NULL);
		t[i] = now() - t0;
	}
	qsort(t, 9, sizeof(t[0]), cmp_double);
	*best = n / t[0];
	return n / t[4];
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 100000, i, ok;
	struct symbolizer *s = symbolizer__new();
	struct sym_map m;
	struct sym_result *res;
	uint64_t *addrs, lo = 0, hi = 0;
	const char *libc = NULL;
	double t[21];
	int rc, k;
	FILE *f = argc > 2 ? fopen(argv[2], "w") : NULL;

	if (s == NULL || symbolizer__load_proc(s, (uint32_t)getpid()) != 0)
		return 1;
	/* libc's text mapping: where &printf lives. */
	if (symbolizer__find_map(s, (uint32_t)getpid(), (uint64_t)(uintptr_t)&printf, &m) != 0)
		return 1;
	libc = m.path;
	lo = m.start;
	hi = m.end;

	/* Cold loads of libc's symbol table (a fresh cache each time). */
	for (k = 0; k < 21; k++) {
		struct dso_cache *c = dso_cache__new();
		int err = 0;
		double t0 = now();
		struct dso *d = dso_cache__get(c, libc, NULL, 0, &err);
		t[k] = now() - t0;
		if (d == NULL)
			return 1;
		if (k == 0)
			printf("libc: %s, %zu function symbols, debug file %s\n", libc, d->syms.n,
			       d->debug_path ? d->debug_path : "none");
		dso_cache__delete(c);
	}
	qsort(t, 21, sizeof(t[0]), cmp_double);
	printf("load_ms %.3f (median of 21 cold loads, min %.3f)\n", t[10] * 1e3, t[0] * 1e3);
	if (argc > 3) {
		size_t nsyms = 0;
		for (k = 0; k < 21; k++) {
			struct dso_cache *c = dso_cache__new();
			int err = 0;
			double t0 = now();
			struct dso *d = dso_cache__get(c, argv[3], NULL, 0, &err);
			t[k] = now() - t0;
			if (d == NULL)
				return 1;
			nsyms = d->syms.n;
			dso_cache__delete(c);
		}
		qsort(t, 21, sizeof(t[0]), cmp_double);
		printf("load_ms_other %.3f (%s, %zu symbols, median of 21, min %.3f)\n", t[10] * 1e3,
		       argv[3], nsyms, t[0] * 1e3);
	}

	/* n unique addresses spread over libc's text. */
	addrs = malloc(n * sizeof(*addrs));
	res = malloc(n * sizeof(*res));
	if (addrs == NULL || res == NULL)
		return 1;
	for (i = 0; i < n; i++)
		addrs[i] = lo + (uint64_t)((double)i / n * (double)(hi - lo));
	if (f != NULL) {
		for (i = 0; i < n; i++) {
			uint64_t va = 0;
			if (symbolizer__elf_addr(s, (uint32_t)getpid(), addrs[i], &va, NULL, NULL) == 0)
				fprintf(f, "0x%llx\n", (unsigned long long)va);
		}
		fclose(f);
	}
	/* First pass: binds the mapping, loads symbols and DWARF (cold). */
	{
		double t0 = now();
		ok = symbolizer__resolve_many(s, (uint32_t)getpid(), addrs, n, SYM_NAMES, res, NULL);
		printf("first_pass_names_ms %.2f (%zu of %zu resolved)\n", (now() - t0) * 1e3, ok, n);
		t0 = now();
		symbolizer__resolve_many(s, (uint32_t)getpid(), addrs, n, SYM_LINES, res, NULL);
		printf("first_pass_lines_ms %.2f\n", (now() - t0) * 1e3);
	}
	{
		double med, best;
		med = lookups(s, addrs, n, SYM_NAMES, res, &ok, &best);
		printf("names_per_s median %.0f best %.0f (%zu unique addresses, warm, resolved %zu)\n",
		       med, best, n, ok);
		med = lookups(s, addrs, n, SYM_LINES, res, &ok, &best);
		printf("lines_per_s median %.0f best %.0f\n", med, best);
	}
	{
		size_t with_line = 0;
		for (i = 0; i < n; i++)
			with_line += res[i].file != NULL;
		printf("with_line %zu of %zu\n", with_line, n);
	}
	/* A report's working set: fewer unique addresses, all warm. */
	if (n > 4000) {
		double best, med = lookups(s, addrs + n / 2, 4000, SYM_LINES, res, &ok, &best);
		printf("lines_per_s_4k median %.0f best %.0f (4000 unique addresses)\n", med, best);
	}
	rc = 0;
	free(addrs);
	free(res);
	symbolizer__delete(s);
	return rc;
}
