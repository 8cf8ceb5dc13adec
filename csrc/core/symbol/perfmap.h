/*
 * JIT symbol maps, /tmp/perf-PID.map: "START SIZE name" per line, hex
 * numbers.  Internal to the symbolizer; perfmap__parse takes plain bytes so
 * a fuzzer can call it.
 */
#ifndef LUAPERF_PERFMAP_H
#define LUAPERF_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "symbol/symtab.h"

struct perfmap {
	struct symtab syms;
	off_t size;                   /* bytes parsed; reload when the file grows */
	dev_t dev;                    /* the file read: reload when it was replaced */
	ino_t ino;
	int state;                    /* 0: not read, 1: read, -errno: refused */
	char why[384];                /* when refused */
};

/* Adds the entries of buf (need not be NUL-terminated); bad lines are
 * skipped.  Returns the number of entries added, or -ENOMEM. */
int perfmap__parse(struct symtab *t, const char *buf, size_t len);

void perfmap__init(struct perfmap *pm);
void perfmap__exit(struct perfmap *pm);
/*
 * (Re)reads dir/perf-PID.map when it is new, grew or was replaced (a
 * JIT that rewrites its map when code is reused renames a new file over it).  Refuses a symlink
 * and a file not owned by root or the process's user (uid, or our euid
 * when the process is gone: uid == (uid_t)-1).  0 or -errno (pm->why).
 */
int perfmap__refresh(struct perfmap *pm, const char *dir, uint32_t pid, uid_t uid);

#endif
