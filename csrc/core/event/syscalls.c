/* System call names by number, from the kernel headers (syscalls.h). */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <asm/unistd.h>
#include "event/syscalls.h"

static const struct {
	long nr;
	const char *name;
} table[] = {
#include "event/syscall_names.inc"
};

const char *syscalls__name(long nr)
{
	size_t i;

	for (i = 0; i < sizeof table / sizeof table[0]; i++)
		if (table[i].nr == nr)
			return table[i].name;
	return NULL;
}

long syscalls__number(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strcmp(table[i].name, name) == 0)
			return table[i].nr;
	return -ENOENT;
}
