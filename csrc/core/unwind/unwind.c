/*
 * DWARF unwinding of captured user stacks with libdwfl (see unwind.h).
 *
 * One Dwfl per pid, attached once with thread callbacks that serve the
 * sample being unwound: registers from PERF_SAMPLE_REGS_USER, memory from
 * the PERF_SAMPLE_STACK_USER bytes and, outside them, from the mapped ELF
 * files.  Modules are reported lazily, for the addresses the unwind visits,
 * from the symbolizer's maps, and stay reported (with their ELF, CFI and
 * debug files loaded once) for the next samples of that pid.  perf builds a
 * fresh Dwfl per sample; reusing it, and stepping through CFI rows cached
 * per pc (unwind_cfi.c, with libdwfl's own unwinder for what they do not
 * cover), is what makes this fast.
 */
#include "unwind/unwind.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>

#include "base/bits.h"
#include "record/record.h"
#include "symbol/symbolizer.h"
#include "unwind/unwind_cfi.h"

/* ------------------------------------------------------------- registers */

/*
 * Perf register number (uapi/asm/perf_regs.h) for each DWARF register of
 * the architecture; -1 when perf has none.
 */
#if defined(__x86_64__)
static const int dwarf_to_perf[] = {
	0 /* rax */, 3 /* rdx */, 2 /* rcx */, 1 /* rbx */,
	4 /* rsi */, 5 /* rdi */, 6 /* rbp */, 7 /* rsp */,
	16, 17, 18, 19, 20, 21, 22, 23 /* r8-r15 */,
	8 /* rip: the return address column */,
};
#define PERF_REG_SP 7
#define PERF_REG_PC 8
#define REGS_MASK UNWIND_X86_64_REGS_MASK
#define REGS_ABI PERF_SAMPLE_REGS_ABI_64
#elif defined(__aarch64__)
static const int dwarf_to_perf[] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30,
	31 /* sp */,
};
#define PERF_REG_SP 31
#define PERF_REG_PC 32
#define REGS_MASK UNWIND_AARCH64_REGS_MASK
#define REGS_ABI PERF_SAMPLE_REGS_ABI_64
#else
#define REGS_MASK 0ULL
#endif

uint64_t unwind__regs_mask(void)
{
	return REGS_MASK;
}

int unwind__stack_size(uint64_t requested)
{
	if (requested == 0)
		return UNWIND_DEFAULT_STACK_SIZE;
	if (requested > UNWIND_MAX_STACK_SIZE)
		return -EINVAL;
	return (int)((requested + 7) & ~7ULL);
}

int unwind__config_attr(struct perf_event_attr *attr, uint64_t stack_size)
{
	int size = unwind__stack_size(stack_size);

	if (size < 0)
		return size;
	if (REGS_MASK == 0)
		return -EOPNOTSUPP;
	attr->sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
			     PERF_SAMPLE_STACK_USER;
	attr->sample_regs_user = REGS_MASK;
	attr->sample_stack_user = (uint32_t)size;
	attr->exclude_callchain_user = 1;
	return 0;
}

#if REGS_MASK != 0
#define HAVE_UNWIND 1
#endif

/* Record fields may sit at any alignment in the caller's buffer. */
static uint64_t word_at(const uint64_t *p, size_t i)
{
	uint64_t v;

	memcpy(&v, p + i, sizeof v);
	return v;
}

/* ------------------------------------------------------------ the state */

#define MAX_SESSIONS 256      /* live Dwfl sessions (each holds open ELFs) */

/* A mapping already checked against its module. */
struct known_map {
	uint64_t start, end, pgoff;
	const char *path;             /* the symbolizer's string for the map */
	Dwfl_Module *mod;
};
#define NKNOWN 16

struct pidstate {
	uint32_t pid;
	struct known_map known[NKNOWN];
	Dwfl *dwfl;
	struct cfi_cache *cfi;        /* rows by pc, for this Dwfl's modules */
	bool attached;
	uint64_t last_use;
	struct unwinder *u;
	struct pidstate *next;
};

