/* Demangling of C++ (Itanium ABI) and Rust symbols.  Internal. */
#ifndef LUAPERF_DEMANGLE_H
#define LUAPERF_DEMANGLE_H

#include <stddef.h>

/* Returns a malloc'ed demangled name in perf's default form (no parameter
 * list), or NULL when name is not mangled (or does not demangle: then the
 * caller keeps the raw name). */
char *demangle__alloc(const char *name);
/* The same with parameters and qualifiers, as c++filt and nm -C print. */
char *demangle__alloc_verbose(const char *name);

#endif
