/*
 * DWARF call graphs: user stacks unwound from the registers and stack bytes
 * a sample captured (PERF_SAMPLE_REGS_USER + PERF_SAMPLE_STACK_USER), with
 * elfutils libdwfl reading .eh_frame / .debug_frame of the mapped files.
 *
 * Capture side (sessions, `luaperf record --call-graph dwarf[,size]`):
 * unwind__config_attr() sets the sample bits, the register mask of the
 * host architecture and the stack size, as `perf record --call-graph dwarf`
 * does.  Unwind side (profiles, reports, scripts; never the ring drain
 * path): an unwinder keeps one libdwfl session per pid, reused across
 * samples while the pid's mappings stay the same, and turns a sample into
 * a callchain in the kernel's own format (context markers included): the
 * kernel part of PERF_SAMPLE_CALLCHAIN followed by PERF_CONTEXT_USER and
 * the unwound user frames, as perf joins them.
 *
 * Not thread-safe: one unwinder per thread.  Plain C, no Lua; -errno
 * returns.  Implemented in unwind.c.
 */
#ifndef LUAPERF_UNWIND_H
#define LUAPERF_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct evtab;
struct record;
struct record_sample;
struct stacktab;
struct symbolizer;

/*
 * Register masks (bit n = perf register n of the architecture's
 * uapi/asm/perf_regs.h): what the unwinder needs from a sample.
 * x86-64: ip, sp, bp and the callee-saved set (bx, r12-r15).
 * aarch64: x19-x28 (callee-saved), x29 (fp), x30 (lr), sp, pc.
 * The unwinder also accepts any larger mask (perf's files carry all
 * general registers).
 */
#define UNWIND_X86_64_REGS_MASK \
	((1ULL << 1) /* bx */ | (1ULL << 6) /* bp */ | (1ULL << 7) /* sp */ | \
	 (1ULL << 8) /* ip */ | (0xfULL << 20) /* r12-r15 */)
#define UNWIND_AARCH64_REGS_MASK \
	((0x7ffULL << 19) /* x19-x29 */ | (1ULL << 30) /* lr */ | \
	 (1ULL << 31) /* sp */ | (1ULL << 32) /* pc */)

/* The mask for the architecture luaperf runs on; 0 when unsupported. */
uint64_t unwind__regs_mask(void);

/* Stack bytes per sample: perf's default, and the kernel's bound (the
 * size must be a multiple of 8 and below USHRT_MAX). */
#define UNWIND_DEFAULT_STACK_SIZE 8192u
#define UNWIND_MAX_STACK_SIZE 65528u

/*
 * The stack dump size for a requested one: 0 gives the default, others are
 * rounded up to a multiple of 8.  Returns the size, or -EINVAL when above
 * UNWIND_MAX_STACK_SIZE.  (The kernel may dump less per sample when the
 * whole record would not fit in 64 KiB; samples carry the size dumped.)
 */
int unwind__stack_size(uint64_t requested);

/*
 * Sets up attr for DWARF call graphs, as perf does: PERF_SAMPLE_CALLCHAIN
 * (kernel part), PERF_SAMPLE_REGS_USER with unwind__regs_mask(),
 * PERF_SAMPLE_STACK_USER with unwind__stack_size(stack_size), and
 * exclude_callchain_user (the user part comes from unwinding, not from
 * frame pointers).  Returns 0, -EINVAL (bad size) or -EOPNOTSUPP (no
 * register table for this architecture).
 */
int unwind__config_attr(struct perf_event_attr *attr, uint64_t stack_size);

/* Status bits unwind__sample() reports for one sample. */
enum {
	UNWIND_TRUNCATED = 1 << 0,   /* ran off the captured stack bytes: the
					window was too small, the stack is deeper */
	UNWIND_FAILED = 1 << 1,      /* stopped early for another reason (no
					mapping, no CFI, bad state) */
	UNWIND_NO_USER = 1 << 2,     /* no user registers (kernel thread) */
	UNWIND_MAX_DEPTH = 1 << 3,   /* out_ips filled up */
};

struct unwinder;

