/*
 * The symbolizer: address spaces (addrspace.c) map a pid's address to a
 * mapping, the mapping to an ELF object (dso.c), the file offset to the
 * object's own address, and that to a symbol (symtab.c) and, when asked,
 * to DWARF lines (dwarfline.c).  Kernel addresses go to kallsyms.c, JIT
 * code to perfmap.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/hex.h"
#include "symbol/symbolizer.h"
#include "record/record.h"
#include "symbol/addrspace.h"
#include "symbol/dso.h"
#include "symbol/dwarfline.h"
#include "symbol/kspace.h"
#include "symbol/perfmap.h"
#include "base/keytab.h"

#define MAX_INLINE 64
/* x86-64 (and arm64) kernels live in the upper half. */
#define KERNEL_START UINT64_C(0xffff800000000000)

struct symbolizer {
	struct addrspaces as;
	struct strpool *pool;
	struct dso_cache *dsos;
	struct kspace kernel;
	char perfmap_dir[256];
	char err[512];
	struct sym_miss miss;         /* the last resolve's, spelt into err when
					 asked (symbolizer__last_error) */
	char warning[512];
	int warning_state;            /* 0: none, 1: pending, 2: taken */
	struct addrspace *last;       /* the pid asked last */
	struct sym_inline *inl;       /* inline frames of the current call */
	size_t inl_n, inl_cap;
	struct known_bid *bids;       /* build ids by path, from the recording */
	int offline;                  /* a recording's pids: no /proc reads */
	int proc_fallback;            /* live: an unknown pid's maps from /proc */
	char symfs[PATH_MAX];         /* perf's --symfs, "" when none */
	struct obj_warning *owarn;    /* why objects were skipped, in order */
	struct obj_warning **owarn_tail;
	struct obj_warning *owarn_next; /* the next one to hand out */
	/* Objects already bound, by (path, build id): every process maps libc,
	 * and binding opens the file.  Only where the answer cannot change
	 * (offline, or the build id names the content). */
	struct keytab *bound;
	struct bound_obj *bound_v;
	size_t bound_cap;
};

struct bound_obj {
	struct dso *dso;
	int err;
};

/* One object skipped (not symbolized), said once. */
struct obj_warning {
	const char *path;             /* interned: the mapping's path */
	struct obj_warning *next;
	char text[];
};

/* A path's build id as the recording saw it (few: one per object hit). */
struct known_bid {
	const char *path;             /* interned */
	uint8_t size;
	uint8_t id[20];
	struct known_bid *next;
};

struct symbolizer *symbolizer__new(void)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	addrspaces__init(&s->as);
	kspace__init(&s->kernel);
	s->pool = strpool__new();
	s->dsos = dso_cache__new();
	if (s->pool == NULL || s->dsos == NULL) {
		symbolizer__delete(s);
		return NULL;
	}
	snprintf(s->perfmap_dir, sizeof(s->perfmap_dir), "/tmp");
	s->owarn_tail = &s->owarn;
	return s;
}

void symbolizer__delete(struct symbolizer *s)
{
	if (s == NULL)
		return;
	addrspaces__exit(&s->as);
	kspace__exit(&s->kernel);
	dso_cache__delete(s->dsos);
	strpool__delete(s->pool);
	keytab__delete(s->bound);
	free(s->bound_v);
	free(s->inl);
	while (s->bids != NULL) {
		struct known_bid *n = s->bids->next;
		free(s->bids);
		s->bids = n;
	}
	while (s->owarn != NULL) {
		struct obj_warning *n = s->owarn->next;
		free(s->owarn);
		s->owarn = n;
	}
	free(s);
}

const char *symbolizer__last_error(struct symbolizer *s)
{
	return sym_miss__text(&s->miss, s->err, sizeof(s->err));
}

/* No error (yet) for the call starting. */
static void err_clear(struct symbolizer *s)
{
	s->err[0] = '\0';
	s->miss.kind = MISS_NONE;
}

/* A miss of the kernel's lookup, or of a kernel whose symbols are hidden. */
static void kernel_miss(struct symbolizer *s, int hidden)
{
	if (hidden) {
		snprintf(s->err, sizeof(s->err), "%s", s->warning);
		s->miss.kind = MISS_NONE;
	} else if (s->kernel.miss.kind != MISS_NONE) {
		s->miss = s->kernel.miss;
	} else {
		snprintf(s->err, sizeof(s->err), "%s", s->kernel.why);
		s->miss.kind = MISS_NONE;
	}
}

