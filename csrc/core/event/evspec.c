/*
 * perf's -e grammar, one event at a time:
 *
 *   symbol[:mods]        cycles:u  cpu-clock  L1-dcache-load-misses  tsc
 *   rHEX[:mods]          r01c4
 *   TYPE:CONFIG[:mods]   1:0
 *   sys:event[:mods]     sched:sched_switch
 *   mem:ADDR[/LEN][:rwx][:mods]
 *   pmu/term[=val],.../[mods]
 *   uprobe:PATH:FUNC[+OFF]  uretprobe:PATH:FUNC  kprobe:FUNC[+OFF]  (probe.c)
 *
 * Every failure writes a message that quotes the spec, names the bad part
 * and, for names, suggests the nearest known one.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/hw_breakpoint.h>
#include "event/evcatalog.h"
#include "event/evspec.h"
#include "base/perf_sys.h"
#include "event/pmu.h"

struct ctx {
	const char *spec;
	struct evspec *ev;
	char *err;
	size_t errlen;
	char in[EVSPEC_NAME_MAX + 8];   /* " in 'spec'" or "" */
};

static int fail(struct ctx *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct ctx *c, int code, const char *fmt, ...)
{
	va_list ap;

	if (c->errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* " in 'spec'" when the bad part is not the whole spec. */
static const char *in_spec(struct ctx *c, const char *piece)
{
	if (strcmp(piece, c->spec) == 0)
		return "";
	snprintf(c->in, sizeof c->in, " in '%s'", c->spec);
	return c->in;
}

const char *evspec__kind_name(enum evspec_kind kind)
{
	switch (kind) {
	case EVSPEC_HARDWARE: return "hardware";
	case EVSPEC_SOFTWARE: return "software";
	case EVSPEC_CACHE: return "cache";
	case EVSPEC_TRACEPOINT: return "tracepoint";
	case EVSPEC_PMU: return "pmu";
	case EVSPEC_RAW: return "raw";
	case EVSPEC_BREAKPOINT: return "breakpoint";
	case EVSPEC_UPROBE: return "uprobe";
	case EVSPEC_KPROBE: return "kprobe";
	}
	return "pmu";
}

static int digit_value(char ch, unsigned base)
{
	int d;

	if (ch >= '0' && ch <= '9')
		d = ch - '0';
	else if (ch >= 'a' && ch <= 'f')
		d = ch - 'a' + 10;
	else if (ch >= 'A' && ch <= 'F')
		d = ch - 'A' + 10;
	else
		return -1;
	return (unsigned)d < base ? d : -1;
}

/* Decimal or 0x hex, all of s; -EINVAL not a number, -ERANGE above 2^64-1. */
static int parse_u64(const char *s, unsigned base, uint64_t *out)
{
	uint64_t v = 0;

	if (base == 0) {
		base = 10;
		if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && s[2] != '\0') {
			base = 16;
			s += 2;
		}
	}
	if (*s == '\0')
		return -EINVAL;
	for (; *s != '\0'; s++) {
		int d = digit_value(*s, base);
		if (d < 0)
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return -ERANGE;
		v = v * base + (uint64_t)d;
	}
	*out = v;
	return 0;
}

static void set_text(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src);
}

/* Copies s[0..n) into a bounded buffer; the spec is short, so it fits. */
static void copy_part(char *dst, size_t len, const char *s, size_t n)
{
	if (n >= len)
		n = len - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/* ---- modifiers ---- */

static int is_modifier_char(char ch)
{
	return ch != '\0' && strchr("ukhGHIpPDeSWb", ch) != NULL;
}

static int all_modifier_chars(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!is_modifier_char(*s))
			return 0;
	return 1;
}

/*
 * perf's rules: the first of u/k/h excludes every level, then each one
 * named is let back in; G/H likewise for guest and host; :u and :p also
 * exclude the guest unless G/H were given.
 */
