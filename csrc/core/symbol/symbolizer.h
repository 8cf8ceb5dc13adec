/*
 * Symbolization: addresses of a process (or the kernel) to functions, shared
 * objects, source files and lines.
 *
 * A symbolizer keeps per-pid address spaces, fed from the records of a
 * session or a perf.data file (MMAP, MMAP2, COMM, FORK, EXIT) or read from
 * /proc/PID/maps, and a cache of ELF objects (keyed by build id, or device +
 * inode + mtime) whose symbol tables, debug files and DWARF line tables are
 * loaded lazily, the first time an address in them is resolved.  Kernel
 * addresses resolve as perf resolves them (kspace.h): in a recording,
 * inside the kernel and module maps of its MMAP records, with the symbols
 * of the kernel it recorded (its build id), relocated; live, through
 * /proc/kallsyms.  JIT code resolves through /tmp/perf-PID.map.
 *
 * Resolve unique addresses (after aggregation), not once per sample: a
 * resolve is a hash lookup, two binary searches and, for lines, a cached
 * DWARF lookup.
 *
 * Not thread-safe: one symbolizer per thread.  Plain C, no Lua; -errno
 * returns.  Implemented in symbolizer.c, addrspace.c, dso.c, dwarfline.c,
 * kallsyms.c, perfmap.c and demangle.c.
 */
#ifndef LUAPERF_SYMBOLIZER_H
#define LUAPERF_SYMBOLIZER_H

#include <stddef.h>
#include <stdint.h>

struct record;
struct symbolizer;

struct symbolizer *symbolizer__new(void);
void symbolizer__delete(struct symbolizer *sym);

/*
 * Feeds one decoded record.  MMAP and MMAP2 (executable ones; data maps are
 * ignored) add a mapping to rec->u.mmap.pid (cpumode kernel ones: the
 * kernel's map or a module's), COMM with
 * PERF_RECORD_MISC_COMM_EXEC drops the maps of the old image, FORK copies
 * the parent's maps to a new process, EXIT is noted.  Other types are
 * ignored.  Returns 0, or -ENOMEM.
 */
int symbolizer__feed(struct symbolizer *sym, const struct record *rec);

/*
 * The same for callers that have the fields but no struct record (the Lua
 * binding, tests).  path is copied.  build_id may be NULL.
 */
int symbolizer__add_map(struct symbolizer *sym, uint32_t pid, uint64_t start,
			uint64_t len, uint64_t pgoff, const char *path,
			const uint8_t *build_id, size_t build_id_size);
int symbolizer__fork(struct symbolizer *sym, uint32_t ppid, uint32_t pid);
/* A kernel-mode MMAP record: the kernel's map ("[kernel.kallsyms]_text",
 * pgoff: where _text was) or a module's. */
int symbolizer__feed_kernel_map(struct symbolizer *sym, uint64_t start, uint64_t len,
				uint64_t pgoff, const char *filename);

/*
 * The build id a recording saw for path (perf.data's HEADER_BUILD_ID).
 * Mappings of path without a build id of their own take it.  As in perf, a
 * mapping with a build id resolves only through an ELF with that id: the
 * file at path (under symfs), else perf's build-id cache
 * (~/.debug/.build-id/), else /usr/lib/debug/.build-id/; with none its
 * addresses stay unnamed (a warning says why).  0 or -ENOMEM.
 */
int symbolizer__set_build_id(struct symbolizer *sym, const char *path,
			     const uint8_t *build_id, size_t build_id_size);

/*
 * Offline: the addresses are a recording's (a perf.data file), whose pids
 * are not this machine's processes: nothing is read from /proc/PID/ (no
 * root, map_files, mem or owner), and the vdso is this kernel's, used
 * only when its build id is the recorded one.  Live (the default): a
 * mapped file may also be read through the process's /proc entries.
 */
void symbolizer__set_offline(struct symbolizer *sym, int offline);

/*
 * perf's --symfs DIR: objects are read as DIR/PATH, and the debug files of
 * /usr/lib/debug/.build-id/ under DIR too (perf's build-id cache in
 * ~/.debug is not under it).  "" or NULL: none.  0 or -ENAMETOOLONG.
 */
int symbolizer__set_symfs(struct symbolizer *sym, const char *dir);

/*
 * Reads /proc/PID/maps (executable mappings) into pid's address space,
 * replacing what was known.  Returns 0 or -errno (-ESRCH: no such process).
 */
int symbolizer__load_proc(struct symbolizer *sym, uint32_t pid);

/*
 * Live sessions over processes that ran before them (system-wide, perf
 * top): a pid no record and no load gave maps to has them read from
 * /proc/PID/maps at its first lookup, once (a process gone by then stays
 * without maps).  Off by default; never offline.
 */
void symbolizer__set_proc_fallback(struct symbolizer *sym, int on);

