/*
 * Key tables: byte strings interned to dense ids (0, 1, 2... in the order
 * they were first seen).  The one hash map of the report engine: names,
 * (address space, address) pairs, row keys, call graph edges and folded
 * stacks are all keys of one.  Keys are copied into chunks that never move,
 * NUL-terminated and 8-byte aligned, so a key read back is usable as a C
 * string or as an array of uint64_t.  Plain C, no Lua.
 */
#ifndef LUAPERF_KEYTAB_H
#define LUAPERF_KEYTAB_H

#include <stddef.h>
#include <stdint.h>

struct keytab;

struct keytab *keytab__new(void);
void keytab__delete(struct keytab *kt);

/* The id of key (len bytes), added when new (*added = 1, optional).
 * 0 or -ENOMEM (-E2BIG past 2^32 - 2 keys). */
int keytab__intern(struct keytab *kt, const void *key, size_t len, uint32_t *id, int *added);
/* The same for a C string. */
int keytab__intern_str(struct keytab *kt, const char *s, uint32_t *id);
/* The id of key when it is there: 0, or -ENOENT. */
int keytab__find(const struct keytab *kt, const void *key, size_t len, uint32_t *id);

/* Key id (valid ids only) and its length; stable until keytab__delete. */
const void *keytab__key(const struct keytab *kt, uint32_t id, size_t *len);
static inline const char *keytab__str(const struct keytab *kt, uint32_t id)
{
	return (const char *)keytab__key(kt, id, NULL);
}
size_t keytab__count(const struct keytab *kt);
/* Bytes held (for memory accounting). */
size_t keytab__bytes(const struct keytab *kt);

#endif
