/*
 * The kernel's address space of a recording (kspace.h): perf's rules from
 * tools/perf/util/machine.c (kernel MMAP records), symbol.c
 * (dso__load_kernel_sym, dso__find_kallsyms, kallsyms__delta,
 * map__fixup_start/end) and dso.c (module names).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/hex.h"
#include "symbol/kspace.h"
#include "symbol/dso.h"

#define KERNEL_MAP_PREFIX "[kernel.kallsyms"   /* perf compares without ']' */

void kspace__init(struct kspace *k)
{
	memset(k, 0, sizeof(*k));
	kallsyms__init(&k->ks);
}

static void free_mods(struct kmodule *m, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(m[i].name);
		free(m[i].path);
	}
	free(m);
}

void kspace__exit(struct kspace *k)
{
	free_mods(k->mods, k->nmods);
	free_mods(k->named, k->nnamed);
	free(k->ref_name);
	free(k->kallsyms_path);
	free(k->vmlinux_path);
	kallsyms__exit(&k->ks);
	memset(k, 0, sizeof(*k));
}

char *kspace__module_name(const char *path, int *kmod)
{
	const char *name = strrchr(path, '/'), *ext;
	char *out, *p;
	size_t n;

	name = name != NULL ? name + 1 : path;
	ext = strrchr(name, '.');
	*kmod = 0;
	if (name[0] == '[') {
		static const char *const not_mods[] = { "[kernel.kallsyms]", "[guest.kernel.kallsyms",
			"[vdso]", "[vdso32]", "[vdsox32]", "[vsyscall]" };
		size_t i;
		*kmod = 1;
		for (i = 0; i < sizeof(not_mods) / sizeof(not_mods[0]); i++)
			if (strncmp(name, not_mods[i], strlen(not_mods[i])) == 0)
				*kmod = 0;
		return strdup(name);
	}
	n = strlen(name);
	if (ext != NULL) {
		/* a compressed module: .ko.gz, .ko.xz */
		if ((strcmp(ext, ".gz") == 0 || strcmp(ext, ".xz") == 0) && ext - 3 >= name)
			ext -= 3;
		if (ext > name && strncmp(ext, ".ko", 3) == 0) {
			*kmod = 1;
			n = (size_t)(ext - name);
		}
	}
	out = malloc(n + 3);
	if (out == NULL)
		return NULL;
	if (*kmod) {
		out[0] = '[';
		memcpy(out + 1, name, n);
		out[n + 1] = ']';
		out[n + 2] = '\0';
	} else {
		memcpy(out, name, n);
		out[n] = '\0';
	}
	for (p = out; *p; p++)
		if (*p == '-')
			*p = '_';
	return out;
}

static int add_module(struct kmodule **v, size_t *n, size_t *cap, uint64_t start,
		      uint64_t end, char *name, const char *path)
{
	char *p = strdup(path);

	if (p != NULL && *n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		struct kmodule *nv = nc < SIZE_MAX / sizeof(**v) ? realloc(*v, nc * sizeof(**v)) : NULL;
		if (nv == NULL) {
			free(p);
			p = NULL;
		} else {
			*v = nv;
			*cap = nc;
		}
	}
	if (p == NULL) {
		free(name);
		return -ENOMEM;
	}
	(*v)[*n].start = start;
	(*v)[*n].end = end;
	(*v)[*n].name = name;
	(*v)[*n].path = p;
	(*v)[*n].dso = NULL;
	(*n)++;
	return 0;
}

int kspace__feed_mmap(struct kspace *k, uint64_t start, uint64_t len, uint64_t pgoff,
		      const char *filename)
{
	int is_kernel = strncmp(filename, KERNEL_MAP_PREFIX, strlen(KERNEL_MAP_PREFIX)) == 0;
	/* perf's u64 arithmetic: an end past 2^64 wraps */
	uint64_t end = start + len;

	if (filename[0] == '/' || (!is_kernel && filename[0] == '[')) {
		int kmod;
		char *name = kspace__module_name(filename, &kmod);
		if (name == NULL)
			return -ENOMEM;
		k->mods_sorted = 0;
		return add_module(&k->mods, &k->nmods, &k->mods_cap, start, end, name, filename);
	}
	if (!is_kernel)
		return 0;       /* extra kernel maps (entry trampolines): not kept */
	/* A new kernel map: the symbols are read again for it. */
	k->have_map = 1;
	k->start = start;
	k->end = start == 0 && end == 0 ? UINT64_MAX : end;
	if (pgoff != 0) {
		/* "[kernel.kallsyms]_text": the symbol after the name, ']' dropped */
		const char *sym = filename + strlen(KERNEL_MAP_PREFIX);
		char *name, *br;
		if (*sym == ']')
			sym++;
		name = strdup(sym);
		if (name == NULL)
			return -ENOMEM;
		br = strchr(name, ']');
		if (br != NULL)
			*br = '\0';
		free(k->ref_name);
		k->ref_name = name;
		k->ref_addr = pgoff;
	}
	return 0;
}