const char *symbolizer__take_warning(struct symbolizer *s)
{
	const char *w;

	if (s->warning_state == 1) {
		s->warning_state = 2;
		return s->warning;
	}
	if (s->owarn_next == NULL)
		return NULL;
	w = s->owarn_next->text;
	s->owarn_next = s->owarn_next->next;
	return w;
}

void symbolizer__set_offline(struct symbolizer *s, int offline)
{
	s->offline = offline != 0;
}

int symbolizer__set_symfs(struct symbolizer *s, const char *dir)
{
	size_t n = dir != NULL ? strlen(dir) : 0;

	/* "/" and "" both mean the root: no prefix. */
	while (n > 0 && dir[n - 1] == '/')
		n--;
	if (n >= sizeof(s->symfs) - 64)
		return -ENAMETOOLONG;
	memcpy(s->symfs, dir != NULL ? dir : "", n);
	s->symfs[n] = '\0';
	return 0;
}

/* Says once per object why its addresses stay unnamed. */
static void warn_object(struct symbolizer *s, const char *path, const char *fmt, ...)
{
	struct obj_warning *w;
	va_list ap;
	char buf[1024];
	int n;

	for (w = s->owarn; w != NULL; w = w->next)
		if (w->path == path)
			return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	w = malloc(sizeof(*w) + strlen(buf) + 1);
	if (w == NULL)
		return;
	w->path = path;
	w->next = NULL;
	strcpy(w->text, buf);
	*s->owarn_tail = w;
	s->owarn_tail = &w->next;
	if (s->owarn_next == NULL)
		s->owarn_next = w;
}

void symbolizer__set_perfmap_dir(struct symbolizer *s, const char *dir)
{
	snprintf(s->perfmap_dir, sizeof(s->perfmap_dir), "%s", dir);
}

static enum map_kind kind_of(const char *path)
{
	if (strcmp(path, "[vdso]") == 0)
		return MAP_VDSO;
	/* Anonymous executable memory is where JITs put code. */
	if (path[0] == '\0' || path[0] == '[' || strncmp(path, "//anon", 6) == 0 ||
	    strncmp(path, "/memfd:", 7) == 0 || strncmp(path, "anon_inode:", 11) == 0)
		return MAP_ANON;
	return MAP_FILE;
}

int symbolizer__add_map(struct symbolizer *s, uint32_t pid, uint64_t start,
			uint64_t len, uint64_t pgoff, const char *path,
			const uint8_t *build_id, size_t build_id_size)
{
	struct addrspace *as = addrspaces__get(&s->as, pid, 1);
	struct map m;

	if (as == NULL)
		return -ENOMEM;
	memset(&m, 0, sizeof(m));
	m.start = start;
	m.end = start + len < start ? UINT64_MAX : start + len;
	m.pgoff = pgoff;
	m.path = strpool__intern(s->pool, path != NULL ? path : "");
	if (m.path == NULL)
		return -ENOMEM;
	m.kind = (uint8_t)kind_of(m.path);
	if (build_id != NULL && build_id_size > 0) {
		m.bid_size = (uint8_t)(build_id_size > 20 ? 20 : build_id_size);
		memcpy(m.bid, build_id, m.bid_size);
	}
	return addrspace__insert(as, &m);
}

int symbolizer__set_build_id(struct symbolizer *s, const char *path,
			     const uint8_t *build_id, size_t build_id_size)
{
	const char *p = strpool__intern(s->pool, path);
	struct known_bid *k;

	if (p == NULL)
		return -ENOMEM;
	if (build_id_size == 0)
		return 0;
	for (k = s->bids; k != NULL; k = k->next)
		if (k->path == p)
			break;
	if (k == NULL) {
		k = calloc(1, sizeof(*k));
		if (k == NULL)
			return -ENOMEM;
		k->path = p;
		k->next = s->bids;
		s->bids = k;
	}
	k->size = (uint8_t)(build_id_size > 20 ? 20 : build_id_size);
	memcpy(k->id, build_id, k->size);
	return 0;
}

int symbolizer__feed_kernel_map(struct symbolizer *s, uint64_t start, uint64_t len,
				uint64_t pgoff, const char *filename)
{
	return kspace__feed_mmap(&s->kernel, start, len, pgoff, filename != NULL ? filename : "");
}

int symbolizer__fork(struct symbolizer *s, uint32_t ppid, uint32_t pid)
{
	struct addrspace *parent, *child;

	/* A thread shares its process's maps. */
	if (ppid == pid)
		return 0;
	parent = addrspaces__get(&s->as, ppid, 0);
	child = addrspaces__get(&s->as, pid, 1);
	if (child == NULL)
		return -ENOMEM;
	child->exited = 0;
	if (parent == NULL) {
		addrspace__clear(child);
		return 0;
	}
	return addrspace__copy(child, parent);
}