static int apply_modifiers(struct ctx *c, const char *mods, int add)
{
	struct perf_event_attr *a = &c->ev->attr;
	int eu = 0, ek = 0, eh = 0, eH = 0, eG = 0, eI = 0, precise = 0;
	int exclude = 0, exclude_GH = 0, pinned = 0, exclusive = 0;
	const char *p;

	if (*mods == '\0')
		return 0;
	/* A group's modifiers start from each member's own (perf's
	 * get_event_modifier with the evsel given). */
	if (add) {
		eu = (int)a->exclude_user;
		ek = (int)a->exclude_kernel;
		eh = (int)a->exclude_hv;
		eH = (int)a->exclude_host;
		eG = (int)a->exclude_guest;
		eI = (int)a->exclude_idle;
		precise = (int)a->precise_ip;
		pinned = (int)a->pinned;
		exclusive = (int)a->exclusive;
		exclude = eu | ek | eh;
		exclude_GH = c->ev->exclude_GH;
	}
	if (strlen(mods) > 15)
		return fail(c, -EINVAL, "too many modifiers '%s'%s", mods, in_spec(c, mods));
	for (p = mods; *p != '\0'; p++) {
		if (*p != 'p' && strchr(p + 1, *p) != NULL)
			return fail(c, -EINVAL, "modifier '%c' given twice%s", *p,
				    in_spec(c, mods));
		switch (*p) {
		case 'u':
			if (!exclude)
				exclude = ek = eh = 1;
			if (!exclude_GH)
				eG = 1;
			eu = 0;
			break;
		case 'k':
			if (!exclude)
				exclude = eu = eh = 1;
			ek = 0;
			break;
		case 'h':
			if (!exclude)
				exclude = eu = ek = 1;
			eh = 0;
			break;
		case 'G':
			c->ev->exclude_GH = 1;
			if (!exclude_GH)
				exclude_GH = eH = 1;
			eG = 0;
			break;
		case 'H':
			c->ev->exclude_GH = 1;
			if (!exclude_GH)
				exclude_GH = eG = 1;
			eH = 0;
			break;
		case 'I':
			eI = 1;
			break;
		case 'p':
			precise++;
			if (!exclude_GH)
				eG = 1;
			break;
		case 'P':
			c->ev->precise_max = 1;
			break;
		case 'D':
			pinned = 1;
			break;
		case 'e':
			exclusive = 1;
			break;
		case 'S':
			c->ev->sample_read = 1;
			break;
		case 'W':
		case 'b':
			return fail(c, -EINVAL, "modifier '%c'%s is not supported by luaperf",
				    *p, in_spec(c, mods));
		default:
			return fail(c, -EINVAL,
				    "unknown modifier '%c'%s (modifiers: u k h G H I p P D e S)",
				    *p, in_spec(c, mods));
		}
	}
	if (precise > 3)
		return fail(c, -EINVAL, "precise level %d%s is above 3 (:ppp)", precise,
			    in_spec(c, mods));
	a->exclude_user = (unsigned)eu;
	a->exclude_kernel = (unsigned)ek;
	a->exclude_hv = (unsigned)eh;
	a->exclude_host = (unsigned)eH;
	a->exclude_guest = (unsigned)eG;
	a->exclude_idle = (unsigned)eI;
	a->precise_ip = (unsigned)precise;
	a->pinned = (unsigned)pinned;
	a->exclusive = (unsigned)exclusive;
	return 0;
}

/* The text after ':' (or after a PMU's closing '/'): empty is an error after ':'. */
static int modifiers_after_colon(struct ctx *c, const char *mods)
{
	if (*mods == '\0')
		return fail(c, -EINVAL, "missing modifier after ':' in '%s'", c->spec);
	return apply_modifiers(c, mods, 0);
}

/* ---- PMU terms ---- */

static int valid_term_name(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return 0;
	return 1;
}

static int term_number(struct ctx *c, const char *term, const char *val, uint64_t *v)
{
	int rc;

	if (val == NULL)
		return fail(c, -EINVAL, "term '%s' in '%s' needs a value (%s=N)", term,
			    c->spec, term);
	rc = parse_u64(val, 0, v);
	if (rc == -ERANGE)
		return fail(c, -ERANGE, "value '%s' of term '%s' in '%s' does not fit in 64 bits",
			    val, term, c->spec);
	if (rc != 0)
		return fail(c, -EINVAL, "value '%s' of term '%s' in '%s' is not a number",
			    val, term, c->spec);
	return 0;
}

static int is_builtin_term(const char *term)
{
	static const char *const names[] = {
		"name", "config", "config1", "config2", "period", "freq",
	};
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(term, names[i]) == 0)
			return 1;
	return 0;
}

