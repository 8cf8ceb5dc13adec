/*
 * ELF objects through libelf: load segments (so PIE, shared objects and
 * non-PIE executables all map file offsets to symbol addresses the same
 * way), the build id, a separate debug file (/usr/lib/debug/.build-id/,
 * then .gnu_debuglink beside the binary, in .debug/ and under
 * /usr/lib/debug), and the function symbols: the debug file's .symtab, the
 * object's own .symtab, else its .dynsym.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gelf.h>
#include <elfutils/libdwelf.h>
#include <zlib.h>
#include "base/hex.h"
#include "symbol/dso.h"
#include "symbol/dwarfline.h"

struct dso_cache {
	struct dso *head;
	struct dso *vdso;
};

struct dso_cache *dso_cache__new(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	return calloc(1, sizeof(struct dso_cache));
}

static void dso__delete(struct dso *d)
{
	if (d == NULL)
		return;
	dwarfline__delete(d->lines);
	symtab__exit(&d->syms);
	free(d->segs);
	free(d->path);
	free(d->debug_path);
	free(d->image);
	free(d);
}

void dso_cache__delete(struct dso_cache *c)
{
	struct dso *d, *n;

	if (c == NULL)
		return;
	for (d = c->head; d != NULL; d = n) {
		n = d->next;
		dso__delete(d);
	}
	free(c);
}

int dso__open_regular(const char *path)
{
	struct stat st;
	int fd;

	if (stat(path, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	/* It may have been swapped since the stat. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int dso__offset_to_vaddr(const struct dso *d, uint64_t off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < d->nsegs; i++) {
		const struct dso_seg *s = &d->segs[i];
		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = s->vaddr + (off - s->offset);
			return 0;
		}
	}
	return -ENOENT;
}

static size_t read_build_id(Elf *elf, uint8_t *out)
{
	const void *p = NULL;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &p);

	if (n <= 0 || p == NULL)
		return 0;
	if (n > 20)
		n = 20;
	memcpy(out, p, (size_t)n);
	return (size_t)n;
}

/* What an ELF file offers for symbolization. */
struct elf_info {
	Elf_Scn *symtab, *dynsym;
	int has_debug_info;
	const char *debuglink;
	uint32_t crc;
};

static void scan_sections(Elf *elf, struct elf_info *in)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	memset(in, 0, sizeof(*in));
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			in->symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			in->dynsym = scn;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name != NULL && sh.sh_type != SHT_NOBITS &&
		    (strcmp(name, ".debug_info") == 0 || strcmp(name, ".zdebug_info") == 0))
			in->has_debug_info = 1;
	}
	in->debuglink = dwelf_elf_gnu_debuglink(elf, &in->crc);
}

/* A NOTYPE symbol perf counts as a function: visible, in an executable section. */
static int is_code_label(Elf *elf, const GElf_Sym *s)
{
	unsigned vis = GELF_ST_VISIBILITY(s->st_other);
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (s->st_shndx == SHN_ABS || s->st_shndx >= SHN_LORESERVE ||
	    vis == STV_HIDDEN || vis == STV_INTERNAL)
		return 0;
	scn = elf_getscn(elf, s->st_shndx);
	/* (A separate debug file keeps the flags of .text, as NOBITS.) */
	return scn != NULL && gelf_getshdr(scn, &sh) != NULL &&
	       (sh.sh_flags & SHF_EXECINSTR);
}

static int add_symbols(struct dso *d, Elf *elf, Elf_Scn *scn)
{
	GElf_Shdr sh;
	Elf_Data *data;
	size_t i, n;

	if (gelf_getshdr(scn, &sh) == NULL || sh.sh_entsize == 0)
		return -EINVAL;
	data = elf_getdata(scn, NULL);
	if (data == NULL)
		return -EINVAL;
	n = sh.sh_size / sh.sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym s;
		const char *name;
		unsigned type, bind, prio;
		int rc;

		if (gelf_getsym(data, (int)i, &s) == NULL)
			break;
		type = GELF_ST_TYPE(s.st_info);
		bind = GELF_ST_BIND(s.st_info);
		/* perf's rule: functions, data objects (a frame-pointer chain
		 * can hold the address of a vtable) and labels in code (asm
		 * entry points such as ld.so's _start), defined, named and not
		 * absolute (a version's name is an absolute object at 0). */
		if (s.st_shndx == SHN_UNDEF || s.st_shndx == SHN_ABS || s.st_name == 0)
			continue;
		if (type == STT_NOTYPE) {
			if (!is_code_label(elf, &s))
				continue;
		} else if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT) {
			continue;
		}
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (name == NULL || name[0] == '\0')
			continue;
		/* Assembler-local labels and mapping symbols are not functions. */
		if (type == STT_NOTYPE && (name[0] == '$' || strncmp(name, ".L", 2) == 0))
			continue;
		prio = bind == STB_GLOBAL ? SYMTAB_GLOBAL :
		       bind == STB_WEAK ? SYMTAB_WEAK : SYMTAB_LOCAL;
		/* "foo@@GLIBC_2.2.5" is how .symtab of some objects spells versions. */
		rc = symtab__add(&d->syms, s.st_value, s.st_size, name, strlen(name), prio, 0);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static Elf_Scn *section_named(Elf *elf, const char *want, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name;
		if (gelf_getshdr(scn, sh) == NULL)
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name != NULL && strcmp(name, want) == 0)
			return scn;
	}
	return NULL;
}

