/*
 * Tracepoint formats from perf's tracing data, through libtraceevent.
 * The blob is walked with a bounded cursor; libtraceevent parses each
 * format text, and field values are read here with bounds checks against
 * the sample's raw size (libtraceevent trusts its input).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>

#include "event/tracefmt.h"

struct tracefmt {
	struct tep_handle *tep;
	int big_endian;
	uint8_t *pad;               /* zero-padded copy of a payload for printing */
	size_t pad_cap;
};

/* Past the payload: __data_loc offsets are 16-bit, so this covers any. */
#define PAD_SLACK 65536

struct tcur {
	const uint8_t *p;
	size_t off, size;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3)))
static void tseterr(struct tcur *c, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (c->err && c->errlen)
		snprintf(c->err, c->errlen, "tracing data at +%zu: %s", c->off, msg);
}

/* Sets the message and evaluates to -EINVAL. */
#define tfail(c, ...) (tseterr((c), __VA_ARGS__), -EINVAL)

static int take(struct tcur *c, size_t n, const uint8_t **out, const char *what)
{
	if (c->size - c->off < n)
		return tfail(c, "%s needs %zu bytes, %zu left", what, n, c->size - c->off);
	*out = c->p + c->off;
	c->off += n;
	return 0;
}

static int t32(struct tcur *c, uint32_t *v, const char *what)
{
	const uint8_t *p = NULL;
	int e = take(c, 4, &p, what);
	if (!e)
		memcpy(v, p, 4);
	return e;
}

static int t64(struct tcur *c, uint64_t *v, const char *what)
{
	const uint8_t *p = NULL;
	int e = take(c, 8, &p, what);
	if (!e)
		memcpy(v, p, 8);
	return e;
}

static int tstr(struct tcur *c, const char **s, const char *what)
{
	const void *nul = memchr(c->p + c->off, 0, c->size - c->off);
	if (!nul)
		return tfail(c, "%s: no terminating NUL", what);
	*s = (const char *)c->p + c->off;
	c->off = (size_t)((const uint8_t *)nul - c->p) + 1;
	return 0;
}

/* u64 size, then that many bytes (copied: libtraceevent wants char *). */
static int tblob(struct tcur *c, char **out, size_t *len, const char *what)
{
	uint64_t n = 0;
	const uint8_t *p = NULL;
	int e = t64(c, &n, what);
	if (e)
		return e;
	if (n > c->size - c->off)
		return tfail(c, "%s of %llu bytes runs past the end (%zu left)", what,
			     (unsigned long long)n, c->size - c->off);
	if ((e = take(c, (size_t)n, &p, what)))
		return e;
	*out = malloc((size_t)n + 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, p, (size_t)n);
	(*out)[n] = 0;
	*len = (size_t)n;
	return 0;
}

static int expect_tag(struct tcur *c, const char *tag)
{
	const char *s = NULL;
	int e = tstr(c, &s, tag);
	if (e)
		return e;
	if (strcmp(s, tag))
		return tfail(c, "expected \"%s\", found \"%.32s\"", tag, s);
	return 0;
}

static int parse(struct tracefmt *tf, struct tcur *c)
{
	static const uint8_t magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const uint8_t *p = NULL;
	const char *version = NULL, *sys = NULL;
	uint32_t page_size = 0, n = 0, nsys = 0, i, k;
	uint8_t long_size;
	char *blob = NULL;
	size_t len = 0;
	int e;

	if ((e = take(c, sizeof magic, &p, "magic")))
		return e;
	if (memcmp(p, magic, sizeof magic))
		return tfail(c, "bad magic, expected \"\\027\\010Dtracing\"");
	if ((e = tstr(c, &version, "version")) || (e = take(c, 1, &p, "endianness")))
		return e;
	tf->big_endian = p[0];
	if (tf->big_endian)
		return tfail(c, "big-endian tracing data: not supported");
	if ((e = take(c, 1, &p, "long size")))
		return e;
	long_size = p[0];
	if ((e = t32(c, &page_size, "page size")))
		return e;
	tep_set_file_bigendian(tf->tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tf->tep, TEP_LITTLE_ENDIAN);
	tep_set_long_size(tf->tep, long_size);
	tep_set_page_size(tf->tep, (int)page_size);

	if ((e = expect_tag(c, "header_page")) || (e = tblob(c, &blob, &len, "header_page")))
		return e;
	tep_parse_header_page(tf->tep, blob, len, long_size);
	free(blob);
	blob = NULL;
	if ((e = expect_tag(c, "header_event")) || (e = tblob(c, &blob, &len, "header_event")))
		return e;
	free(blob);
	blob = NULL;

	/* ftrace's own formats: parsed as system "ftrace". */
	if ((e = t32(c, &n, "ftrace format count")))
		return e;
	for (i = 0; i < n; i++) {
		if ((e = tblob(c, &blob, &len, "ftrace format")))
			return e;
		tep_parse_event(tf->tep, blob, len, "ftrace");
		free(blob);
		blob = NULL;
	}
	if ((e = t32(c, &nsys, "system count")))
		return e;
	for (i = 0; i < nsys; i++) {
		if ((e = tstr(c, &sys, "system name")) || (e = t32(c, &n, "event count")))
			return e;
		for (k = 0; k < n; k++) {
			if ((e = tblob(c, &blob, &len, "event format")))
				return e;
			/* A format libtraceevent cannot parse leaves that event undecoded. */
			tep_parse_event(tf->tep, blob, len, sys);
			free(blob);
			blob = NULL;
		}
	}
	/* kallsyms, printk formats and saved cmdlines follow: not needed for fields. */
	return 0;
}

