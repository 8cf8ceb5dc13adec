/*
 * /proc/kallsyms: "ADDR TYPE NAME[\t[MODULE]]" per line.  Only text
 * symbols (t, T, w, W) are kept; a symbol ends where the next one starts.
 * When kptr_restrict hides addresses every line reads 0: that is noted
 * (k->hidden) so the caller can say so once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kallsyms.h"
#include "hex.h"
#include "dso.h"

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

int kallsyms__parse(struct kallsyms *k, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	size_t lines = 0, zero = 0;
	uint64_t max_addr = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q = p, *name, *name_end, *mod = NULL;
		uint64_t addr = 0;
		int digits = 0, d;
		char type;
		unsigned aux = 0, prio;

		if (eol == NULL)
			eol = end;
		while (q < eol && (d = hex_digit((unsigned char)*q)) >= 0 && digits < 16) {
			addr = addr << 4 | (uint64_t)d;
			q++;
			digits++;
		}
		if (digits == 0 || q + 3 > eol || q[0] != ' ' || q[2] != ' ')
			goto next;
		type = q[1];
		name = q + 3;
		name_end = name;
		while (name_end < eol && *name_end != '\t' && *name_end != ' ')
			name_end++;
		if (name_end == name)
			goto next;
		if (name_end + 2 < eol && name_end[0] == '\t' && name_end[1] == '[') {
			const char *close = memchr(name_end + 2, ']', (size_t)(eol - name_end - 2));
			if (close != NULL) {
				mod = name_end + 2;
				aux = module_index(k, mod, (size_t)(close - mod));
			}
		}
		lines++;
		if (addr == 0)
			zero++;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			goto next;
		prio = type == 'T' ? SYMTAB_GLOBAL : (type == 'W' || type == 'w') ? SYMTAB_WEAK
									    : SYMTAB_LOCAL;
		if (symtab__add(&k->syms, addr, 0, name, (size_t)(name_end - name), prio, aux) < 0)
			return -ENOMEM;
		if (addr > max_addr)
			max_addr = addr;
next:
		p = eol + 1;
	}
	k->hidden = lines > 0 && zero == lines;
	if (k->hidden) {
		/* Every symbol at 0 would only mislead. */
		symtab__exit(&k->syms);
		symtab__init(&k->syms);
	}
	/* The last symbol gets a page: kallsyms does not say where text ends. */
	return symtab__finish(&k->syms, max_addr + 4096 > max_addr ? max_addr + 4096 : UINT64_MAX);
}

int kallsyms__load(struct kallsyms *k, const char *path)
{
	int fd = dso__open_regular(path);
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc;

	if (fd < 0)
		return fd;
	/* procfs reports size 0: read until EOF. */
	for (;;) {
		ssize_t n;
		if (len + 65536 > cap) {
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
	rc = kallsyms__parse(k, buf, len);
	free(buf);
	return rc;
}

const char *kallsyms__dso(const struct kallsyms *k, const struct symtab_sym *s)
{
	if (s->aux > 0 && s->aux <= k->nmod)
		return k->modules[s->aux - 1];
	return "[kernel.kallsyms]";
}
