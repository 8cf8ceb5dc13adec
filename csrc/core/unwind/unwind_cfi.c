/*
 * CFI rows cached by pc, and one unwind step computed from them (see
 * unwind_cfi.h).  The step follows libdwfl's handle_cfi and expr_eval
 * (elfutils libdwfl/frame_unwind.c) rule for rule, so a sample unwinds to
 * the same frames either way; what it does not cover goes to libdwfl.
 */
#include "unwind/unwind_cfi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <elfutils/libdw.h>

#ifdef HAVE_CFI_FAST

enum { R_SKIP, R_UNDEF, R_SAME, R_OPS };

struct rule {
	uint8_t kind, nops;
	uint16_t first;               /* index in ops */
};

struct row {
	uint64_t lpc;
	bool slow;                    /* not covered: always libdwfl */
	bool divides;                 /* holds a DW_OP_div: never libdwfl's (see has_div) */
	bool signal;                  /* the caller frame is a signal frame */
	uint8_t ra;                   /* return address column */
	uint8_t cfa_nops;             /* 0: the CFA is unavailable */
	uint64_t bias;
	struct rule r[CFI_NREGS];
	Dwarf_Op ops[];               /* the CFA's first, then each rule's */
};

#define MAX_OPS 64                  /* per row; more goes to libdwfl */
#define MIN_SLOTS 1024u
#define MAX_SLOTS (1u << 20)

struct cfi_cache {
	struct row **slots;
	unsigned nslots, count;
};

struct cfi_cache *cfi_cache__new(void)
{
	return calloc(1, sizeof(struct cfi_cache));
}

static void clear(struct cfi_cache *c)
{
	for (unsigned i = 0; i < c->nslots; i++)
		free(c->slots[i]);
	free(c->slots);
	c->slots = NULL;
	c->nslots = c->count = 0;
}

void cfi_cache__delete(struct cfi_cache *c)
{
	if (!c)
		return;
	clear(c);
	free(c);
}

static unsigned hash(uint64_t pc)
{
	pc ^= pc >> 29;
	pc *= 0xbf58476d1ce4e5b9ULL;
	pc ^= pc >> 32;
	return (unsigned)pc;
}

static struct row **slot_for(struct cfi_cache *c, uint64_t lpc)
{
	unsigned mask = c->nslots - 1, i = hash(lpc) & mask;

	while (c->slots[i] && c->slots[i]->lpc != lpc)
		i = (i + 1) & mask;
	return &c->slots[i];
}

static int grow(struct cfi_cache *c)
{
	unsigned n = c->nslots ? c->nslots * 2 : MIN_SLOTS;
	struct row **old = c->slots;
	unsigned nold = c->nslots;

	if (n > MAX_SLOTS) {
		/* A bounded cache: start again rather than grow without end. */
		clear(c);
		n = MIN_SLOTS;
		old = NULL;
		nold = 0;
	}
	c->slots = calloc(n, sizeof(struct row *));
	if (!c->slots) {
		c->slots = old;
		return -ENOMEM;
	}
	c->nslots = n;
	for (unsigned i = 0; i < nold; i++)
		if (old[i])
			*slot_for(c, old[i]->lpc) = old[i];
	free(old);
	return 0;
}

static bool supported(const Dwarf_Op *ops, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (ops[i].atom) {
		case DW_OP_bra:
		case DW_OP_skip:
		case DW_OP_GNU_encoded_addr:
			return false;
		}
	}
	return true;
}

/*
 * libdwfl's expr_eval divides as int64_t without checking INT64_MIN / -1,
 * which traps (SIGFPE) on x86-64: a row holding DW_OP_div is never handed
 * to it, whatever its operands turn out to be.  Compilers do not divide in
 * CFI, so only crafted files lose the frames above such a row.
 */
static bool has_div(const Dwarf_Op *ops, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ops[i].atom == DW_OP_div)
			return true;
	return false;
}

/* Takes the row of lpc from the module's CFI, as libdwfl would find it. */
static struct row *build(Dwfl_Module *mod, uint64_t lpc)
{
	Dwarf_Op tmp[CFI_NREGS + 1][3];
	Dwarf_Op *ops[CFI_NREGS + 1];
	size_t nops[CFI_NREGS + 1];
	int kind[CFI_NREGS];
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr bias = 0;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	struct row *row;
	size_t total = 0;
	bool signal = false, slow = false, divides = false;
	int ra = 0;

