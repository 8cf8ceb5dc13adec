/*
 * Profile views: a stack table (stacktab.h) symbolized once, the way every
 * report reads it.  Each unique (address space, address) of the table is
 * resolved once and becomes a frame (or, with inline expansion, a run of
 * frames: the function holding the code, then the functions inlined there,
 * innermost last); each stack becomes an array of frame ids, root first.
 * Names, objects and files are interned, so reports key rows, call graphs
 * and folded stacks on integers and build no string per sample or frame.
 *
 * Frames follow lua/perf/stacks.lua's rules (what every renderer reads):
 * an address no symbol covers keeps the object mapped there, anonymous
 * executable memory is JIT code named after /tmp/perf-PID.map, and an
 * unnamed user frame carries its place in the mapping (rel: perf's
 * map_ip), which reports key it by.
 *
 *   struct profview_opts o = { .sym = sym };
 *   struct profview *pv;
 *   if (profview__new(st, &o, &pv) < 0) ...
 *   for (i = 0; i < profview__nstacks(pv); i++) profview__stack(pv, i, &ids, &n);
 *
 * The view reads st (its entries, names and comms) and keeps no copy of
 * it: st outlives the view.  Plain C, no Lua; -errno returns.
 * Implemented in profview.c.
 */
#ifndef LUAPERF_PROFVIEW_H
#define LUAPERF_PROFVIEW_H

#include <stddef.h>
#include <stdint.h>

struct stacktab;
struct stacktab_entry;
struct symbolizer;
struct keytab;
struct profview;

enum pv_kind {
	PV_USER = 0,
	PV_KERNEL,
	PV_JIT,
	PV_INLINE,
	PV_LUA,        /* a named frame of the table (Lua function, VM state) */
};

#define PV_NONE UINT32_MAX   /* no string */
/* symname and abs_symname of an unnamed frame until profview__symnames */
#define PV_PENDING (UINT32_MAX - 1)
/* The root a DWARF unwind that ran off the captured stack was given
 * (perfdata_profile.h's PERFDATA_PROFILE_TRUNCATED_ADDR). */
#define PV_TRUNCATED_ADDR 1ULL

struct pv_frame {
	uint64_t addr;                 /* has_addr */
	uint64_t rel;                  /* has_rel: addr within its mapping */
	uint64_t offset;               /* has_offset: from the symbol's start */
	uint64_t sym_start;            /* has_offset: the symbol's start in its
					  object (perf keys symbols by it) */
	uint64_t dso_addr;             /* has_dso_addr: addr in the object's ELF
					  space (objdump's address) */
	uint32_t name, mangled, dso, file, build_id;   /* string ids or PV_NONE */
	uint32_t line;                 /* with file */
	/* What reports print and key on (string ids): the symbol as perf
	 * report prints it (name, else the address in the object, else the
	 * address), the same with the raw address (a call chain entry's
	 * key), the object's short name, and the label of folded stacks and
	 * flame graphs. */
	uint32_t symname, abs_symname, dsoname, label;
	/* Views made with lines: perf report's srcline of the frame (string
	 * id): "file:line" (the file's base name), else "sym+offset"
	 * (decimal), else "object[hex address]", else "??:0". */
	uint32_t srcline;
	uint8_t kind;                  /* enum pv_kind */
	/* bits: a system-wide view has a frame per address of each process */
	unsigned has_addr : 1, has_rel : 1, has_offset : 1, has_dso_addr : 1;
	unsigned has_dso : 1;          /* a dso other than "[unknown]" */
};