int symbolizer__feed(struct symbolizer *s, const struct record *r)
{
	switch (r->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		const uint8_t *bid = NULL;
		size_t bid_size = 0;

		/* Data maps (mmap_data) name no code; kernel maps (the kernel's and
		 * its modules') make the kernel's address space. */
		if (r->misc & PERF_RECORD_MISC_MMAP_DATA)
			return 0;
		if ((r->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
			return kspace__feed_mmap(&s->kernel, r->u.mmap.start, r->u.mmap.len,
						 r->u.mmap.pgoff, r->u.mmap.filename);
		if (r->u.mmap.pid == (uint32_t)-1)
			return 0;
		if (r->type == PERF_RECORD_MMAP2 && (r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
			bid = r->u.mmap.build_id;
			bid_size = r->u.mmap.build_id_size;
		}
		return symbolizer__add_map(s, r->u.mmap.pid, r->u.mmap.start, r->u.mmap.len,
					   r->u.mmap.pgoff, r->u.mmap.filename, bid, bid_size);
	}
	case PERF_RECORD_COMM:
		/* An exec keeps the maps, as perf's do: the new image's MMAP
		 * records replace what they overlap, and a sample taken during
		 * the exec (after its COMM, before it returns) still has the old
		 * image's user stack. */
		return 0;
	case PERF_RECORD_FORK:
		return symbolizer__fork(s, r->u.task.ppid, r->u.task.pid);
	case PERF_RECORD_EXIT: {
		struct addrspace *as;
		/* Kept: samples can be processed after the exit record. */
		if (r->u.task.pid == r->u.task.tid &&
		    (as = addrspaces__get(&s->as, r->u.task.pid, 0)) != NULL)
			as->exited = 1;
		return 0;
	}
	default:
		return 0;
	}
}

int symbolizer__load_proc(struct symbolizer *s, uint32_t pid)
{
	char path[64], line[4352];
	struct addrspace *as;
	FILE *f;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%u/maps", (unsigned)pid);
	f = fopen(path, "re");
	if (f == NULL) {
		rc = errno == ENOENT ? -ESRCH : -errno;
		snprintf(s->err, sizeof(s->err), "cannot read %s: %s", path, strerror(-rc));
		s->miss.kind = MISS_NONE;
		return rc;
	}
	as = addrspaces__get(&s->as, pid, 1);
	if (as == NULL) {
		fclose(f);
		return -ENOMEM;
	}
	addrspace__clear(as);
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long long start, end, off, ino;
		char perms[8];
		int name_at = 0;
		char *name, *nl;

		if (sscanf(line, "%llx-%llx %7s %llx %*x:%*x %llu %n", &start, &end, perms,
			   &off, &ino, &name_at) < 5 || name_at == 0)
			continue;
		if (strchr(perms, 'x') == NULL)
			continue;
		name = line + name_at;
		nl = strchr(name, '\n');
		if (nl != NULL)
			*nl = '\0';
		/* Anonymous maps get perf's name, so JIT code is looked up. */
		if (name[0] == '\0')
			name = (char *)"//anon";
		rc = symbolizer__add_map(s, pid, start, end - start, off, name, NULL, 0);
		if (rc < 0)
			break;
	}
	fclose(f);
	return rc;
}

static struct addrspace *space_of(struct symbolizer *s, uint32_t pid)
{
	if (s->last == NULL || s->last->pid != pid)
		s->last = addrspaces__get(&s->as, pid, 0);
	if (s->last == NULL && s->proc_fallback && !s->offline) {
		/* once: a process gone since leaves an empty space behind */
		if (symbolizer__load_proc(s, pid) < 0)
			addrspaces__get(&s->as, pid, 1);
		s->last = addrspaces__get(&s->as, pid, 0);
	}
	return s->last;
}

void symbolizer__set_proc_fallback(struct symbolizer *s, int on)
{
	s->proc_fallback = on != 0;
}

static int bid_matches(const struct dso *d, const struct map *m)
{
	size_t i;

	/* Older perf.data files pad a shorter id (md5: 16 bytes) with zeros to 20. */
	if (m->bid_size == 20 && d->build_id_size < 20 && d->build_id_size > 0) {
		for (i = d->build_id_size; i < 20; i++)
			if (m->bid[i] != 0)
				return 0;
		return memcmp(d->build_id, m->bid, d->build_id_size) == 0;
	}
	return d->build_id_size == m->bid_size &&
	       memcmp(d->build_id, m->bid, m->bid_size) == 0;
}

/* m's recorded build id in hex into hex[41] ("" when none); returns hex. */
static char *map_bid_hex(const struct map *m, char *hex)
{
	hex__encode(m->bid, m->bid_size, hex);
	return hex;
}

/*
 * A copy with the mapping's build id: perf's build-id cache (perf record
 * fills it: ~/.debug/.build-id/XX/REST, a file in old caches, else a link
 * to ~/.debug/PATH/ID/ holding "elf" or "vdso"), else the distribution's
 * debug file (/usr/lib/debug/.build-id/XX/REST.debug, under --symfs).
 */
static struct dso *by_build_id(struct symbolizer *s, const struct map *m)
{
	const char *home = getenv("HOME");
	char path[PATH_MAX + 128], hex[41];
	struct stat st;
	struct dso *d;
	int err = 0;

	if (m->bid_size < 2)
		return NULL;
	map_bid_hex(m, hex);
	if (home != NULL && home[0] == '/') {
		snprintf(path, sizeof(path), "%s/.debug/.build-id/%.2s/%s", home, hex, hex + 2);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s",
				 m->kind == MAP_VDSO ? "vdso" : "elf");
		d = dso_cache__get(s->dsos, path, m->bid, m->bid_size, &err);
		if (d != NULL && bid_matches(d, m))
			return d;
	}
	snprintf(path, sizeof(path), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", s->symfs,
		 hex, hex + 2);
	d = dso_cache__get(s->dsos, path, m->bid, m->bid_size, &err);
	return d != NULL && bid_matches(d, m) ? d : NULL;
}

