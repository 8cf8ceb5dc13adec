/* Hex digits, for the text formats read here (kallsyms, perf maps, build ids). */
#ifndef LUAPERF_HEX_H
#define LUAPERF_HEX_H

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

#endif