struct profview_opts {
	struct symbolizer *sym;        /* NULL: frames are bare addresses */
	int lines;                     /* file:line of each frame */
	int inlines;                   /* expand inline chains into frames */
	int truncated_marks;           /* user address 1 is "[truncated]" */
	int no_frames;                 /* stacks with no frames (depth only) */
	/* Frames that fold alike (label and kind) are one frame, and stacks
	 * of the same frames share their ids: the view folded stacks and
	 * flame graphs read, a fraction of the memory on a system-wide file
	 * (a frame per function instead of per address of each process).
	 * Such a frame's address, object and line are its first address's;
	 * profview__symnames refuses the view (-EOPNOTSUPP): no reports. */
	int by_label;
	/* Frames a report cannot tell apart are one frame: a named symbol's
	 * addresses (kind, object, name and start alike), an unnamed address
	 * of several processes (object, place and raw address alike).  Such
	 * a frame's address, offset, file and line are its first address's:
	 * for reports and their call graphs (whose nodes are symbols), not
	 * for what prints an address's place.  Ignored with lines or inlines. */
	int by_symbol;
};

int profview__new(const struct stacktab *st, const struct profview_opts *o,
		  struct profview **out);
void profview__delete(struct profview *pv);

const struct stacktab *profview__table(const struct profview *pv);
/* Whether the view was made with lines (frames have srclines). */
int profview__has_lines(const struct profview *pv);
size_t profview__nstacks(const struct profview *pv);
/* Stack i's frame ids, root first. */
void profview__stack(const struct profview *pv, size_t i, const uint32_t **ids, unsigned *n);
/* The same as a report counts it: a sample whose chain perf discards (a
 * context it does not know) has no frames, but perf report counts its own
 * ip: that frame alone. */
void profview__report_stack(const struct profview *pv, size_t i, const uint32_t **ids,
			    unsigned *n);
/* Whether stack i is such a sample: its report stack is its own ip alone,
 * with no call chain entry. */
int profview__discarded(const struct profview *pv, size_t i);
/* The stack's depth in addresses (what no_frames views still know). */
unsigned profview__depth(const struct profview *pv, size_t i);
/* Stack i's command name (string id: the name its samples were taken
 * under, else the pid's last COMM; PV_NONE), its thread's last name
 * (PV_NONE) and its event (string id, "" when unknown). */
uint32_t profview__comm(const struct profview *pv, size_t i);
uint32_t profview__thread_comm(const struct profview *pv, size_t i);
uint32_t profview__event(const struct profview *pv, size_t i);

size_t profview__nframes(const struct profview *pv);
const struct pv_frame *profview__frame(const struct profview *pv, uint32_t id);
/* Makes every frame's symname and abs_symname (unnamed frames' are made
 * on demand: PV_PENDING until then).  Readers of either call it first;
 * idempotent.  0 or -ENOMEM (-EOPNOTSUPP for a by_label view). */
int profview__symnames(struct profview *pv);

/* perf's short name of an object (a report's dso column) into buf:
 * "[ath9k]" for a kernel module (kernel: a kernel frame's object),
 * "[JIT] tid N" for a perf map, else the basename.  0 or -ENOMEM. */
int profview__dso_name(const char *dso, int kernel, char *buf, size_t size);

/* Interned strings. */
const char *profview__str(const struct profview *pv, uint32_t id);
size_t profview__strlen(const struct profview *pv, uint32_t id);
/* How many strings are interned (ids are below it). */
size_t profview__nstrs(const struct profview *pv);
/* The id of s, interning it (string ids compare equal iff the strings do). */
int profview__intern(struct profview *pv, const char *s, size_t len, uint32_t *id);
/* Bytes the view holds. */
size_t profview__bytes(const struct profview *pv);

/* The stacks a flame graph draws alike (one event and command, frames of
 * the same labels and kinds), numbered first seen first: group[i] is
 * stack i's, PV_NONE where keep (NULL: all) leaves stack i out; *ngroups
 * their count.  0 or -ENOMEM. */
int profview__flame_groups(const struct profview *pv, const uint8_t *keep, uint32_t *group,
			   size_t *ngroups);

/* Whether a mapping of this path is anonymous memory (its code: JIT code,
 * named after /tmp/perf-PID.map). */
int profview__anon_path(const char *path);

/* Orders two interned strings as Lua's `<` does in the C locale (bytes). */
int profview__strcmp(const struct profview *pv, uint32_t a, uint32_t b);

#endif