/* What the callbacks need about the sample being unwound. */
struct current {
	struct symbolizer *sym;
	struct pidstate *ps;
	const uint64_t *regs;
	uint64_t mask;
	uint64_t pc;                  /* the user ip, from the registers */
	const uint8_t *stack;
	uint64_t sp, stack_len;
	bool window_full;
	bool read_beyond;             /* a read above the window failed */
	bool stale;                   /* a module did not match the maps */
	bool rejected;                /* libdwfl stopped before a row it cannot run */
	bool dwfl_exact;              /* libdwfl looks the next row up at pc, not pc - 1 */
	uint64_t *out;
	size_t n, max;
	bool full;
};

#define NBUCKETS 64

struct unwinder {
	struct pidstate *buckets[NBUCKETS];
	unsigned nsessions;
	uint64_t clock;
	Elf *self_elf;                /* gives libdwfl the machine at attach */
	int self_fd;
	int vdso_fd;                  /* -2: not made yet, -1: none */
	uint8_t vdso_build_id[20], vdso_build_id_size;
	bool slow_only;               /* every step through libdwfl (tests) */
	struct current cur;
	struct unwind_stats stats;
	char err[160];
};

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

int unwinder__new(struct unwinder **out)
{
	struct unwinder *u = calloc(1, sizeof *u);

	if (!u)
		return -ENOMEM;
	u->self_fd = -1;
	u->vdso_fd = -2;
	*out = u;
	return 0;
}

static void pidstate_free(struct pidstate *ps)
{
	if (ps->dwfl)
		dwfl_end(ps->dwfl);
	cfi_cache__delete(ps->cfi);
	free(ps);
}

void unwinder__delete(struct unwinder *u)
{
	if (!u)
		return;
	for (int i = 0; i < NBUCKETS; i++) {
		struct pidstate *ps = u->buckets[i], *next;
		for (; ps; ps = next) {
			next = ps->next;
			pidstate_free(ps);
		}
	}
	if (u->self_elf)
		elf_end(u->self_elf);
	if (u->self_fd >= 0)
		close(u->self_fd);
	if (u->vdso_fd >= 0)
		close(u->vdso_fd);
	free(u);
}

void unwinder__forget(struct unwinder *u, uint32_t pid)
{
	struct pidstate **pp = &u->buckets[pid % NBUCKETS];

	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->pid == pid) {
			struct pidstate *ps = *pp;
			*pp = ps->next;
			pidstate_free(ps);
			u->nsessions--;
			return;
		}
	}
}

void unwinder__set_fast(struct unwinder *u, int on)
{
	u->slow_only = !on;
}

void unwinder__stats(const struct unwinder *u, struct unwind_stats *out)
{
	*out = u->stats;
}

const char *unwinder__last_error(const struct unwinder *u)
{
	return u->err;
}

static void set_err(struct unwinder *u, const char *what, const char *why)
{
	snprintf(u->err, sizeof u->err, "%s: %s", what, why ? why : "unknown");
}

#ifdef HAVE_UNWIND

/* Evicts the least recently used session when there are too many. */
static void evict_one(struct unwinder *u)
{
	struct pidstate *old = NULL;

	for (int i = 0; i < NBUCKETS; i++)
		for (struct pidstate *ps = u->buckets[i]; ps; ps = ps->next)
			if (!old || ps->last_use < old->last_use)
				old = ps;
	if (old)
		unwinder__forget(u, old->pid);
}

static struct pidstate *pidstate_get(struct unwinder *u, uint32_t pid)
{
	struct pidstate *ps;

	for (ps = u->buckets[pid % NBUCKETS]; ps; ps = ps->next)
		if (ps->pid == pid)
			break;
	if (!ps) {
		if (u->nsessions >= MAX_SESSIONS)
			evict_one(u);
		ps = calloc(1, sizeof *ps);
		if (!ps)
			return NULL;
		ps->dwfl = dwfl_begin(&dwfl_callbacks);
		ps->cfi = cfi_cache__new();
		if (!ps->dwfl || !ps->cfi) {
			if (ps->dwfl)
				dwfl_end(ps->dwfl);
			free(ps->cfi);
			free(ps);
			return NULL;
		}
		ps->pid = pid;
		ps->u = u;
		ps->next = u->buckets[pid % NBUCKETS];
		u->buckets[pid % NBUCKETS] = ps;
		u->nsessions++;
		u->stats.sessions++;
	}
	ps->last_use = ++u->clock;
	return ps;
}

