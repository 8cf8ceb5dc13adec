/*
 * Demangling with libiberty's cplus_demangle (Debian's libiberty-dev, a
 * static PIC archive; LGPL-2.1+, its demangler files with the exception
 * that allows linking them into any program): the demangler perf itself
 * uses when built without libbfd, as Debian's is.  It reads C++ (Itanium),
 * Rust's legacy names (the hash and $LT$-style escapes handled, a
 * ".llvm.NNN" suffix dropped) and Rust's v0 names (_R...).
 *
 * Names come out in perf's default form (DMGL_NO_OPTS: no parameter list,
 * no cv-qualifiers of methods, no return types), so stacks read like
 * `perf report` and `perf script`; the verbose form is what c++filt and
 * nm -C print.
 */
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>
#include "symbol/demangle.h"
#include "symbol/symbolizer.h"

static int looks_mangled(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

static char *demangle(const char *name, int options)
{
	static const char plt[] = "@plt";
	size_t n, k = sizeof plt - 1;
	char *base, *d, *out;

	if (!looks_mangled(name))
		return NULL;
	/* A PLT slot's name (dso.c): perf demangles the symbol, then adds
	 * "@plt"; the demangler would take the suffix for a version and drop it. */
	n = strlen(name);
	if (n <= k || strcmp(name + n - k, plt) != 0)
		return cplus_demangle(name, options);
	if ((base = strndup(name, n - k)) == NULL)
		return NULL;
	d = cplus_demangle(base, options);
	free(base);
	if (d == NULL)
		return NULL;
	out = malloc(strlen(d) + k + 1);
	if (out != NULL) {
		memcpy(out, d, strlen(d));
		memcpy(out + strlen(d), plt, k + 1);
	}
	free(d);
	return out;
}

char *demangle__alloc(const char *name)
{
	return demangle(name, DMGL_NO_OPTS);
}

char *demangle__alloc_verbose(const char *name)
{
	return demangle(name, DMGL_PARAMS | DMGL_ANSI);
}

static const char *copy_out(char *d, const char *name, char *buf, size_t size)
{
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

const char *symbolizer__demangle(const char *name, char *buf, size_t size)
{
	return copy_out(demangle__alloc(name), name, buf, size);
}

const char *symbolizer__demangle_verbose(const char *name, char *buf, size_t size)
{
	return copy_out(demangle__alloc_verbose(name), name, buf, size);
}
