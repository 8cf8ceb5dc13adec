/*
 * /tmp/perf-PID.map, perf's rule: only a regular file (not a symlink)
 * owned by root or by the process's user, so another user cannot plant
 * names; read again when it has grown (JITs append) or was replaced
 * (perf.jitmap renames a rewritten map over the old one).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "symbol/perfmap.h"
#include "base/hex.h"

/* A hex number (optional 0x) at *p before end; -1 when none or too long. */
static int parse_hex(const char **p, const char *end, uint64_t *v)
{
	const char *q = *p;
	int digits = 0, d;

	*v = 0;
	if (end - q > 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
		q += 2;
	while (q < end && (d = hex_digit((unsigned char)*q)) >= 0) {
		if (++digits > 16)
			return -1;
		*v = *v << 4 | (uint64_t)d;
		q++;
	}
	if (digits == 0)
		return -1;
	*p = q;
	return 0;
}

int perfmap__parse(struct symtab *t, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	int added = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q = p, *name_end;
		uint64_t start, size;

		if (eol == NULL)
			eol = end;
		name_end = eol;
		if (name_end > q && name_end[-1] == '\r')
			name_end--;
		if (parse_hex(&q, eol, &start) == 0 && q < eol && *q == ' ') {
			q++;
			if (parse_hex(&q, eol, &size) == 0 && q < name_end && *q == ' ' &&
			    size > 0 && start + size > start) {
				q++;
				if (q < name_end) {
					if (symtab__add(t, start, size, q, (size_t)(name_end - q),
							SYMTAB_GLOBAL, 0) < 0)
						return -ENOMEM;
					added++;
				}
			}
		}
		p = eol + 1;
	}
	return added;
}

void perfmap__init(struct perfmap *pm)
{
	memset(pm, 0, sizeof(*pm));
	symtab__init(&pm->syms);
}

void perfmap__exit(struct perfmap *pm)
{
	symtab__exit(&pm->syms);
	memset(pm, 0, sizeof(*pm));
}

int perfmap__refresh(struct perfmap *pm, const char *dir, uint32_t pid, uid_t uid)
{
	char path[288];
	struct stat st;
	char *buf;
	ssize_t n;
	int fd, rc;

	snprintf(path, sizeof(path), "%s/perf-%u.map", dir, (unsigned)pid);
	/* O_NOFOLLOW: a symlink fails with ELOOP instead of being followed. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		if (rc == -ELOOP)
			snprintf(pm->why, sizeof(pm->why), "%s is a symlink: ignored", path);
		else
			snprintf(pm->why, sizeof(pm->why), "no %s", path);
		pm->state = rc;
		return rc;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(pm->why, sizeof(pm->why), "%s is not a regular file: ignored", path);
		return pm->state = -EPERM;
	}
	if (uid == (uid_t)-1)
		uid = geteuid();
	if (st.st_uid != 0 && st.st_uid != uid) {
		close(fd);
		snprintf(pm->why, sizeof(pm->why),
			 "%s is owned by uid %u, not by the process's user (%u) or root: ignored",
			 path, (unsigned)st.st_uid, (unsigned)uid);
		return pm->state = -EPERM;
	}
	if (pm->state == 1 && st.st_size <= pm->size && st.st_dev == pm->dev &&
	    st.st_ino == pm->ino) {
		close(fd);
		return 0;
	}
	if (st.st_size < 0 || st.st_size > (off_t)1 << 30) {
		close(fd);
		snprintf(pm->why, sizeof(pm->why), "%s is too large", path);
		return pm->state = -EFBIG;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL) {
		close(fd);
		return -ENOMEM;
	}
	n = pread(fd, buf, (size_t)st.st_size, 0);
	close(fd);
	if (n < 0) {
		free(buf);
		return pm->state = -EIO;
	}
	/* A line being appended right now waits for the next reload. */
	while (n > 0 && buf[n - 1] != '\n')
		n--;
	symtab__exit(&pm->syms);
	symtab__init(&pm->syms);
	rc = perfmap__parse(&pm->syms, buf, (size_t)n);
	free(buf);
	if (rc < 0)
		return pm->state = rc;
	if (symtab__finish(&pm->syms, 0) < 0)
		return pm->state = -ENOMEM;
	pm->size = (off_t)n;
	pm->dev = st.st_dev;
	pm->ino = st.st_ino;
	pm->state = 1;
	pm->why[0] = '\0';
	return 0;
}
