/*
 * Demangling: C++ names through __cxa_demangle (libstdc++, GPL-3.0 with the
 * GCC Runtime Library Exception, so linking it imposes nothing on us), Rust
 * legacy names (Itanium-shaped, _ZN...17h<hash>E) through the same call and
 * then Rust's own rules: the hash is dropped and $LT$-style escapes decoded.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "demangle.h"
#include "symbolizer.h"

/* In libstdc++ (namespace abi, C linkage). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static int is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

static const struct { const char *esc; char c; } rust_escapes[] = {
	{ "$SP$", '@' }, { "$BP$", '*' }, { "$RF$", '&' }, { "$LT$", '<' },
	{ "$GT$", '>' }, { "$LP$", '(' }, { "$RP$", ')' }, { "$C$", ',' },
};

/* Rewrites s in place (it only shrinks): Rust's legacy escapes. */
static void rust_unescape(char *s)
{
	char *w = s;
	const char *r = s;

	while (*r) {
		size_t i;
		int done = 0;

		/* A component starting with '$' is written "_$". */
		if (r[0] == '_' && r[1] == '$' && (r == s || (r - s >= 2 && r[-1] == ':' && r[-2] == ':'))) {
			r++;
			continue;
		}

		if (r[0] == '.') {
			/* ".." separates path components; a lone '.' stands for '-'. */
			if (r[1] == '.') {
				*w++ = ':';
				*w++ = ':';
				r += 2;
			} else {
				*w++ = '-';
				r++;
			}
			continue;
		}
		if (r[0] == '$') {
			for (i = 0; i < sizeof(rust_escapes) / sizeof(rust_escapes[0]); i++) {
				size_t n = strlen(rust_escapes[i].esc);
				if (strncmp(r, rust_escapes[i].esc, n) == 0) {
					*w++ = rust_escapes[i].c;
					r += n;
					done = 1;
					break;
				}
			}
			if (!done && r[1] == 'u') {
				const char *end = strchr(r + 2, '$');
				if (end != NULL && end - (r + 2) >= 1 && end - (r + 2) <= 2 &&
				    is_hex(r + 2, (size_t)(end - (r + 2)))) {
					*w++ = (char)strtol(r + 2, NULL, 16);
					r = end + 1;
					done = 1;
				}
			}
			if (done)
				continue;
		}
		*w++ = *r++;
	}
	*w = '\0';
}

/* A legacy Rust name demangles to "...::h<16 hex>". */
static int rust_legacy(char *d)
{
	size_t n = strlen(d);

	if (n < 20 || strncmp(d + n - 19, "::h", 3) != 0 || !is_hex(d + n - 16, 16))
		return 0;
	d[n - 19] = '\0';
	rust_unescape(d);
	return 1;
}

char *demangle__alloc(const char *name)
{
	int status = -1;
	char *d;

	if (name[0] != '_' || name[1] != 'Z')
		return NULL;
	d = __cxa_demangle(name, NULL, NULL, &status);
	if (d == NULL || status != 0) {
		free(d);
		return NULL;
	}
	rust_legacy(d);
	return d;
}

const char *symbolizer__demangle(const char *name, char *buf, size_t size)
{
	char *d = demangle__alloc(name);
	size_t n;

	if (d == NULL || size == 0) {
		free(d);
		return name;
	}
	n = strlen(d);
	if (n >= size)
		n = size - 1;
	memcpy(buf, d, n);
	buf[n] = '\0';
	free(d);
	return buf;
}
