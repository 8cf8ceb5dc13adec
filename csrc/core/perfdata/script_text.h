/*
 * perf script's listing of a perf.data file, formatted in C: one line per
 * sample (comm, tid, [cpu], time, period, event, ip, sym+off, (dso), or
 * the subset of those fields asked for, a tracepoint's payload printed by
 * its format), each call chain frame on a line
 * of its own, as perf script 6.1 prints them.  The same text as the Lua
 * listing (lua/perf/cli/script.lua + script_fields.lua) for the fields
 * below, without a Lua value per record: `luaperf script` comes here when
 * its options need nothing else.
 *
 * The pass reads the records in the order the reader gives them (open the
 * file time-ordered; DWARF samples need the maps before them), names each sample's thread by perf's rules
 * (profile/threads.h), feeds sym the records that shape address spaces,
 * and resolves each distinct (address space, address) once: the cache of
 * an address space is dropped when its maps change (an MMAP of that pid,
 * a FORK into it; the kernel's maps for kernel addresses).  The text goes
 * to opts->write in big chunks.
 *
 *   struct script_text_opts o = { .fields = {...}, .write = fn, ... };
 *   perfdata__rewind(pd);
 *   if (perfdata__script_text(pd, sym, &o, NULL, err, sizeof err) < 0) ...
 *
 * Plain C, no Lua.  Implemented in script_text.c.
 */
#ifndef LUAPERF_SCRIPT_TEXT_H
#define LUAPERF_SCRIPT_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include "record/record.h"

struct perfdata;
struct symbolizer;
struct tracefmt;

/* The fields of a sample line (perf script -F names). */
enum {
	SCRIPT_F_COMM = 1 << 0,
	SCRIPT_F_TID = 1 << 1,
	SCRIPT_F_PID = 1 << 2,
	SCRIPT_F_TIME = 1 << 3,
	SCRIPT_F_CPU = 1 << 4,
	SCRIPT_F_EVENT = 1 << 5,
	SCRIPT_F_PERIOD = 1 << 6,
	SCRIPT_F_IP = 1 << 7,
	SCRIPT_F_SYM = 1 << 8,
	SCRIPT_F_SYMOFF = 1 << 9,
	SCRIPT_F_DSO = 1 << 10,
	SCRIPT_F_TRACE = 1 << 11,        /* a tracepoint's payload, by its format */
	SCRIPT_F_ALL = (1 << 12) - 1,
};

/* perf's output types: the attr type below 6 (hardware ... breakpoint),
 * else "other"; a sample of an event the header does not name is "other". */
#define SCRIPT_TYPE_OTHER 7
#define SCRIPT_NTYPES 8

struct script_text_opts {
	unsigned fields[SCRIPT_NTYPES];  /* SCRIPT_F_* per output type; 0: not printed */
	int callchain;                   /* print call chains (-g, or the file has them) */
	int ns;                          /* nanosecond timestamps */
	/* DWARF samples (the event records user registers and stack): user
	 * stacks unwound (unwind.h: callers as call sites), the maps fed
	 * through the unwinder, and a chain that ran off the captured stack
	 * ended by perf's ffffffffffffffff line.  With inlines, each unwound
	 * user frame is preceded by the functions inlined there, "(inlined)",
	 * as perf prints DWARF chains. */
	int unwind, inlines;
	unsigned max_stack;              /* frames printed per chain (0: perf's 127) */
	/* The samples shown (perf script's filters); the others are still
	 * read (their threads and maps count). */
	struct record_window window;     /* --time, -C */
	const int32_t *pids, *tids;      /* --pid, --tid: NULL for any */
	size_t nr_pids, nr_tids;
	const char *const *comms;        /* --comm: NULL for any */
	size_t nr_comms;
	/* The file's tracepoint formats (SCRIPT_F_TRACE), or NULL: no text. */
	struct tracefmt *tracefmt;
	/* Where the text goes: 0 or -errno (which ends the pass). */
	int (*write)(void *arg, const void *buf, size_t len);
	void *write_arg;
	/* The symbolizer's warnings, each once, as they arise (optional). */
	void (*warn)(void *arg, const char *msg);
	void *warn_arg;
};

struct script_text_stats {
	uint64_t records, samples, printed;  /* printed: samples that passed the filters */
	uint64_t resolves;                   /* symbolizer lookups (cache misses) */
};

/*
 * The listing of pd's records from where the reader is (rewind first) to
 * the end.  Returns 0, or -errno with a message in err: the reader's
 * (perfdata__errmsg), a record that does not decode ("perf.data: offset N:
 * ..."), -ENOMEM, or what write returned; the text of the records before
 * it has been written.  stats may be NULL.
 */
int perfdata__script_text(struct perfdata *pd, struct symbolizer *sym,
			  const struct script_text_opts *opts, struct script_text_stats *stats,
			  char *err, size_t errlen);

#endif