int kspace__set_build_id(struct kspace *k, const char *path, const uint8_t *id, size_t n)
{
	int kmod;
	char *name;

	if (n == 0)
		return 0;
	if (strncmp(path, KERNEL_MAP_PREFIX, strlen(KERNEL_MAP_PREFIX)) == 0) {
		/* the first one is the kernel perf takes */
		if (k->bid_size == 0) {
			k->bid_size = (uint8_t)(n > 20 ? 20 : n);
			memcpy(k->bid, id, k->bid_size);
		}
		return 0;
	}
	name = kspace__module_name(path, &kmod);
	if (name == NULL)
		return -ENOMEM;
	if (!kmod) {
		free(name);
		return 0;
	}
	/* A module of the table is named by its path in reports. */
	return add_module(&k->named, &k->nnamed, &k->named_cap, 0, 0, name, path);
}

static int set_path(char **dst, const char *path)
{
	char *p = path != NULL ? strdup(path) : NULL;

	if (path != NULL && p == NULL)
		return -ENOMEM;
	free(*dst);
	*dst = p;
	return 0;
}

static void unload(struct kspace *k)
{
	kallsyms__exit(&k->ks);
	kallsyms__init(&k->ks);
	k->vmlinux = NULL;
	k->state = 0;
	k->hidden = 0;
	k->delta = 0;
}

int kspace__use_kallsyms(struct kspace *k, const char *path)
{
	unload(k);
	free(k->vmlinux_path);
	k->vmlinux_path = NULL;
	return set_path(&k->kallsyms_path, path);
}

int kspace__use_vmlinux(struct kspace *k, const char *path)
{
	unload(k);
	free(k->kallsyms_path);
	k->kallsyms_path = NULL;
	return set_path(&k->vmlinux_path, path);
}

/* The running kernel's build id, from the ELF notes in /sys/kernel/notes. */
static size_t running_build_id(uint8_t id[20])
{
	uint8_t buf[4096];
	size_t off = 0, len;
	ssize_t got;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	got = read(fd, buf, sizeof(buf));
	close(fd);
	if (got <= 0)
		return 0;
	len = (size_t)got;
	while (len - off >= 12) {
		uint32_t namesz, descsz, type;
		size_t name_at, desc_at, next;
		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		name_at = off + 12;
		if (namesz > len || descsz > len)
			return 0;
		desc_at = name_at + ((namesz + 3u) & ~3u);
		next = desc_at + ((descsz + 3u) & ~3u);
		if (desc_at > len || next > len || next <= off)
			return 0;
		if (type == 3 && namesz == 4 && memcmp(buf + name_at, "GNU", 4) == 0 &&
		    descsz > 0) {
			size_t n = descsz > 20 ? 20 : descsz;
			memcpy(id, buf + desc_at, n);
			return n;
		}
		off = next;
	}
	return 0;
}

/* Where perf's build-id cache keeps a kernel's kallsyms. */
static int cache_copy(const char *hex, char *buf, size_t size)
{
	const char *home = getenv("HOME");

	if (home == NULL || home[0] != '/')
		return -ENOENT;
	if ((size_t)snprintf(buf, size, "%s/.debug/[kernel.kallsyms]/%s/kallsyms", home, hex) >= size)
		return -ENAMETOOLONG;
	return 0;
}

static int load_kallsyms(struct kspace *k, const char *path)
{
	int rc;

	snprintf(k->src_buf, sizeof(k->src_buf), "%s", path);
	k->src = k->src_buf;
	kallsyms__exit(&k->ks);
	kallsyms__init(&k->ks);
	rc = kallsyms__load(&k->ks, path);
	if (rc < 0) {
		snprintf(k->why, sizeof(k->why), "cannot read %s: %s", path, strerror(-rc));
		return rc;
	}
	if (k->ks.hidden) {
		k->hidden = 1;
		snprintf(k->why, sizeof(k->why), "%s shows every address as 0", path);
		return -EACCES;
	}
	return 0;
}