/*
 * perf's rule for an object: when the recording gave its build id, only an
 * ELF with that id names its addresses (the object at its path, under
 * --symfs, else a copy found by the id); otherwise the object at its path.
 * Live processes (not offline) may also be read through /proc.
 */
static struct dso *bind_file(struct symbolizer *s, uint32_t pid, struct map *m, int *errp)
{
	char path[PATH_MAX + 64], hex[41];
	struct dso *d, *found;
	int err2 = 0;

	snprintf(path, sizeof(path), "%s%s", s->symfs, m->path);
	d = dso_cache__get(s->dsos, path, m->bid, m->bid_size, errp);
	if (d == NULL && !s->offline && s->symfs[0] == '\0') {
		char alt[PATH_MAX + 64];
		/* A process in another mount namespace: its root. */
		snprintf(alt, sizeof(alt), "/proc/%u/root%s", (unsigned)pid, m->path);
		d = dso_cache__get(s->dsos, alt, m->bid, m->bid_size, &err2);
		/* A deleted file the process still maps (root only). */
		if (d == NULL) {
			snprintf(alt, sizeof(alt), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64,
				 (unsigned)pid, m->start, m->end);
			d = dso_cache__get(s->dsos, alt, m->bid, m->bid_size, &err2);
		}
	}
	if (m->bid_size == 0 && d == NULL)
		warn_object(s, m->path, "%s: not symbolized: cannot read %s (%s)", m->path,
			    path, strerror(-*errp));
	if (m->bid_size == 0 || (d != NULL && bid_matches(d, m)))
		return d;
	/* Rebuilt, or another machine's: a copy with the recorded build id. */
	found = by_build_id(s, m);
	if (found != NULL)
		return found;
	if (d != NULL) {
		warn_object(s, m->path, "%s: not symbolized: %s has build id %s, not the "
			    "recorded %s, and no copy with that one is in ~/.debug/.build-id "
			    "or %s/usr/lib/debug/.build-id", m->path, path,
			    d->build_id_size ? d->build_id_hex : "(none)", map_bid_hex(m, hex), s->symfs);
		*errp = -ESTALE;
	} else {
		warn_object(s, m->path, "%s: not symbolized: cannot read %s (%s), and no copy "
			    "with its recorded build id %s is in ~/.debug/.build-id or "
			    "%s/usr/lib/debug/.build-id", m->path, path, strerror(-*errp),
			    map_bid_hex(m, hex), s->symfs);
	}
	return NULL;
}

/* The vdso: the process's own (live), else ours, when the build ids agree. */
static struct dso *bind_vdso(struct symbolizer *s, uint32_t pid, struct map *m, int *errp)
{
	/* Offline, a length of 0 keeps the reader out of /proc/PID/mem. */
	struct dso *d = dso_cache__vdso(s->dsos, pid, m->start,
					s->offline ? 0 : m->end - m->start, errp);
	struct dso *found;
	char hex[41];

