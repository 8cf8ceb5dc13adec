/*
 * Stack tables (profiles): whole call chains interned by hash, with sample
 * counts and period sums per unique (event, pid, tid, stack).  This is the
 * hot path of every report: no allocation per sample once a stack is known,
 * no Lua.  Also keeps the last COMM seen per pid, and lost/throttle counts.
 *
 * A stack may also be keyed by a comm object: the name a thread had when
 * the sample was taken (perf's struct comm), so one stack seen under two
 * names is two entries.  A comm object can be renamed (perf overrides a
 * thread's default ":TID" name in place when its first COMM comes), which
 * renames every stack keyed by it.
 *
 * Addresses are stored leaf first (the kernel's order: addrs[0] is the
 * sampled ip), with the number of leading kernel addresses.  A frame may
 * also be a name (a Lua function, a VM state, "[unknown]"), interned in
 * the table: every source of stacks (sessions, perf.data, DWARF unwinds,
 * the in-process profiler) fills the same table.  Beside the sample count
 * and period, a stack carries up to STACKTAB_MAX_WEIGHTS named weights
 * (counter deltas, time off CPU, bytes allocated).
 * Implemented in stacktab.c.  Plain C, no Lua.
 */
#ifndef LUAPERF_STACKTAB_H
#define LUAPERF_STACKTAB_H

#include <stddef.h>
#include <stdint.h>
#include "record/record.h"

struct stacktab;

/* A named frame: a value no address takes (on 64-bit machines it is not a
 * canonical address, and 32-bit addresses are below it) holding the index
 * of a name interned in the table. */
#define STACKTAB_NAMED UINT64_C(0x4c50000000000000)
#define STACKTAB_NAMED_MASK UINT64_C(0xffff000000000000)
static inline int stacktab__is_named(uint64_t frame)
{
	return (frame & STACKTAB_NAMED_MASK) == STACKTAB_NAMED;
}

/* An object frame: a leaf collapsed to the object it was in (reports keyed
 * by object alone need no address, stacktab__set_leaf_frame), with a name
 * interned in the table as a named frame's. */
#define STACKTAB_OBJECT UINT64_C(0x4c51000000000000)
static inline int stacktab__is_object(uint64_t frame)
{
	return (frame & STACKTAB_NAMED_MASK) == STACKTAB_OBJECT;
}

/* A symbol frame: a leaf collapsed to the symbol it was in (reports by
 * symbol, object and command need no more, stacktab__set_leaf_frame),
 * standing for one place where that symbol was sampled: resolving the
 * place gives the frame.  Such a frame no longer needs its thread to be
 * resolved, so the stack may drop it (stacktab__fold_leaves). */
#define STACKTAB_SYMBOL UINT64_C(0x4c52000000000000)
static inline int stacktab__is_symbol(uint64_t frame)
{
	return (frame & STACKTAB_NAMED_MASK) == STACKTAB_SYMBOL;
}

/* An address of an address space: the kernel's, or pid's at a generation
 * (gen: symbolizer__space_gen + 1, 0 not known; as stacktab_entry.gen). */
struct stacktab_place {
	int32_t pid;
	uint32_t gen;
	uint32_t kernel;
	uint32_t pad;               /* 0: places are compared as bytes */
	uint64_t addr;
};

#define STACKTAB_MAX_WEIGHTS 12

struct stacktab_entry {
	const uint64_t *addrs;      /* nr frames, leaf first (addresses or named) */
	unsigned nr, nkernel;       /* nkernel: leading kernel addresses */
	int32_t pid, tid;
	const char *comm;           /* the sample's command name, or NULL */
	uint32_t tag;               /* its split's value (stacktab__set_split) */
	uint32_t gen;               /* its address space's generation + 1
				       (set_space_gen); 0: not known */
	/* A chain perf discards (a context it does not know): no frames, but
	 * the sample's own ip, which perf report still counts: own is 1 for a
	 * user one, 2 for a kernel one, 0 when there is none. */
	unsigned own;
	uint64_t own_ip;
	const char *event;          /* the event's name ("" when unknown) */
	uint64_t count, period;
	const uint64_t *weights;    /* stacktab__nweights values, or NULL when none */
};

