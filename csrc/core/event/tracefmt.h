/*
 * Tracepoint payloads: the format descriptions in a perf.data file's
 * tracing data, parsed with libtraceevent, and the raw bytes of a
 * tracepoint sample decoded into named fields.  Plain C, no Lua.
 * Implemented in tracefmt.c.
 */
#ifndef LUAPERF_TRACEFMT_H
#define LUAPERF_TRACEFMT_H

#include <stddef.h>
#include <stdint.h>

struct tracefmt;

/*
 * Parses perf's tracing data blob ("\027\010Dtracing", version, endianness,
 * header_page, header_event, ftrace and event formats, ...).  Returns 0 or
 * -EINVAL (with what was expected and where in err) / -ENOMEM.
 */
int tracefmt__parse(const void *data, size_t size, struct tracefmt **out, char *err, size_t errlen);
void tracefmt__delete(struct tracefmt *tf);

enum tracefmt_kind { TRACEFMT_INT, TRACEFMT_STRING, TRACEFMT_BYTES };

struct tracefmt_field {
	const char *name;
	enum tracefmt_kind kind;
	int is_signed;
	uint64_t u;                   /* TRACEFMT_INT (sign-extended when signed) */
	const char *str;              /* STRING, BYTES: inside the raw payload */
	size_t len;
};

/*
 * Decodes raw (a PERF_SAMPLE_RAW payload): calls fn for each field of the
 * event (common_* fields skipped) in format order.  Fields that would read
 * past raw_size are skipped.  Returns the number of fields, -ENOENT when the
 * event id is not in the formats, or -EINVAL when raw is too short.
 * *system and *name (may be NULL) receive the event's names.
 */
int tracefmt__decode(struct tracefmt *tf, const void *raw, size_t raw_size,
		     const char **system, const char **name,
		     void (*fn)(void *arg, const struct tracefmt_field *f), void *arg);

/*
 * The event's print format applied to raw (what perf script prints after
 * "event: "), NUL-terminated into buf.  raw is copied into a zero-padded
 * buffer first, so a malformed payload cannot make libtraceevent read past
 * it.  Returns the length, -ENOENT for an unknown event, or -EINVAL.
 */
int tracefmt__format(struct tracefmt *tf, const void *raw, size_t raw_size, int cpu,
		     char *buf, size_t len);

#endif