/*
 * "name@plt" for each PLT slot, as perf synthesizes them: the i-th
 * .rela.plt relocation owns the i-th slot of .plt.sec, or of .plt after
 * its 16-byte header.
 */
static int add_plt_symbols(struct dso *d, Elf *elf)
{
	GElf_Shdr rsh, psh, dsh;
	Elf_Scn *rel, *plt, *dyn;
	Elf_Data *rdata, *ddata;
	uint64_t base, ent = 16;
	size_t i, n;
	int is_rela = 1;

	rel = section_named(elf, ".rela.plt", &rsh);
	if (rel == NULL) {
		rel = section_named(elf, ".rel.plt", &rsh);
		is_rela = 0;
	}
	if (rel == NULL || rsh.sh_entsize == 0 || rsh.sh_type == SHT_NOBITS)
		return 0;
	plt = section_named(elf, ".plt.sec", &psh);
	if (plt != NULL) {
		base = psh.sh_addr;
	} else {
		plt = section_named(elf, ".plt", &psh);
		if (plt == NULL)
			return 0;
		if (psh.sh_entsize >= 4 && psh.sh_entsize <= 64)
			ent = psh.sh_entsize;
		base = psh.sh_addr + ent;
	}
	dyn = elf_getscn(elf, rsh.sh_link);
	if (dyn == NULL || gelf_getshdr(dyn, &dsh) == NULL)
		return 0;
	rdata = elf_getdata(rel, NULL);
	ddata = elf_getdata(dyn, NULL);
	if (rdata == NULL || ddata == NULL)
		return 0;
	n = rsh.sh_size / rsh.sh_entsize;
	for (i = 0; i < n && (i + 1) * ent <= psh.sh_size; i++) {
		GElf_Rela ra;
		GElf_Rel r;
		GElf_Sym sym;
		uint64_t info;
		const char *name;
		char buf[512];
		int len;

		if (is_rela) {
			if (gelf_getrela(rdata, (int)i, &ra) == NULL)
				break;
			info = ra.r_info;
		} else {
			if (gelf_getrel(rdata, (int)i, &r) == NULL)
				break;
			info = r.r_info;
		}
		if (GELF_R_SYM(info) == 0) {
			/* An IRELATIVE slot (an ifunc like memcpy) has no symbol:
			 * perf 6.1 takes the null symbol's empty name ("@plt";
			 * later perfs print "*ABS*+0xADDEND@plt"). */
			len = snprintf(buf, sizeof(buf), "@plt");
		} else {
			if (gelf_getsym(ddata, (int)GELF_R_SYM(info), &sym) == NULL)
				continue;
			name = elf_strptr(elf, dsh.sh_link, sym.st_name);
			if (name == NULL || name[0] == '\0')
				continue;
			len = snprintf(buf, sizeof(buf), "%s@plt", name);
		}
		if (len <= 0 || (size_t)len >= sizeof(buf))
			continue;
		if (symtab__add(&d->syms, base + i * ent, ent, buf, (size_t)len,
				SYMTAB_GLOBAL, 0) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int file_crc(const char *path, uint32_t *crc)
{
	int fd = dso__open_regular(path);
	unsigned char buf[65536];
	uLong c = crc32(0L, Z_NULL, 0);
	ssize_t n;

	if (fd < 0)
		return fd;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		c = crc32(c, buf, (uInt)n);
	close(fd);
	if (n < 0)
		return -EIO;
	*crc = (uint32_t)c;
	return 0;
}

/* 1 when path is a debug file for our object. */
static int debug_file_matches(const char *path, const uint8_t *bid, size_t bid_size,
			      int by_crc, uint32_t crc)
{
	int fd = dso__open_regular(path);
	Elf *elf;
	int ok = 0;

	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf != NULL && elf_kind(elf) == ELF_K_ELF) {
		uint8_t b[20];
		size_t n = read_build_id(elf, b);
		if (bid_size > 0 && n > 0)
			ok = n == bid_size && memcmp(b, bid, n) == 0;
		else if (by_crc) {
			uint32_t c = 0;
			ok = file_crc(path, &c) == 0 && c == crc;
		}
	}
	elf_end(elf);
	close(fd);
	return ok;
}

int dso__find_debug_file(const char *path, const uint8_t *bid, size_t bid_size,
			 const char *debuglink, uint32_t crc, char *buf, size_t size)
{
	char dir[PATH_MAX];
	const char *slash;
	struct stat self, st;
	int have_self = stat(path, &self) == 0;

	if (bid_size > 1) {
		char h[41];
		hex__encode(bid, bid_size, h);
		snprintf(buf, size, "/usr/lib/debug/.build-id/%.2s/%s.debug", h, h + 2);
		if (debug_file_matches(buf, bid, bid_size, 0, 0))
			return 0;
	}
	if (debuglink == NULL || debuglink[0] == '\0' || strchr(debuglink, '/') != NULL)
		return -ENOENT;
	slash = strrchr(path, '/');
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	{
		/* Beside the object, in .debug/ beside it, under /usr/lib/debug. */
		const char *pre[] = { "", "", "/usr/lib/debug" };
		const char *mid[] = { "/", "/.debug/", "/" };
		size_t i;
		for (i = 0; i < 3; i++) {
			snprintf(buf, size, "%s%s%s%s", pre[i], dir, mid[i], debuglink);
			/* The object itself can carry its own name as the link. */
			if (stat(buf, &st) != 0 ||
			    (have_self && st.st_dev == self.st_dev && st.st_ino == self.st_ino))
				continue;
			if (debug_file_matches(buf, bid, bid_size, 1, crc))
				return 0;
		}
	}
	return -ENOENT;
}

static int load_segments(struct dso *d, Elf *elf)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n) != 0)
		return -EINVAL;
	d->segs = calloc(n ? n : 1, sizeof(*d->segs));
	if (d->segs == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD)
			continue;
		d->segs[d->nsegs].vaddr = ph.p_vaddr;
		d->segs[d->nsegs].offset = ph.p_offset;
		/* memsz: .bss-like tails have no file bytes but maps can cover them */
		d->segs[d->nsegs].filesz = ph.p_memsz > ph.p_filesz ? ph.p_memsz : ph.p_filesz;
		d->nsegs++;
	}
	return 0;
}