/* The named frame for name (interned once).  0 or -ENOMEM. */
int stacktab__intern(struct stacktab *st, const char *name, uint64_t *frame);
/* The name of a named frame of st, or NULL. */
const char *stacktab__name(const struct stacktab *st, uint64_t frame);
/* The object frame for path (interned once).  0 or -ENOMEM. */
int stacktab__intern_object(struct stacktab *st, const char *path, uint64_t *frame);
/* The path of an object frame of st, or NULL. */
const char *stacktab__object(const struct stacktab *st, uint64_t frame);

/* Declares a weight column (the same name gives the same index); its index,
 * or -E2BIG past STACKTAB_MAX_WEIGHTS, -ENOMEM. */
int stacktab__weight(struct stacktab *st, const char *name);
unsigned stacktab__nweights(const struct stacktab *st);
const char *stacktab__weight_name(const struct stacktab *st, unsigned k);

struct stacktab *stacktab__new(void);
void stacktab__delete(struct stacktab *st);

/*
 * Adds one stack (count samples weighing period in total).  Returns 0 or
 * -ENOMEM / -E2BIG (more than 65535 addresses).
 */
int stacktab__add_stack(struct stacktab *st, const uint64_t *addrs, unsigned nr,
			unsigned nkernel, int32_t pid, int32_t tid, const char *event,
			uint64_t count, uint64_t period);
/* The same with weights w[0..stacktab__nweights) added to the stack's. */
int stacktab__add_stack_w(struct stacktab *st, const uint64_t *addrs, unsigned nr,
			  unsigned nkernel, int32_t pid, int32_t tid, const char *event,
			  uint64_t count, uint64_t period, const uint64_t *w);

/* The same keyed by comm (a comm object of st, 0 for none). */
int stacktab__add_stack_cw(struct stacktab *st, const uint64_t *addrs, unsigned nr,
			   unsigned nkernel, int32_t pid, int32_t tid, uint32_t comm,
			   const char *event, uint64_t count, uint64_t period, const uint64_t *w);

/* The symbol frame standing for place (one per place).  0 or -ENOMEM. */
int stacktab__intern_symbol(struct stacktab *st, const struct stacktab_place *place,
			    uint64_t *frame);
/* The place a symbol frame of st stands for: 0, or -ENOENT. */
int stacktab__symbol(const struct stacktab *st, uint64_t frame, struct stacktab_place *place);

/*
 * Comm objects (ids from 1; 0 is none).  comm_new makes one; comm_rename
 * renames one, and so every stack keyed by it; comm_intern returns the
 * newest of that name, or a new one.  0 or -ENOMEM (-EINVAL: no such id).
 */
int stacktab__comm_new(struct stacktab *st, const char *name, uint32_t *id);
/* One comm object per name, made once and never renamed, for threads that
 * have their own name (perf's comm_set): their stacks key alike. */
int stacktab__comm_named(struct stacktab *st, const char *name, uint32_t *id);
int stacktab__comm_rename(struct stacktab *st, uint32_t id, const char *name);
int stacktab__comm_intern(struct stacktab *st, const char *name, uint32_t *id);
const char *stacktab__comm_name(const struct stacktab *st, uint32_t id);

/*
 * The comm object each sample that add_record and add_sample_raw add from
 * now on is keyed by: fn(arg, pid, tid, &comm) is asked for every sample
 * with a TID (0, > 0: the sample is left out, or -errno, which the add
 * returns).  NULL: none (the default).  The caller keeps arg alive until
 * it unsets fn.
 */
void stacktab__set_sample_comm(struct stacktab *st,
			       int (*fn)(void *arg, int32_t pid, int32_t tid, uint32_t *comm),
			       void *arg);

/*
 * Adds a decoded record: a SAMPLE adds its stack (callchain with context
 * markers removed, else its ip; period from PERIOD, else the attr's fixed
 * sample_period, else 1); COMM sets the pid's comm; LOST, LOST_SAMPLES and
 * THROTTLE are counted.  Other records are ignored.  t names the events.
 * Returns 0 or -ENOMEM.
 */
