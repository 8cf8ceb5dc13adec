/*
 * perf's group syntax over evspec: "{a,b,...}[:mods]" (see evgroup.h).
 * Every malformed group gets a message that quotes it and says what is
 * wrong; nothing is allocated but one copy of the members' text.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "event/evgroup.h"

struct gctx {
	const char *spec;    /* the whole group, for messages */
	const char *mods;    /* NULL: none */
	evgroup_fn fn;
	void *arg;
	char *err;
	size_t errlen;
	size_t n;
};

static int gfail(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int gfail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

int evgroup__is_group(const char *spec)
{
	return spec != NULL && spec[0] == '{';
}

/* The group's name in a message, shortened when long. */
#define GQ "'%.80s%s'"
#define GA(s) (s), strlen(s) > 80 ? "..." : ""

static int member(const char *text, void *arg)
{
	struct gctx *g = arg;
	struct evspec ev;
	size_t len;
	int rc;

	if (text[0] == '\0')
		return gfail(g->err, g->errlen, -EINVAL, "empty event in group " GQ,
			     GA(g->spec));
	if (g->n >= EVGROUP_MAX)
		return gfail(g->err, g->errlen, -E2BIG, "group " GQ " has more than %d events",
			     GA(g->spec), EVGROUP_MAX);
	rc = evspec__parse(text, &ev, g->err, g->errlen);
	if (rc == 0 && g->mods != NULL)
		rc = evspec__add_modifiers(&ev, g->mods, g->err, g->errlen);
	if (rc != 0) {
		/* The member's own message, with the group it is in. */
		len = g->errlen > 0 ? strlen(g->err) : 0;
		if (len + 1 < g->errlen)
			snprintf(g->err + len, g->errlen - len, " (in group " GQ ")",
				 GA(g->spec));
		return rc;
	}
	rc = g->fn != NULL ? g->fn(g->arg, g->n, text, &ev) : 0;
	g->n++;
	return rc;
}

int evgroup__parse(const char *spec, evgroup_fn fn, void *arg, char *err, size_t errlen)
{
	struct gctx g;
	const char *p, *close = NULL;
	char *body;
	int rc;

	if (errlen > 0)
		err[0] = '\0';
	if (!evgroup__is_group(spec))
		return gfail(err, errlen, -EINVAL, "'%s' is not an event group ({ev1,ev2,...})",
			     spec != NULL ? spec : "");
	for (p = spec + 1; *p != '\0'; p++) {
		if (*p == '{')
			return gfail(err, errlen, -EINVAL,
				     "nested '{' at offset %d in " GQ ": groups do not nest",
				     (int)(p - spec), GA(spec));
		if (*p == '}') {
			close = p;
			break;
		}
	}
	if (close == NULL)
		return gfail(err, errlen, -EINVAL, "missing '}' in group " GQ, GA(spec));
	memset(&g, 0, sizeof g);
	if (close[1] == ':') {
		g.mods = close + 2;
		if (*g.mods == '\0')
			return gfail(err, errlen, -EINVAL, "missing modifier after ':' in group " GQ,
				     GA(spec));
		if (strpbrk(g.mods, "{},:") != NULL)
			return gfail(err, errlen, -EINVAL, "bad modifiers '%s' of group " GQ,
				     g.mods, GA(spec));
	} else if (close[1] != '\0') {
		return gfail(err, errlen, -EINVAL, "unexpected '%.20s' after '}' in group " GQ
			     " (a group ends with '}' or '}:mods')", close + 1, GA(spec));
	}
	if (close == spec + 1)
		return gfail(err, errlen, -EINVAL, "empty group '{}' in " GQ, GA(spec));
	body = malloc((size_t)(close - spec));
	if (body == NULL)
		return gfail(err, errlen, -ENOMEM, "out of memory");
	memcpy(body, spec + 1, (size_t)(close - spec - 1));
	body[close - spec - 1] = '\0';
	g.spec = spec;
	g.fn = fn;
	g.arg = arg;
	g.err = err;
	g.errlen = errlen;
	rc = evspec__split(body, member, &g);
	free(body);
	if (rc == -ENOMEM && (errlen == 0 || err[0] == '\0'))
		gfail(err, errlen, -ENOMEM, "out of memory");
	return rc != 0 ? rc : (int)g.n;
}

struct expand {
	struct evgroup_event *out;
	size_t max, at, leader;
};

static int put_member(void *arg, size_t idx, const char *text, const struct evspec *ev)
{
	struct expand *x = arg;
	struct evgroup_event *e;

	if (x->at + idx >= x->max)
		return -E2BIG;
	e = &x->out[x->at + idx];
	e->ev = *ev;
	snprintf(e->text, sizeof e->text, "%s", text);
	e->leader = (int)x->leader;
	/* perf reads a group at its leader's samples when the leader has :S. */
	e->sample_read = x->out[x->leader].ev.sample_read;
	return 0;
}

int evgroup__expand(const char *const *items, size_t n, struct evgroup_event *out, size_t max,
		    char *err, size_t errlen)
{
	struct expand x = { out, max, 0, 0 };
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		if (x.at >= max)
			return gfail(err, errlen, -E2BIG, "more than %zu events", max);
		if (evgroup__is_group(items[i])) {
			x.leader = x.at;
			rc = evgroup__parse(items[i], put_member, &x, err, errlen);
			if (rc == -E2BIG && (errlen == 0 || err[0] == '\0'))
				return gfail(err, errlen, -E2BIG, "more than %zu events", max);
			if (rc < 0)
				return rc;
			x.at += (size_t)rc;
			continue;
		}
		rc = evspec__parse(items[i], &out[x.at].ev, err, errlen);
		if (rc < 0)
			return rc;
		snprintf(out[x.at].text, sizeof out[x.at].text, "%s", items[i]);
		out[x.at].leader = -1;
		out[x.at].sample_read = 0;
		x.at++;
	}
	return (int)x.at;
}