/* perf's built-in terms: config, config1, config2, name, period, freq. */
static int builtin_term(struct ctx *c, const char *term, const char *val)
{
	struct perf_event_attr *a = &c->ev->attr;
	uint64_t v = 0;
	int rc;

	if (strcmp(term, "name") == 0) {
		const char *p;
		if (val == NULL || *val == '\0')
			return fail(c, -EINVAL, "term 'name' in '%s' needs a value (name=x)",
				    c->spec);
		for (p = val; *p != '\0'; p++)
			if ((unsigned char)*p <= ' ' || *p == ':')
				return fail(c, -EINVAL, "bad character in name '%s' in '%s'",
					    val, c->spec);
		set_text(c->ev->name, sizeof c->ev->name, val);
		return 0;
	}
	if ((rc = term_number(c, term, val, &v)) != 0)
		return rc;
	if (strcmp(term, "config") == 0) {
		a->config = v;
	} else if (strcmp(term, "config1") == 0) {
		a->config1 = v;
	} else if (strcmp(term, "config2") == 0) {
		a->config2 = v;
	} else {
		if (v == 0)
			return fail(c, -EINVAL, "term '%s' in '%s' must be above 0", term, c->spec);
		if (c->ev->has_period && (a->freq != (strcmp(term, "freq") == 0)))
			return fail(c, -EINVAL, "both period= and freq= in '%s'", c->spec);
		a->freq = strcmp(term, "freq") == 0;
		a->sample_period = v;   /* sample_freq shares the union */
		c->ev->has_period = 1;
	}
	return 0;
}

static int apply_terms(struct ctx *c, const char *pmu, const char *terms, int depth);

/* A format term or a sysfs event alias of pmu. */
static int pmu_term(struct ctx *c, const char *pmu, const char *term, const char *val,
		    int depth)
{
	struct pmu_format fmt;
	char alias[1024], hint[EVSPEC_NAME_MAX];
	uint64_t v = 1;
	int rc;

	rc = pmu__format(pmu, term, &fmt);
	if (rc == 0) {
		if (val != NULL && (rc = term_number(c, term, val, &v)) != 0)
			return rc;
		if (pmu_format__apply(&fmt, v, &c->ev->attr) != 0)
			return fail(c, -ERANGE,
				    "value '%s' of term '%s' in '%s' is too big (at most %llu)",
				    val, term, c->spec,
				    (unsigned long long)pmu_format__max(&fmt));
		return 0;
	}
	if (rc == -EINVAL)
		return fail(c, -EINVAL, "the sysfs format of term '%s' of PMU '%s' is malformed",
			    term, pmu);
	if (val == NULL && depth == 0 &&
	    pmu__event_terms(pmu, term, alias, sizeof alias) == 0)
		return apply_terms(c, pmu, alias, depth + 1);
	if (evcatalog__suggest_term(pmu, term, hint, sizeof hint) == 0)
		return fail(c, -ENOENT, "unknown term '%s' for PMU '%s' in '%s' (did you mean '%s'?)",
			    term, pmu, c->spec, hint);
	evcatalog__pmu_terms(pmu, alias, sizeof alias);
	return fail(c, -ENOENT, "unknown term '%s' for PMU '%s' in '%s' (valid terms: %s)",
		    term, pmu, c->spec, alias);
}

/*
 * Applies "a=1,b,c=0x2": perf's built-in terms first, then the format
 * terms and event aliases in order (aliases expand to their own terms).
 */
static int apply_terms(struct ctx *c, const char *pmu, const char *terms, int depth)
{
	int pass, rc;

	for (pass = 0; pass < 2; pass++) {
		const char *p = terms;

		while (*p != '\0') {
			const char *end = strchr(p, ',');
			size_t n = end ? (size_t)(end - p) : strlen(p);
			char term[1024], *val;

			if (n == 0 || n >= sizeof term)
				return fail(c, -EINVAL, "%s term in '%s'",
					    n == 0 ? "empty" : "overlong", c->spec);
			copy_part(term, sizeof term, p, n);
			val = strchr(term, '=');
			if (val != NULL)
				*val++ = '\0';
			if (!valid_term_name(term))
				return fail(c, -EINVAL, "bad term '%s' in '%s'", term, c->spec);
			if (val != NULL && *val == '\0')
				return fail(c, -EINVAL, "missing value after '%s=' in '%s'", term,
					    c->spec);
			if (is_builtin_term(term))
				rc = pass == 0 ? builtin_term(c, term, val) : 0;
			else
				rc = pass == 1 ? pmu_term(c, pmu, term, val, depth) : 0;
			if (rc < 0)
				return rc;
			p = end ? end + 1 : p + n;
			if (end != NULL && *p == '\0')
				return fail(c, -EINVAL, "empty term in '%s'", c->spec);
		}
	}
	return 0;
}