int tracefmt__parse(const void *data, size_t size, struct tracefmt **out, char *err, size_t errlen)
{
	struct tcur c = { data, 0, size, err, errlen };
	struct tracefmt *tf;
	int e;

	*out = NULL;
	tf = calloc(1, sizeof *tf);
	if (!tf)
		return -ENOMEM;
	tf->tep = tep_alloc();
	if (!tf->tep) {
		free(tf);
		return -ENOMEM;
	}
	e = parse(tf, &c);
	if (e) {
		tracefmt__delete(tf);
		return e;
	}
	*out = tf;
	return 0;
}

void tracefmt__delete(struct tracefmt *tf)
{
	if (!tf)
		return;
	if (tf->tep)
		tep_free(tf->tep);
	free(tf->pad);
	free(tf);
}

static uint64_t load(const uint8_t *p, int size, int is_signed)
{
	switch (size) {
	case 1: return is_signed ? (uint64_t)(int64_t)(int8_t)p[0] : p[0];
	case 2: { uint16_t v; memcpy(&v, p, 2); return is_signed ? (uint64_t)(int64_t)(int16_t)v : v; }
	case 4: { uint32_t v; memcpy(&v, p, 4); return is_signed ? (uint64_t)(int64_t)(int32_t)v : v; }
	default: { uint64_t v; memcpy(&v, p, 8); return v; }
	}
}

int tracefmt__decode(struct tracefmt *tf, const void *raw, size_t raw_size,
		     const char **system, const char **name,
		     void (*fn)(void *arg, const struct tracefmt_field *f), void *arg)
{
	const uint8_t *d = raw;
	struct tep_event *ev;
	struct tep_format_field *fld;
	int nfields = 0;
	uint16_t type;

	if (raw_size < 2)
		return -EINVAL;
	/* common_type is the first field of every tracepoint payload. */
	memcpy(&type, d, 2);
	ev = tep_find_event(tf->tep, type);
	if (!ev)
		return -ENOENT;
	if (system)
		*system = ev->system;
	if (name)
		*name = ev->name;
	for (fld = ev->format.fields; fld; fld = fld->next) {
		struct tracefmt_field f;
		size_t off = (size_t)fld->offset, sz = (size_t)fld->size;

		if (fld->offset < 0 || fld->size < 0 || off > raw_size || sz > raw_size - off)
			continue;
		memset(&f, 0, sizeof f);
		f.name = fld->name;
		f.is_signed = !!(fld->flags & TEP_FIELD_IS_SIGNED);
		if (fld->flags & TEP_FIELD_IS_DYNAMIC) {
			/* __data_loc: u32 with offset (low 16 bits) and length (high 16). */
			uint32_t loc;
			size_t doff, dlen;
			if (sz < 4)
				continue;
			memcpy(&loc, d + off, 4);
			doff = loc & 0xffff;
			dlen = loc >> 16;
			if (fld->flags & TEP_FIELD_IS_RELATIVE)
				doff += off + sz;
			if (doff > raw_size || dlen > raw_size - doff)
				continue;
			f.kind = (fld->flags & TEP_FIELD_IS_STRING) ? TRACEFMT_STRING : TRACEFMT_BYTES;
			f.str = (const char *)d + doff;
			f.len = f.kind == TRACEFMT_STRING ? strnlen(f.str, dlen) : dlen;
		} else if (fld->flags & TEP_FIELD_IS_ARRAY) {
			f.kind = (fld->flags & TEP_FIELD_IS_STRING) ? TRACEFMT_STRING : TRACEFMT_BYTES;
			f.str = (const char *)d + off;
			f.len = f.kind == TRACEFMT_STRING ? strnlen(f.str, sz) : sz;
		} else if (sz == 1 || sz == 2 || sz == 4 || sz == 8) {
			f.kind = TRACEFMT_INT;
			f.u = load(d + off, (int)sz, f.is_signed);
		} else {
			f.kind = TRACEFMT_BYTES;
			f.str = (const char *)d + off;
			f.len = sz;
		}
		fn(arg, &f);
		nfields++;
	}
	return nfields;
}

int tracefmt__format(struct tracefmt *tf, const void *raw, size_t raw_size, int cpu,
		     char *buf, size_t len)
{
	struct tep_record rec;
	struct trace_seq s;
	uint16_t type;
	size_t need, n;

	if (raw_size < 2 || raw_size > (1u << 20) || !len)
		return -EINVAL;
	memcpy(&type, raw, 2);
	if (!tep_find_event(tf->tep, type))
		return -ENOENT;
	need = raw_size + PAD_SLACK;
	if (need > tf->pad_cap) {
		uint8_t *p = realloc(tf->pad, need);
		if (!p)
			return -ENOMEM;
		tf->pad = p;
		tf->pad_cap = need;
	}
	memcpy(tf->pad, raw, raw_size);
	memset(tf->pad + raw_size, 0, need - raw_size);
	memset(&rec, 0, sizeof rec);
	rec.data = tf->pad;
	rec.size = (int)raw_size;
	rec.cpu = cpu;
	trace_seq_init(&s);
	tep_print_event(tf->tep, &s, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	n = s.len < len - 1 ? s.len : len - 1;
	memcpy(buf, s.buffer, n);
	buf[n] = 0;
	trace_seq_destroy(&s);
	return (int)n;
}
