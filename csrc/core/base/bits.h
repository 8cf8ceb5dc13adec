/* Bit counts of sample_type and register masks, once per record. */
#ifndef LUAPERF_BITS_H
#define LUAPERF_BITS_H

#include <stdint.h>

/* The set bits of x.  __builtin_popcountll is a libgcc call on the
 * x86-64 baseline (no POPCNT instruction); this is a few instructions. */
static inline unsigned bits_count(uint64_t x)
{
	x -= (x >> 1) & UINT64_C(0x5555555555555555);
	x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
	x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
	return (unsigned)((x * UINT64_C(0x0101010101010101)) >> 56);
}

#endif
