/* Sampling of memory allocations (see allocsample.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "profile/allocsample.h"

/* xorshift64*: a uniform double in (0, 1]. */
static double uniform(struct allocsample *a)
{
	uint64_t x = a->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	a->rng = x;
	return (double)(((x * UINT64_C(2685821657736338717)) >> 11) + 1) / 9007199254740992.0;
}

/* Bytes until the next sample: exponential with mean rate. */
static void draw(struct allocsample *a)
{
	double d = -log(uniform(a)) * (double)a->rate;
	a->left = d >= 4.0e18 ? INT64_MAX / 2 : (int64_t)d;
	a->interval = a->left;
}

int allocsample__init(struct allocsample *a, uint64_t rate, uint64_t seed)
{
	if (rate == 0 || rate > (UINT64_C(1) << 62))
		return -EINVAL;
	memset(a, 0, sizeof *a);
	a->rate = rate;
	a->rng = seed ? seed : UINT64_C(0x9e3779b97f4a7c15);
	draw(a);
	return 0;
}

void allocsample__fini(struct allocsample *a)
{
	free(a->live);
	a->live = NULL;
	a->nlive = a->live_cap = 0;
	free(a->unplaced_ptr);
	a->unplaced_ptr = NULL;
	a->nunplaced = a->unplaced_cap = 0;
}

static void track(struct allocsample *a, uintptr_t ptr)
{
	a->tracked[allocsample__bucket(ptr)]++;
}

static void untrack(struct allocsample *a, uintptr_t ptr)
{
	a->tracked[allocsample__bucket(ptr)]--;
}

static size_t slot_of(const struct allocsample *a, uintptr_t ptr)
{
	return (size_t)(allocsample__hash(ptr) >> 20) & (a->live_cap - 1);
}

static struct allocsample_live *live_find(struct allocsample *a, uintptr_t ptr)
{
	size_t j;
	if (a->nlive == 0)
		return NULL;
	for (j = slot_of(a, ptr); a->live[j].ptr != 0; j = (j + 1) & (a->live_cap - 1))
		if (a->live[j].ptr == ptr)
			return &a->live[j];
	return NULL;
}

/* Linear probing's deletion: later entries of the run move back. */
static void live_remove(struct allocsample *a, struct allocsample_live *e)
{
	size_t mask = a->live_cap - 1, i = (size_t)(e - a->live), j = i, k;
	untrack(a, e->ptr);
	a->live[i].ptr = 0;
	a->nlive--;
	for (;;) {
		j = (j + 1) & mask;
		if (a->live[j].ptr == 0)
			return;
		k = slot_of(a, a->live[j].ptr);
		/* entry j may fill hole i when its home k is not in (i, j] */
		if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		a->live[i] = a->live[j];
		a->live[j].ptr = 0;
		i = j;
	}
}

/* Puts an entry in a table with room; counted: its block becomes tracked
 * (not when the table is rebuilt, where every block already is). */
static void live_put(struct allocsample *a, uintptr_t ptr, uint64_t weight, size_t tag, int counted)
{
	size_t j;
	for (j = slot_of(a, ptr); a->live[j].ptr != 0 && a->live[j].ptr != ptr;
	     j = (j + 1) & (a->live_cap - 1))
		;
	if (a->live[j].ptr == 0) {
		a->nlive++;
		if (counted)
			track(a, ptr);
	}
	a->live[j].ptr = ptr;
	a->live[j].weight = weight;
	a->live[j].tag = tag;
}

/* Room for one more entry.  0 or -ENOMEM. */
static int live_room(struct allocsample *a)
{
	size_t cap, j, oldcap = a->live_cap;
	struct allocsample_live *old = a->live, *n;

	if ((a->nlive + 1) * 2 <= a->live_cap)
		return 0;
	cap = oldcap ? oldcap * 2 : 256;
	n = calloc(cap, sizeof *n);
	if (n == NULL)
		return -ENOMEM;
	a->live = n;
	a->live_cap = cap;
	a->nlive = 0;
	for (j = 0; j < oldcap; j++)
		if (old[j].ptr != 0)
			live_put(a, old[j].ptr, old[j].weight, old[j].tag, 0);
	free(old);
	return 0;
}

/* Lists ptr as a block to place.  0 or -ENOMEM (also past the bound). */
static int unplaced_push(struct allocsample *a, uintptr_t ptr)
{
	if (a->nunplaced == a->unplaced_cap) {
		size_t cap = a->unplaced_cap ? a->unplaced_cap * 2 : 64;
		uintptr_t *n;
		if (cap > ALLOCSAMPLE_UNPLACED_MAX)
			return -ENOMEM;
		n = realloc(a->unplaced_ptr, cap * sizeof *n);
		if (n == NULL)
			return -ENOMEM;
		a->unplaced_ptr = n;
		a->unplaced_cap = cap;
	}
	a->unplaced_ptr[a->nunplaced++] = ptr;
	return 0;
}

void allocsample__take(struct allocsample *a, uintptr_t ptr, uint64_t size)
{
	double r = (double)a->rate, s = (double)size;
	uint64_t w = (uint64_t)(s / -expm1(-s / r) + 0.5);
	struct allocsample_live *e = live_find(a, ptr);
	a->samples++;
	a->done += (uint64_t)(a->interval - a->left);
	a->unplaced += w;
	if (e != NULL)
		e->weight += w;   /* a tracked block grown in place: still one block */
	else if (ptr != 0 && live_room(a) == 0 && unplaced_push(a, ptr) == 0)
		live_put(a, ptr, w, ALLOCSAMPLE_UNPLACED, 1);   /* tracked if there is room in both */
	draw(a);
}

void allocsample__moved(struct allocsample *a, uintptr_t from, uintptr_t to)
{
	struct allocsample_live *e = live_find(a, from);
	uint64_t w;
	size_t tag;

	if (e == NULL)
		return;
	w = e->weight;
	tag = e->tag;
	live_remove(a, e);
	/* a slot was just freed: room for the new place; an unplaced block
	 * is listed at it (else it is no longer tracked) */
	if (to != 0 && (tag != ALLOCSAMPLE_UNPLACED || unplaced_push(a, to) == 0))
		live_put(a, to, w, tag, 1);
}

void allocsample__place(struct allocsample *a, size_t tag)
{
	size_t i;
	for (i = 0; i < a->nunplaced; i++) {
		struct allocsample_live *e = live_find(a, a->unplaced_ptr[i]);
		if (e != NULL && e->tag == ALLOCSAMPLE_UNPLACED)
			e->tag = tag;
	}
	a->nunplaced = 0;
	a->unplaced = 0;
}

void allocsample__reset(struct allocsample *a)
{
	if (a->live != NULL)
		memset(a->live, 0, a->live_cap * sizeof *a->live);
	a->nlive = 0;
	a->nunplaced = 0;
	a->unplaced = 0;
	memset(a->tracked, 0, sizeof a->tracked);
	a->done = 0;
	a->interval = a->paused ? a->paused_left : a->left;
	a->samples = 0;
}

uint64_t allocsample__bytes(const struct allocsample *a)
{
	return a->done + (uint64_t)(a->interval - (a->paused ? a->paused_left : a->left));
}

void allocsample__pause(struct allocsample *a)
{
	if (a->paused)
		return;
	a->paused = 1;
	a->paused_left = a->left;
	a->left = INT64_MAX;
}

void allocsample__resume(struct allocsample *a)
{
	if (!a->paused)
		return;
	a->paused = 0;
	a->left = a->paused_left;
}
