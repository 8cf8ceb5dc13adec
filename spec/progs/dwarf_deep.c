/*
 * Deep and wide stacks for the DWARF unwinding tests (spec/dwarf_spec.lua):
 *
 *   usage: dwarf_deep DEPTH [ROUNDS]
 *
 * main -> spin_rounds -> descend(DEPTH) -> ... -> descend(0) -> burn, where
 * each descend frame holds a 256-byte buffer, so DEPTH 64 needs ~20 KiB of
 * stack: more than the default 8 KiB window (the unwind must report
 * truncation), while DEPTH 4 fits.  qsort calls back into cmp_words, so
 * some stacks pass through libc in the middle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

NOINLINE static int cmp_words(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
	for (int i = 0; i < 20; i++)
		sink += x ^ (unsigned long)i;
	return x < y ? -1 : x > y;
}

NOINLINE static void burn(void)
{
	unsigned long words[512];
	for (int i = 0; i < 512; i++)
		words[i] = (unsigned long)(i * 2654435761u) % 1000;
	qsort(words, 512, sizeof words[0], cmp_words);
	for (long i = 0; i < 20000; i++)
		sink += words[i & 511] * (unsigned long)i;
}

NOINLINE static void descend(int depth)
{
	volatile char pad[256];
	memset((char *)pad, depth, sizeof pad);
	if (depth > 0)
		descend(depth - 1);
	else
		burn();
	sink += pad[depth & 255];
}

NOINLINE static void spin_rounds(int depth, long rounds)
{
	for (long r = 0; r < rounds; r++)
		descend(depth);
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 4;
	long rounds = argc > 2 ? atol(argv[2]) : 2000;
	if (depth < 0 || depth > 10000)
		depth = 4;
	spin_rounds(depth, rounds);
	return sink == 42;
}
