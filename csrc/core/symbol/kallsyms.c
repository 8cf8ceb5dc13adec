/*
 * /proc/kallsyms: "ADDR TYPE NAME[\t[MODULE]]" per line.  perf keeps text
 * and data symbols (T, W, D, B in either case) and so does this index: a
 * data symbol after the last function of a region ends that function.  A
 * symbol ends where the next one starts, or a page on (rounded up) when the
 * next one is on the other side of the kernel/module divide or there is
 * none, as perf's symbols__fixup_end has it.
 * When kptr_restrict hides addresses every line reads 0: that is noted
 * (k->hidden) so the caller can say so once.
 *
 * The text stays as it is and is indexed (kallsyms.h): the index is what
 * every line costs, names are copied only for the symbols looked up.
 */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "symbol/kallsyms.h"
#include "symbol/dso.h"

void kallsyms__init(struct kallsyms *k)
{
	memset(k, 0, sizeof(*k));
	symtab__init(&k->syms);
}

void kallsyms__exit(struct kallsyms *k)
{
	size_t i;

	for (i = 0; i < k->nmod; i++)
		free(k->modules[i]);
	free(k->modules);
	for (i = 0; i < k->name_slots; i++)
		free(k->names[i].name);
	free(k->names);
	free(k->e);
	free(k->owned);
	if (k->map != NULL)
		munmap(k->map, k->len);
	symtab__exit(&k->syms);
	memset(k, 0, sizeof(*k));
}

/* Index+1 of module name [p, p+n), added when new; 0 on failure. */
static unsigned module_index(struct kallsyms *k, const char *p, size_t n)
{
	size_t i;
	char **nm;
	char *s;

	/* Modules come in runs: the last one is the likely match. */
	for (i = k->nmod; i > 0; i--) {
		const char *m = k->modules[i - 1];
		if (strlen(m) == n + 2 && memcmp(m + 1, p, n) == 0)
			return (unsigned)i;
	}
	if (k->nmod >= 65534)
		return 0;
	nm = realloc(k->modules, (k->nmod + 1) * sizeof(*nm));
	if (nm == NULL)
		return 0;
	k->modules = nm;
	s = malloc(n + 3);
	if (s == NULL)
		return 0;
	s[0] = '[';
	memcpy(s + 1, p, n);
	s[n + 1] = ']';
	s[n + 2] = '\0';
	k->modules[k->nmod++] = s;
	return (unsigned)k->nmod;
}

/* A hex digit's value, or 16 for anything else. */
static inline unsigned hexv(unsigned char c)
{
	unsigned d = (unsigned)c - '0';

	if (d < 10)
		return d;
	d = (unsigned)(c | 0x20) - 'a';
	return d < 6 ? d + 10 : 16;
}

#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

/*
 * Eight hex digits (p[0] the most significant) in one go; 1 and *v when
 * all eight are digits.  Byte lanes never carry while every byte is
 * ASCII, and a non-ASCII byte fails the check whatever the others say.
 */
static inline int hex8(const char *p, uint32_t *v)
{
	uint64_t w, lw, digit, alpha, n;

	memcpy(&w, p, 8);
	lw = w | ONES * 0x20;
	digit = (w + ONES * (0x80 - '0')) & ~(w + ONES * (0x7f - '9'));
	alpha = (lw + ONES * (0x80 - 'a')) & ~(lw + ONES * (0x7f - 'f'));
	if (((digit | alpha) & ~w & HIGHS) != HIGHS)
		return 0;
	/* '0'-'9': low nibble; 'a'-'f' and 'A'-'F' (bit 6 set): low nibble + 9 */
	n = (w & ONES * 0x0f) + ((w >> 6) & ONES) * 9;
	n = __builtin_bswap64(n);
	n = (n | n >> 4) & UINT64_C(0x00ff00ff00ff00ff);
	n = (n | n >> 8) & UINT64_C(0x0000ffff0000ffff);
	n = (n | n >> 16) & UINT64_C(0xffffffff);
	*v = (uint32_t)n;
	return 1;
}

/*
 * The common line starts with 16 hex digits and a space: 1 and *addr then
 * (p has 17 bytes), else 0 (the caller reads digit by digit).
 */
