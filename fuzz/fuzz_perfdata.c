/* Fuzz target: the perf.data reader over bytes, every record decoded. */
#include <stdint.h>
#include "perfdata.h"
#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfdata_opts opts = { .max_queue = 1 << 20 };
	struct perfdata *pd;
	struct perfdata_rec r;
	char err[512];
	int n = 0;

	if (perfdata__read_buffer(data, size, &opts, &pd, err, sizeof err) != 0)
		return 0;
	while (n++ < 100000 && perfdata__next(pd, &r) > 0) {
		struct record rec;
		record__decode(perfdata__evtab(pd), r.hdr, r.size, &rec, err, sizeof err);
	}
	perfdata__close(pd);
	return 0;
}
