/*
 * Touches N fresh pages (argv[1], default 1000), so page-faults grows by
 * about N, and exits with argv[2] (default 0): the counting specs compare
 * its counts with perf stat.  Kept from transparent huge pages, which
 * would map 512 of them in one fault on a host that has them always on.
 */
#include <stdlib.h>
#include <sys/mman.h>
int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000, i;
  char *p;
  if (n <= 0) return 0;
  p = mmap(0, n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 1;
  madvise(p, n * 4096, MADV_NOHUGEPAGE);
  for (i = 0; i < n; i++) p[i * 4096] = 1;
  return argc > 2 ? atoi(argv[2]) : 0;
}
