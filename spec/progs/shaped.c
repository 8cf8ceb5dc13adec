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
 * usage: shaped [rounds [regress]]
 *   rounds   how many server_loop rounds (default 200, ~0.2 s)
 *   regress  1: parse_row hashes the whole row instead of a quarter (the
 *            one-line regression of the seed text's differential)
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;
static int regress;

NOINLINE static unsigned long leaf_alloc(long n)
{
	unsigned long h = 0;
	for (long i = 0; i < n; i++)
		h = h * 31 + (unsigned long)i;
	return h;
}

NOINLINE static unsigned long leaf_hash(long n)
{
	unsigned long h = 5381;
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
	return a + leaf_hash(regress ? n : n / 4);
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
	for (long r = 0; r < rounds; r++) {
		sink += do_query(200000);
		sink += do_ingest(200000);
	}
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 200;
	regress = argc > 2 ? atoi(argv[2]) : 0;
	if (rounds <= 0)
		rounds = 200;
	server_loop(rounds);
	return sink == 42 ? 1 : 0;
}
