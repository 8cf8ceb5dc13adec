/* Fuzz target: the perf.data reader over bytes, every record decoded. */
#include <stdint.h>
#include "perfdata/perfdata.h"
#include "record/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_all(const uint8_t *data, size_t size, size_t max_queue)
{
	struct perfdata_opts opts = { .max_queue = max_queue };
	struct perfdata *pd;
	struct perfdata_rec r;
	char err[512];
	int n = 0;

	if (perfdata__read_buffer(data, size, &opts, &pd, err, sizeof err) != 0)
		return;
	while (n++ < 100000 && perfdata__next(pd, &r) > 0) {
		struct record rec;
		record__decode(perfdata__evtab(pd), r.hdr, r.size, &rec, err, sizeof err);
	}
	perfdata__close(pd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	read_all(data, size, 1 << 20);
	/* A tiny ordering queue: forced flushes and late records. */
	read_all(data, size, 64);
	return 0;
}
