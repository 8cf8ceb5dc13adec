/*
 * The allocation sampler's bookkeeping against a model, for
 * spec/luaprofile_frames_spec.lua: random allocations, frees, moves,
 * growths in place, pauses and placements over a small pool of addresses
 * (so addresses are reused and share hash buckets), driven the way the
 * profiler's allocator shim drives it.  After each step the sampler must
 * hold exactly the model's tracked blocks (address, weight, tag), find
 * each of them may be tracked, count the model's bytes and hold its
 * unplaced weight.  Prints "ok N steps" or the first failure (exit 1).
 * Links against the core objects.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/allocsample.h"

#define POOL 400
#define RATE 700
#define STEPS 200000

struct block {
	uint64_t size;       /* 0: not allocated */
	int tracked;
	uint64_t weight;
	size_t tag;
};

static struct block model[POOL];
static uint64_t model_bytes, model_unplaced;
static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static uintptr_t addr_of(size_t i)
{
	return 0x7f0000100000ULL + (uintptr_t)i * 48;
}

static size_t pick(int allocated)
{
	size_t i, tries;
	for (tries = 0; tries < 64; tries++) {
		i = (size_t)(next() % POOL);
		if ((model[i].size != 0) == allocated)
			return i;
	}
	return SIZE_MAX;
}

static uint64_t weight_of(uint64_t size)
{
	double r = RATE, s = (double)size;
	return (uint64_t)(s / -expm1(-s / r) + 0.5);
}

/* What the shim does with grow bytes allocated at block i. */
static void count(struct allocsample *a, size_t i, uint64_t grow, int paused)
{
	if (grow == 0 || !allocsample__count(a, grow))
		return;
	if (paused) {
		printf("FAIL a sample while paused\n");
		exit(1);
	}
	allocsample__take(a, addr_of(i), grow);
	model_unplaced += weight_of(grow);
	if (model[i].tracked) {
		model[i].weight += weight_of(grow);
	} else {
		model[i].tracked = 1;
		model[i].weight = weight_of(grow);
		model[i].tag = ALLOCSAMPLE_UNPLACED;
	}
}

static void check(const struct allocsample *a, long step)
{
	size_t i, n = 0, j;
	uint64_t buckets = 0;

	for (i = 0; i < POOL; i++) {
		if (!model[i].tracked)
			continue;
		n++;
		if (!allocsample__may_track(a, addr_of(i))) {
			printf("FAIL step %ld: block %zu tracked but not in its bucket\n", step, i);
			exit(1);
		}
	}
	for (j = 0; j < (size_t)1 << ALLOCSAMPLE_BUCKET_BITS; j++)
		buckets += a->tracked[j];
	if (n != a->nlive || buckets != n) {
		printf("FAIL step %ld: %zu tracked in the model, %zu live, %llu in buckets\n",
		       step, n, a->nlive, (unsigned long long)buckets);
		exit(1);
	}
	for (j = 0; j < a->live_cap; j++) {
		uintptr_t p = a->live[j].ptr;
		size_t k;
		if (p == 0)
			continue;
		k = (size_t)((p - addr_of(0)) / 48);
		if (k >= POOL || addr_of(k) != p || !model[k].tracked ||
		    model[k].weight != a->live[j].weight || model[k].tag != a->live[j].tag) {
			printf("FAIL step %ld: live entry %#llx differs from the model\n", step,
			       (unsigned long long)p);
			exit(1);
		}
	}
	if (allocsample__bytes(a) != model_bytes || allocsample__unplaced(a) != model_unplaced) {
		printf("FAIL step %ld: bytes %llu (model %llu), unplaced %llu (model %llu)\n", step,
		       (unsigned long long)allocsample__bytes(a), (unsigned long long)model_bytes,
		       (unsigned long long)allocsample__unplaced(a),
		       (unsigned long long)model_unplaced);
		exit(1);
	}
}

int main(void)
{
	struct allocsample a;
	long step, samples = 0;
	int paused = 0;

	if (allocsample__init(&a, RATE, 42) < 0)
		return 1;
	for (step = 0; step < STEPS; step++) {
		unsigned op = (unsigned)(next() % 100);
		size_t i, k;
		uint64_t size = 1 + next() % (next() % 8 == 0 ? 20000 : 300);
		uint64_t before = a.samples;

		if (op < 40) {                        /* allocate */
			if ((i = pick(0)) == SIZE_MAX)
				continue;
			model[i].size = size;
			if (!paused)
				model_bytes += size;
			count(&a, i, size, paused);
		} else if (op < 75) {                 /* free */
			if ((i = pick(1)) == SIZE_MAX)
				continue;
			if (allocsample__may_track(&a, addr_of(i)))
				allocsample__moved(&a, addr_of(i), 0);
			memset(&model[i], 0, sizeof model[i]);
		} else if (op < 85) {                 /* grow or shrink in place */
			if ((i = pick(1)) == SIZE_MAX)
				continue;
			if (size > model[i].size && !paused)
				model_bytes += size - model[i].size;
			if (size > model[i].size)
				count(&a, i, size - model[i].size, paused);
			model[i].size = size;
		} else if (op < 93) {                 /* move (realloc elsewhere) */
			uint64_t old;
			if ((i = pick(1)) == SIZE_MAX || (k = pick(0)) == SIZE_MAX)
				continue;
			old = model[i].size;
			if (allocsample__may_track(&a, addr_of(i)))
				allocsample__moved(&a, addr_of(i), addr_of(k));
			model[k] = model[i];
			model[k].size = size;
			memset(&model[i], 0, sizeof model[i]);
			if (size > old && !paused)
				model_bytes += size - old;
			if (size > old)
				count(&a, k, size - old, paused);
		} else if (op < 97) {                 /* a safe point places them */
			size_t tag = (size_t)(next() % 1000);
			allocsample__place(&a, tag);
			for (i = 0; i < POOL; i++)
				if (model[i].tracked && model[i].tag == ALLOCSAMPLE_UNPLACED)
					model[i].tag = tag;
			model_unplaced = 0;
		} else {                              /* the owner's own allocations */
			if (paused)
				allocsample__resume(&a);
			else
				allocsample__pause(&a);
			paused = !paused;
		}
		samples += (long)(a.samples - before);
		check(&a, step);
	}
	allocsample__fini(&a);
	if (samples < 10000) {
		printf("FAIL only %ld samples\n", samples);
		return 1;
	}
	printf("ok %d steps, %ld samples\n", STEPS, samples);
	return 0;
}