/* ---- the forms ---- */

/* Letters, digits, '_', '-', '.': tracepoint systems and events, PMU names. */
static int valid_tp_name(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' || *s == '.'))
			return 0;
	return 1;
}

static void init_event(struct ctx *c, enum evspec_kind kind, uint32_t type,
		       uint64_t config, const char *pmu)
{
	struct perf_event_attr *a = &c->ev->attr;

	c->ev->kind = kind;
	a->type = type;
	a->config = config;
	set_text(c->ev->pmu, sizeof c->ev->pmu, pmu);
}

/* pmu/terms/mods */
static int parse_pmu_form(struct ctx *c, const char *slash)
{
	char pmu[PMU_NAME_MAX], terms[EVSPEC_NAME_MAX], hint[EVSPEC_NAME_MAX];
	const char *close = strchr(slash + 1, '/');
	size_t n = (size_t)(slash - c->spec);
	uint32_t type;
	int rc;

	if (n == 0)
		return fail(c, -EINVAL, "missing PMU name before '/' in '%s'", c->spec);
	if (n >= sizeof pmu)
		return fail(c, -EINVAL, "PMU name too long in '%s'", c->spec);
	copy_part(pmu, sizeof pmu, c->spec, n);
	if (!valid_tp_name(pmu))
		return fail(c, -EINVAL, "bad PMU name '%s' in '%s'", pmu, c->spec);
	if (close == NULL)
		return fail(c, -EINVAL, "missing closing '/' in '%s' (pmu/term=value,.../)",
			    c->spec);
	if (strchr(close + 1, '/') != NULL)
		return fail(c, -EINVAL, "unexpected '/' in modifiers '%s' of '%s'", close + 1,
			    c->spec);
	rc = pmu__type(pmu, &type);
	if (rc != 0) {
		if (evcatalog__suggest_pmu(pmu, hint, sizeof hint) == 0)
			return fail(c, -ENOENT, "unknown PMU '%s' in '%s' (did you mean '%s'?)",
				    pmu, c->spec, hint);
		evcatalog__pmu_names(hint, sizeof hint);
		return fail(c, -ENOENT, "unknown PMU '%s' in '%s' (PMUs here: %s)", pmu, c->spec,
			    hint);
	}
	init_event(c, EVSPEC_PMU, type, 0, pmu);
	copy_part(terms, sizeof terms, slash + 1, (size_t)(close - slash - 1));
	if ((rc = apply_terms(c, pmu, terms, 0)) != 0)
		return rc;
	if (close[1] == ':')
		return fail(c, -EINVAL, "unexpected ':' after '/' in '%s' (write %.*s%s)",
			    c->spec, (int)(close - c->spec + 1), c->spec, close + 2);
	return apply_modifiers(c, close + 1, 0);
}

