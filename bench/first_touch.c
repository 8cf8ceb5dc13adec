/*
 * What this VM charges for memory: 400 MB mapped and written one byte a
 * page (the kernel's page faults, zeroing included), then memset over the
 * same pages, three rounds.  The first round's pages are new to the guest
 * and slow; later rounds get pages the guest has used before.  Reports on
 * system-wide files spend most of their kernel time zeroing fresh pages
 * (clear_page_erms), so how fast that is decides part of every ratio.
 * With the argument "small" the pages are not advised for huge pages: a
 * fault per 4 KiB, what glibc's heap costs without glibc.malloc.hugetlb.
 *   cc -O2 -o build/first_touch bench/first_touch.c && build/first_touch [small]
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const size_t n = (size_t)400 << 20;
	int small = argc > 1 && !strcmp(argv[1], "small");
	int r;

	for (r = 0; r < 3; r++) {
		double t0 = now(), t1, t2;
		char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		size_t i;

		if (p == MAP_FAILED)
			return 1;
		if (!small)
			madvise(p, n, MADV_HUGEPAGE);
		for (i = 0; i < n; i += 4096)
			p[i] = 1;
		t1 = now();
		memset(p, 0, n);
		t2 = now();
		munmap(p, n);
		printf("round %d (%s pages): first touch %.0f MB/s, memset %.0f MB/s\n", r + 1,
		       small ? "4 KiB" : "2 MiB", 400 / (t1 - t0), 400 / (t2 - t1));
	}
	return 0;
}
