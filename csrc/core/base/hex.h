/* Hex digits, for the text formats read here (kallsyms, perf maps, build ids). */
#ifndef LUAPERF_HEX_H
#define LUAPERF_HEX_H

#include <stddef.h>
#include <stdint.h>

/* The value of hex digit c, or -1. */
static inline int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* n bytes as lowercase hex (build ids as perf prints them); out holds
 * 2 * n + 1 bytes. */
static inline void hex__encode(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

#endif