/* Returns 0 or -ENOMEM. */
int unwinder__new(struct unwinder **out);
void unwinder__delete(struct unwinder *u);

/*
 * Maps come from sym (symbolizer__find_map / symbolizer__elf_addr), fed by
 * the same records; the unwinder keeps no maps of its own.
 */

/*
 * Unwinds one sample of the event attr (attr->sample_type has REGS_USER
 * and STACK_USER; attr->sample_regs_user says which registers s->regs_user
 * holds) into
 * out_ips[0..max-1], in the kernel's callchain format, leaf first:
 *   [PERF_CONTEXT_KERNEL, kernel ips...]  from s->callchain, when present
 *   PERF_CONTEXT_USER, user ips...        unwound; the first is the user ip
 * User frames after the first are return addresses (as frame pointers give
 * them), so consumers treat both chains alike.  *status (optional) gets the
 * UNWIND_* bits.  Returns the number of entries (>= 0) or -errno (-EINVAL:
 * the sample has no user regs/stack fields).
 */
int unwind__sample(struct unwinder *u, struct symbolizer *sym,
		   const struct perf_event_attr *attr,
		   const struct record_sample *s, uint64_t *out_ips, size_t max,
		   unsigned *status);

/*
 * Turns the user callers of an unwind__sample chain (return addresses)
 * into call sites (the byte before), as perf keeps DWARF chains: a call
 * that ends its function (noreturn) is then named after its own function.
 * Every profile of unwound stacks stores them so (unwind_profile.c).
 */
void unwind__call_sites(uint64_t *chain, size_t n);

/* Whether samples of attr carry what unwinding needs (regs + stack). */
int unwind__wants(const struct perf_event_attr *attr);

/*
 * What unwinding needs of a record that is not a sample: maps records
 * (MMAP, MMAP2, COMM, FORK, EXIT) feed sym, and a new image (COMM exec) or
 * a gone process (EXIT) drops the pid's libdwfl session.  Records must come
 * in order (maps before the samples that need them).  Returns 0 or -ENOMEM.
 */
int unwind__feed(struct unwinder *u, struct symbolizer *sym, const struct record *r);

/*
 * A decoded sample of a DWARF event (t names r's event) unwound into
 * chain[0..max-1] as unwind__sample gives it, callers turned into call sites
 * (unwind__call_sites), as perf keeps DWARF chains.  Returns the entries
 * (> 0), or 0 when r is not such a sample or the unwind gave nothing (use
 * its own callchain then).  *status (optional) gets the UNWIND_* bits.
 */
int unwind__chain(struct unwinder *u, struct symbolizer *sym, const struct record *r,
		  const struct evtab *t, uint64_t *chain, size_t max, unsigned *status);

/*
 * The profile builders' hook (file and session profiles, in place of
 * stacktab__add_record): a maps record (MMAP, MMAP2, COMM, FORK, EXIT)
 * feeds sym; a sample of a DWARF event is unwound and added to st with the
 * unwound chain in place of its callchain (counted like any sample: period,
 * event, pid, tid); everything else goes to stacktab__add_record as is.
 * Records must come in order (maps before the samples that need them).
 * *status (optional) gets the sample's UNWIND_* bits.  Returns 0 or -errno.
 * (unwind_profile.c)
 */
int unwind__add_record(struct unwinder *u, struct symbolizer *sym, struct stacktab *st,
		       const struct record *r, const struct evtab *t, unsigned *status);

/*
 * 1 (the default): steps go through CFI rows cached per pc, computed as
 * libdwfl computes them, falling back to libdwfl's own unwinder for what
 * they do not cover; 0: every sample through libdwfl (for comparisons).
 */
void unwinder__set_fast(struct unwinder *u, int on);

/* Forgets pid's libdwfl session (its maps changed: exec, munmap). */
void unwinder__forget(struct unwinder *u, uint32_t pid);

struct unwind_stats {
	uint64_t samples, truncated, failed, frames;
	uint64_t sessions;           /* libdwfl sessions created */
};
void unwinder__stats(const struct unwinder *u, struct unwind_stats *out);

/* Why the last unwind stopped early, "" when it did not. */
const char *unwinder__last_error(const struct unwinder *u);

#endif
