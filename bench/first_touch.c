/*
 * What this VM charges for memory: 400 MB mapped and written one byte a
 * page (the kernel's page faults, zeroing included), then memset over the
 * same pages, three rounds.  The first round's pages are new to the guest
 * and slow; later rounds get pages the guest has used before.  Reports on
 * system-wide files spend most of their kernel time zeroing fresh pages
 * (clear_page_erms), so how fast that is decides part of every ratio.
 * With the argument "small" the pages are not advised for huge pages: a
 * fault per 4 KiB, what glibc's heap costs without glibc.malloc.hugetlb.
 * With "file PATH": a file in the page cache read through a mapping (every
 * 64-byte line touched) against read(2) into one 512 KiB buffer used again,
 * alternated three times: how perf.data records are read (perfdata_read.c's
 * windows).
 *   cc -O2 -o build/first_touch bench/first_touch.c &&
 *   build/first_touch [small | file PATH]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Sums one byte a 64-byte line of the file, through a mapping (map) or
 * read(2) in 512 KiB pieces; its MB/s, or -1. */
static double read_file(const char *path, int map)
{
	size_t bs = (size_t)512 << 10, i, len;
	unsigned sum = 0;
	double t0 = now();
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0)
		return -1;
	len = (size_t)st.st_size;
	if (map) {
		unsigned char *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			return -1;
		for (i = 0; i < len; i += 64)
			sum += p[i];
		munmap(p, len);
	} else {
		unsigned char *b = malloc(bs);
		ssize_t r;
		if (!b)
			return -1;
		while ((r = read(fd, b, bs)) > 0)
			for (i = 0; i < (size_t)r; i += 64)
				sum += b[i];
		free(b);
	}
	close(fd);
	if (sum == 1)   /* keeps the reads */
		putchar(' ');
	return (double)len / 1e6 / (now() - t0);
}

int main(int argc, char **argv)
{
	const size_t n = (size_t)400 << 20;
	int small = argc > 1 && !strcmp(argv[1], "small");
	int r;

	if (argc > 2 && !strcmp(argv[1], "file")) {
		for (r = 0; r < 3; r++)
			printf("round %d: %s through a mapping %.0f MB/s, read(2) %.0f MB/s\n", r + 1,
			       argv[2], read_file(argv[2], 1), read_file(argv[2], 0));
		return 0;
	}

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
