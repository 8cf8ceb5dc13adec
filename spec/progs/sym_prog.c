/*
 * A program for the symbolizer specs: named functions (global, static, one
 * recursive), each called from main, then the process stops itself
 * (SIGSTOP) so a spec can read its maps and resolve addresses.  With an
 * argument N it first burns N milliseconds of CPU time in a frame-pointer call
 * chain, for profiles; a second argument "exit" exits instead of stopping
 * (for perf record -- prog).  Built with and without -pie, and stripped with a
 * separate debug file, by spec/symbolizer_spec.lua.
 */
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#ifdef WITH_LIB
int lib_add(int a, int b);
int lib_mul(int a, int b);
#else
static int lib_add(int a, int b) { return a + b; }
static int lib_mul(int a, int b) { return a * b; }
#endif

volatile int sink;

static int leaf_static(int x)
{
	int i, s = 0;

	for (i = 0; i < x; i++)
		s += i * x;
	return s;
}

int leaf_global(int x)
{
	return leaf_static(x) ^ 0x55;
}

int recurse(int n)
{
	if (n <= 0)
		return leaf_global(3);
	return recurse(n - 1) + 1;
}

/* CPU time, so a loaded machine still gets the samples it asked for. */
static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) int burn_inner(int n)
{
	int i, s = 0;

	for (i = 0; i < n; i++)
		s += lib_mul(i, lib_add(i, 3)) + leaf_static(i & 7);
	return s;
}

__attribute__((noinline)) int burn_outer(double ms)
{
	double end = now_ms() + ms;
	int s = 0;

	while (now_ms() < end)
		s += burn_inner(2000) + recurse(5);
	return s;
}

int main(int argc, char **argv)
{
	sink = recurse(4) + lib_add(1, 2) + lib_mul(2, 3);
	if (argc > 1)
		sink += burn_outer(atof(argv[1]));
	if (argc > 2)
		return 0;
	raise(SIGSTOP);
	return 0;
}