static uint64_t text_limit(const struct dso *d)
{
	uint64_t lim = 0;
	size_t i;

	for (i = 0; i < d->nsegs; i++)
		if (d->segs[i].vaddr + d->segs[i].filesz > lim)
			lim = d->segs[i].vaddr + d->segs[i].filesz;
	return lim;
}

/* Fills d from an opened ELF (the object itself). */
static int load_elf(struct dso *d, Elf *elf)
{
	struct elf_info in;
	int rc;

	if (elf_kind(elf) != ELF_K_ELF)
		return -ENOEXEC;
	rc = load_segments(d, elf);
	if (rc < 0)
		return rc;
	d->build_id_size = (uint8_t)read_build_id(elf, d->build_id);
	hex__encode(d->build_id, d->build_id_size, d->build_id_hex);
	scan_sections(elf, &in);

	if (!d->is_vdso && (in.symtab == NULL || !in.has_debug_info)) {
		char dbg[PATH_MAX];
		if (dso__find_debug_file(d->path, d->build_id, d->build_id_size,
					 in.debuglink, in.crc, dbg, sizeof(dbg)) == 0) {
			d->debug_path = strdup(dbg);
			if (d->debug_path == NULL)
				return -ENOMEM;
		}
	}
	if (d->debug_path != NULL) {
		int fd = dso__open_regular(d->debug_path);
		Elf *de = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
		struct elf_info din;
		rc = 1;
		if (de != NULL && elf_kind(de) == ELF_K_ELF) {
			scan_sections(de, &din);
			if (din.symtab != NULL)
				rc = add_symbols(d, de, din.symtab);
		}
		elf_end(de);
		if (fd >= 0)
			close(fd);
		if (rc < 0)
			return rc;
		if (rc == 0)
			goto done;
	}
	if (in.symtab != NULL)
		rc = add_symbols(d, elf, in.symtab);
	else if (in.dynsym != NULL)
		rc = add_symbols(d, elf, in.dynsym);
	else
		rc = 0;
	if (rc < 0)
		return rc;
done:
	/* perf synthesizes them only when the object's own symbols gave one
	 * (dso__load: ret > 0): a stripped executable that exports nothing
	 * (addr2line) keeps its PLT unnamed */
	if (!d->is_vdso && d->syms.n > 0 && (rc = add_plt_symbols(d, elf)) < 0)
		return rc;
	return symtab__finish(&d->syms, text_limit(d));
}