/*
 * The module holding addr, reported from the symbolizer's map when it is
 * not yet.  A module that no longer matches the maps (the pid exec'd or
 * remapped) marks the session stale: the caller starts a fresh one.
 */
/*
 * Our own vDSO as a file libdwfl can open (a memfd), for [vdso] mappings:
 * its CFI is not in any file on disk.  Used when the mapping's build id is
 * unknown or matches ours (same kernel: live sessions, files from this
 * machine).  Returns a new fd (libdwfl takes it) or -1.
 */
static int vdso_fd(struct unwinder *u, const struct sym_map *map)
{
	if (u->vdso_fd == -2) {
		const unsigned char *img = (const void *)getauxval(AT_SYSINFO_EHDR);
		u->vdso_fd = -1;
		if (img && memcmp(img, ELFMAG, SELFMAG) == 0 && img[EI_CLASS] == ELFCLASS64) {
			const Elf64_Ehdr *eh = (const void *)img;
			size_t size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
			int fd = size > 0 && size <= (1u << 20) ?
				memfd_create("luaperf-vdso", MFD_CLOEXEC) : -1;
			if (fd >= 0 && write(fd, img, size) == (ssize_t)size) {
				Elf *e = elf_memory((char *)img, size);
				const void *id = NULL;
				ssize_t n = e ? dwelf_elf_gnu_build_id(e, &id) : -1;
				if (n > 0 && (size_t)n <= sizeof u->vdso_build_id) {
					memcpy(u->vdso_build_id, id, (size_t)n);
					u->vdso_build_id_size = (uint8_t)n;
				}
				if (e)
					elf_end(e);
				u->vdso_fd = fd;
			} else if (fd >= 0) {
				close(fd);
			}
		}
	}
	if (u->vdso_fd < 0)
		return -1;
	if (map->build_id_size && (map->build_id_size != u->vdso_build_id_size ||
				   memcmp(map->build_id, u->vdso_build_id, map->build_id_size) != 0))
		return -1;
	return fcntl(u->vdso_fd, F_DUPFD_CLOEXEC, 0);
}

/* Where a mapping's ELF image comes from, and its load bias. */
static bool map_source(struct current *c, uint64_t addr, const struct sym_map *map,
		       const char **path, uint64_t *bias, int *fd)
{
	uint64_t elf_addr;
	const char *elf_path = NULL;

	*fd = -1;
	if (strcmp(map->path, "[vdso]") == 0) {
		*fd = vdso_fd(c->ps->u, map);
		if (*fd < 0)
			return false;
		*path = "[vdso]";
		*bias = map->start - map->pgoff;  /* the vDSO links at 0 */
		return true;
	}
	if (symbolizer__elf_addr(c->sym, c->ps->pid, addr, &elf_addr, &elf_path, NULL) < 0 ||
	    !elf_path)
		return false;
	*path = elf_path;
	*bias = addr - elf_addr;
	return true;
}

/*
 * The module holding addr, reported from the symbolizer's map when it is
 * not yet.  A module that no longer matches the maps (the pid exec'd or
 * remapped) marks the session stale: the caller starts a fresh one.
 * Checked mappings are remembered, so most frames cost one map lookup.
 */
static Dwfl_Module *module_for(struct current *c, uint64_t addr)
{
	struct pidstate *ps = c->ps;
	Dwfl *dwfl = ps->dwfl;
	Dwfl_Module *m;
	struct sym_map map;
	const char *path;
	uint64_t bias;
	int fd;

	if (symbolizer__find_map(c->sym, ps->pid, addr, &map) < 0)
		return dwfl_addrmodule(dwfl, addr);
	struct known_map *k = &ps->known[(map.start >> 12) % NKNOWN];
	if (k->mod && k->start == map.start && k->end == map.end && k->pgoff == map.pgoff &&
	    k->path == map.path)
		return k->mod;
	m = dwfl_addrmodule(dwfl, addr);
	if (!map_source(c, addr, &map, &path, &bias, &fd))
		return m;
	if (m) {
		const char *mainfile = NULL;
		Dwarf_Addr mbias = 0;
		if (fd >= 0)
			close(fd);
		dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);
		if (!dwfl_module_getelf(m, &mbias) || mbias != bias ||
		    !mainfile || strcmp(mainfile, path) != 0) {
			c->stale = true;
			return NULL;
		}
	} else {
		dwfl_report_begin_add(dwfl);
		m = dwfl_report_elf(dwfl, map.path, path, fd, bias, true);
		dwfl_report_end(dwfl, NULL, NULL);
		if (!m)
			return NULL;
	}
	*k = (struct known_map){ map.start, map.end, map.pgoff, map.path, m };
	return m;
}