static inline int addr16(const char *p, uint64_t *addr)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint32_t hi, lo;

	if (p[16] != ' ' || !hex8(p, &hi) || !hex8(p + 8, &lo))
		return 0;
	*addr = (uint64_t)hi << 32 | lo;
	return 1;
#else
	(void)p;
	(void)addr;
	return 0;
#endif
}

/*
 * Where a name ends: the first tab, space or newline in [p, end), or end;
 * eight bytes a step (names are ~25 bytes, 100k+ of them), looking for any
 * byte below '!' (the three, and other control bytes, which names do not
 * hold: a hit on one of those is stepped over).  Little-endian: the lowest
 * flagged byte is the first such byte, never a false hit.
 */
static inline const char *name_end_of(const char *p, const char *end)
{
	for (;;) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		while (end - p >= 8) {
			uint64_t w, m;
			memcpy(&w, p, 8);
			m = (w - ONES * 0x21) & ~w & HIGHS;
			if (m) {
				p += __builtin_ctzll(m) >> 3;
				break;
			}
			p += 8;
		}
#endif
		while (p < end && (unsigned char)*p > ' ')
			p++;
		if (p >= end || *p == '\t' || *p == ' ' || *p == '\n')
			return p;
		p++;
	}
}

/* perf's roundup(addr, 4096) + 4096 (= roundup(addr + 4096, 4096)),
 * saturated. */