	if (!cfi || dwarf_cfi_addrframe(cfi, lpc - bias, &frame) != 0) {
		frame = NULL;
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, lpc - bias, &frame) != 0)
			frame = NULL;
	}
	if (!frame) {
		slow = true;  /* libdwfl's frame-pointer fallback */
		goto make;
	}
	ra = dwarf_frame_info(frame, NULL, NULL, &signal);
	if (ra < 0 || ra >= CFI_NREGS)
		slow = true;
	/* Every rule is read even for a slow row: libdwfl would evaluate
	 * them all, so a division anywhere keeps the row from it. */
	if (dwarf_frame_cfa(frame, &ops[CFI_NREGS], &nops[CFI_NREGS]) != 0) {
		ops[CFI_NREGS] = NULL;
		nops[CFI_NREGS] = 0;
	}
	total += nops[CFI_NREGS];
	slow |= !supported(ops[CFI_NREGS], nops[CFI_NREGS]);
	divides |= has_div(ops[CFI_NREGS], nops[CFI_NREGS]);
	for (int regno = 0; regno < CFI_NREGS; regno++) {
		nops[regno] = 0;
		if (dwarf_frame_register(frame, regno, tmp[regno], &ops[regno], &nops[regno]) != 0)
			kind[regno] = R_SKIP;
		else if (nops[regno] == 0)
			kind[regno] = ops[regno] == tmp[regno] ? R_UNDEF :
				      ops[regno] == NULL ? R_SAME : R_SKIP;
		else
			kind[regno] = R_OPS;
		if (kind[regno] != R_OPS)
			nops[regno] = 0;
		total += nops[regno];
		if (kind[regno] == R_OPS) {
			slow |= !supported(ops[regno], nops[regno]);
			divides |= has_div(ops[regno], nops[regno]);
		}
	}
	if (total > MAX_OPS)
		slow = true;
make:
	if (slow)
		total = 0;
	row = calloc(1, sizeof *row + total * sizeof(Dwarf_Op));
	if (!row) {
		free(frame);
		return NULL;
	}
	row->lpc = lpc;
	row->slow = slow;
	row->divides = divides;
	row->signal = signal;
	if (!slow) {
		uint16_t at = 0;
		row->ra = (uint8_t)ra;
		row->bias = bias;
		row->cfa_nops = (uint8_t)nops[CFI_NREGS];
		if (nops[CFI_NREGS])
			memcpy(row->ops, ops[CFI_NREGS], nops[CFI_NREGS] * sizeof(Dwarf_Op));
		at = (uint16_t)nops[CFI_NREGS];
		for (int regno = 0; regno < CFI_NREGS; regno++) {
			row->r[regno].kind = (uint8_t)kind[regno];
			row->r[regno].nops = (uint8_t)nops[regno];
			row->r[regno].first = at;
			if (nops[regno])
				memcpy(row->ops + at, ops[regno], nops[regno] * sizeof(Dwarf_Op));
			at = (uint16_t)(at + nops[regno]);
		}
	}
	free(frame);  /* the ops were copied: they pointed into it */
	return row;
}

/* An arithmetic right shift without relying on signed shifts. */
static uint64_t shift_right_arith(uint64_t v, uint64_t n)
{
	uint64_t fill = (v >> 63) ? ~0ULL : 0;

	if (n >= 64)
		return fill;
	if (n == 0)
		return v;
	return (v >> n) | (fill << (64 - n));
}

/* Evaluation context of one step. */
struct eval {
	const struct row *row;
	const struct cfi_regs *st;
	cfi_read_fn read;
	void *arg;
	bool rejected;                /* an operation with no defined result */
};

#define STACK_MAX 0x100