/* A mapping of a process, as symbolizer__find_map returns it. */
struct sym_map {
	uint64_t start, end;          /* [start, end) in the process */
	uint64_t pgoff;               /* file offset of start */
	const char *path;             /* as mapped ("/usr/lib/.../libc.so.6",
					 "[vdso]", "//anon", ...) */
	uint8_t build_id[20];         /* from the record, else from the file */
	uint8_t build_id_size;        /* 0: unknown (not read yet or none) */
};

/*
 * The mapping that holds addr in pid's address space (for unwinders and
 * reports).  Fills *out; strings stay valid until symbolizer__delete.
 * Returns 0, -ENOENT (no such pid or no mapping there).  The build id is
 * read from the file (once, cached) when the records did not carry it.
 */
/*
 * The path of the object that holds addr, as symbolizer__resolve names its
 * dso (kernel: "[kernel.kallsyms]" or a module), without reading the object:
 * for reports keyed by object alone.  NULL: no mapping there, or an
 * anonymous one (JIT code: resolve it).
 */
const char *symbolizer__object_of(struct symbolizer *sym, uint32_t pid, uint64_t addr,
				  int kernel);

/*
 * Where a user addr of pid's current mappings is in a file: the object a
 * resolve of it binds (*bound = 1), or the mapping's path when none can
 * be bound (*bound = 0), and addr's offset in that file.  Two addresses
 * at one place resolve alike in every process: callers cache by it.
 * NULL: no mapping there, or an anonymous one (JIT code: its resolve is
 * the process's own).
 */
const void *symbolizer__file_place(struct symbolizer *sym, uint32_t pid, uint64_t addr,
				   uint64_t *offset, int *bound);

/*
 * The generation of pid's address space: it changes when a mapping replaces
 * addresses another object held (0 for a pid with no space).  The _at
 * calls (find_map_at, resolve_at) look addresses up in the mappings of a
 * generation (UINT32_MAX: the latest), as they were when a profile's
 * samples were taken.
 */
uint32_t symbolizer__space_gen(struct symbolizer *sym, uint32_t pid);
int symbolizer__find_map_at(struct symbolizer *sym, uint32_t pid, uint32_t gen, uint64_t addr,
			    struct sym_map *out);
int symbolizer__find_map(struct symbolizer *sym, uint32_t pid, uint64_t addr,
			 struct sym_map *out);

/*
 * The address in the ELF file's own virtual address space (what .eh_frame,
 * .debug_frame, symbol tables and DWARF use) for a process address inside
 * that mapping: file offset through the PT_LOAD headers, so PIE, shared
 * objects and non-PIE executables all work.  *elf_path (optional) gets the
 * file to open (NULL for [vdso], whose image the symbolizer holds) and
 * *debug_path (optional) the separate debug file, or NULL.  Returns 0 or
 * -ENOENT / -errno (the file cannot be read, the offset is in no segment).
 */
int symbolizer__elf_addr(struct symbolizer *sym, uint32_t pid, uint64_t addr,
			 uint64_t *elf_addr, const char **elf_path,
			 const char **debug_path);

enum {
	SYM_NAMES = 0,                /* name, offset, dso, build id */
	SYM_LINES = 1 << 0,           /* + file:line from DWARF */
	SYM_INLINES = 1 << 1,         /* + the inline chain (implies lines) */
	/* What the address is, from the sample's cpumode and the call chain's
	 * context marks; neither: guessed from the address (upper half). */
	SYM_KERNEL = 1 << 2,
	SYM_USER = 1 << 3,
};

enum sym_kind {
	SYM_KIND_USER = 0,
	SYM_KIND_KERNEL,
	SYM_KIND_JIT,                 /* /tmp/perf-PID.map */
	SYM_KIND_VDSO,
};

/* One inlined function of an inline chain, innermost first. */
struct sym_inline {
	const char *name;             /* demangled */
	int plain;                    /* named by DW_AT_name alone (C) */
	const char *file;             /* NULL when DWARF does not say */
	unsigned line;
};

struct sym_result {
	enum sym_kind kind;
	const char *name;             /* demangled; NULL when no symbol covers
					 addr (the dso may still be known) */
	const char *raw_name;         /* as in the symbol table (mangled) */
	uint64_t offset;              /* addr - symbol start */
	uint64_t sym_start, sym_size; /* in the process's address space */
	const char *dso;              /* path of the mapping, "[kernel.kallsyms]",
					 "[module]", "[vdso]", "/tmp/perf-N.map" */
	uint64_t dso_addr;            /* addr in the ELF's own address space */
	/* A user addr in a file's mapping, named or not: the mapping's start
	 * and file offset (what symbolizer__find_map_at would say of them). */
	int in_file_map;
	uint64_t map_start, map_pgoff;
	char build_id[41];            /* lowercase hex, "" when unknown */
	const char *file;             /* SYM_LINES: source file, or NULL */
	unsigned line;                /* (of addr itself: the innermost line) */
	/*
	 * SYM_INLINES, when addr is in code inlined into the symbol: the
	 * inlined functions, innermost first, each with its file:line at addr
	 * (inlined[0] has file:line above), and where the symbol's own
	 * function called the outermost one.  addr2line -f -i prints these
	 * frames followed by the symbol at call_file:call_line.
	 */
	unsigned nr_inlined;
	const struct sym_inline *inlined;
	const char *call_file;
	unsigned call_line;
	/* SYM_INLINES: the DWARF name of the C function holding addr, when it
	 * has no linkage name (perf prints it "(inlined)" where it differs
	 * from the symbol's: __libc_start_main_impl); NULL otherwise. */
	const char *func;
};