/* mem:ADDR[/LEN][:rwx][:mods] */
static int parse_breakpoint(struct ctx *c)
{
	struct perf_event_attr *a = &c->ev->attr;
	const char *p = c->spec + 4, *colon, *slash;
	char part[EVSPEC_NAME_MAX];
	uint64_t addr, len = 0;
	int rc;

	colon = strchr(p, ':');
	slash = strchr(p, '/');
	if (slash != NULL && colon != NULL && slash > colon)
		slash = NULL;
	copy_part(part, sizeof part, p, slash ? (size_t)(slash - p) :
		  colon ? (size_t)(colon - p) : strlen(p));
	rc = parse_u64(part, 0, &addr);
	if (rc != 0)
		return fail(c, rc, "%s breakpoint address '%s' in '%s'",
			    rc == -ERANGE ? "too large" : "bad", part, c->spec);
	init_event(c, EVSPEC_BREAKPOINT, PERF_TYPE_BREAKPOINT, 0, "breakpoint");
	a->bp_addr = addr;
	if (slash != NULL) {
		const char *q = slash + 1;
		copy_part(part, sizeof part, q, colon ? (size_t)(colon - q) : strlen(q));
		rc = parse_u64(part, 0, &len);
		if (rc != 0 || len == 0 || len > 8)
			return fail(c, -EINVAL, "bad breakpoint length '%s' in '%s' (1 to 8 bytes)",
				    part, c->spec);
		/* perf prints a breakpoint by the text before the length. */
		copy_part(c->ev->name, sizeof c->ev->name, c->spec, (size_t)(slash - c->spec));
	}
	a->bp_type = HW_BREAKPOINT_R | HW_BREAKPOINT_W;
	if (colon != NULL) {
		const char *mods = colon + 1, *next = strchr(mods, ':');
		size_t n = next ? (size_t)(next - mods) : strlen(mods);

		copy_part(part, sizeof part, mods, n);
		if (n > 0 && strspn(part, "rwx") == n) {
			a->bp_type = 0;
			for (p = part; *p != '\0'; p++) {
				unsigned bit = *p == 'r' ? HW_BREAKPOINT_R :
					       *p == 'w' ? HW_BREAKPOINT_W : HW_BREAKPOINT_X;
				if (a->bp_type & bit)
					return fail(c, -EINVAL,
						    "breakpoint access '%c' given twice in '%s'",
						    *p, c->spec);
				a->bp_type |= bit;
			}
			if (next == NULL)
				goto done;
			mods = next + 1;
		} else if (next != NULL) {
			return fail(c, -EINVAL, "bad breakpoint access '%s' in '%s' (r, w, x)",
				    part, c->spec);
		}
		if ((rc = modifiers_after_colon(c, mods)) != 0)
			return rc;
	}
done:
	if (len == 0)
		len = a->bp_type == HW_BREAKPOINT_X ? sizeof(long) : HW_BREAKPOINT_LEN_4;
	a->bp_len = len;
	/* perf's default: a breakpoint samples every hit unless told otherwise. */
	a->sample_period = 1;
	return 0;
}

/* TYPE:CONFIG */
static int parse_numeric(struct ctx *c, const char *type_s, const char *config_s)
{
	static const char *const builtin_pmus[] = {
		"cpu", "software", "tracepoint", "cpu", "cpu", "breakpoint",
	};
	static const enum evspec_kind kinds[] = {
		EVSPEC_HARDWARE, EVSPEC_SOFTWARE, EVSPEC_TRACEPOINT, EVSPEC_CACHE,
		EVSPEC_RAW, EVSPEC_BREAKPOINT,
	};
	uint64_t type, config;
	char pmu[PMU_NAME_MAX];
	int rc;

	rc = parse_u64(type_s, 0, &type);
	if (rc != 0 || type > UINT32_MAX)
		return fail(c, -ERANGE, "event type '%s' in '%s' is too large", type_s, c->spec);
	rc = parse_u64(config_s, 0, &config);
	if (rc != 0)
		return fail(c, rc, "%s config '%s' in '%s'",
			    rc == -ERANGE ? "too large" : "bad", config_s, c->spec);
	if (type < 6) {
		init_event(c, kinds[type], (uint32_t)type, config, builtin_pmus[type]);
	} else {
		if (pmu__name_of((uint32_t)type, pmu, sizeof pmu) != 0)
			pmu[0] = '\0';
		init_event(c, EVSPEC_PMU, (uint32_t)type, config, pmu);
	}
	return 0;
}

struct alias_hit {
	const char *event;
	char pmu[PMU_NAME_MAX];
	char terms[1024];
};

static int find_alias(const char *pmu, uint32_t type, void *arg)
{
	struct alias_hit *h = arg;

	(void)type;
	if (strlen(pmu) >= sizeof h->pmu ||
	    pmu__event_terms(pmu, h->event, h->terms, sizeof h->terms) != 0)
		return 0;
	strcpy(h->pmu, pmu);
	return 1;
}

static int has_glob(const char *s)
{
	return strpbrk(s, "*?[]") != NULL;
}

