/*
 * The records that shape address spaces (MMAP, MMAP2, COMM, FORK, EXIT),
 * held while a file is read in file order and handed back in time order,
 * so that one pass over a perf.data can aggregate its samples (which need
 * no order) and still feed a symbolizer in the order things happened (an
 * exec drops the maps before the new image's arrive).  Copies of the raw
 * records: their decoded pointers would not outlive the reader's buffer.
 * Plain C, no Lua.  Implemented in maporder.c.
 */
#ifndef LUAPERF_MAPORDER_H
#define LUAPERF_MAPORDER_H

#include <stddef.h>
#include "record/record.h"

struct maporder;

struct maporder *maporder__new(void);
void maporder__delete(struct maporder *mo);

/* 1 for the record types kept (the ones a symbolizer is fed). */
int maporder__wants(uint32_t type);

/*
 * Keeps a copy of r (a decoded record; types maporder__wants refuses are
 * ignored).  Its time: FORK and EXIT's own, else the sample_id_all
 * trailer's, else 0 (first).  Returns 0 or -ENOMEM.
 */
int maporder__add(struct maporder *mo, const struct record *r);

/* Puts the records in time order, ties in the order added; returns how many. */
size_t maporder__sort(struct maporder *mo);

/*
 * Decodes record i (0 <= i < the count) with t, the evtab of the file it
 * came from, into *out; out's pointers stay valid until maporder__delete.
 * Returns 0 or -EINVAL.
 */
int maporder__get(const struct maporder *mo, size_t i, const struct evtab *t,
		  struct record *out);

#endif
