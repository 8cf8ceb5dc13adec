/*
 * What an errno from perf_event_open(2) or its mmap means for this attr on
 * this machine, and what to do about it.  Implemented in errmsg.c.
 */
#ifndef LUAPERF_ERRMSG_H
#define LUAPERF_ERRMSG_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/perf_event.h>

/*
 * Writes a message for a failed open of `name` (the spec as the user wrote
 * it) with attr, target pid and cpu; err is a positive errno.  Returns buf.
 */
const char *errmsg__open(char *buf, size_t len, int err, const char *name,
			 const struct perf_event_attr *attr, pid_t pid, int cpu);

/* Same for mmap of a ring of `pages` data pages. */
const char *errmsg__mmap(char *buf, size_t len, int err, size_t pages);

#endif