/* cycles, cpu-clock, L1-dcache-loads, r01c4, or a sysfs event (tsc). */
static int parse_symbol(struct ctx *c, const char *name)
{
	const struct evcatalog_symbol *sym = evcatalog__symbol(name);
	char msg[EVSPEC_NAME_MAX], hint[EVSPEC_NAME_MAX];
	struct alias_hit hit;
	uint64_t config;
	int rc;

	if (sym != NULL) {
		int hw = sym->type == PERF_TYPE_HARDWARE;
		init_event(c, hw ? EVSPEC_HARDWARE : EVSPEC_SOFTWARE, sym->type, sym->config,
			   hw ? "cpu" : "software");
		return 0;
	}
	rc = evcatalog__cache(name, &config, msg, sizeof msg);
	if (rc == 0) {
		init_event(c, EVSPEC_CACHE, PERF_TYPE_HW_CACHE, config, "cpu");
		return 0;
	}
	if (rc == -EINVAL)
		return fail(c, -EINVAL, "invalid cache event '%s'%s: %s", name,
			    in_spec(c, name), msg);
	if (name[0] == 'r' && name[1] != '\0' && strspn(name + 1, "0123456789abcdefABCDEF") ==
	    strlen(name + 1)) {
		if (parse_u64(name + 1, 16, &config) != 0)
			return fail(c, -ERANGE, "raw event '%s'%s is larger than 64 bits", name,
				    in_spec(c, name));
		init_event(c, EVSPEC_RAW, PERF_TYPE_RAW, config, "cpu");
		return 0;
	}
	if (has_glob(name))
		return fail(c, -EINVAL, "wildcards are not supported in event specs ('%s'%s); "
			    "perf.list('%s') shows the matching events", name, in_spec(c, name),
			    name);
	memset(&hit, 0, sizeof hit);
	hit.event = name;
	if (valid_term_name(name) && pmu__foreach(find_alias, &hit) == 1) {
		uint32_t type;
		if (pmu__type(hit.pmu, &type) != 0)
			return fail(c, -ENOENT, "PMU '%s' vanished while parsing '%s'", hit.pmu,
				    c->spec);
		init_event(c, EVSPEC_PMU, type, 0, hit.pmu);
		return apply_terms(c, hit.pmu, hit.terms, 1);
	}
	if (evcatalog__suggest(name, hint, sizeof hint) == 0)
		return fail(c, -ENOENT, "unknown event '%s'%s (did you mean '%s'?)", name,
			    in_spec(c, name), hint);
	return fail(c, -ENOENT,
		    "unknown event '%s'%s (luaperf list, or perf.list(), shows the events here)",
		    name, in_spec(c, name));
}

static int parse_tracepoint(struct ctx *c, const char *sys, const char *event)
{
	char hint[EVSPEC_NAME_MAX];
	uint64_t id;
	int missing, rc;

	if (has_glob(sys) || has_glob(event))
		return fail(c, -EINVAL, "wildcards are not supported in event specs ('%s'); "
			    "perf.list('%s:%s') shows the matching tracepoints", c->spec, sys,
			    event);
	if (!valid_tp_name(sys) || !valid_tp_name(event))
		return fail(c, -EINVAL, "bad tracepoint name '%s:%s' in '%s' (system:event)",
			    sys, event, c->spec);
	rc = evcatalog__tracepoint_id(sys, event, &id, &missing);
	if (rc == -ENODEV)
		return fail(c, -ENODEV, "tracepoint '%s:%s': tracefs is not mounted "
			    "(as root: mount -t tracefs nodev /sys/kernel/tracing)", sys, event);
	if (rc == -EACCES || rc == -EPERM) {
		int ignore;
		const char *root = evcatalog__tracefs(&ignore);
		return fail(c, -EACCES, "tracepoint '%s:%s': cannot read %s (tracefs is "
			    "readable by root only here; run as root or open up its mode)",
			    sys, event, root != NULL ? root : "tracefs");
	}
	if (rc == -ENOENT && missing) {
		if (evcatalog__suggest_tracepoint(sys, event, hint, sizeof hint) == 0)
			return fail(c, -ENOENT, "unknown tracepoint system '%s' in '%s' "
				    "(did you mean '%s'?)", sys, c->spec, hint);
		return fail(c, -ENOENT, "unknown tracepoint system '%s' in '%s'", sys, c->spec);
	}
	if (rc == -ENOENT) {
		char name[EVSPEC_NAME_MAX];
		/* sys and event come from the spec, which fits in a name. */
		if (snprintf(name, sizeof name, "%s:%s", sys, event) >= (int)sizeof name)
			name[0] = '\0';
		if (evcatalog__suggest_tracepoint(sys, event, hint, sizeof hint) == 0)
			return fail(c, -ENOENT, "unknown tracepoint '%s'%s (did you mean '%s'?)",
				    name, in_spec(c, name), hint);
		return fail(c, -ENOENT, "unknown tracepoint '%s'%s", name, in_spec(c, name));
	}
	if (rc != 0)
		return fail(c, rc, "tracepoint '%s:%s': cannot read its id: %s", sys, event,
			    strerror(-rc));
	init_event(c, EVSPEC_TRACEPOINT, PERF_TYPE_TRACEPOINT, id, "tracepoint");
	/* perf names a tracepoint sys:event, without its modifiers. */
	if (snprintf(c->ev->name, sizeof c->ev->name, "%s:%s", sys, event) >=
	    (int)sizeof c->ev->name)
		return fail(c, -E2BIG, "tracepoint name too long in '%s'", c->spec);
	return 0;
}

