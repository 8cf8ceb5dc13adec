/*
 * base/bigmem.h and the tables built on it, at sizes past BIGMEM_MIN
 * (spec/pipeline_spec.lua): contents kept across every growth (malloc to
 * a mapping, mremap), calloc's zeroes, the huge-page advice on a mapped
 * block (its VMA's "hg" flag in /proc/self/smaps), u64map and keytab with
 * millions of keys.  With the argument "prefault", all of it with
 * bigmem__prefault's helper running, and: a block nobody touches gets its
 * pages faulted in (mincore), blocks written while the helper touches
 * them keep every word, a forked child allocates without the helper.
 * Prints "name=value" pairs; exits 1 on the first broken check.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/bigmem.h"
#include "base/keytab.h"
#include "base/slots.h"
#include "base/u64map.h"

#define CHECK(c) do { if (!(c)) { printf("FAIL %s:%d %s\n", __FILE__, __LINE__, #c); exit(1); } } while (0)

/* Whether the mapping holding p carries the huge-page advice (VmFlags hg). */
static int advised(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0, hg = -1;
	uintptr_t a = (uintptr_t)p;

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		uintptr_t lo, hi;
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2 && strchr(line, ' ') &&
		    line[strspn(line, "0123456789abcdef")] == '-') {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			hg = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	return hg;
}

static uint64_t word(size_t i)
{
	return (uint64_t)i * UINT64_C(0x9e3779b97f4a7c15) ^ 0x5a5a;
}

/* Resident pages of [p + 2 MiB, p + len): past the huge page that holds
 * bigmem's header, which the caller wrote; *all: how many pages that is. */
static size_t resident(const char *p, size_t len, size_t *all)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), n, i, r = 0;
	uintptr_t a = ((uintptr_t)p + BIGMEM_MIN + pg - 1) & ~(uintptr_t)(pg - 1);
	unsigned char *v;

	n = ((uintptr_t)p + len - a) / pg;
	CHECK((v = malloc(n + 1)) != NULL && mincore((void *)a, n * pg, v) == 0);
	for (i = 0; i < n; i++)
		r += v[i] & 1;
	free(v);
	*all = n;
	return r;
}

/* Blocks written word by word while the helper may be touching them, grown
 * and freed: every word stays. */
static void written_under_helper(void)
{
	size_t round, i;

	for (round = 0; round < 12; round++) {
		size_t n = (((size_t)4 + round % 4 * 4) << 20) / sizeof(uint64_t);
		uint64_t *b = bigmem__malloc(n * sizeof *b), *g;
		CHECK(b != NULL);
		for (i = 0; i < n; i++)
			b[i] = word(i + round);
		g = bigmem__realloc(b, 2 * n * sizeof *b);
		CHECK(g != NULL);
		for (i = n; i < 2 * n; i++)
			g[i] = word(i + round);
		for (i = 0; i < 2 * n; i++)
			CHECK(g[i] == word(i + round));
		bigmem__free(g);
	}
}

/* An untouched 32 MiB block: its pages resident within 5 s (helper) or
 * still out after 0.2 s (none); 1 resident, 0 not. */
static int untouched_faulted_in(void)
{
	size_t len = (size_t)32 << 20, k, in = 0, want = 1;
	char *b = bigmem__malloc(len);

	CHECK(b != NULL);
	for (k = 0; k < 500; k++) {
		struct timespec t = { 0, 10 * 1000 * 1000 };
		if ((in = resident(b, len, &want)) == want)
			break;
		if (k == 20 && in == 0)
			break;   /* no helper at work */
		nanosleep(&t, NULL);
	}
	bigmem__free(b);
	return in == want;
}