/* Which symbols, as perf's dso__load_kernel_sym picks them. */
static int choose_and_load(struct kspace *k, struct dso_cache *dsos)
{
	uint8_t run[20];
	size_t nrun;
	char hex[41];
	int rc, err = 0;

	if (k->kallsyms_path != NULL)
		return load_kallsyms(k, k->kallsyms_path);
	if (k->vmlinux_path != NULL) {
		snprintf(k->src_buf, sizeof(k->src_buf), "%s", k->vmlinux_path);
		k->src = k->src_buf;
		k->vmlinux = dso_cache__get(dsos, k->vmlinux_path, k->bid, k->bid_size, &err);
		if (k->vmlinux == NULL) {
			snprintf(k->why, sizeof(k->why), "cannot read %s: %s", k->vmlinux_path,
				 strerror(err < 0 ? -err : ENOENT));
			return err < 0 ? err : -ENOENT;
		}
		if (k->bid_size > 0 && (k->vmlinux->build_id_size != k->bid_size ||
					memcmp(k->vmlinux->build_id, k->bid, k->bid_size) != 0)) {
			hex__encode(k->bid, k->bid_size, hex);
			snprintf(k->why, sizeof(k->why),
				 "%s is not the recorded kernel (build id %s)", k->vmlinux_path, hex);
			k->vmlinux = NULL;
			return -ENOENT;
		}
		return 0;
	}
	if (k->bid_size == 0)
		return load_kallsyms(k, "/proc/kallsyms");
	hex__encode(k->bid, k->bid_size, hex);
	nrun = running_build_id(run);
	rc = cache_copy(hex, k->src_buf, sizeof(k->src_buf));
	if (nrun == k->bid_size && memcmp(run, k->bid, nrun) == 0) {
		/* This kernel: its copy reads in milliseconds where /proc/kallsyms
		 * takes the kernel a fifth of a second to format. */
		char copy[sizeof(k->src_buf)];
		memcpy(copy, k->src_buf, sizeof(copy));
		if (rc == 0 && load_kallsyms(k, copy) == 0)
			return 0;
		k->hidden = 0;
		return load_kallsyms(k, "/proc/kallsyms");
	}
	if (rc == 0) {
		char copy[sizeof(k->src_buf)];
		memcpy(copy, k->src_buf, sizeof(copy));
		if (load_kallsyms(k, copy) == 0)
			return 0;
	}
	snprintf(k->why, sizeof(k->why),
		 "no kallsyms or vmlinux with build id %s (the recorded kernel, not this one) "
		 "was found: pass --kallsyms or --vmlinux", hex);
	return -ENOENT;
}

/* Where the reference symbol is in the symbols read. */
static int ref_in_symbols(struct kspace *k, uint64_t *addr)
{
	size_t i;

	if (k->vmlinux != NULL) {
		const struct symtab *t = &k->vmlinux->syms;
		for (i = 0; i < t->n; i++)
			if (strcmp(symtab__name(t, &t->v[i]), k->ref_name) == 0) {
				*addr = t->v[i].start;
				return 0;
			}
		return -ENOENT;
	}
	return kallsyms__function_start(&k->ks, k->ref_name, addr);
}

static int load(struct kspace *k, struct dso_cache *dsos)
{
	int rc;

	if (k->state != 0)
		return k->state < 0 ? k->state : 0;
	rc = choose_and_load(k, dsos);
	if (rc == 0 && k->ref_name != NULL && k->ref_name[0] != '\0') {
		uint64_t at;
		if (ref_in_symbols(k, &at) == 0) {
			k->delta = at - k->ref_addr;
		} else if (k->vmlinux == NULL) {
			/* perf's kallsyms__delta fails, and so does the load */
			snprintf(k->why, sizeof(k->why), "%s has no %s, the recording's reference symbol",
				 k->src, k->ref_name);
			rc = -ENOENT;
		}
	}
	if (rc == 0 && k->have_map && k->vmlinux == NULL) {
		/* map__fixup_start/end: the kernel map is where its symbols are */
		uint64_t lo, hi;
		if (kallsyms__kernel_extent(&k->ks, &lo, &hi) == 0) {
			k->start = lo - k->delta;
			k->end = hi - k->delta;
		}
	}
	k->state = rc < 0 ? rc : 1;
	return rc;
}

