/* sysfs PMUs: type numbers, format bit ranges, named events, caps. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/perf_sys.h"
#include "event/pmu.h"

#define PMU_PATH_MAX 512

const char *pmu__root(void)
{
	const char *r = getenv("LUAPERF_PMU_ROOT");
	return (r != NULL && r[0] != '\0') ? r : "/sys/bus/event_source/devices";
}

/* A name that may be used as one path component. */
static int safe_component(const char *s)
{
	size_t n = strlen(s);
	return n > 0 && n < (size_t)PMU_NAME_MAX * 4 && strchr(s, '/') == NULL &&
	       strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

static int pmu_path(char *buf, size_t len, const char *pmu, const char *sub,
		    const char *leaf)
{
	int n;

	if (!safe_component(pmu) || (leaf != NULL && !safe_component(leaf)))
		return -ENOENT;
	if (sub == NULL)
		n = snprintf(buf, len, "%s/%s", pmu__root(), pmu);
	else if (leaf == NULL)
		n = snprintf(buf, len, "%s/%s/%s", pmu__root(), pmu, sub);
	else
		n = snprintf(buf, len, "%s/%s/%s/%s", pmu__root(), pmu, sub, leaf);
	return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

int pmu__type(const char *pmu, uint32_t *type)
{
	char path[PMU_PATH_MAX];
	long long v;
	int err = pmu_path(path, sizeof path, pmu, "type", NULL);

	if (err == 0)
		err = perf_sys__read_int(path, &v);
	if (err != 0)
		return err == -ENOTDIR ? -ENOENT : err;
	if (v < 0 || v > UINT32_MAX)
		return -EINVAL;
	*type = (uint32_t)v;
	return 0;
}

static int visible(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* Byte order, not the locale's: listings must not depend on LANG. */
static int byte_order(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Calls fn(name) for the entries of dir, sorted; stops at non-zero. */
static int foreach_entry(const char *dir, int (*fn)(const char *name, void *arg),
			 void *arg)
{
	struct dirent **list;
	int n = scandir(dir, &list, visible, byte_order), i, rc = 0;

	if (n < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		if (rc == 0)
			rc = fn(list[i]->d_name, arg);
		free(list[i]);
	}
	free(list);
	return rc;
}

struct pmu_walk {
	int (*fn)(const char *pmu, uint32_t type, void *arg);
	void *arg;
};

static int pmu_walk_one(const char *name, void *arg)
{
	struct pmu_walk *w = arg;
	uint32_t type;

	if (pmu__type(name, &type) != 0)
		return 0;
	return w->fn(name, type, w->arg);
}

int pmu__foreach(int (*fn)(const char *pmu, uint32_t type, void *arg), void *arg)
{
	struct pmu_walk w = { fn, arg };
	return foreach_entry(pmu__root(), pmu_walk_one, &w);
}

struct name_of {
	uint32_t type;
	char *name;
	size_t len;
};

static int name_of_one(const char *pmu, uint32_t type, void *arg)
{
	struct name_of *q = arg;

	if (type != q->type || strlen(pmu) >= q->len)
		return 0;
	strcpy(q->name, pmu);
	return 1;
}

int pmu__name_of(uint32_t type, char *name, size_t len)
{
	struct name_of q = { type, name, len };
	return pmu__foreach(name_of_one, &q) == 1 ? 0 : -ENOENT;
}

/* Reads a small sysfs file, strips the trailing newline. */
static int read_small(const char *path, char *buf, size_t len)
{
	ssize_t n = perf_sys__read_file(path, buf, len);

	if (n < 0)
		return (int)n;
	/* A full buffer may hide a longer file: refuse rather than truncate. */
	if ((size_t)n >= len - 1)
		return -E2BIG;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

struct file_walk {
	const char *pmu;
	const char *sub;
	int (*fn)(const char *name, const char *text, void *arg);
	void *arg;
};

static int file_walk_one(const char *name, void *arg)
{
	struct file_walk *w = arg;
	char path[PMU_PATH_MAX], text[1024];

	/* events/x.scale, x.unit, x.per-pkg, x.snapshot describe x. */
	if (strchr(name, '.') != NULL && strcmp(w->sub, "events") == 0)
		return 0;
	if (pmu_path(path, sizeof path, w->pmu, w->sub, name) != 0)
		return 0;
	if (read_small(path, text, sizeof text) != 0)
		return 0;
	return w->fn(name, text, w->arg);
}

static int foreach_file(const char *pmu, const char *sub,
			int (*fn)(const char *name, const char *text, void *arg),
			void *arg)
{
	char dir[PMU_PATH_MAX];
	struct file_walk w = { pmu, sub, fn, arg };
	int err = pmu_path(dir, sizeof dir, pmu, sub, NULL);

	if (err != 0)
		return err;
	err = foreach_entry(dir, file_walk_one, &w);
	/* A PMU without events/ or format/ simply has none. */
	return err == -ENOENT ? 0 : err;
}

int pmu__foreach_event(const char *pmu,
		       int (*fn)(const char *event, const char *terms, void *arg),
		       void *arg)
{
	return foreach_file(pmu, "events", fn, arg);
}

int pmu__foreach_format(const char *pmu,
			int (*fn)(const char *term, const char *bits, void *arg),
			void *arg)
{
	return foreach_file(pmu, "format", fn, arg);
}

int pmu__event_terms(const char *pmu, const char *event, char *terms, size_t len)
{
	char path[PMU_PATH_MAX];
	int err;

	if (strchr(event, '.') != NULL)
		return -ENOENT;
	err = pmu_path(path, sizeof path, pmu, "events", event);
	if (err == 0)
		err = read_small(path, terms, len);
	return err == -ENOTDIR ? -ENOENT : err;
}

/* "config:0-7,21", "config1:0-63", "config2:5" */
int pmu_format__parse(const char *text, struct pmu_format *fmt)
{
	const char *p;

	memset(fmt, 0, sizeof *fmt);
	if (strncmp(text, "config:", 7) == 0) {
		fmt->field = 0;
		p = text + 7;
	} else if (strncmp(text, "config1:", 8) == 0) {
		fmt->field = 1;
		p = text + 8;
	} else if (strncmp(text, "config2:", 8) == 0) {
		fmt->field = 2;
		p = text + 8;
	} else {
		return -EINVAL;
	}
	for (;;) {
		unsigned long a, b;
		char *end;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		a = strtoul(p, &end, 10);
		p = end;
		b = a;
		if (*p == '-') {
			p++;
			if (*p < '0' || *p > '9')
				return -EINVAL;
			b = strtoul(p, &end, 10);
			p = end;
		}
		if (a > 63 || b > 63 || b < a)
			return -EINVAL;
		for (; a <= b; a++) {
			if (!(fmt->mask & (UINT64_C(1) << a)))
				fmt->nbits++;
			fmt->mask |= UINT64_C(1) << a;
		}
		if (*p == '\0')
			break;
		if (*p != ',')
			return -EINVAL;
		p++;
	}
	return 0;
}

int pmu__format(const char *pmu, const char *term, struct pmu_format *fmt)
{
	char path[PMU_PATH_MAX], text[256];
	int err = pmu_path(path, sizeof path, pmu, "format", term);

	if (err == 0)
		err = read_small(path, text, sizeof text);
	if (err != 0)
		return err == -ENOTDIR ? -ENOENT : err;
	return pmu_format__parse(text, fmt);
}

uint64_t pmu_format__max(const struct pmu_format *fmt)
{
	return fmt->nbits >= 64 ? UINT64_MAX : (UINT64_C(1) << fmt->nbits) - 1;
}

int pmu_format__apply(const struct pmu_format *fmt, uint64_t value,
		      struct perf_event_attr *attr)
{
	__u64 *field = fmt->field == 0 ? &attr->config :
			  fmt->field == 1 ? &attr->config1 : &attr->config2;
	int bit, vbit = 0;

	if (value > pmu_format__max(fmt))
		return -ERANGE;
	for (bit = 0; bit < 64; bit++) {
		uint64_t m = UINT64_C(1) << bit;
		if (!(fmt->mask & m))
			continue;
		if (value & (UINT64_C(1) << vbit))
			*field |= m;
		vbit++;
	}
	return 0;
}

int pmu__cap(const char *pmu, const char *cap, long long *out)
{
	char path[PMU_PATH_MAX];
	int err = pmu_path(path, sizeof path, pmu, "caps", cap);

	if (err == 0)
		err = perf_sys__read_int(path, out);
	return err == -ENOTDIR ? -ENOENT : err;
}