/*
 * Resolves addr in pid's address space (kernel addresses in the kernel's,
 * whatever pid is; flags SYM_KERNEL / SYM_USER say which it is).  Fills *out and returns 0 when a symbol covers addr;
 * otherwise returns -ENOENT and *out still names the dso when one is mapped
 * there.  Strings stay valid until symbolizer__delete; the inlined array
 * until the next resolve call.  symbolizer__last_error says why a resolve
 * failed ("no mapping for 0x... in pid N", "kallsyms addresses are hidden
 * (kernel.kptr_restrict=1 ...)", "no symbol in /usr/bin/foo at 0x...").
 */
int symbolizer__resolve(struct symbolizer *sym, uint32_t pid, uint64_t addr,
			unsigned flags, struct sym_result *out);
/* The same in the mappings of generation gen (symbolizer__space_gen). */
int symbolizer__resolve_at(struct symbolizer *sym, uint32_t pid, uint32_t gen, uint64_t addr,
			   unsigned flags, struct sym_result *out);

/*
 * Resolves n addresses of one pid into out[0..n-1]; errs[i] (optional) gets
 * each return value.  Returns how many resolved.  Inline chains of the batch
 * stay valid until the next resolve call.
 */
size_t symbolizer__resolve_many(struct symbolizer *sym, uint32_t pid,
				const uint64_t *addrs, size_t n, unsigned flags,
				struct sym_result *out, int *errs);
size_t symbolizer__resolve_many_at(struct symbolizer *sym, uint32_t pid, uint32_t gen,
				   const uint64_t *addrs, size_t n, unsigned flags,
				   struct sym_result *out, int *errs);

/* Why the last resolve/load failed, "" when it did not. */
const char *symbolizer__last_error(struct symbolizer *sym);

/*
 * A warning the caller should show the user (kptr_restrict hides kernel
 * addresses; an object left unsymbolized, and why: its build id is not the
 * recorded one, it cannot be read), or NULL.  Each is returned once, in
 * the order they arose: call until NULL.
 */
const char *symbolizer__take_warning(struct symbolizer *sym);

/*
 * JIT maps: /tmp/perf-PID.map is used only when it is a regular file (not a
 * symlink) owned by the process's user or root; it is reloaded when it
 * grows.  The directory can be changed for tests (default "/tmp").
 */
void symbolizer__set_perfmap_dir(struct symbolizer *sym, const char *dir);

/*
 * Kernel symbols from this file whatever the recording says (perf's
 * --kallsyms; relocated by the recording's reference symbol), or from this
 * ELF vmlinux (perf's --vmlinux: only when its build id is the recorded
 * kernel's, or the recording names none).  Checked now (0 or -errno), read
 * at the first kernel address resolved.
 */
int symbolizer__load_kallsyms(struct symbolizer *sym, const char *path);
int symbolizer__load_vmlinux(struct symbolizer *sym, const char *path);

/*
 * A kernel-mode entry of a recording's build-id table (perf.data's
 * HEADER_BUILD_ID, cpumode kernel): "[kernel.kallsyms]" gives the recorded
 * kernel's build id (another kernel than this one: its symbols come from
 * perf's build-id cache or nowhere), a module's path its name in reports.
 * Marks the symbolizer as a recording's (symbolizer__set_recorded).
 * 0 or -ENOMEM.
 */
int symbolizer__set_kernel_build_id(struct symbolizer *sym, const char *path,
				    const uint8_t *build_id, size_t build_id_size);
/*
 * The addresses are a recording's: kernel ones are the kernel's only inside
 * the kernel and module maps its records gave (none: [unknown]), as in perf.
 */
void symbolizer__set_recorded(struct symbolizer *sym);
/*
 * The object perf names for a kernel address ("[kernel.kallsyms]", a
 * module), symbol or not: 0 and *dso, or -ENOENT (no kernel map holds it).
 * module_start (may be NULL): where the recording mapped the module, or
 * UINT64_MAX for the kernel and modules the running kernel's kallsyms
 * places.
 */
int symbolizer__find_kernel_map(struct symbolizer *sym, uint64_t addr, const char **dso,
				uint64_t *module_start);

/*
 * Demangles a C++ (Itanium) or Rust (legacy or v0) symbol into buf in
 * perf's default form (no parameter list); returns buf, or name itself
 * when it is not mangled or does not demangle.
 */
const char *symbolizer__demangle(const char *name, char *buf, size_t size);
/* The same with parameters and qualifiers, as c++filt and nm -C print. */
const char *symbolizer__demangle_verbose(const char *name, char *buf, size_t size);

#endif