/* A word of process memory outside the stack window: from the file. */
static bool read_file_word(struct current *c, uint64_t addr, Dwarf_Word *out)
{
	struct sym_map map;
	Dwfl_Module *m = module_for(c, addr);
	Dwarf_Addr bias;
	Elf *elf;
	size_t size;
	const char *img;

	if (!m || symbolizer__find_map(c->sym, c->ps->pid, addr, &map) < 0)
		return false;
	if (addr + sizeof *out > map.end)
		return false;
	elf = dwfl_module_getelf(m, &bias);
	if (!elf || !(img = elf_rawfile(elf, &size)))
		return false;
	uint64_t off = addr - map.start + map.pgoff;
	if (off > size || size - off < sizeof *out)
		return false;
	memcpy(out, img + off, sizeof *out);
	return true;
}

/* A word of the sampled process: the stack window, else a mapped file. */
static bool read_word(void *arg, uint64_t addr, uint64_t *result)
{
	struct current *c = arg;

	if (addr + sizeof *result < addr)
		return false;
	/*
	 * perf 6.1 (its libunwind path, Debian's build) never serves the
	 * window's last word, so it stops one frame short on truncated stacks;
	 * doing the same keeps our stacks equal to perf script's.  Only the
	 * deepest frame of a truncated stack is lost.
	 */
	if (addr >= c->sp && addr - c->sp <= c->stack_len &&
	    c->stack_len - (addr - c->sp) > sizeof *result) {
		memcpy(result, c->stack + (addr - c->sp), sizeof *result);
		return true;
	}
	if (read_file_word(c, addr, result))
		return true;
	/*
	 * libdwfl takes an unreadable return address for the end of the
	 * stack; remember the failure so the caller can tell truncation
	 * (a read above a full window) from a clean end.
	 */
	if (addr >= c->sp && addr + sizeof *result >= c->sp + c->stack_len)
		c->read_beyond = true;
	return false;
}

static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct pidstate *ps = arg;
	uint64_t v;

	if (!read_word(&ps->u->cur, addr, &v))
		return false;
	*result = v;
	return true;
}

static pid_t cb_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	return 0;  /* only the sampled thread, through get_thread */
}

static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = arg;
	return true;
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct pidstate *ps = arg;
	struct current *c = &ps->u->cur;
	unsigned nd = sizeof dwarf_to_perf / sizeof dwarf_to_perf[0];

	for (unsigned d = 0; d < nd; d++) {
		int p = dwarf_to_perf[d];
		if (p < 0 || !(c->mask & (1ULL << p)))
			continue;
		unsigned idx = (unsigned)bits_count(c->mask & ((1ULL << p) - 1));
		Dwarf_Word v = word_at(c->regs, idx);
		if (!dwfl_thread_state_registers(thread, (int)d, 1, &v))
			return false;
	}
	dwfl_thread_state_register_pc(thread, c->pc);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = cb_next_thread,
	.get_thread = cb_get_thread,
	.memory_read = cb_memory_read,
	.set_initial_registers = cb_set_initial_registers,
};

/* Takes one frame; false when the unwind must stop (stale maps, full). */
static bool emit(struct current *c, uint64_t pc)
{
	/* Reported now, so the next step finds this frame's CFI. */
	module_for(c, pc);
	if (c->stale)
		return false;
	if (c->n >= c->max) {
		c->full = true;
		return false;
	}
	c->out[c->n++] = pc;
	return true;
}

