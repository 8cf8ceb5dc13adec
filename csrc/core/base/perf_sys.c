/* The kernel interface: perf_event_open(2), sysctls, /proc and /sys files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "base/perf_sys.h"

int perf_sys__open(struct perf_event_attr *attr, pid_t pid, int cpu,
		   int group_fd, unsigned long flags)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
	return fd < 0 ? -errno : (int)fd;
}

ssize_t perf_sys__read_file(const char *path, char *buf, size_t size)
{
	size_t n = 0;
	int fd;

	if (size == 0)
		return -EINVAL;
	buf[0] = '\0';  /* a string on every path, even failed ones */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (n < size - 1) {
		ssize_t r = read(fd, buf + n, size - 1 - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			close(fd);
			return r;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	close(fd);
	return (ssize_t)n;
}

int perf_sys__read_int(const char *path, long long *out)
{
	char buf[64], *end;
	ssize_t n = perf_sys__read_file(path, buf, sizeof buf);

	if (n < 0)
		return (int)n;
	errno = 0;
	*out = strtoll(buf, &end, 0);
	if (errno != 0 || end == buf)
		return -EINVAL;
	return 0;
}

long long perf_sys__sysctl(const char *name, long long def)
{
	char path[256];
	long long v;

	snprintf(path, sizeof path, "/proc/sys/kernel/%s", name);
	return perf_sys__read_int(path, &v) == 0 ? v : def;
}

int perf_sys__paranoid(void)
{
	/* The kernel's default when the file cannot be read. */
	return (int)perf_sys__sysctl("perf_event_paranoid", 2);
}

/* Parses "0-3,5,7-8" into cpus. */
int perf_sys__online_cpus(int *cpus, int max)
{
	char buf[4096];
	const char *p = buf;
	int n = 0;
	ssize_t r = perf_sys__read_file("/sys/devices/system/cpu/online", buf, sizeof buf);

	if (r < 0)
		return (int)r;
	while (*p != '\0' && *p != '\n') {
		char *end;
		long a = strtol(p, &end, 10), b;
		if (end == p)
			return -EINVAL;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1)
				return -EINVAL;
			p = end;
		}
		for (; a <= b; a++) {
			if (n >= max)
				return -E2BIG;
			cpus[n++] = (int)a;
		}
		if (*p == ',')
			p++;
	}
	return n;
}

const char *perf_sys__tracefs(void)
{
	static const char *const roots[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	size_t i;

	for (i = 0; i < sizeof roots / sizeof roots[0]; i++) {
		char path[128];
		struct stat st;
		snprintf(path, sizeof path, "%s/events", roots[i]);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			return roots[i];
	}
	return NULL;
}
