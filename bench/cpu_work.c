/*
 * A CPU-bound program that reports its own run time, for the recording
 * overhead benchmark (bench/record_overhead.sh): a few functions deep so
 * fp call chains have something to walk, fixed work, wall seconds printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long mix(unsigned long x)
{
	for (int i = 0; i < 64; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) static void row(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += mix(i);
}

__attribute__((noinline)) static void work(unsigned long rounds)
{
	for (unsigned long r = 0; r < rounds; r++)
		row(10000);
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	work(rounds);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.6f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}