static int cmp_module(const void *a, const void *b)
{
	const struct kmodule *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* The module map holding addr: the last starting at or before it (maps that
 * overlap, which only a damaged file has, resolve to one of them). */
static struct kmodule *find_module(struct kspace *k, uint64_t addr)
{
	size_t lo = 0, hi = k->nmods;

	if (!k->mods_sorted) {
		if (k->nmods > 1)
			qsort(k->mods, k->nmods, sizeof(*k->mods), cmp_module);
		k->mods_sorted = 1;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->mods[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= k->mods[lo - 1].end)
		return NULL;
	return &k->mods[lo - 1];
}

/* A module of the build-id table is called by its path, others by name. */
static const char *module_dso(const struct kspace *k, struct kmodule *m)
{
	size_t i;

	if (m->dso != NULL)
		return m->dso;
	m->dso = m->name;
	for (i = 0; i < k->nnamed; i++)
		if (strcmp(k->named[i].name, m->name) == 0) {
			m->dso = k->named[i].path;
			break;
		}
	return m->dso;
}

/* The object of addr in a recording's maps: a module (*mod set) or the
 * kernel; NULL when no map holds it. */
static const char *mapped_object(struct kspace *k, uint64_t addr, struct kmodule **mod)
{
	*mod = find_module(k, addr);
	if (*mod != NULL)
		return module_dso(k, *mod);
	if (!k->have_map || addr < k->start || addr >= k->end)
		return NULL;
	return "[kernel.kallsyms]";
}

/* A recording's maps name the object without a symbol table: kallsyms
 * (10 ms and megabytes) is read only when a symbol is asked for. */
const char *kspace__object(struct kspace *k, struct dso_cache *dsos, uint64_t addr)
{
	struct kspace_hit h;
	struct kmodule *m;

	if (k->have_map || k->recorded)
		return mapped_object(k, addr, &m);
	kspace__lookup(k, dsos, addr, &h);
	return h.dso;
}

int kspace__lookup(struct kspace *k, struct dso_cache *dsos, uint64_t addr,
		   struct kspace_hit *hit)
{
	int mapped = k->have_map || k->recorded;
	struct kallsyms_sym ks;
	int rc;

	memset(hit, 0, sizeof(*hit));
	k->why[0] = '\0';
	sym_miss__set(&k->miss, MISS_NONE, NULL, addr, 0);
	if (mapped) {
		struct kmodule *m;
		hit->dso = mapped_object(k, addr, &m);
		if (m != NULL) {
			hit->module = 1;
			hit->module_start = m->start;
			/* A module's symbols come from kallsyms, where it is loaded:
			 * the running kernel's, at the same address. */
			if (load(k, dsos) == 0 && k->vmlinux == NULL &&
			    kallsyms__find(&k->ks, addr, &ks) == 0 && ks.module &&
			    strcmp(ks.dso, m->name) == 0) {
				hit->name = ks.name;
				hit->start = ks.start;
				hit->end = ks.end;
				return 0;
			}
			sym_miss__set(&k->miss, MISS_MODULE, hit->dso, addr, 0);
			return -ENOENT;
		}
		/* start > end: a map that wrapped holds nothing, as in perf */
		if (hit->dso == NULL) {
			sym_miss__set(&k->miss, MISS_NO_KERNEL_MAP, NULL, addr, 0);
			return -ENOENT;
		}
	}
	hit->dso = "[kernel.kallsyms]";
	rc = load(k, dsos);
	if (rc < 0)
		return -ENOENT;
	if (k->vmlinux != NULL) {
		const struct symtab_sym *s = symtab__find(&k->vmlinux->syms, addr + k->delta);
		if (s == NULL) {
			sym_miss__set(&k->miss, MISS_NO_SYMBOL, k->src, addr + k->delta, 0);
			return -ENOENT;
		}
		hit->name = symtab__name(&k->vmlinux->syms, s);
		hit->start = s->start - k->delta;
		hit->end = s->end - k->delta;
		return 0;
	}
	rc = kallsyms__find(&k->ks, addr + k->delta, &ks);
	if (rc == -ENOMEM) {
		sym_miss__set(&k->miss, MISS_NO_MEMORY, NULL, addr, 0);
		return -ENOENT;
	}
	/* a recording's kernel map holds the kernel's symbols, not modules' */
	if (rc < 0 || (mapped && ks.module)) {
		sym_miss__set(&k->miss, MISS_KERNEL, NULL, addr, 0);
		return -ENOENT;
	}
	if (!mapped)
		hit->dso = ks.dso;
	hit->name = ks.name;
	hit->start = ks.start - k->delta;
	hit->end = ks.end - k->delta;
	return 0;
}

const char *kspace__why(struct kspace *k)
{
	return sym_miss__text(&k->miss, k->why, sizeof(k->why));
}
