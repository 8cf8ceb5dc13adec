/*
 * Fuzz target: the record decoder.  The first 32 bytes choose the attr
 * (sample_type, read_format, regs masks, sample_id_all); the rest is one
 * record, header included.
 */
#include <string.h>
#include <stdint.h>
#include "record/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_event_attr attr;
	struct evtab *t;
	struct record rec;
	uint64_t cfg[4];
	char err[512];

	if (size < sizeof cfg + sizeof(struct perf_event_header))
		return 0;
	memcpy(cfg, data, sizeof cfg);
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.sample_type = cfg[0] & ((PERF_SAMPLE_MAX - 1) | PERF_SAMPLE_MAX);
	attr.read_format = cfg[1] & 0x1f;
	attr.sample_regs_user = cfg[2];
	attr.sample_regs_intr = cfg[3];
	attr.sample_id_all = (cfg[1] >> 8) & 1;
	attr.branch_sample_type = (cfg[1] >> 9) & 1 ? PERF_SAMPLE_BRANCH_HW_INDEX : 0;
	t = evtab__new();
	if (t == NULL)
		return 0;
	if (evtab__add(t, &attr, "fuzz") >= 0)
		record__decode(t, data + sizeof cfg, size - sizeof cfg, &rec, err, sizeof err);
	evtab__delete(t);
	return 0;
}
