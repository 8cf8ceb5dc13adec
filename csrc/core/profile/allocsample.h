/*
 * Sampling of memory allocations, Go's heap profiler's way: one sample per
 * `rate` bytes allocated on average, at exponentially distributed
 * intervals, so every byte has the same chance of being the one sampled.
 * An allocation of size s is sampled with probability 1 - exp(-s/rate)
 * and a sample weighs s / (1 - exp(-s/rate)) bytes: the sum of the
 * weights estimates the bytes allocated without bias, small allocations
 * and large ones alike.
 *
 * The owner counts every allocation (allocsample__count, inline: one
 * subtraction) and takes the sampled ones, which are tracked from then on:
 * their weight waits ("unplaced") until the owner knows their stack and
 * places them there.  However long that takes (LuaJIT runs no hook inside
 * a compiled trace), every sampled block is tracked.  The owner reports
 * every block that moves or is freed when it may be a tracked one, so the
 * sampled blocks still allocated ("live") are known at any time.  Whether
 * it may be is one load (allocsample__may_track): a count of the tracked
 * blocks per hash bucket of their address, so a free of anything else
 * (nearly all of them) looks nothing up.
 * Implemented in allocsample.c.  Plain C, no Lua, no signal context.
 */
#ifndef LUAPERF_ALLOCSAMPLE_H
#define LUAPERF_ALLOCSAMPLE_H

#include <stddef.h>
#include <stdint.h>

#define ALLOCSAMPLE_BUCKET_BITS 11
/* The tag of a tracked block the owner has not placed yet. */
#define ALLOCSAMPLE_UNPLACED SIZE_MAX
/* At most this many blocks wait to be placed; the weight of samples past
 * it still waits, their blocks are not tracked. */
#define ALLOCSAMPLE_UNPLACED_MAX (1u << 20)

struct allocsample_live {
	uintptr_t ptr;                /* 0: empty slot */
	uint64_t weight;
	size_t tag;                   /* the owner's (a stack's index), or UNPLACED */
};

struct allocsample {
	uint64_t rate;
	int64_t left;                 /* bytes until the next sample */
	/* Every byte counted is done + (interval - left): the intervals drawn
	 * before the current one, and what the current one consumed, so that
	 * counting is one subtraction. */
	int64_t interval;             /* the current interval as drawn */
	uint64_t done;
	int64_t paused_left;          /* while paused: left */
	int paused;
	uint64_t rng;
	uint64_t samples;
	/* the weight of samples not placed yet, and their blocks' addresses
	 * (some since freed or moved: a moved block is listed again) */
	uint64_t unplaced;
	uintptr_t *unplaced_ptr;
	size_t nunplaced, unplaced_cap;
	struct allocsample_live *live;   /* open addressing by ptr */
	size_t nlive, live_cap;
	/* the tracked blocks per bucket of their address */
	uint32_t tracked[1u << ALLOCSAMPLE_BUCKET_BITS];
};

/* rate: mean bytes between samples (> 0); seed: any value.  0 or -EINVAL. */
int allocsample__init(struct allocsample *a, uint64_t rate, uint64_t seed);
void allocsample__fini(struct allocsample *a);

/* Counts n bytes allocated; true when this allocation is to be sampled
 * (then call allocsample__take). */
static inline int allocsample__count(struct allocsample *a, uint64_t n)
{
	a->left -= (int64_t)n;
	return a->left < 0;
}

/* Every byte counted since init or reset (exact). */
uint64_t allocsample__bytes(const struct allocsample *a);

/* While paused (the owner's own allocations), counting counts nothing and
 * samples nothing; frees and moves are still reported. */
void allocsample__pause(struct allocsample *a);
void allocsample__resume(struct allocsample *a);

/* Samples the allocation of size bytes at ptr (unplaced until placed)
 * and draws the next interval. */
void allocsample__take(struct allocsample *a, uintptr_t ptr, uint64_t size);

/* A block address hashed (blocks are 16-byte aligned): the buckets take
 * its top bits, the live table its middle ones. */
static inline uint64_t allocsample__hash(uintptr_t ptr)
{
	return ((uint64_t)ptr >> 4) * UINT64_C(0x9e3779b97f4a7c15);
}

static inline size_t allocsample__bucket(uintptr_t ptr)
{
	return (size_t)(allocsample__hash(ptr) >> (64 - ALLOCSAMPLE_BUCKET_BITS));
}

/* Whether the block at ptr may be a tracked one: only then does its free
 * or move need reporting. */
static inline int allocsample__may_track(const struct allocsample *a, uintptr_t ptr)
{
	return a->tracked[allocsample__bucket(ptr)] != 0;
}

/* The block at from moved to to (a realloc), or was freed (to == 0). */
void allocsample__moved(struct allocsample *a, uintptr_t from, uintptr_t to);

/* The weight of the samples not placed yet. */
static inline uint64_t allocsample__unplaced(const struct allocsample *a)
{
	return a->unplaced;
}

/* Places the samples not placed yet (their weight is the owner's to
 * charge): their blocks still allocated get the owner's tag. */
void allocsample__place(struct allocsample *a, size_t tag);

/* Forgets every tracked block and unplaced sample; counts start again. */
void allocsample__reset(struct allocsample *a);

#endif