int stacktab__add_record(struct stacktab *st, const struct record *r, const struct evtab *t);

/*
 * The same for a raw SAMPLE record (buf, len bytes, 8-aligned) without
 * decoding it, when its layout allows: an event record__sample_event
 * finds, fixed-size fields then a non-empty callchain.  Returns 1 when added, 0 when the record is not one
 * of those (decode it and use stacktab__add_record: the result is the
 * same), or -ENOMEM.
 */
int stacktab__add_sample_raw(struct stacktab *st, const struct evtab *t, const void *buf,
			     size_t len);

/*
 * Bulk path for files and rings: decodes and adds every record in
 * buf[0..len) (consecutive records, 8-byte aligned, as in a perf.data data
 * section).  A record that does not decode is counted in stacktab__meta's
 * errors and skipped (its size is trusted if it fits; otherwise the rest of
 * the buffer is rejected).  Returns the number of bytes consumed (a
 * trailing partial record is left for the caller to complete) or -errno;
 * the first decode error's message goes to err.
 */
long stacktab__add_records(struct stacktab *st, const struct evtab *t,
			   const void *buf, size_t len, char *err, size_t errlen);

/*
 * Frees the index that finds a stack when it is added again (a slot per
 * stack, twice over: 16 MB for a system-wide file's 575k stacks).  For a
 * table that is complete (a file's pass done) before views and reports
 * take their memory; the next add makes the index again.
 */
void stacktab__drop_index(struct stacktab *st);

/*
 * Keeps at most depth addresses of each stack added from now on, from the
 * leaf (perf's --max-stack; 1: the sampled ip alone, all a report without
 * children or call graphs reads).  0: all (the default).
 */
void stacktab__set_max_depth(struct stacktab *st, unsigned depth);

/* keep = 0: stacks added from now on keep no address at all (reports by
 * comm, pid, tid, event or CPU alone): samples of a thread share one
 * entry.  1: addresses kept (the default, within the max depth). */
void stacktab__set_frames(struct stacktab *st, int keep);
/* Whether stacks added now keep addresses (1) or none (0). */
int stacktab__frames(const struct stacktab *st);

/*
 * Stacks added from now on with one address (max depth 1) keep, in its
 * place, the frame fn gives: fn(arg, pid, kernel, addr, &frame) returns 1
 * and sets frame (an object frame, stacktab__intern_object, or a symbol
 * frame, stacktab__intern_symbol), 0 to keep the address, or -errno, which
 * the add returns.  Samples of a thread in one object (one symbol) then
 * share one entry: reports by object need no symbol, reports by symbol
 * resolve a place per symbol, not per address.  NULL: none (the default).
 * The caller keeps arg alive until it unsets fn.
 */
void stacktab__set_leaf_frame(struct stacktab *st,
			      int (*fn)(void *arg, int32_t pid, int kernel, uint64_t addr,
					uint64_t *frame),
			      void *arg);
/*
 * on = 1: a stack added from now on whose every address became a frame
 * (stacktab__set_leaf_frame) and whose thread has a comm object is keyed
 * by that name at once, not by its thread, as stacktab__fold_leaves with
 * threads = 0 keys it later: a system-wide pass keeps an entry per
 * (name, symbol), not one per thread.  0: threads kept (the default).
 */
void stacktab__merge_leaf_threads(struct stacktab *st, int on);

/*
 * After the input, in a table of max depth 1 (else nothing is done): the
 * words of each entry holding a leaf alone become the frames fn gives
 * (fn(arg, place, &frame) returns 1 and sets frame, a symbol or object
 * frame; 0 keeps the address; -errno ends the fold with it; NULL keeps
 * every address), and entries that became equal are one (first
 * come first, order kept).  threads = 0: an entry left with no address to
 * resolve in its thread's space and with a comm object is keyed by that
 * name, not by its thread (pid and tid -1), so the samples of every
 * thread of one name share an entry (reports by command, object or
 * symbol: perf, too, merges them); what the threads were still counts for
 * one thing, stacktab__comm_width.  Call it when names are final (a comm
 * object is renamed when its thread's first COMM comes).  0 or -errno (then
 * the table is part folded: drop it).
 */
