/* Why a lookup found no symbol: see miss.h. */
#include <inttypes.h>
#include <stdio.h>
#include "symbol/miss.h"

char *sym_miss__text(struct sym_miss *m, char *buf, size_t size)
{
	switch (m->kind) {
	case MISS_NO_SYMBOL:
		snprintf(buf, size, "no symbol in %s at 0x%" PRIx64, m->path, m->addr);
		break;
	case MISS_MODULE:
		snprintf(buf, size, "no symbol of %s at 0x%" PRIx64, m->path, m->addr);
		break;
	case MISS_NO_KERNEL_MAP:
		snprintf(buf, size, "0x%" PRIx64 " is in no kernel map of the recording", m->addr);
		break;
	case MISS_KERNEL:
		snprintf(buf, size, "no kernel symbol at 0x%" PRIx64, m->addr);
		break;
	case MISS_OUTSIDE:
		snprintf(buf, size, "0x%" PRIx64 " is outside the segments of %s", m->addr, m->path);
		break;
	case MISS_JIT:
		snprintf(buf, size, "no symbol at 0x%" PRIx64 " in pid %u: %s", m->addr,
			 (unsigned)m->pid, m->path);
		break;
	case MISS_JIT_MAP:
		snprintf(buf, size, "no symbol at 0x%" PRIx64 " in %s/perf-%u.map", m->addr, m->path,
			 (unsigned)m->pid);
		break;
	case MISS_NO_MEMORY:
		snprintf(buf, size, "out of memory");
		break;
	case MISS_NONE:
		break;
	}
	m->kind = MISS_NONE;
	return buf;
}
