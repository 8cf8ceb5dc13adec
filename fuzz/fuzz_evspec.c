/* Fuzz target: the event-spec parser (evspec__parse, evspec__split). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "event/evspec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int parse_one(const char *ev, void *arg)
{
	struct evspec spec;
	char err[512];

	(void)arg;
	evspec__parse(ev, &spec, err, sizeof err);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size > 4096)
		return 0;
	s = malloc(size + 1);
	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	parse_one(s, NULL);
	evspec__split(s, parse_one, NULL);
	free(s);
	return 0;
}
