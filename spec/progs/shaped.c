/*
 * A program with a deliberately shaped call tree, for flame graph and
 * report tests (the one of seeds/flame-graphs-and-stack-sampling.txt):
 *
 *   server_loop -> do_query  -> parse_row -> leaf_alloc
 *                            -> parse_row -> leaf_hash
 *                            -> index_row -> leaf_hash
 *               -> do_ingest -> leaf_io
 *                            -> leaf_alloc
 *
 * usage: shaped [rounds [quarters]]
 *   rounds   how many server_loop rounds (default 200, ~0.2 s)
 *   quarters how many quarters of the row parse_row hashes (default 1;
 *            4 is the seed text's one-line regression, the whole row;
 *            larger ones make the same regression stand out of the
 *            sampling noise in short test runs)
 *
 * Built with -fno-omit-frame-pointer, frame-pointer chains still lose
 * parse_row (leaf_alloc and leaf_hash have no frame) and index_row (a
 * tail call), as the seed text measured.
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;
static long quarters = 1;
static volatile long row_size = 200000;

NOINLINE static unsigned long leaf_alloc(long n)
{
	unsigned long h = 0;
	for (long i = 0; i < n; i++)
		h = h * 31 + (unsigned long)i;
	return h;
}

/*
 * -DLEAF_FRAMES gives leaf_hash a stack frame (a buffer larger than the red
 * zone), so frame-pointer chains keep its caller: parse_row's and
 * index_row's calls then show as two paths (the differential test).
 */
NOINLINE static unsigned long leaf_hash(long n)
{
	unsigned long h = 5381;
#ifdef LEAF_FRAMES
	volatile unsigned long spill[32];
	spill[n & 31] = h;
#endif
	for (long i = 0; i < n; i++)
		h = (h << 5) + h + (unsigned long)(i & 0xff);
	return h;
}

NOINLINE static unsigned long leaf_io(long n)
{
	unsigned long h = 1;
	for (long i = 0; i < n; i++)
		h ^= h * 7 + (unsigned long)i;
	return h;
}

NOINLINE static unsigned long parse_row(long n)
{
	unsigned long a = leaf_alloc(n);
	return a + leaf_hash(n / 4 * quarters);
}

NOINLINE static unsigned long index_row(long n)
{
	return leaf_hash(n);
}

NOINLINE static unsigned long do_query(long n)
{
	return parse_row(n) + index_row(n / 2);
}

NOINLINE static unsigned long do_ingest(long n)
{
	return leaf_io(n / 4) + leaf_alloc(n / 8);
}

NOINLINE static void server_loop(long rounds)
{
	/* the volatile size keeps GCC from hoisting the pure calls */
	for (long r = 0; r < rounds; r++) {
		sink += do_query(row_size);
		sink += do_ingest(row_size);
	}
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 200;
	quarters = argc > 2 ? atol(argv[2]) : 1;
	if (quarters <= 0)
		quarters = 1;
	if (rounds <= 0)
		rounds = 200;
	server_loop(rounds);
	return sink == 42 ? 1 : 0;
}