	if (m->bid_size == 0 || (d != NULL && bid_matches(d, m)))
		return d;
	found = by_build_id(s, m);
	if (found != NULL)
		return found;
	warn_object(s, m->path, "[vdso]: not symbolized: this kernel's has build id %s, not "
		    "the recorded %s, and no copy with that one is in ~/.debug/.build-id",
		    d != NULL && d->build_id_size ? d->build_id_hex : "(none)", map_bid_hex(m, hex));
	*errp = -ESTALE;
	return NULL;
}

/* The build id the recording gave m's path, for a mapping without one. */
static void take_known_bid(struct symbolizer *s, struct map *m)
{
	const struct known_bid *k;

	if (m->bid_size != 0)
		return;
	for (k = s->bids; k != NULL; k = k->next)
		if (k->path == m->path) {
			m->bid_size = k->size;
			memcpy(m->bid, k->id, k->size);
			return;
		}
}

/* The object behind a mapping, bound once. */
static struct dso *bind_dso(struct symbolizer *s, uint32_t pid, struct map *m)
{
	int err = 0;

	if (m->dso != NULL || m->dso_err != 0)
		return m->dso;
	take_known_bid(s, m);
	if (m->kind == MAP_VDSO) {
		m->dso = bind_vdso(s, pid, m, &err);
	} else if (m->kind == MAP_FILE) {
		struct { const char *path; uint8_t bid[20]; uint8_t size; } key;
		uint32_t id = UINT32_MAX;
		int added = 0;

		memset(&key, 0, sizeof(key));
		key.path = m->path;   /* interned: one pointer per path */
		memcpy(key.bid, m->bid, m->bid_size);
		key.size = m->bid_size;
		if ((s->offline || m->bid_size > 0) && s->symfs[0] == '\0' &&
		    (s->bound != NULL || (s->bound = keytab__new()) != NULL) &&
		    keytab__intern(s->bound, &key, sizeof(key), &id, &added) == 0 && !added) {
			m->dso = s->bound_v[id].dso;
			err = s->bound_v[id].err;
		} else {
			m->dso = bind_file(s, pid, m, &err);
			if (added && id >= s->bound_cap) {
				size_t cap = s->bound_cap ? s->bound_cap * 2 : 64;
				struct bound_obj *v = realloc(s->bound_v, cap * sizeof(*v));
				if (v != NULL) {
					s->bound_v = v;
					s->bound_cap = cap;
				}
			}
			if (added && id < s->bound_cap) {
				s->bound_v[id].dso = m->dso;
				s->bound_v[id].err = err;
			} else if (added) {
				/* no room to remember it: forget the key too */
				keytab__delete(s->bound);
				s->bound = NULL;
			}
		}
	} else {
		err = -ENOENT;
	}
	if (m->dso == NULL)
		m->dso_err = err != 0 ? err : -ENOENT;
	else if (m->bid_size == 0 && m->dso->build_id_size > 0) {
		m->bid_size = m->dso->build_id_size;
		memcpy(m->bid, m->dso->build_id, m->bid_size);
	}
	return m->dso;
}

const char *symbolizer__object_of(struct symbolizer *s, uint32_t pid, uint64_t addr,
				  int kernel)
{
	struct addrspace *as;
	struct map *m;

	if (kernel)
		return kspace__object(&s->kernel, s->dsos, addr);
	as = space_of(s, pid);
	m = as != NULL ? addrspace__find(as, addr) : NULL;
	return m != NULL && m->kind != MAP_ANON ? m->path : NULL;
}

const void *symbolizer__file_place(struct symbolizer *s, uint32_t pid, uint64_t addr,
				   uint64_t *offset, int *bound)
{
	struct addrspace *as = space_of(s, pid);
	struct map *m = as != NULL ? addrspace__find(as, addr) : NULL;
	struct dso *d;

	if (m == NULL || m->kind == MAP_ANON)
		return NULL;
	d = bind_dso(s, pid, m);
	*offset = addr - m->start + m->pgoff;
	*bound = d != NULL;
	return d != NULL ? (const void *)d : (const void *)m->path;
}

uint32_t symbolizer__space_gen(struct symbolizer *s, uint32_t pid)
{
	struct addrspace *as = s->last != NULL && s->last->pid == pid ? s->last :
			       addrspaces__get(&s->as, pid, 0);

	return as != NULL ? as->gen : 0;
}

int symbolizer__find_map(struct symbolizer *s, uint32_t pid, uint64_t addr,
			 struct sym_map *out)
{
	return symbolizer__find_map_at(s, pid, UINT32_MAX, addr, out);
}

