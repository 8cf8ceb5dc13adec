/*
 * uprobe:PATH:FUNC[+OFF], uretprobe:PATH:FUNC, kprobe:FUNC[+OFF],
 * kretprobe:FUNC: the object found, the function placed at its file
 * offset, and the attr of the uprobe/kprobe PMU filled.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "event/evcatalog.h"
#include "event/pmu.h"
#include "event/probe.h"
#include "symbol/symfind.h"

static const struct {
	const char *prefix;
	int kernel, ret;
} forms[] = {
	{ "uprobe:", 0, 0 },
	{ "uretprobe:", 0, 1 },
	{ "kprobe:", 1, 0 },
	{ "kretprobe:", 1, 1 },
};

static int fail(char *err, size_t len, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t len, int code, const char *fmt, ...)
{
	va_list ap;

	if (len > 0) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return code;
}

int probe__is_spec(const char *spec)
{
	size_t i;

	for (i = 0; i < sizeof forms / sizeof forms[0]; i++)
		if (strncmp(spec, forms[i].prefix, strlen(forms[i].prefix)) == 0)
			return 1;
	return 0;
}

/*
 * Strings an attr points at (config1) must outlive every copy of the attr
 * until it is opened, so they are kept for the life of the process, once
 * each: a script names a handful of objects and functions.
 */
struct interned {
	struct interned *next;
	char s[];
};
static struct interned *interned;
static size_t ninterned;
static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
#define INTERN_MAX 4096

static const char *intern(const char *s)
{
	struct interned *p;
	const char *r = NULL;
	size_t n = strlen(s);

	pthread_mutex_lock(&intern_lock);
	for (p = interned; p != NULL; p = p->next)
		if (strcmp(p->s, s) == 0)
			break;
	if (p == NULL && ninterned < INTERN_MAX && (p = malloc(sizeof *p + n + 1)) != NULL) {
		memcpy(p->s, s, n + 1);
		p->next = interned;
		interned = p;
		ninterned++;
	}
	if (p != NULL)
		r = p->s;
	pthread_mutex_unlock(&intern_lock);
	return r;
}

/* At unload (dlclose of the module, exit): nothing opens with them after. */
__attribute__((destructor)) static void interned_free(void)
{
	struct interned *p, *next;

	pthread_mutex_lock(&intern_lock);
	for (p = interned; p != NULL; p = next) {
		next = p->next;
		free(p);
	}
	interned = NULL;
	ninterned = 0;
	pthread_mutex_unlock(&intern_lock);
}

/* A regular file that starts as ELF (libc.so is a linker script). */
static int is_elf(const char *path)
{
	unsigned char magic[4];
	struct stat st;
	int fd, ok;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	ok = read(fd, magic, 4) == 4 && memcmp(magic, "\177ELF", 4) == 0;
	close(fd);
	return ok;
}

static int from_path_env(const char *name, char *out, size_t len)
{
	const char *env = getenv("PATH"), *p, *end;

	for (p = env; p != NULL && *p != '\0'; p = *end ? end + 1 : end) {
		char buf[PATH_MAX];
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		if (end > p && snprintf(buf, sizeof buf, "%.*s/%s", (int)(end - p), p, name) <
			       (int)sizeof buf && access(buf, X_OK) == 0 && is_elf(buf) &&
		    realpath(buf, out) != NULL && strlen(out) < len)
			return 0;
	}
	return -ENOENT;
}