static struct dso *dso__new(const char *path)
{
	struct dso *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	symtab__init(&d->syms);
	d->path = strdup(path);
	if (d->path == NULL) {
		free(d);
		return NULL;
	}
	return d;
}

struct dso *dso_cache__get(struct dso_cache *c, const char *path,
			   const uint8_t *want_bid, size_t want_bid_size, int *errp)
{
	struct stat st;
	struct dso *d;
	Elf *elf;
	int fd, rc;

	fd = dso__open_regular(path);
	if (fd < 0) {
		*errp = fd;
		/* The file may be gone while an object with its build id is known. */
		if (want_bid_size > 0)
			for (d = c->head; d != NULL; d = d->next)
				if (d->build_id_size == want_bid_size &&
				    memcmp(d->build_id, want_bid, want_bid_size) == 0)
					return d;
		return NULL;
	}
	if (fstat(fd, &st) != 0) {
		*errp = -errno;
		close(fd);
		return NULL;
	}
	for (d = c->head; d != NULL; d = d->next) {
		if (!d->is_vdso && d->dev == st.st_dev && d->ino == st.st_ino &&
		    d->mtime_ns == (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec) {
			close(fd);
			return d;
		}
	}
	d = dso__new(path);
	if (d == NULL) {
		close(fd);
		*errp = -ENOMEM;
		return NULL;
	}
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	/* Read, not mapped (ELF_C_READ): a binary rebuilt in place while we
	 * load it gives read errors, not SIGBUS. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	rc = elf != NULL ? load_elf(d, elf) : -ENOEXEC;
	elf_end(elf);
	close(fd);
	if (rc < 0) {
		dso__delete(d);
		*errp = rc;
		return NULL;
	}
	d->next = c->head;
	c->head = d;
	return d;
}

/* Copies [start, start+len) of pid's memory; our own vdso when that fails. */
static void *read_vdso(uint32_t pid, uint64_t start, uint64_t len, size_t *out_len)
{
	char path[64];
	void *buf;
	int fd;

	if (len > 0 && len <= (1u << 24)) {
		snprintf(path, sizeof(path), "/proc/%u/mem", (unsigned)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			buf = malloc(len);
			if (buf != NULL && pread(fd, buf, len, (off_t)start) == (ssize_t)len) {
				close(fd);
				*out_len = len;
				return buf;
			}
			free(buf);
			close(fd);
		}
	}
	{
		/* Same kernel, same vdso: ours, sized by our own [vdso] map. */
		unsigned long base = getauxval(AT_SYSINFO_EHDR);
		FILE *f;
		char line[512];
		size_t n = 0;

		if (base == 0)
			return NULL;
		f = fopen("/proc/self/maps", "re");
		if (f == NULL)
			return NULL;
		while (fgets(line, sizeof(line), f) != NULL) {
			unsigned long long s, e;
			if (strstr(line, "[vdso]") != NULL &&
			    sscanf(line, "%llx-%llx", &s, &e) == 2 && s == base && e > s) {
				n = (size_t)(e - s);
				break;
			}
		}
		fclose(f);
		if (n == 0 || n > (1u << 24))
			return NULL;
		buf = malloc(n);
		if (buf == NULL)
			return NULL;
		memcpy(buf, (const void *)base, n);
		*out_len = n;
		return buf;
	}
}

struct dso *dso_cache__vdso(struct dso_cache *c, uint32_t pid, uint64_t start,
			    uint64_t len, int *errp)
{
	struct dso *d;
	Elf *elf;
	int rc;

	if (c->vdso != NULL)
		return c->vdso;
	d = dso__new("[vdso]");
	if (d == NULL) {
		*errp = -ENOMEM;
		return NULL;
	}
	d->is_vdso = 1;
	d->image = read_vdso(pid, start, len, &d->image_len);
	if (d->image == NULL) {
		dso__delete(d);
		*errp = -ENOENT;
		return NULL;
	}
	elf = elf_memory(d->image, d->image_len);
	rc = elf != NULL ? load_elf(d, elf) : -ENOEXEC;
	elf_end(elf);
	if (rc < 0) {
		dso__delete(d);
		*errp = rc;
		return NULL;
	}
	d->next = c->head;
	c->head = d;
	c->vdso = d;
	return d;
}
