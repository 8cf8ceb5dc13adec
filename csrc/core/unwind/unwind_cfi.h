/*
 * The unwinder's fast path (private to unwind.c): the CFI row of each pc,
 * taken once from libdw (dwarf_cfi_addrframe on the module's .eh_frame,
 * else .debug_frame, as libdwfl looks them up) and kept, so that a step is a
 * table lookup and a few memory reads instead of libdwfl re-running the CFI
 * program and allocating per frame.  A step computes exactly what
 * libdwfl's handle_cfi computes (same rules, same expression semantics);
 * anything it does not cover (no CFI: libdwfl's frame-pointer fallback,
 * DW_OP_bra/skip, other architectures) answers CFI_STEP_SLOW and the
 * caller unwinds that sample with libdwfl itself.  Plain C, no Lua.
 */
#ifndef LUAPERF_UNWIND_CFI_H
#define LUAPERF_UNWIND_CFI_H

#include <stdbool.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

#if defined(__x86_64__)
#define CFI_NREGS 17                  /* rax..r15, rip: libdw's x86-64 frame */
#define HAVE_CFI_FAST 1
#else
#define CFI_NREGS 1
/*
 * Whether the CFI row of lpc holds a DW_OP_div.  libdwfl's evaluator traps
 * on INT64_MIN / -1, so its unwinder must not step from such a frame; the
 * cached step evaluates these rows itself and rejects that division.
 * *signal gets whether the caller's frame is a signal frame (its row is
 * then looked up at its pc, not pc - 1).
 */
bool cfi_cache__divides(struct cfi_cache *c, Dwfl *dwfl, uint64_t lpc, bool *signal);

#endif

/* One frame's DWARF registers (bit n of set: register n is known). */
struct cfi_regs {
	uint64_t r[CFI_NREGS];
	uint32_t set;
};

struct cfi_cache;

struct cfi_cache *cfi_cache__new(void);
void cfi_cache__delete(struct cfi_cache *c);

typedef bool (*cfi_read_fn)(void *arg, uint64_t addr, uint64_t *out);

enum {
	CFI_STEP_OK,                  /* *out and *pc hold the caller */
	CFI_STEP_END,                 /* the return address is undefined, or the row
					 is rejected (see cfi_cache__divides): the end */
	CFI_STEP_SLOW,                /* not covered: unwind with libdwfl */
};

/*
 * One step from the frame st whose pc is looked up at lpc (pc - 1 for
 * callers, pc for the first frame and after signal frames).  *signal gets
 * whether the caller's frame is a signal frame.  Returns CFI_STEP_*.
 */
int cfi_cache__step(struct cfi_cache *c, Dwfl *dwfl, uint64_t lpc,
		    const struct cfi_regs *st, struct cfi_regs *out, uint64_t *pc,
		    bool *signal, cfi_read_fn read, void *arg);

/*
 * Whether the CFI row of lpc holds a DW_OP_div.  libdwfl's evaluator traps
 * on INT64_MIN / -1, so its unwinder must not step from such a frame; the
 * cached step evaluates these rows itself and rejects that division.
 * *signal gets whether the caller's frame is a signal frame (its row is
 * then looked up at its pc, not pc - 1).
 */
bool cfi_cache__divides(struct cfi_cache *c, Dwfl *dwfl, uint64_t lpc, bool *signal);

#endif
