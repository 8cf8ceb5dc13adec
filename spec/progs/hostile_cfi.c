/*
 * Three functions whose CFI rows give rbx a crafted DWARF expression
 * (DW_CFA_val_expression through .cfi_escape), for the DWARF unwinder's
 * hostile-input spec (spec/dwarf_spec.lua):
 *   benign_div         16 / 2: an ordinary division, unwinds to main
 *   overflow_div       INT64_MIN / -1: no defined result (SIGFPE on x86-64)
 *   skip_overflow_div  the same behind a DW_OP_skip, which only libdwfl runs
 * Each spins for MS milliseconds.  Usage: hostile_cfi MS
 * Built with -O0, so the escape lands after the prologue.
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define CONST8S_INT64_MIN "0x0f,0,0,0,0,0,0,0,0x80"
#define CONST1S_MINUS_1 "0x09,0xff"

__attribute__((noinline)) void benign_div(double secs)
{
	/* rbx = lit16 lit2 div */
	__asm__ volatile(".cfi_escape 0x16,0x03,0x03,0x40,0x32,0x1b");
	double end = now() + secs;
	while (now() < end)
		sink++;
}

__attribute__((noinline)) void overflow_div(double secs)
{
	/* rbx = INT64_MIN -1 div */
	__asm__ volatile(".cfi_escape 0x16,0x03,0x0c," CONST8S_INT64_MIN "," CONST1S_MINUS_1 ",0x1b");
	double end = now() + secs;
	while (now() < end)
		sink++;
}

__attribute__((noinline)) void skip_overflow_div(double secs)
{
	/* rbx = INT64_MIN -1 skip(0) div */
	__asm__ volatile(".cfi_escape 0x16,0x03,0x0f," CONST8S_INT64_MIN "," CONST1S_MINUS_1
			 ",0x2f,0,0,0x1b");
	double end = now() + secs;
	while (now() < end)
		sink++;
}

int main(int argc, char **argv)
{
	double secs = (argc > 1 ? atof(argv[1]) : 300) / 1000;

	benign_div(secs);
	overflow_div(secs);
	skip_overflow_div(secs);
	return 0;
}
