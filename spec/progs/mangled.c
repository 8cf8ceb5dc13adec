/*
 * Functions under C++ and Rust mangled names (asm labels), so that the
 * demangler is checked against perf on a real profile without a C++ or
 * Rust toolchain: main -> C++ template -> C++ const method -> Rust legacy
 * (escapes, hash, .llvm. suffix) -> Rust v0 -> Rust v0 closure (the leaf).
 */
#include <stdlib.h>

#define NAMED(sym) __asm__(sym) __attribute__((noinline))

unsigned long v0_closure(unsigned long n) NAMED("_RNCNCNCNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal00s_0B9_");
unsigned long v0_path(unsigned long n) NAMED("_RNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal");
unsigned long legacy(unsigned long n) NAMED("_ZN9hashbrown3raw21RawTable$LT$T$C$A$GT$14reserve_rehash17h96d0009d623e926bE.llvm.7102178824584528844");
unsigned long method(unsigned long n) NAMED("_ZNK5outer5inner3Box3getEv");
unsigned long tmpl(unsigned long n) NAMED("_ZN5outer5inner5twiceIiEET_S2_");

static volatile unsigned long sink;

unsigned long v0_closure(unsigned long n)
{
	unsigned long x = n, i;
	for (i = 0; i < 3000000; i++)
		x = x * 6364136223846793005UL + i;
	return x;
}
unsigned long v0_path(unsigned long n) { return v0_closure(n) + 1; }
unsigned long legacy(unsigned long n) { return v0_path(n) + 1; }
unsigned long method(unsigned long n) { return legacy(n) + 1; }
unsigned long tmpl(unsigned long n) { return method(n) + 1; }

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 100;
	for (i = 0; i < n; i++)
		sink += tmpl((unsigned long)i);
	return 0;
}
