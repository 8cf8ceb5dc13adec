/*
 * Fuzz target: system call pairing (count/syscount.c) over hostile
 * samples.  Byte 0 and 1 give the id and ret offsets; then records of
 * [kind (bit 0: exit, bit 1: COMM), tid, time (2 bytes), raw size] and
 * that many raw bytes, flushed every 16 records.
 */
#include <stdint.h>
#include <string.h>
#include "count/syscount.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct syscount *sc;
	size_t pos = 2, n = 0, rows, threads;

	if (size < 2)
		return 0;
	sc = syscount__new(0, 1, data[0] & 63, data[1] & 63);
	if (sc == NULL)
		return 0;
	while (pos + 5 <= size) {
		struct record r;
		size_t raw = data[pos + 4];

		memset(&r, 0, sizeof r);
		if (raw > size - pos - 5)
			raw = size - pos - 5;
		r.s.tid = r.s.pid = data[pos + 1] & 7;
		r.s.time = (uint64_t)data[pos + 2] << 8 | data[pos + 3];
		if (data[pos] & 2) {
			char comm[17];
			memcpy(comm, data + pos + 5, raw < 16 ? raw : 16);
			comm[raw < 16 ? raw : 16] = '\0';
			r.type = PERF_RECORD_COMM;
			r.u.comm.pid = r.u.comm.tid = r.s.tid;
			r.u.comm.comm = comm;
			syscount__add_record(sc, &r);
		} else {
			r.type = PERF_RECORD_SAMPLE;
			r.evidx = data[pos] & 1;
			r.s.raw = data + pos + 5;
			r.s.raw_size = (uint32_t)raw;
			syscount__add_record(sc, &r);
		}
		pos += 5 + raw;
		if (++n % 16 == 0)
			syscount__flush(sc);
	}
	syscount__flush(sc);
	syscount__rows(sc, &rows);
	syscount__threads(sc, &threads);
	syscount__delete(sc);
	return 0;
}
