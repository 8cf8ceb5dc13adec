/*
 * Names to addresses: the reverse of the symbolizer, for dynamic probes.
 * A function named in an ELF object (executable, PIE, shared object) is
 * found in the table the symbolizer loads (debug file, .symtab, .dynsym,
 * PLT, C++ names demangled or mangled), then among the aliases that table
 * folds away (libc's weak "write" beside its global "__write"), and placed
 * at its file offset, which is what the uprobe PMU wants.  Plain C, no Lua.
 */
#ifndef LUAPERF_SYMFIND_H
#define LUAPERF_SYMFIND_H

#include <stddef.h>
#include <stdint.h>

struct symfind {
	uint64_t vaddr;               /* the symbol's address in the ELF */
	uint64_t size;                /* 0: unknown */
	uint64_t offset;              /* file offset of vaddr */
	char name[256];               /* the symbol as the object spells it */
};

/*
 * Finds func in the ELF at path: by its name, its name before "@VERSION",
 * its demangled name with or without the parameter list, or "0xADDR" (an
 * address in the object).  0, or -ENOENT (no such function: near, when
 * given, is called with every function name so the caller can suggest
 * one), -EINVAL (the address is in no loaded segment), -ENOEXEC (not ELF)
 * or the -errno of opening the file.
 */
int symfind__func(const char *path, const char *func, struct symfind *out,
		  void (*near)(const char *cand, void *arg), void *arg);

#endif