int symbolizer__find_map_at(struct symbolizer *s, uint32_t pid, uint32_t gen, uint64_t addr,
			    struct sym_map *out)
{
	struct addrspace *as = space_of(s, pid);
	struct map *m = as != NULL ? addrspace__find_at(as, addr, gen) : NULL;

	if (m == NULL)
		return -ENOENT;
	if (m->kind != MAP_ANON)
		bind_dso(s, pid, m);
	out->start = m->start;
	out->end = m->end;
	out->pgoff = m->pgoff;
	out->path = m->path;
	out->build_id_size = m->bid_size;
	memcpy(out->build_id, m->bid, sizeof(out->build_id));
	return 0;
}

int symbolizer__elf_addr(struct symbolizer *s, uint32_t pid, uint64_t addr,
			 uint64_t *elf_addr, const char **elf_path,
			 const char **debug_path)
{
	struct addrspace *as = space_of(s, pid);
	struct map *m = as != NULL ? addrspace__find(as, addr) : NULL;
	struct dso *d;

	if (m == NULL || m->kind == MAP_ANON)
		return -ENOENT;
	d = bind_dso(s, pid, m);
	if (d == NULL)
		return m->dso_err;
	if (dso__offset_to_vaddr(d, addr - m->start + m->pgoff, elf_addr) < 0)
		return -ENOENT;
	if (elf_path != NULL)
		*elf_path = d->is_vdso ? NULL : d->path;
	if (debug_path != NULL)
		*debug_path = d->debug_path;
	return 0;
}

