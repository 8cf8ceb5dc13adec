/*
 * perf's event groups: "{a,b,...}" and "{a,b,...}:mods" (the group's
 * modifiers apply to every member, on top of the member's own; :S makes
 * the leader's samples read the whole group).  Plain C, no Lua.
 *
 * The list level ("a,{b,c}:u,d") is evspec__split's: it keeps a group
 * whole, and each piece that starts with '{' is a group for
 * evgroup__parse.
 */
#ifndef LUAPERF_EVGROUP_H
#define LUAPERF_EVGROUP_H

#include <stddef.h>
#include "event/evspec.h"

/* More members than any PMU schedules at once, fewer than fds run out. */
#define EVGROUP_MAX 256

/* 1 when spec is a group ("{..."), 0 for a single event. */
int evgroup__is_group(const char *spec);

/*
 * Called for each member in order: its text as written (without the
 * group's modifiers) and its parsed spec with them applied.  A non-zero
 * return stops the parse and is returned.
 */
typedef int (*evgroup_fn)(void *arg, size_t idx, const char *text,
			  const struct evspec *ev);

/*
 * Parses "{a,b,...}[:mods]".  Returns the number of members (>= 1) or
 * -errno with a message in err: a missing or stray brace, an empty group
 * or member, a nested group, bad modifiers, more than EVGROUP_MAX
 * members, or the first member that does not parse (evspec__parse's
 * message, with the group named).
 */
int evgroup__parse(const char *spec, evgroup_fn fn, void *arg, char *err, size_t errlen);

/* One event of an expanded list. */
struct evgroup_event {
	struct evspec ev;              /* the group's modifiers applied */
	char text[EVSPEC_NAME_MAX];    /* as written (a member without the group's modifiers) */
	int leader;                    /* its group's leader (itself for the leader), -1: no group */
	int sample_read;               /* its group is {...}:S: the leader's samples read it */
};

/*
 * Expands a list of specs, each a single event or a group, into out[0..max)
 * in order.  Returns the number of events or -errno with a message in err
 * (-E2BIG when there are more than max).
 */
int evgroup__expand(const char *const *items, size_t n, struct evgroup_event *out, size_t max,
		    char *err, size_t errlen);

#endif