int stacktab__fold_leaves(struct stacktab *st,
			  int (*fn)(void *arg, const struct stacktab_place *place,
				    uint64_t *frame),
			  void *arg, int threads);
/*
 * perf's Command column width over the samples of event (NULL: all) that
 * stacktab__fold_leaves keyed by name: the longest last name of their threads (a
 * thread's name at its sample when it had none).  Returns 1 and sets
 * *width when the table merged threads, else 0 (take the stacks' own).
 */
int stacktab__comm_width(const struct stacktab *st, const char *event, size_t *width);

/*
 * Samples added from now on are keyed by fn(arg, pid) too: the generation
 * + 1 of the pid's address space (symbolizer__space_gen), which changes when a
 * mapping replaces another's addresses.  A profile resolved after its pass
 * then looks each stack's addresses up in the mappings of its samples'
 * time, as perf does, not in the last ones.  NULL: none (the default).
 */
void stacktab__set_space_gen(struct stacktab *st, uint32_t (*fn)(void *arg, int32_t pid),
			     void *arg);

/* The index of the entry the last add went to (a new stack or a known
 * one), or (size_t)-1 before the first. */
size_t stacktab__last(const struct stacktab *st);
/* Adds v to weight k of entry i.  0 or -EINVAL. */
int stacktab__add_weight_at(struct stacktab *st, size_t i, unsigned k, uint64_t v);
/* Adds src's entry i to dst as count samples weighing period, with weights
 * w (src's columns; dst's matched by name), named frames renamed into
 * dst's.  0 or -ENOMEM / -EINVAL. */
int stacktab__copy_entry(struct stacktab *dst, const struct stacktab *src, size_t i,
			 uint64_t count, uint64_t period, const uint64_t *w);
/*
 * Splits the samples added from now on by a value of their own, kept as
 * each stack's tag (stacktab_entry.tag): the CPU they ran on, or the time
 * bucket they fall in (bucket_ns wide, counted from the first sample's
 * time: stacktab__split_origin).  A sample without the field gets tag 0
 * (time) or UINT32_MAX, -1 as an int32 (CPU).
 * The default is no split (every tag 0).  -EINVAL for a zero bucket.
 */
enum stacktab_split {
	STACKTAB_SPLIT_NONE = 0,
	STACKTAB_SPLIT_CPU,
	STACKTAB_SPLIT_TIME,
};
int stacktab__set_split(struct stacktab *st, enum stacktab_split how, uint64_t bucket_ns);
enum stacktab_split stacktab__split(const struct stacktab *st, uint64_t *bucket_ns);
/* The time bucket 0 starts at (ns; 0 before any timed sample). */
uint64_t stacktab__split_origin(const struct stacktab *st);

/* Adds every stack, comm and count of src into dst (names and weights
 * matched by name). */
int stacktab__merge(struct stacktab *dst, const struct stacktab *src);

/* Unique stacks; entry i for 0 <= i < stacktab__count (in insertion order). */
size_t stacktab__count(const struct stacktab *st);
void stacktab__get(const struct stacktab *st, size_t i, struct stacktab_entry *e);

/* The last COMM seen for pid, or NULL. */
const char *stacktab__comm(const struct stacktab *st, int32_t pid);
int stacktab__set_comm(struct stacktab *st, int32_t pid, const char *comm);
/* A thread's name at the end of the input (perf's Pid:Command column), or NULL. */
const char *stacktab__thread_comm(const struct stacktab *st, int32_t tid);
int stacktab__set_thread_comm(struct stacktab *st, int32_t tid, const char *comm);

struct stacktab_meta {
	uint64_t samples, period;    /* totals over all stacks */
	uint64_t lost, throttled, unthrottled, errors;
};
void stacktab__meta(const struct stacktab *st, struct stacktab_meta *m);
/* For inputs that count losses themselves (a session's stats). */
void stacktab__add_lost(struct stacktab *st, uint64_t lost, uint64_t throttled);

#endif
