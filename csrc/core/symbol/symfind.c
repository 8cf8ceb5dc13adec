/*
 * Function names to file offsets, for uprobes: the symbolizer's own table
 * first, then the aliases it folds (one name per address), then "0xADDR".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>
#include "symbol/demangle.h"
#include "symbol/dso.h"
#include "symbol/symfind.h"

static int vaddr_to_offset(const struct dso *d, uint64_t vaddr, uint64_t *off)
{
	size_t i;

	for (i = 0; i < d->nsegs; i++) {
		const struct dso_seg *s = &d->segs[i];
		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
			*off = s->offset + (vaddr - s->vaddr);
			return 0;
		}
	}
	return -EINVAL;
}

/* "write@@GLIBC_2.2.5" names "write". */
static int same_base(const char *sym, const char *want)
{
	size_t n = strlen(want);

	return strncmp(sym, want, n) == 0 && (sym[n] == '\0' || sym[n] == '@');
}

/* The demangled name equals want, whole or without its parameter list. */
static int same_demangled(const char *sym, const char *want)
{
	char *full, *bare;
	int hit = 0;

	if (sym[0] != '_' || sym[1] != 'Z')
		return 0;
	full = demangle__alloc_verbose(sym);
	bare = demangle__alloc(sym);
	hit = (full != NULL && strcmp(full, want) == 0) ||
	      (bare != NULL && strcmp(bare, want) == 0);
	free(full);
	free(bare);
	return hit;
}

static void take(struct symfind *out, uint64_t vaddr, uint64_t size, const char *name)
{
	out->vaddr = vaddr;
	out->size = size;
	snprintf(out->name, sizeof out->name, "%s", name);
}

static int find_in_table(struct dso *d, const char *func, struct symfind *out)
{
	struct symtab *t = &d->syms;
	size_t i;

	for (i = 0; i < t->n; i++) {
		const char *name = symtab__name(t, &t->v[i]);
		if (same_base(name, func)) {
			take(out, t->v[i].start, t->v[i].end - t->v[i].start, name);
			return 0;
		}
	}
	for (i = 0; i < t->n; i++) {
		const char *name = symtab__name(t, &t->v[i]);
		if (same_demangled(name, func)) {
			take(out, t->v[i].start, t->v[i].end - t->v[i].start, name);
			return 0;
		}
	}
	return -ENOENT;
}

/* Every defined function symbol of one ELF symbol section. */
static int find_in_section(Elf *elf, Elf_Scn *scn, const char *func, struct symfind *out)
{
	GElf_Shdr sh;
	Elf_Data *data;
	size_t i, n;

	if (gelf_getshdr(scn, &sh) == NULL || sh.sh_entsize == 0 ||
	    (data = elf_getdata(scn, NULL)) == NULL)
		return -ENOENT;
	n = sh.sh_size / sh.sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym s;
		const char *name;
		unsigned type;

		if (gelf_getsym(data, (int)i, &s) == NULL)
			break;
		type = GELF_ST_TYPE(s.st_info);
		if (s.st_shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (name != NULL && (same_base(name, func) || same_demangled(name, func))) {
			take(out, s.st_value, s.st_size, name);
			return 0;
		}
	}
	return -ENOENT;
}

/* The aliases the symbolizer's table keeps one of. */
static int find_alias(const char *path, const char *func, struct symfind *out)
{
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd, rc = -ENOENT;

	fd = dso__open_regular(path);
	if (fd < 0)
		return fd;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf != NULL && rc == -ENOENT && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) != NULL &&
		    (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
			rc = find_in_section(elf, scn, func, out);
	}
	elf_end(elf);
	close(fd);
	return rc;
}

/* "0x401136": an address in the object, named by the symbol around it. */
static int parse_addr(const char *func, uint64_t *addr)
{
	char *end;

	if (func[0] != '0' || (func[1] != 'x' && func[1] != 'X') || func[2] == '\0')
		return 0;
	errno = 0;
	*addr = strtoull(func + 2, &end, 16);
	return errno == 0 && *end == '\0';
}

static void offer_names(struct dso *d, void (*near)(const char *, void *), void *arg)
{
	struct symtab *t = &d->syms;
	size_t i;

	for (i = 0; i < t->n; i++) {
		const char *dem = symtab__demangled(t, &t->v[i]);
		near(symtab__name(t, &t->v[i]), arg);
		if (dem != NULL)
			near(dem, arg);
	}
}

static int lookup(struct dso *d, const char *path, const char *func, struct symfind *out,
		  void (*near)(const char *, void *), void *arg)
{
	uint64_t addr;
	int rc;

	memset(out, 0, sizeof *out);
	if (parse_addr(func, &addr)) {
		const struct symtab_sym *s = symtab__find(&d->syms, addr);
		out->vaddr = addr;
		if (s != NULL)
			snprintf(out->name, sizeof out->name, "%s+0x%llx",
				 symtab__name(&d->syms, s), (unsigned long long)(addr - s->start));
		else
			snprintf(out->name, sizeof out->name, "%s", func);
		return vaddr_to_offset(d, addr, &out->offset);
	}
	rc = find_in_table(d, func, out);
	if (rc == -ENOENT)
		rc = find_alias(d->path != NULL ? d->path : path, func, out);
	if (rc == -ENOENT) {
		if (near != NULL)
			offer_names(d, near, arg);
		return rc;
	}
	if (rc < 0)
		return rc;
	return vaddr_to_offset(d, out->vaddr, &out->offset);
}

int symfind__func(const char *path, const char *func, struct symfind *out,
		  void (*near)(const char *cand, void *arg), void *arg)
{
	struct dso_cache *c = dso_cache__new();
	struct dso *d;
	int rc = 0;

	if (c == NULL)
		return -ENOMEM;
	d = dso_cache__get(c, path, NULL, 0, &rc);
	rc = d != NULL ? lookup(d, path, func, out, near, arg) : (rc < 0 ? rc : -ENOEXEC);
	dso_cache__delete(c);
	return rc;
}
