/*
 * Threads for the DWARF unwinding tests (spec/dwarf_spec.lua): three
 * threads and main run the same loop through libc (malloc, memset, free),
 * so thread stacks end in clone3 and main's in _start.
 *
 *   usage: dwarf_threads [ROUNDS]
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;
static long rounds = 3000;
/* Called through a pointer so the compiler cannot inline it: the stacks
 * must pass through libc. */
static void *(*volatile fill)(void *, int, size_t) = memset;

NOINLINE static void fill_pages(int n)
{
	char *p = malloc(4096);
	if (!p)
		return;
	for (int i = 0; i < n; i++) {
		fill(p, i, 4096);
		sink += (unsigned long)p[i & 4095];
	}
	free(p);
}

NOINLINE static void *worker(void *arg)
{
	for (long r = 0; r < rounds; r++)
		fill_pages(200);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t[3];
	int started = 0;

	if (argc > 1 && atol(argv[1]) > 0)
		rounds = atol(argv[1]);
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) == 0)
			started++;
	worker(NULL);
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	return sink == 42;
}