static int from_lib_dirs(const char *name, char *out)
{
	static const char *const dirs[] = {
		"/lib/*-linux-gnu*", "/usr/lib/*-linux-gnu*", "/lib64", "/usr/lib64",
		"/lib", "/usr/lib", "/usr/local/lib",
	};
	static const char *const shapes[][2] = {
		{ "", "" }, { "", ".so" }, { "lib", ".so" }, { "", ".so.*" }, { "lib", ".so.*" },
	};
	size_t d, s, i;

	for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		for (d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
			char pat[PATH_MAX];
			glob_t g;
			int found = 0;

			if (snprintf(pat, sizeof pat, "%s/%s%s%s", dirs[d], shapes[s][0], name,
				     shapes[s][1]) >= (int)sizeof pat)
				continue;
			if (glob(pat, 0, NULL, &g) != 0)
				continue;
			for (i = 0; i < g.gl_pathc && !found; i++)
				found = is_elf(g.gl_pathv[i]) && realpath(g.gl_pathv[i], out) != NULL;
			globfree(&g);
			if (found)
				return 0;
		}
	}
	return -ENOENT;
}

/* PATH as given, or a bare name as an executable in $PATH, then a library. */
static int find_object(const char *path, char *out, char *err, size_t errlen)
{
	if (strchr(path, '/') == NULL &&
	    (from_path_env(path, out, PATH_MAX) == 0 || from_lib_dirs(path, out) == 0))
		return 0;
	if (realpath(path, out) == NULL) {
		int e = errno;
		if (strchr(path, '/') == NULL)
			return fail(err, errlen, -ENOENT, "uprobe: cannot find '%s': no such file, "
				    "no executable of that name in $PATH and no library of that "
				    "name in the library directories (give a path)", path);
		return fail(err, errlen, -e, "uprobe: cannot open '%s': %s", path, strerror(e));
	}
	return 0;
}

/* The nearest function name, for "did you mean". */
struct nearest {
	const char *word;
	size_t best;
	char name[256];
};

static void consider(const char *cand, void *arg)
{
	struct nearest *n = arg;
	size_t d;

	if (strlen(cand) >= sizeof n->name)
		return;
	d = evcatalog__distance(n->word, cand);
	if (d < n->best) {
		n->best = d;
		strcpy(n->name, cand);
	}
}

static int resolve_user(const char *spec, const char *obj, const char *func,
			uint64_t off, int has_off, struct probe *out, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct symfind sf;
	struct nearest n;
	int rc;

	rc = find_object(obj, path, err, errlen);
	if (rc < 0)
		return rc;
	memset(&n, 0, sizeof n);
	n.word = func;
	n.best = (size_t)-1;
	rc = symfind__func(path, func, &sf, consider, &n);
	if (rc == -ENOENT) {
		size_t limit = strlen(func) / 3 ? strlen(func) / 3 : 1;
		if (n.name[0] != '\0' && n.best > 0 && n.best <= limit)
			return fail(err, errlen, rc, "no function '%s' in %s (in '%s'); did you "
				    "mean '%s'?", func, path, spec, n.name);
		return fail(err, errlen, rc, "no function '%s' in %s (in '%s'); list its "
			    "functions with: nm -C %s (nm -DC for a stripped library)", func, path,
			    spec, path);
	}
	if (rc == -EINVAL)
		return fail(err, errlen, rc, "address %s is in no loaded segment of %s (in '%s')",
			    func, path, spec);
	if (rc == -ENOEXEC)
		return fail(err, errlen, rc, "%s is not an ELF object (in '%s')", path, spec);
	if (rc < 0)
		return fail(err, errlen, rc, "cannot read %s (in '%s'): %s", path, spec,
			    strerror(-rc));
	if (has_off && sf.size != 0 && off >= sf.size)
		return fail(err, errlen, -ERANGE, "offset %llu is past the end of %s "
			    "(%llu bytes) in '%s'", (unsigned long long)off, sf.name,
			    (unsigned long long)sf.size, spec);
	out->path = intern(path);
	out->func = intern(func);
	if (out->path == NULL || out->func == NULL)
		return fail(err, errlen, -ENOMEM, "out of memory for '%s'", spec);
	out->offset = sf.offset + off;
	out->addr = sf.vaddr + off;
	return 0;
}

static int parse_offset(const char *s, uint64_t *off)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*off = strtoull(s, &end, 0);
	return errno != 0 || *end != '\0' ? -EINVAL : 0;
}