/* libdwfl's expr_eval, for the atoms a cached row may hold. */
static bool eval(struct eval *e, const Dwarf_Op *ops, size_t nops, bool in_cfa,
		 uint64_t *result)
{
	uint64_t stack[STACK_MAX], v1, v2, v3;
	size_t used = 0;
	bool is_location = false;

#define PUSH(x) do { if (used >= STACK_MAX) return false; stack[used++] = (x); } while (0)
#define POP(x) do { if (used == 0) return false; (x) = stack[--used]; } while (0)
#define REG(n, x) do { unsigned r_ = (unsigned)(n); \
		if (r_ >= CFI_NREGS || !(e->st->set & (1u << r_))) return false; \
		(x) = e->st->r[r_]; } while (0)

	if (nops == 0)
		return false;
	for (const Dwarf_Op *op = ops; op < ops + nops; op++) {
		switch (op->atom) {
		case DW_OP_lit0 ... DW_OP_lit31:
			PUSH((uint64_t)(op->atom - DW_OP_lit0));
			break;
		case DW_OP_addr:
			PUSH(op->number + e->row->bias);
			break;
		case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u:
		case DW_OP_const2s: case DW_OP_const4u: case DW_OP_const4s:
		case DW_OP_const8u: case DW_OP_const8s: case DW_OP_constu:
		case DW_OP_consts:
			PUSH(op->number);
			break;
		case DW_OP_reg0 ... DW_OP_reg31:
			REG(op->atom - DW_OP_reg0, v1);
			PUSH(v1);
			break;
		case DW_OP_regx:
			REG(op->number, v1);
			PUSH(v1);
			break;
		case DW_OP_breg0 ... DW_OP_breg31:
			REG(op->atom - DW_OP_breg0, v1);
			PUSH(v1 + op->number);
			break;
		case DW_OP_bregx:
			REG(op->number, v1);
			PUSH(v1 + op->number2);
			break;
		case DW_OP_dup:
			POP(v1); PUSH(v1); PUSH(v1);
			break;
		case DW_OP_drop:
			POP(v1);
			break;
		case DW_OP_pick:
			if (used <= op->number)
				return false;
			v1 = stack[used - 1 - op->number];
			PUSH(v1);
			break;
		case DW_OP_over:
			POP(v1); POP(v2); PUSH(v2); PUSH(v1); PUSH(v2);
			break;
		case DW_OP_swap:
			POP(v1); POP(v2); PUSH(v1); PUSH(v2);
			break;
		case DW_OP_rot:
			POP(v1); POP(v2); POP(v3); PUSH(v1); PUSH(v3); PUSH(v2);
			break;
		case DW_OP_deref:
		case DW_OP_deref_size:
			POP(v1);
			if (!e->read(e->arg, v1, &v1))
				return false;
			if (op->atom == DW_OP_deref_size) {
				if (op->number > 8)
					return false;
				if (op->number < 8)
					v1 &= (1ULL << (op->number * 8)) - 1;
			}
			PUSH(v1);
			break;
		case DW_OP_abs:
			POP(v1); PUSH((int64_t)v1 < 0 ? -v1 : v1);
			break;
		case DW_OP_neg:
			POP(v1); PUSH(-v1);
			break;
		case DW_OP_not:
			POP(v1); PUSH(~v1);
			break;
		case DW_OP_plus_uconst:
			POP(v1); PUSH(v1 + op->number);
			break;
		case DW_OP_div:
			POP(v2); POP(v1);
			if (v2 == 0)
				return false;
			/* INT64_MIN / -1 overflows (UB, SIGFPE on x86-64): the
			 * row is rejected, not passed on to libdwfl. */
			if (v1 == UINT64_C(1) << 63 && v2 == UINT64_MAX) {
				e->rejected = true;
				return false;
			}
			PUSH((uint64_t)((int64_t)v1 / (int64_t)v2));
			break;
		case DW_OP_mod:
			/* Unsigned, as libdwfl does: no overflow case. */
			POP(v2); POP(v1);
			if (v2 == 0)
				return false;
			PUSH(v1 % v2);
			break;
#define BIN(atom, expr) case atom: POP(v2); POP(v1); PUSH(expr); break;
		BIN(DW_OP_and, v1 & v2)
		BIN(DW_OP_minus, v1 - v2)
		BIN(DW_OP_mul, v1 * v2)
		BIN(DW_OP_or, v1 | v2)
		BIN(DW_OP_plus, v1 + v2)
		BIN(DW_OP_shl, v2 < 64 ? v1 << v2 : 0)
		BIN(DW_OP_shr, v2 < 64 ? v1 >> v2 : 0)
		BIN(DW_OP_shra, shift_right_arith(v1, v2))
		BIN(DW_OP_xor, v1 ^ v2)
		BIN(DW_OP_le, (int64_t)v1 <= (int64_t)v2)
		BIN(DW_OP_ge, (int64_t)v1 >= (int64_t)v2)
		BIN(DW_OP_eq, (int64_t)v1 == (int64_t)v2)
		BIN(DW_OP_lt, (int64_t)v1 < (int64_t)v2)
		BIN(DW_OP_gt, (int64_t)v1 > (int64_t)v2)
		BIN(DW_OP_ne, (int64_t)v1 != (int64_t)v2)
#undef BIN
		case DW_OP_nop:
			break;
		case DW_OP_call_frame_cfa:
			if (in_cfa || !eval(e, e->row->ops, e->row->cfa_nops, true, &v1))
				return false;
			PUSH(v1);
			is_location = true;
			break;
		case DW_OP_stack_value:
			is_location = false;
			break;
		default:
			return false;
		}
	}
	POP(*result);
	if (is_location && !e->read(e->arg, *result, result))
		return false;
	return true;