static int cb_frame(Dwfl_Frame *state, void *arg)
{
	struct current *c = arg;
	Dwarf_Addr pc;
	bool signal = false;

	/* No isactivation: asking for it makes libdwfl step from the frame. */
	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	if (!emit(c, pc))
		return DWARF_CB_ABORT;
	/* libdwfl steps from this frame next: not through a row its
	 * evaluator could trap on (the cached step ends there too).  The
	 * row is looked up where libdwfl looks it up. */
	if (cfi_cache__divides(c->ps->cfi, c->ps->dwfl, c->dwfl_exact ? pc : pc - 1, &signal)) {
		c->rejected = true;
		return DWARF_CB_ABORT;
	}
	c->dwfl_exact = signal;
	return DWARF_CB_OK;
}

/*
 * The same unwind through the cached CFI rows (unwind_cfi.c).  Returns 0
 * (done, like dwfl_getthread_frames' 0), 1 (stopped by emit) or -1 (a step
 * it does not cover: the caller starts the sample again with libdwfl).
 */
static int fast_unwind(struct current *c)
{
#ifdef HAVE_CFI_FAST
	struct cfi_regs st[2];
	int cur = 0;
	bool lookup_exact = true;  /* the first frame and after signal frames */
	uint64_t pc = c->pc;

	st[0].set = 0;
	for (unsigned d = 0; d < CFI_NREGS; d++) {
		int p = dwarf_to_perf[d];
		if (p < 0 || !(c->mask & (1ULL << p)))
			continue;
		st[0].r[d] = word_at(c->regs, (size_t)bits_count(c->mask & ((1ULL << p) - 1)));
		st[0].set |= 1u << d;
	}
	if (!emit(c, pc))
		return 1;
	for (;;) {
		bool signal = false;
		int rc = cfi_cache__step(c->ps->cfi, c->ps->dwfl, lookup_exact ? pc : pc - 1,
					 &st[cur], &st[!cur], &pc, &signal, read_word, c);
		if (rc == CFI_STEP_SLOW)
			return -1;
		if (rc == CFI_STEP_END)
			return 0;
		cur = !cur;
		lookup_exact = signal;
		if (!emit(c, pc))
			return 1;
	}
#else
	return -1;
#endif
}

/* Libdwfl needs the machine before it can attach: ours (same host). */
static Elf *self_elf(struct unwinder *u)
{
	if (!u->self_elf) {
		u->self_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
		if (u->self_fd < 0)
			return NULL;
		elf_version(EV_CURRENT);
		u->self_elf = elf_begin(u->self_fd, ELF_C_READ_MMAP, NULL);
	}
	return u->self_elf;
}

/* Unwinds the user part into c->out; returns the UNWIND_* bits. */
static unsigned unwind_user(struct unwinder *u, uint32_t pid, uint32_t tid)
{
	struct current *c = &u->cur;
	size_t n0 = c->n;

	for (int attempt = 0; attempt < 2; attempt++) {
		struct pidstate *ps = pidstate_get(u, pid);
		if (!ps) {
			set_err(u, "unwind", strerror(ENOMEM));
			return UNWIND_FAILED;
		}
		c->ps = ps;
		c->n = n0;
		c->stale = c->read_beyond = c->full = c->rejected = false;
		c->dwfl_exact = true;  /* the first frame */
		if (!ps->attached) {
			Elf *elf = self_elf(u);
			if (!elf || !dwfl_attach_state(ps->dwfl, elf, (pid_t)pid,
						       &thread_callbacks, ps)) {
				set_err(u, "dwfl_attach_state", dwfl_errmsg(-1));
				return UNWIND_FAILED;
			}
			ps->attached = true;
		}
		int rc = u->slow_only ? -1 : fast_unwind(c);
		if (rc < 0 && !c->stale) {
			/* Not covered by the cached rows: libdwfl from the start. */
			c->n = n0;
			c->read_beyond = c->full = false;
			/* The first frame's module, before libdwfl looks for its CFI. */
			module_for(c, c->pc);
			rc = c->stale ? -1 :
				dwfl_getthread_frames(ps->dwfl, tid ? (pid_t)tid : (pid_t)pid,
						      cb_frame, c);
			if (c->rejected)
				rc = 0;  /* ends there, as the cached step does */
		}
		if (c->stale) {
			unwinder__forget(u, pid);
			continue;
		}
		if (c->full)
			return UNWIND_MAX_DEPTH;
		if (c->read_beyond && c->window_full) {
			uint64_t more = c->stack_len * 2 > UNWIND_MAX_STACK_SIZE ?
					UNWIND_MAX_STACK_SIZE : c->stack_len * 2;
			snprintf(u->err, sizeof u->err,
				 "the stack is deeper than the %llu-byte dump window: record with "
				 "a larger one (--call-graph dwarf,%llu)",
				 (unsigned long long)c->stack_len, (unsigned long long)more);
			return UNWIND_TRUNCATED;
		}
		/* Failed reads below sp (saved registers libdwfl does not
		 * need for the pc) are not an error: only libdwfl's verdict is. */
		if (rc == 0)
			return 0;
		set_err(u, "unwind", dwfl_errmsg(-1));
		return UNWIND_FAILED;
	}
	set_err(u, "unwind", "the maps keep changing");
	return UNWIND_FAILED;
}