int main(int argc, char **argv)
{
	size_t n = 128, have = 0, i, mapped_at = 0;
	uint64_t *a = NULL, *z;
	struct u64map m;
	struct keytab *kt;
	int hg = -1;

	if (argc > 1 && !strcmp(argv[1], "prefault")) {
		pid_t pid;
		int status;
		CHECK(bigmem__prefault(1) == 0);
		CHECK(bigmem__prefault(1) == 0);   /* idempotent */
		written_under_helper();
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			/* no helper here; a lock the helper held is free */
			alarm(20);
			written_under_helper();
			_exit(untouched_faulted_in() ? 3 : 0);
		}
		CHECK(waitpid(pid, &status, 0) == pid);
		printf("child=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status));
	}
	if (bigmem__mapped(a = bigmem__malloc(BIGMEM_MIN)))
		printf("faulted_in=%d\n", untouched_faulted_in());
	bigmem__free(a);
	a = NULL;

	/* 1 KiB to 64 MiB by doubling: every word written stays */
	for (; n <= ((size_t)64 << 20) / sizeof *a; n *= 2) {
		uint64_t *b = bigmem__realloc(a, n * sizeof *a);
		CHECK(b != NULL);
		a = b;
		for (i = 0; i < have; i++)
			CHECK(a[i] == word(i));
		for (i = have; i < n; i++)
			a[i] = word(i);
		have = n;
		if (bigmem__mapped(a) && !mapped_at) {
			mapped_at = n * sizeof *a;
			hg = advised(a);
		}
	}
	CHECK(!bigmem__mapped(a) || hg != -1);
	printf("grow=ok mapped_at=%zu advised=%d mapped=%d\n", mapped_at, hg, bigmem__mapped(a));
	/* shrinking keeps the first bytes */
	a = bigmem__realloc(a, 1000 * sizeof *a);
	CHECK(a != NULL);
	for (i = 0; i < 1000; i++)
		CHECK(a[i] == word(i));
	bigmem__free(a);

	/* calloc: zeroes, big and small; malloc of nothing */
	z = bigmem__calloc((size_t)3 << 20, sizeof *z);
	CHECK(z != NULL);
	for (i = 0; i < ((size_t)3 << 20); i += 511)
		CHECK(z[i] == 0);
	bigmem__free(z);
	z = bigmem__calloc(10, sizeof *z);
	CHECK(z != NULL && z[9] == 0 && !bigmem__mapped(z));
	bigmem__free(z);
	CHECK(bigmem__calloc(SIZE_MAX / 4, 8) == NULL);
	/* recalloc: zeroes past the old size, in a mapping shrunk in place
	 * (its old bytes still there), grown by mremap, and from malloc */
	{
		unsigned char *r = bigmem__malloc((size_t)8 << 20);
		size_t k;
		CHECK(r != NULL);
		memset(r, 0xab, (size_t)8 << 20);
		CHECK((r = bigmem__realloc(r, (size_t)1 << 20)) != NULL);
		CHECK((r = bigmem__recalloc(r, (size_t)6 << 20)) != NULL);
		CHECK((r = bigmem__recalloc(r, (size_t)20 << 20)) != NULL);
		for (k = 0; k < ((size_t)20 << 20); k += 509)
			CHECK(r[k] == (k < ((size_t)1 << 20) ? 0xab : 0));
		bigmem__free(r);
		CHECK((r = bigmem__malloc(1000)) != NULL);
		memset(r, 0xcd, 1000);
		CHECK((r = bigmem__recalloc(r, 5000)) != NULL);
		CHECK((r = bigmem__recalloc(r, (size_t)3 << 20)) != NULL);
		for (k = 0; k < ((size_t)3 << 20); k += 7)
			CHECK(r[k] == (k < 1000 ? 0xcd : 0));
		bigmem__free(r);
	}
	bigmem__free(NULL);
	printf("calloc=ok\n");

	/* u64map: 3M keys (48 MiB of slots by the end) */
	u64map__init(&m);
	for (i = 0; i < 3000000; i++) {
		int added;
		uint32_t *v = u64map__insert(&m, word(i), (uint32_t)i, &added);
		CHECK(v != NULL && added);
	}
	for (i = 0; i < 3000000; i++) {
		uint32_t *v = u64map__find(&m, word(i));
		CHECK(v != NULL && *v == (uint32_t)i);
	}
	CHECK(u64map__find(&m, word(3000001)) == NULL);
	printf("u64map=ok slots=%zu mapped=%d\n", m.nslots, bigmem__mapped(m.slots));
	u64map__exit(&m);

	/* slots__grow in place: indexes up to half full, their homes bunched
	 * at the top so runs go round the end, grown five times each; every
	 * slot found from its home after each growth, none lost */
	{
		uint64_t seed = 88172645463325252u;
		size_t t, trials = 0;
		for (t = 0; t < 3000; t++) {
			size_t ns = (size_t)16 << (t % 5), k, fill, g;
			uint64_t *sl = bigmem__calloc(ns, sizeof *sl), sum = 0;
			CHECK(sl != NULL);
			fill = ns / 2 - (t % 3);
			for (k = 0; k < fill; k++) {
				uint64_t top, v;
				size_t j;
				seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
				/* high bits all ones but a few, and one of bits 4-15
				 * cleared half the time: homes near the end of the old
				 * size, in the top or the bottom half of the new one;
				 * one in four anywhere */
				top = (seed & 3) ? UINT32_MAX - (seed >> 40 & 15) : seed >> 32;
				if ((seed & 3) && (seed >> 8 & 1))
					top &= ~(UINT64_C(1) << (4 + (seed >> 12) % 12));
				v = top << 32 | (k + 1);
				for (j = SLOTS_HOME(v, ns); sl[j]; j = (j + 1) & (ns - 1))
					;
				sl[j] = v;
				sum += v;
			}
			for (g = 0; g < 5; g++) {
				size_t i, found = 0;
				uint64_t got = 0;
				CHECK(slots__grow(&sl, &ns) == 0);
				for (i = 0; i < ns; i++) {
					size_t j;
					if (!sl[i])
						continue;
					found++;
					got += sl[i];
					for (j = SLOTS_HOME(sl[i], ns); sl[j] && sl[j] != sl[i]; j = (j + 1) & (ns - 1))
						;
					CHECK(sl[j] == sl[i]);
				}
				CHECK(found == fill && got == sum);
			}
			bigmem__free(sl);
			trials++;
		}
		printf("slots=ok trials=%zu\n", trials);
	}

	/* keytab: 1M strings */
	kt = keytab__new();
	CHECK(kt != NULL);
	for (i = 0; i < 1000000; i++) {
		char s[32];
		uint32_t id;
		int added;
		snprintf(s, sizeof s, "frame_%zu", i);
		CHECK(keytab__intern(kt, s, strlen(s), &id, &added) == 0 && added && id == i);
	}
	for (i = 0; i < 1000000; i += 7) {
		char s[32];
		uint32_t id;
		size_t len;
		snprintf(s, sizeof s, "frame_%zu", i);
		CHECK(keytab__find(kt, s, strlen(s), &id) == 0 && id == i);
		CHECK(!strcmp(keytab__key(kt, id, &len), s) && len == strlen(s));
	}
	printf("keytab=ok count=%zu\n", keytab__count(kt));
	keytab__delete(kt);
	CHECK(bigmem__prefault(0) == 0);
	CHECK(bigmem__prefault(0) == 0);
	return 0;
}