/* Whether tracefs has a system called sys (for "x:u": tracepoint or modifier?). */
static int tracepoint_system_exists(const char *sys)
{
	uint64_t id;
	int missing;

	if (!valid_tp_name(sys))
		return 0;
	return !(evcatalog__tracepoint_id(sys, "", &id, &missing) == -ENOENT && missing) &&
	       perf_sys__tracefs() != NULL;
}

static int known_symbol(const char *name)
{
	uint64_t config;
	char msg[8];
	struct alias_hit hit;

	if (evcatalog__symbol(name) != NULL || evcatalog__cache(name, &config, msg, sizeof msg) != -ENOENT)
		return 1;
	if (name[0] == 'r' && name[1] != '\0' &&
	    strspn(name + 1, "0123456789abcdefABCDEF") == strlen(name + 1))
		return 1;
	memset(&hit, 0, sizeof hit);
	hit.event = name;
	return valid_term_name(name) && pmu__foreach(find_alias, &hit) == 1;
}

/* Forms without '/' (other than mem:): symbol, TYPE:CONFIG, sys:event. */
static int parse_colon_forms(struct ctx *c)
{
	char p0[EVSPEC_NAME_MAX], p1[EVSPEC_NAME_MAX];
	const char *c1 = strchr(c->spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	int rc;

	if (c1 == NULL)
		return parse_symbol(c, c->spec);
	if (c2 != NULL && strchr(c2 + 1, ':') != NULL)
		return fail(c, -EINVAL, "too many ':' in '%s'", c->spec);
	copy_part(p0, sizeof p0, c->spec, (size_t)(c1 - c->spec));
	if (c2 != NULL && known_symbol(p0))
		return fail(c, -EINVAL, "too many ':' in '%s' (modifiers go in one group: %s:%.*s%s)",
			    c->spec, p0, (int)(c2 - c1 - 1), c1 + 1, c2 + 1);
	copy_part(p1, sizeof p1, c1 + 1, c2 ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1));
	if (p0[0] == '\0')
		return fail(c, -EINVAL, "missing event name before ':' in '%s'", c->spec);
	if (strspn(p0, "0123456789") == strlen(p0)) {
		rc = parse_numeric(c, p0, p1);
		if (rc == 0 && c2 != NULL)
			rc = modifiers_after_colon(c, c2 + 1);
		return rc;
	}
	if (c2 == NULL && (known_symbol(p0) ||
			   (all_modifier_chars(p1) && !tracepoint_system_exists(p0)))) {
		rc = parse_symbol(c, p0);
		if (rc == 0)
			rc = modifiers_after_colon(c, p1);
		return rc;
	}
	if (p1[0] == '\0')
		return fail(c, -EINVAL, "missing tracepoint event after '%s:' in '%s'", p0,
			    c->spec);
	rc = parse_tracepoint(c, p0, p1);
	if (rc == 0 && c2 != NULL)
		rc = modifiers_after_colon(c, c2 + 1);
	return rc;
}

/* uprobe:PATH:FUNC and friends (probe.c): no modifiers, every hit. */
static int parse_probe(struct ctx *c)
{
	struct evspec *ev = c->ev;
	int rc;

	rc = probe__parse(c->spec, &ev->attr, &ev->probe, c->err, c->errlen);
	if (rc < 0)
		return rc;
	ev->kind = ev->probe.kernel ? EVSPEC_KPROBE : EVSPEC_UPROBE;
	set_text(ev->pmu, sizeof ev->pmu, ev->probe.kernel ? "kprobe" : "uprobe");
	return 0;
}

