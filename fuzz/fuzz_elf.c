/*
 * Fuzz target: the ELF symbol loader (libelf), through a memfd so the
 * loader reads the bytes exactly as it reads a file on disk.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include "symbol/dso.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dso_cache *c;
	struct dso *d;
	char path[64];
	int fd, err = 0;
	size_t i;

	fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	c = dso_cache__new();
	if (c != NULL) {
		d = dso_cache__get(c, path, NULL, 0, &err);
		if (d != NULL) {
			for (i = 0; i < d->syms.n && i < 64; i++) {
				const struct symtab_sym *s = symtab__find(&d->syms, d->syms.v[i].start);
				if (s != NULL)
					(void)symtab__name(&d->syms, s)[0];
			}
		}
		dso_cache__delete(c);
	}
	close(fd);
	return 0;
}