static uint64_t page_after(uint64_t addr)
{
	uint64_t up = (addr + 4095) & ~(uint64_t)4095;

	if (up < addr || up + 4096 < up)
		return UINT64_MAX;
	return up + 4096;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct kallsyms_ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* file order among equals: pick() takes the last listed */
	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * Indexes k->text: one entry per text symbol, sorted by address (the
 * kernel lists its own symbols sorted; modules may not be).
 */
static int index_text(struct kallsyms *k)
{
	const char *text = k->text;
	const char *p = text, *end = text + k->len;
	size_t lines = 0, zero = 0, cap;
	uint64_t max_addr = 0, prev = 0;
	int sorted = 1;

	if (k->len >= UINT32_MAX)
		return -EFBIG;
	/* A line is rarely under 24 bytes; untouched room costs no memory. */
	cap = k->len / 24 + 16;
	k->e = malloc(cap * sizeof(*k->e));
	if (k->e == NULL)
		return -ENOMEM;
	while (p < end) {
		const char *q = p, *name, *name_end, *eol;
		uint64_t addr = 0;
		int digits = 0;
		unsigned d;
		char type;
		unsigned aux = 0;
		struct kallsyms_ent *e;

		if (end - q >= 17 && addr16(q, &addr)) {
			q += 16;
			digits = 16;
		} else {
			while (q < end && (d = hexv((unsigned char)*q)) < 16 && digits < 16) {
				addr = addr << 4 | d;
				q++;
				digits++;
			}
		}
		if (digits == 0 || end - q < 3 || q[0] != ' ' || q[2] != ' ' ||
		    q[1] == '\n')
			goto skip;
		type = q[1];
		name = q + 3;
		name_end = name_end_of(name, end);
		if (name_end == name)
			goto skip;
		if (name_end < end && *name_end == '\n') {
			eol = name_end;
		} else {
			eol = memchr(name_end, '\n', (size_t)(end - name_end));
			if (eol == NULL)
				eol = end;
			if (eol - name_end > 2 && name_end[0] == '\t' && name_end[1] == '[') {
				const char *close = memchr(name_end + 2, ']',
							   (size_t)(eol - name_end - 2));
				if (close != NULL)
					aux = module_index(k, name_end + 2,
							   (size_t)(close - name_end - 2));
			}
		}
		lines++;
		if (addr == 0)
			zero++;
		if (!strchr("tTwWdDbB", type) || type == '\0')
			goto next;
		if (k->n == cap) {
			struct kallsyms_ent *ne;
			if (cap > SIZE_MAX / 2 / sizeof(*ne))
				return -ENOMEM;
			ne = realloc(k->e, 2 * cap * sizeof(*ne));
			if (ne == NULL)
				return -ENOMEM;
			k->e = ne;
			cap *= 2;
		}
		e = &k->e[k->n++];
		e->start = addr;
		e->line = (uint32_t)(name - text);
		e->aux = (uint16_t)aux;
		/* perf's reading of the type letter: 'W' weak, other upper
		 * case global, lower case (even 'w') local. */
		e->prio = type == 'W' ? SYMTAB_WEAK :
			  (type >= 'A' && type <= 'Z') ? SYMTAB_GLOBAL : SYMTAB_LOCAL;
		/* the reference symbol of a relocation must be a function */
		e->func = strchr("tTwW", type) != NULL;
		if (addr < prev)
			sorted = 0;
		prev = addr;
		if (addr > max_addr)
			max_addr = addr;
		goto next;
skip:
		eol = memchr(q, '\n', (size_t)(end - q));
		if (eol == NULL)
			eol = end;
next:
		p = eol + 1;
	}
	k->hidden = lines > 0 && zero == lines;
	if (k->hidden)
		k->n = 0;       /* every symbol at 0 would only mislead */
	if (!sorted)
		qsort(k->e, k->n, sizeof(*k->e), cmp_ent);
	/* The last symbol gets to the page after its own: kallsyms does not
	 * say where text ends. */
	k->limit = page_after(max_addr);
	return 0;
}

/* Entry e's name in the text (not NUL-terminated) and its length. */
static const char *ent_name(const struct kallsyms *k, const struct kallsyms_ent *e, size_t *n)
{
	const char *name = k->text + e->line;

	*n = (size_t)(name_end_of(name, k->text + k->len) - name);
	return name;
}

/*
 * The chosen entry among those at e[i].start (i: the last of them), and
 * where that address's symbol ends.  perf sizes kallsyms symbols before
 * it drops aliases: each one ends where the next starts, so all but the
 * last listed at an address are empty, and a sized symbol beats an empty
 * one.  The last listed wins (__pi_memcpy over memcpy and __memcpy).
 */
static size_t pick(const struct kallsyms *k, size_t i, uint64_t *end)
{
	if (i + 1 >= k->n)
		*end = k->limit > k->e[i].start ? k->limit : k->e[i].start + 1;
	else if ((k->e[i].aux == 0) != (k->e[i + 1].aux == 0))
		/* the kernel's last symbol before a module's, or the reverse */
		*end = page_after(k->e[i].start);
	else
		*end = k->e[i + 1].start;
	return i;
}

/* Where entry ent (index + 1) starts probing in a table of slots. */
static size_t name_slot(uint32_t ent, size_t slots)
{
	return (size_t)(uint32_t)(ent * 2654435761u) & (slots - 1);
}

/* Entry i's name, copied out of the text once and kept. */
static const char *name_of(struct kallsyms *k, size_t i)
{
	size_t j, n;
	const char *src;
	char *copy;

	if ((k->nnames + 1) * 2 > k->name_slots) {
		size_t slots = k->name_slots ? k->name_slots * 2 : 256, m;
		struct kallsyms_name *ns = calloc(slots, sizeof(*ns));
		if (ns == NULL)
			return NULL;
		for (m = 0; m < k->name_slots; m++) {
			if (k->names[m].ent == 0)
				continue;
			j = name_slot(k->names[m].ent, slots);
			while (ns[j].ent != 0)
				j = (j + 1) & (slots - 1);
			ns[j] = k->names[m];
		}
		free(k->names);
		k->names = ns;
		k->name_slots = slots;
	}
	j = name_slot((uint32_t)(i + 1), k->name_slots);
	while (k->names[j].ent != 0) {
		if (k->names[j].ent == (uint32_t)(i + 1))
			return k->names[j].name;
		j = (j + 1) & (k->name_slots - 1);
	}
	src = ent_name(k, &k->e[i], &n);
	copy = malloc(n + 1);
	if (copy == NULL)
		return NULL;
	memcpy(copy, src, n);
	copy[n] = '\0';
	k->names[j].ent = (uint32_t)(i + 1);
	k->names[j].name = copy;
	k->nnames++;
	return copy;
}

static const char *dso_of(const struct kallsyms *k, unsigned aux)
{
	if (aux > 0 && aux <= k->nmod)
		return k->modules[aux - 1];
	return "[kernel.kallsyms]";
}

int kallsyms__find(struct kallsyms *k, uint64_t addr, struct kallsyms_sym *out)
{
	size_t lo = 0, hi = k->n, best;
	uint64_t end;

	/* The last symbol starting at or before addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->e[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -ENOENT;
	best = pick(k, lo - 1, &end);
	if (addr >= end)
		return -ENOENT;
	out->name = name_of(k, best);
	if (out->name == NULL)
		return -ENOMEM;
	out->start = k->e[best].start;
	out->end = end;
	out->dso = dso_of(k, k->e[best].aux);
	out->module = k->e[best].aux != 0;
	return 0;
}

int kallsyms__parse(struct kallsyms *k, const char *buf, size_t len)
{
	size_t i;
	int rc;

	if (len >= UINT32_MAX)
		return -EFBIG;
	k->owned = malloc(len + 1);
	if (k->owned == NULL)
		return -ENOMEM;
	memcpy(k->owned, buf, len);
	k->owned[len] = '\0';
	k->text = k->owned;
	k->len = len;
	rc = index_text(k);
	if (rc < 0)
		return rc;
	/* The symtab: each address once, with its chosen name. */
	for (i = 0; i < k->n; i++) {
		uint64_t end;
		size_t best, n;
		const char *name;

		if (i + 1 < k->n && k->e[i + 1].start == k->e[i].start)
			continue;
		best = pick(k, i, &end);
		name = ent_name(k, &k->e[best], &n);
		if (symtab__add(&k->syms, k->e[best].start, end - k->e[best].start, name, n,
				k->e[best].prio,
				k->e[best].aux) < 0)
			return -ENOMEM;
	}
	return symtab__finish(&k->syms, k->limit);
}

int kallsyms__load(struct kallsyms *k, const char *path)
{
	int fd = dso__open_regular(path);
	struct stat st;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		/* A copy (perf's build-id cache): mapped, nothing copied. */
		void *m;
		if ((uint64_t)st.st_size >= UINT32_MAX) {
			close(fd);
			return -EFBIG;
		}
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		if (m == MAP_FAILED)
			return -errno;
		k->map = m;
		k->text = m;
		k->len = (size_t)st.st_size;
		return index_text(k);
	}
	/* procfs reports size 0: read until EOF, growing. */
	for (;;) {
		ssize_t n;
		if (cap - len < 65536) {
			char *nb;
			if (cap > (size_t)1 << 30) {
				free(buf);
				close(fd);
				return -EFBIG;
			}
			cap = cap ? cap * 2 : 1 << 20;
			nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			rc = -errno;
			free(buf);
			close(fd);
			return rc;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	k->owned = buf;
	k->text = buf;
	k->len = len;
	return index_text(k);
}

int kallsyms__function_start(const struct kallsyms *k, const char *name, uint64_t *addr)
{
	size_t i, len = strlen(name), n;
	uint32_t first = UINT32_MAX;

	/* The first listed: entries are in address order, not file order. */
	for (i = 0; i < k->n; i++) {
		const char *p;
		if (!k->e[i].func || k->e[i].line >= first)
			continue;
		p = ent_name(k, &k->e[i], &n);
		if (n == len && memcmp(p, name, n) == 0) {
			first = k->e[i].line;
			*addr = k->e[i].start;
		}
	}
	return first == UINT32_MAX ? -ENOENT : 0;
}

int kallsyms__kernel_extent(const struct kallsyms *k, uint64_t *start, uint64_t *end)
{
	size_t i, last = SIZE_MAX;

	for (i = 0; i < k->n; i++) {
		if (k->e[i].aux != 0)
			continue;
		if (last == SIZE_MAX)
			*start = k->e[i].start;
		last = i;
	}
	if (last == SIZE_MAX)
		return -ENOENT;
	pick(k, last, end);
	return 0;
}

const char *kallsyms__dso(const struct kallsyms *k, const struct symtab_sym *s)
{
	return dso_of(k, s->aux);
}