/* A comma outside pmu/.../ separates events. */
static int top_level_comma(const char *spec)
{
	const char *a = strchr(spec, '/'), *b = a ? strchr(a + 1, '/') : NULL;
	const char *p;

	if (strncmp(spec, "mem:", 4) == 0 || probe__is_spec(spec))
		a = b = NULL;
	for (p = spec; *p != '\0'; p++)
		if (*p == ',' && !(a != NULL && b != NULL && p > a && p < b))
			return 1;
	return 0;
}

int evspec__parse(const char *spec, struct evspec *out, char *err, size_t errlen)
{
	struct ctx c;
	const char *p, *slash;
	size_t n;
	int rc;

	memset(&c, 0, sizeof c);
	c.spec = spec;
	c.ev = out;
	c.err = err;
	c.errlen = errlen;
	if (errlen > 0)
		err[0] = '\0';
	memset(out, 0, sizeof *out);
	if (spec == NULL || spec[0] == '\0')
		return fail(&c, -EINVAL, "empty event spec");
	n = strnlen(spec, EVSPEC_SPEC_MAX + 1);
	if (n > EVSPEC_SPEC_MAX) {
		c.spec = "";
		return fail(&c, -E2BIG, "event spec '%.40s...' is too long (at most %d bytes)",
			    spec, EVSPEC_SPEC_MAX);
	}
	for (p = spec; *p != '\0'; p++) {
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
			return fail(&c, -EINVAL, "unexpected %s at offset %d in '%s'",
				    *p == ' ' ? "space" : "character", (int)(p - spec), spec);
		if ((*p == '{' || *p == '}') && spec[0] == '{')
			return fail(&c, -EINVAL, "'%s' is an event group: parse it with "
				    "evgroup__parse (perf.parse and perf.group take it)", spec);
		if (*p == '{' || *p == '}')
			return fail(&c, -EINVAL, "unexpected '%c' at offset %d in '%s' "
				    "(a group is {ev1,ev2,...} or {ev1,ev2,...}:mods)",
				    *p, (int)(p - spec), spec);
	}
	if (top_level_comma(spec))
		return fail(&c, -EINVAL, "',' in '%s': one event per spec "
			    "(split a list first: perf.split, evspec__split)", spec);

	out->attr.size = sizeof out->attr;
	/* perf counts the host only unless a modifier says otherwise. */
	out->attr.exclude_guest = 1;
	set_text(out->name, sizeof out->name, spec);

	slash = strchr(spec, '/');
	if (probe__is_spec(spec))
		rc = parse_probe(&c);
	else if (strncmp(spec, "mem:", 4) == 0)
		rc = parse_breakpoint(&c);
	else if (slash != NULL)
		rc = parse_pmu_form(&c, slash);
	else
		rc = parse_colon_forms(&c);
	if (rc != 0)
		memset(out, 0, sizeof *out);
	return rc;
}

int evspec__add_modifiers(struct evspec *ev, const char *mods, char *err, size_t errlen)
{
	struct ctx c;

	memset(&c, 0, sizeof c);
	c.spec = mods != NULL ? mods : "";
	c.ev = ev;
	c.err = err;
	c.errlen = errlen;
	if (errlen > 0)
		err[0] = '\0';
	if (mods == NULL || *mods == '\0')
		return fail(&c, -EINVAL, "missing modifier after ':'");
	return apply_modifiers(&c, mods, 1);
}

int evspec__split(const char *list, int (*fn)(const char *ev, void *arg), void *arg)
{
	const char *start = list, *p;
	int braces = 0, in_slashes = 0, rc;

	if (list == NULL)
		return -EINVAL;
	for (p = list;; p++) {
		if (*p == '{') {
			braces++;
		} else if (*p == '}') {
			if (braces > 0)
				braces--;
		} else if (*p == '/') {
			/* mem:ADDR/LEN has a single slash that opens nothing;
			 * a probe's path has slashes that open nothing. */
			if (probe__is_spec(start))
				continue;
			if (in_slashes || strncmp(start, "mem:", 4) != 0)
				in_slashes = !in_slashes;
		} else if (*p == '\0' || (*p == ',' && braces == 0 && !in_slashes)) {
			size_t n = (size_t)(p - start);
			char *ev = malloc(n + 1);

			if (ev == NULL)
				return -ENOMEM;
			memcpy(ev, start, n);
			ev[n] = '\0';
			rc = fn(ev, arg);
			free(ev);
			if (rc != 0 || *p == '\0')
				return rc;
			start = p + 1;
			in_slashes = 0;
		}
	}
}