/* An integer sysctl, -1 when it cannot be read. */
static int read_int_file(const char *path)
{
	FILE *f = fopen(path, "re");
	int v = -1;

	if (f != NULL) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* The one-time warning for kallsyms that hides its addresses. */
static void warn_hidden(struct symbolizer *s)
{
	int kr, par;

	if (s->warning_state != 0)
		return;
	kr = read_int_file("/proc/sys/kernel/kptr_restrict");
	par = read_int_file("/proc/sys/kernel/perf_event_paranoid");
	snprintf(s->warning, sizeof(s->warning),
		 "kernel symbols unavailable: %s shows every address as 0 to this "
		 "user (kernel.kptr_restrict=%d, kernel.perf_event_paranoid=%d); "
		 "run as root (CAP_SYSLOG), or set kernel.kptr_restrict=0 and "
		 "kernel.perf_event_paranoid<=1",
		 s->kernel.src != NULL ? s->kernel.src : "/proc/kallsyms", kr, par);
	s->warning_state = 1;
}

int symbolizer__load_kallsyms(struct symbolizer *s, const char *path)
{
	int fd = dso__open_regular(path), rc;

	if (fd < 0)
		return fd;
	close(fd);
	/* Read at the first kernel address: a profile may have none. */
	rc = kspace__use_kallsyms(&s->kernel, path);
	if (s->warning_state == 2)
		s->warning_state = 0;
	return rc;
}

int symbolizer__load_vmlinux(struct symbolizer *s, const char *path)
{
	int fd = dso__open_regular(path);

	if (fd < 0)
		return fd;
	close(fd);
	return kspace__use_vmlinux(&s->kernel, path);
}

int symbolizer__set_kernel_build_id(struct symbolizer *s, const char *path,
				    const uint8_t *build_id, size_t build_id_size)
{
	s->kernel.recorded = 1;
	return kspace__set_build_id(&s->kernel, path, build_id, build_id_size);
}

void symbolizer__set_recorded(struct symbolizer *s)
{
	s->kernel.recorded = 1;
}

int symbolizer__find_kernel_map(struct symbolizer *s, uint64_t addr, const char **dso,
				uint64_t *module_start)
{
	struct kspace_hit h;

	err_clear(s);
	kspace__lookup(&s->kernel, s->dsos, addr, &h);
	if (h.dso == NULL)
		kernel_miss(s, 0);
	*dso = h.dso;
	if (module_start)
		*module_start = h.module ? h.module_start : UINT64_MAX;
	return h.dso != NULL ? 0 : -ENOENT;
}

static int resolve_kernel(struct symbolizer *s, uint64_t addr, struct sym_result *out)
{
	struct kspace_hit h;
	int rc = kspace__lookup(&s->kernel, s->dsos, addr, &h);

	out->kind = SYM_KIND_KERNEL;
	out->dso = h.dso;
	out->dso_addr = addr;
	if (rc < 0) {
		if (s->kernel.hidden)
			warn_hidden(s);
		kernel_miss(s, s->kernel.hidden);
		return -ENOENT;
	}
	out->raw_name = h.name;
	out->name = h.name;
	out->sym_start = h.start;
	out->sym_size = h.end - h.start;
	out->offset = addr - h.start;
	return 0;
}

/* The uid of a live process, (uid_t)-1 when it is gone. */
static uid_t process_uid(uint32_t pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u", (unsigned)pid);
	return stat(path, &st) == 0 ? st.st_uid : (uid_t)-1;
}

static int resolve_jit(struct symbolizer *s, struct addrspace *as, uint64_t addr,
		       struct sym_result *out)
{
	struct perfmap *pm = as->perfmap;
	struct symtab_sym *sym;
	int rc;

	if (pm == NULL) {
		pm = as->perfmap = calloc(1, sizeof(*pm));
		if (pm == NULL)
			return -ENOMEM;
		perfmap__init(pm);
	}
	sym = pm->state == 1 ? (struct symtab_sym *)symtab__find(&pm->syms, addr) : NULL;
	/* A recording's map was written before it is read: read it once. */
	if (sym == NULL && s->offline && pm->state != 0) {
		sym_miss__set(&s->miss, MISS_JIT, pm->state == 1 ? "not in its perf map" : pm->why,
			      addr, as->pid);
		return -ENOENT;
	}
	if (sym == NULL) {
		/* A miss may be code the JIT added since: read again if it grew. */
		/* A recording's pid is not this machine's: the file's owner must be us or root. */
		rc = perfmap__refresh(pm, s->perfmap_dir, as->pid,
				      s->offline ? (uid_t)-1 : process_uid(as->pid));
		if (rc < 0) {
			sym_miss__set(&s->miss, MISS_JIT, pm->why, addr, as->pid);
			return -ENOENT;
		}
		sym = (struct symtab_sym *)symtab__find(&pm->syms, addr);
	}
	if (sym == NULL) {
		sym_miss__set(&s->miss, MISS_JIT_MAP, s->perfmap_dir, addr, as->pid);
		return -ENOENT;
	}
	out->kind = SYM_KIND_JIT;
	{
		char p[300];
		snprintf(p, sizeof(p), "%s/perf-%u.map", s->perfmap_dir, (unsigned)as->pid);
		out->dso = strpool__intern(s->pool, p);
	}
	out->raw_name = symtab__name(&pm->syms, sym);
	out->name = symtab__demangled(&pm->syms, sym);
	out->sym_start = sym->start;
	out->sym_size = sym->end - sym->start;
	out->offset = addr - sym->start;
	out->dso_addr = addr;
	return 0;
}

static void add_lines(struct symbolizer *s, struct dso *d, uint64_t vaddr,
		      unsigned flags, struct sym_result *out)
{
	int n;

	if (d->lines_state == 0) {
		int err = -ENODATA;
		const char *p = d->debug_path != NULL ? d->debug_path : d->path;
		d->lines = d->is_vdso ? NULL : dwarfline__open(p, &err);
		d->lines_state = d->lines != NULL ? 1 : err;
	}
	if (d->lines == NULL)
		return;
	if (dwarfline__lookup(d->lines, vaddr, &out->file, &out->line) != 0) {
		out->file = NULL;
		out->line = 0;
	}
	if (!(flags & SYM_INLINES))
		return;
	if (s->inl_cap - s->inl_n < MAX_INLINE) {
		size_t cap = s->inl_cap ? s->inl_cap * 2 : 256;
		struct sym_inline *ni;
		while (cap - s->inl_n < MAX_INLINE)
			cap *= 2;
		/* Earlier results of a batch point into this array: fix them up after. */
		ni = realloc(s->inl, cap * sizeof(*ni));
		if (ni == NULL)
			return;
		s->inl = ni;
		s->inl_cap = cap;
	}
	n = dwarfline__frames(d->lines, vaddr, s->inl + s->inl_n, MAX_INLINE);
	/* names stay valid past the array: dwarfline keeps them */
	if (n >= 1 && s->inl[s->inl_n + (size_t)n - 1].plain)
		out->func = s->inl[s->inl_n + (size_t)n - 1].name;
	if (n > 1) {
		/* The last frame is the symbol's own function: keep its call site. */
		out->call_file = s->inl[s->inl_n + (size_t)n - 1].file;
		out->call_line = s->inl[s->inl_n + (size_t)n - 1].line;
		/* Stored as an index until the batch ends (the array may move). */
		out->inlined = (const struct sym_inline *)(uintptr_t)s->inl_n;
		out->nr_inlined = (unsigned)n - 1;
		s->inl_n += (size_t)n;
	}
}

static int resolve_one(struct symbolizer *s, uint32_t pid, uint32_t gen, uint64_t addr,
		       unsigned flags, struct sym_result *out)
{
	struct addrspace *as;
	struct map *m;
	struct dso *d;
	struct symtab_sym *sym;
	uint64_t vaddr;

	memset(out, 0, sizeof(*out));
	/* The caller knows from the sample's cpumode and the call chain's
	 * context marks; guessed from the address only when it does not. */
	if ((flags & SYM_KERNEL) || (!(flags & SYM_USER) && addr >= KERNEL_START))
		return resolve_kernel(s, addr, out);
	as = space_of(s, pid);
	if (as == NULL) {
		snprintf(s->err, sizeof(s->err),
			 "no maps for pid %u (feed its MMAP records or load /proc/%u/maps)",
			 (unsigned)pid, (unsigned)pid);
		s->miss.kind = MISS_NONE;
		return -ENOENT;
	}
	m = addrspace__find_at(as, addr, gen);
	if (m == NULL || m->kind == MAP_ANON)
		return resolve_jit(s, as, addr, out);
	out->dso = m->path;
	out->in_file_map = 1;
	out->map_start = m->start;
	out->map_pgoff = m->pgoff;
	d = bind_dso(s, pid, m);
	if (d == NULL) {
		snprintf(s->err, sizeof(s->err), "cannot read %s: %s", m->path,
			 strerror(-m->dso_err));
		s->miss.kind = MISS_NONE;
		return -ENOENT;
	}
	out->kind = d->is_vdso ? SYM_KIND_VDSO : SYM_KIND_USER;
	if (m->bid_size == d->build_id_size)    /* the same id (bid_matches): its hex is made */
		memcpy(out->build_id, d->build_id_hex, sizeof(out->build_id));
	else
		map_bid_hex(m, out->build_id);
	if (dso__offset_to_vaddr(d, addr - m->start + m->pgoff, &vaddr) < 0) {
		sym_miss__set(&s->miss, MISS_OUTSIDE, m->path, addr, pid);
		return -ENOENT;
	}
	out->dso_addr = vaddr;
	sym = (struct symtab_sym *)symtab__find(&d->syms, vaddr);
	if (flags & (SYM_LINES | SYM_INLINES))
		add_lines(s, d, vaddr, flags, out);
	if (sym == NULL) {
		sym_miss__set(&s->miss, MISS_NO_SYMBOL, m->path, vaddr, pid);
		return -ENOENT;
	}
	out->raw_name = symtab__name(&d->syms, sym);
	out->name = symtab__demangled(&d->syms, sym);
	out->offset = vaddr - sym->start;
	out->sym_start = addr - out->offset;
	out->sym_size = sym->end - sym->start;
	return 0;
}

/* Turns the stored indexes of inline chains into pointers. */
static void fix_inlines(struct symbolizer *s, struct sym_result *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (out[i].nr_inlined > 0)
			out[i].inlined = s->inl + (uintptr_t)out[i].inlined;
}

int symbolizer__resolve(struct symbolizer *s, uint32_t pid, uint64_t addr,
			unsigned flags, struct sym_result *out)
{
	return symbolizer__resolve_at(s, pid, UINT32_MAX, addr, flags, out);
}

int symbolizer__resolve_at(struct symbolizer *s, uint32_t pid, uint32_t gen, uint64_t addr,
			   unsigned flags, struct sym_result *out)
{
	int rc;

	err_clear(s);
	s->inl_n = 0;
	rc = resolve_one(s, pid, gen, addr, flags, out);
	fix_inlines(s, out, 1);
	return rc;
}

size_t symbolizer__resolve_many(struct symbolizer *s, uint32_t pid,
				const uint64_t *addrs, size_t n, unsigned flags,
				struct sym_result *out, int *errs)
{
	return symbolizer__resolve_many_at(s, pid, UINT32_MAX, addrs, n, flags, out, errs);
}

size_t symbolizer__resolve_many_at(struct symbolizer *s, uint32_t pid, uint32_t gen,
				   const uint64_t *addrs, size_t n, unsigned flags,
				   struct sym_result *out, int *errs)
{
	size_t i, ok = 0;

	err_clear(s);
	s->inl_n = 0;
	for (i = 0; i < n; i++) {
		int rc = resolve_one(s, pid, gen, addrs[i], flags, &out[i]);
		if (errs != NULL)
			errs[i] = rc;
		if (rc == 0)
			ok++;
	}
	fix_inlines(s, out, n);
	return ok;
}