static int fill_attr(const char *spec, const struct probe *p, struct perf_event_attr *attr,
		     char *err, size_t errlen)
{
	const char *pmu = p->kernel ? "kprobe" : "uprobe";
	struct pmu_format fmt;
	uint32_t type;
	int rc;

	rc = pmu__type(pmu, &type);
	if (rc < 0 && p->kernel)
		return fail(err, errlen, -ENOENT, "'%s': this kernel has no kprobe PMU "
			    "(%s/kprobe is missing), so kprobes cannot be opened through "
			    "perf_event_open; it needs CONFIG_KPROBE_EVENTS. User-space "
			    "probes work: uprobe:PATH:FUNC", spec, pmu__root());
	if (rc < 0)
		return fail(err, errlen, -ENOENT, "'%s': this kernel has no uprobe PMU "
			    "(%s/uprobe is missing; it needs CONFIG_UPROBE_EVENTS)", spec,
			    pmu__root());
	attr->type = type;
	attr->config1 = (uint64_t)(uintptr_t)(p->kernel ? p->func : p->path);
	attr->config2 = p->offset;
	if (p->ret) {
		rc = pmu__format(pmu, "retprobe", &fmt);
		if (rc == 0)
			rc = pmu_format__apply(&fmt, 1, attr);
		if (rc < 0)
			return fail(err, errlen, -ENOENT, "'%s': the %s PMU has no retprobe "
				    "format (%s/%s/format/retprobe)", spec, pmu, pmu__root(), pmu);
	}
	/* Every hit, as perf does for tracepoints. */
	attr->sample_period = 1;
	return 0;
}

int probe__parse(const char *spec, struct perf_event_attr *attr, struct probe *out,
		 char *err, size_t errlen)
{
	char body[PATH_MAX], *func, *plus;
	uint64_t off = 0;
	size_t i;
	int rc, has_off = 0;

	memset(out, 0, sizeof *out);
	for (i = 0; i < sizeof forms / sizeof forms[0]; i++)
		if (strncmp(spec, forms[i].prefix, strlen(forms[i].prefix)) == 0)
			break;
	if (i == sizeof forms / sizeof forms[0])
		return fail(err, errlen, -EINVAL, "'%s' is not a probe spec", spec);
	out->kernel = forms[i].kernel;
	out->ret = forms[i].ret;
	if (snprintf(body, sizeof body, "%s", spec + strlen(forms[i].prefix)) >= (int)sizeof body)
		return fail(err, errlen, -E2BIG, "probe spec '%.40s...' is too long", spec);
	if (out->kernel) {
		func = body;
	} else {
		func = strchr(body, ':');
		if (func == NULL || func == body || func[1] == '\0')
			return fail(err, errlen, -EINVAL, "'%s': a user probe is %sPATH:FUNC[+OFFSET] "
				    "(uprobe:/bin/bash:readline, uprobe:libc:malloc)", spec,
				    forms[i].prefix);
		*func++ = '\0';
	}
	if (func[0] == '\0')
		return fail(err, errlen, -EINVAL, "'%s': missing function (%sFUNC)", spec,
			    forms[i].prefix);
	plus = strrchr(func, '+');
	if (plus != NULL && plus != func) {
		if (parse_offset(plus + 1, &off) < 0)
			return fail(err, errlen, -EINVAL, "'%s': bad offset '%s' (FUNC+DECIMAL or "
				    "FUNC+0xHEX)", spec, plus + 1);
		if (out->ret)
			return fail(err, errlen, -EINVAL, "'%s': a return probe takes no offset",
				    spec);
		*plus = '\0';
		has_off = 1;
	}
	if (out->kernel) {
		out->func = intern(func);
		out->offset = off;
		if (out->func == NULL)
			return fail(err, errlen, -ENOMEM, "out of memory for '%s'", spec);
	} else {
		rc = resolve_user(spec, body, func, off, has_off, out, err, errlen);
		if (rc < 0)
			return rc;
	}
	return fill_attr(spec, out, attr, err, errlen);
}