#endif /* HAVE_UNWIND */

int unwind__sample(struct unwinder *u, struct symbolizer *sym,
		   const struct perf_event_attr *attr,
		   const struct record_sample *s, uint64_t *out_ips, size_t max,
		   unsigned *status)
{
	struct current *c = &u->cur;
	unsigned st = 0;
	size_t n = 0;

	if (status)
		*status = 0;
	u->err[0] = '\0';
	if (!attr || !(s->type & PERF_SAMPLE_REGS_USER) || !(s->type & PERF_SAMPLE_STACK_USER))
		return -EINVAL;
	u->stats.samples++;

	/* The kernel part of the chain, as the kernel gave it. */
	if (s->type & PERF_SAMPLE_CALLCHAIN) {
		bool kernel = false;
		for (uint64_t i = 0; i < s->nr_callchain; i++) {
			uint64_t ip = word_at(s->callchain, i);
			if (ip >= PERF_CONTEXT_MAX) {
				kernel = ip == PERF_CONTEXT_KERNEL;
				if (!kernel)
					break;
			} else if (!kernel) {
				continue;
			}
			if (n >= max) {
				st |= UNWIND_MAX_DEPTH;
				break;
			}
			out_ips[n++] = ip;
		}
	}

	if (s->regs_user_abi == PERF_SAMPLE_REGS_ABI_NONE || !s->regs_user ||
	    s->nr_regs_user == 0) {
		st |= UNWIND_NO_USER;
		goto done;
	}
#ifdef HAVE_UNWIND
	uint64_t mask = attr->sample_regs_user;
	if (s->regs_user_abi != REGS_ABI ||
	    (unsigned)bits_count(mask) != s->nr_regs_user ||
	    !(mask & (1ULL << PERF_REG_SP)) || !(mask & (1ULL << PERF_REG_PC))) {
		set_err(u, "unwind", "the sample's user registers do not fit this architecture");
		st |= UNWIND_FAILED;
		goto done;
	}
	if (n + 1 >= max) {
		st |= UNWIND_MAX_DEPTH;
		goto done;
	}
	out_ips[n++] = PERF_CONTEXT_USER;
	c->sym = sym;
	c->regs = s->regs_user;
	c->mask = mask;
	c->sp = word_at(s->regs_user, (size_t)bits_count(mask & ((1ULL << PERF_REG_SP) - 1)));
	c->pc = word_at(s->regs_user, (size_t)bits_count(mask & ((1ULL << PERF_REG_PC) - 1)));
	c->stack = s->stack_user;
	c->stack_len = s->stack_user ? s->stack_user_dyn_size : 0;
	if (c->stack_len > s->stack_user_size)
		c->stack_len = s->stack_user_size;
	c->window_full = s->stack_user_size > 0 && c->stack_len == s->stack_user_size;
	c->out = out_ips;
	c->n = n;
	c->max = max;
	st |= unwind_user(u, s->pid, s->tid);
	u->stats.frames += c->n - n;
	n = c->n;
	c->out = NULL;
	c->regs = NULL;
	c->stack = NULL;
#else
	(void)c;
	(void)attr;
	set_err(u, "unwind", "no DWARF register table for this architecture");
	st |= UNWIND_FAILED;
#endif
done:
	if (st & UNWIND_TRUNCATED)
		u->stats.truncated++;
	if (st & UNWIND_FAILED)
		u->stats.failed++;
	if (status)
		*status = st;
	return (int)n;
}