#undef PUSH
#undef POP
#undef REG
}

/* The cached row of lpc, built on first use; NULL when there is none yet
 * (no module for lpc, out of memory). */
static const struct row *row_of(struct cfi_cache *c, Dwfl *dwfl, uint64_t lpc)
{
	struct row **slot, *row;

	if (c->nslots == 0 || (c->count + 1) * 2 > c->nslots) {
		if (grow(c) < 0)
			return NULL;
	}
	slot = slot_for(c, lpc);
	row = *slot;
	if (!row) {
		/* Modules are reported as frames are met: no module yet is
		 * not cached, libdwfl sorts it out. */
		Dwfl_Module *mod = dwfl_addrmodule(dwfl, lpc);
		if (!mod)
			return NULL;
		row = build(mod, lpc);
		if (!row)
			return NULL;
		*slot = row;
		c->count++;
	}
	return row;
}

bool cfi_cache__divides(struct cfi_cache *c, Dwfl *dwfl, uint64_t lpc, bool *signal)
{
	const struct row *row = row_of(c, dwfl, lpc);

	*signal = row && row->signal;
	return row && row->divides;
}

int cfi_cache__step(struct cfi_cache *c, Dwfl *dwfl, uint64_t lpc,
		    const struct cfi_regs *st, struct cfi_regs *out, uint64_t *pc,
		    bool *signal, cfi_read_fn read, void *arg)
{
	const struct row *row = row_of(c, dwfl, lpc);
	bool undefined = false;

	if (!row)
		return CFI_STEP_SLOW;
	if (row->slow)
		return row->divides ? CFI_STEP_END : CFI_STEP_SLOW;

	struct eval e = { row, st, read, arg, false };
	out->set = 0;
	for (unsigned regno = 0; regno < CFI_NREGS; regno++) {
		const struct rule *r = &row->r[regno];
		uint64_t v;
		switch (r->kind) {
		case R_UNDEF:
			if (regno == row->ra)
				undefined = true;
			continue;
		case R_SAME:
			if (!(st->set & (1u << regno)))
				continue;
			v = st->r[regno];
			break;
		case R_OPS:
			if (!eval(&e, row->ops + r->first, r->nops, false, &v))
				continue;
			break;
		default:
			continue;
		}
		out->r[regno] = v;
		out->set |= 1u << regno;
	}
	/* Unwinding stops at a rejected row: going on could hand it to
	 * libdwfl (a later step not covered restarts the sample there). */
	if (e.rejected)
		return CFI_STEP_END;
	*signal = row->signal;
	if (undefined || !(out->set & (1u << row->ra)) || out->r[row->ra] == 0)
		return CFI_STEP_END;
	*pc = out->r[row->ra];
	return CFI_STEP_OK;
}

#else /* !HAVE_CFI_FAST */

struct cfi_cache {
	int unused;
};

struct cfi_cache *cfi_cache__new(void)
{
	return calloc(1, sizeof(struct cfi_cache));
}

void cfi_cache__delete(struct cfi_cache *c)
{
	free(c);
}

int cfi_cache__step(struct cfi_cache *c, Dwfl *dwfl, uint64_t lpc,
		    const struct cfi_regs *st, struct cfi_regs *out, uint64_t *pc,
		    bool *signal, cfi_read_fn read, void *arg)
{
	return CFI_STEP_SLOW;
}

bool cfi_cache__divides(struct cfi_cache *c, Dwfl *dwfl, uint64_t lpc, bool *signal)
{
	*signal = false;
	return false;
}

#endif
