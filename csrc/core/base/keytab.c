/*
 * An index of ids (base/slots.h), half full at most, over each id's key
 * (where and how long) in a dense array, the bytes in chunks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/keytab.h"
#include "base/bigmem.h"
#include "base/slots.h"

#define CHUNK_MIN ((size_t)64 * 1024)

struct kt_key {
	const char *p;
	size_t len;
};

struct kt_chunk {
	struct kt_chunk *next;
	size_t used, cap;
	char *bytes;   /* points just past this header, 8-byte aligned */
};

struct keytab {
	struct kt_key *keys;
	size_t n, cap;
	uint64_t *slots;              /* hash high bits | id + 1; 0 empty */
	size_t nslots;
	struct kt_chunk *chunks;
	size_t bytes;
};

/* 8 bytes at a time, then the tail; a multiply-xorshift mix: keys are
 * mostly arrays of uint64_t, names are short. */
static uint64_t kt_hash(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = UINT64_C(0x9e3779b97f4a7c15) ^ len;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * UINT64_C(0xff51afd7ed558ccd);
		h ^= h >> 32;
	}
	if (i < len) {
		uint64_t w = 0;
		memcpy(&w, p + i, len - i);
		h = (h ^ w) * UINT64_C(0xc4ceb9fe1a85ec53);
	}
	h ^= h >> 29;
	h *= UINT64_C(0xbf58476d1ce4e5b9);
	return h ^ (h >> 32);
}

struct keytab *keytab__new(void)
{
	return calloc(1, sizeof(struct keytab));
}

void keytab__delete(struct keytab *kt)
{
	struct kt_chunk *c, *next;

	if (!kt)
		return;
	for (c = kt->chunks; c; c = next) {
		next = c->next;
		bigmem__free(c);
	}
	bigmem__free(kt->keys);
	bigmem__free(kt->slots);
	free(kt);
}

/* len + 1 bytes (a NUL after the key), 8-aligned, in the current chunk. */
static char *kt_alloc(struct keytab *kt, size_t len)
{
	size_t need = (len + 1 + 7) & ~(size_t)7;
	struct kt_chunk *c = kt->chunks;
	char *p;

	if (need < len)
		return NULL;
	if (!c || c->cap - c->used < need) {
		size_t cap = need > CHUNK_MIN ? need : CHUNK_MIN;
		size_t hdr = (sizeof *c + 7) & ~(size_t)7;
		if (c && c->cap * 2 > cap && c->cap < ((size_t)16 << 20))
			cap = c->cap * 2 > need ? c->cap * 2 : need;
		c = bigmem__malloc(hdr + cap);
		if (!c)
			return NULL;
		c->bytes = (char *)c + hdr;
		c->used = 0;
		c->cap = cap;
		c->next = kt->chunks;
		kt->chunks = c;
		kt->bytes += hdr + cap;
	}
	p = c->bytes + c->used;
	c->used += need;
	return p;
}

static size_t kt_probe(const struct keytab *kt, const void *key, size_t len, uint64_t h,
		       uint32_t *found)
{
	size_t mask = kt->nslots - 1, j;
	uint64_t tag = SLOTS_TAG(h);

	for (j = SLOTS_HOME(h, kt->nslots); kt->slots[j]; j = (j + 1) & mask) {
		const struct kt_key *k;
		uint32_t id;
		if (SLOTS_TAG(kt->slots[j]) != tag)
			continue;
		id = (uint32_t)kt->slots[j] - 1;
		k = &kt->keys[id];
		if (k->len == len && memcmp(k->p, key, len) == 0) {
			*found = id;
			return j;
		}
	}
	*found = UINT32_MAX;
	return j;
}

int keytab__intern(struct keytab *kt, const void *key, size_t len, uint32_t *id, int *added)
{
	uint64_t h = kt_hash(key, len);
	uint32_t found;
	size_t j;
	char *p;

	if (added)
		*added = 0;
	if (2 * (kt->n + 1) > kt->nslots && slots__grow(&kt->slots, &kt->nslots))
		return -ENOMEM;
	j = kt_probe(kt, key, len, h, &found);
	if (found != UINT32_MAX) {
		*id = found;
		return 0;
	}
	if (kt->n >= UINT32_MAX - 1)
		return -E2BIG;
	if (kt->n == kt->cap) {
		size_t cap = kt->cap ? kt->cap * 2 : 256;
		struct kt_key *k = bigmem__realloc(kt->keys, cap * sizeof *k);
		if (!k)
			return -ENOMEM;
		kt->keys = k;
		kt->cap = cap;
	}
	p = kt_alloc(kt, len);
	if (!p)
		return -ENOMEM;
	if (len)
		memcpy(p, key, len);
	p[len] = '\0';
	kt->keys[kt->n].p = p;
	kt->keys[kt->n].len = len;
	kt->slots[j] = SLOTS_TAG(h) | (kt->n + 1);
	*id = (uint32_t)kt->n++;
	if (added)
		*added = 1;
	return 0;
}

int keytab__intern_str(struct keytab *kt, const char *s, uint32_t *id)
{
	return keytab__intern(kt, s ? s : "", s ? strlen(s) : 0, id, NULL);
}

int keytab__find(const struct keytab *kt, const void *key, size_t len, uint32_t *id)
{
	uint32_t found;

	if (!kt->nslots)
		return -ENOENT;
	kt_probe(kt, key, len, kt_hash(key, len), &found);
	if (found == UINT32_MAX)
		return -ENOENT;
	*id = found;
	return 0;
}

const void *keytab__key(const struct keytab *kt, uint32_t id, size_t *len)
{
	if (len)
		*len = kt->keys[id].len;
	return kt->keys[id].p;
}

size_t keytab__count(const struct keytab *kt)
{
	return kt->n;
}

size_t keytab__bytes(const struct keytab *kt)
{
	return kt->bytes + kt->cap * sizeof(struct kt_key) + kt->nslots * sizeof(uint64_t);
}
