/*
 * perf.data writer (file mode), laid out like perf record's:
 *
 *   header | ids of each event | attrs | data ... | feature table | features
 *
 * The ids and attrs go out before the first record (all events are known by
 * then); the features and the final header at close.  Records are copied
 * as the kernel wrote them.  Synthesized records (the kernel map, COMM and
 * MMAP2 of tasks that already run) carry an all-zero sample_id trailer and
 * time 0, as perf's do, so readers deliver them first.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "perfdata/perfdata.h"
#include "base/perf_sys.h"

#define FILE_HEADER_SIZE 104
#define NAME_ALIGN 64
#define WBUF_SIZE (256u << 10)
#define MAX_EVENTS 4096

struct wevent {
	struct perf_event_attr attr;
	char *name;
	uint64_t *ids;
	size_t nr_ids;
};

struct wdso {                    /* an executable file seen in MMAP/MMAP2 */
	char *path;
	int kernel;
};

struct perfdata_writer {
	int fd;
	struct wevent *ev;
	int nr_ev;
	int started;                 /* ids and attrs written: data follows */
	uint64_t attr_off, data_off, pos;
	size_t id_hdr_size;          /* sample_id_all trailer bytes */
	uint8_t *wbuf;
	size_t wlen;
	struct perfdata_writer_stats stats;
	char **cmdline;
	int nr_cmdline;
	struct wdso *dsos;
	size_t nr_dsos, cap_dsos;
	int kernel_done;
	int failed;                  /* a write failed: close reports it */
};

/* ------------------------------------------------------------ output */

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t r = write(fd, b, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static int flush(struct perfdata_writer *w)
{
	int e = 0;
	if (w->wlen)
		e = write_all(w->fd, w->wbuf, w->wlen);
	w->wlen = 0;
	if (e)
		w->failed = e;
	return e;
}

static int out(struct perfdata_writer *w, const void *p, size_t n)
{
	if (w->failed)
		return w->failed;
	if (n > WBUF_SIZE - w->wlen) {
		int e = flush(w);
		if (e)
			return e;
		if (n > WBUF_SIZE) {
			e = write_all(w->fd, p, n);
			if (e)
				w->failed = e;
			w->pos += n;
			return e;
		}
	}
	memcpy(w->wbuf + w->wlen, p, n);
	w->wlen += n;
	w->pos += n;
	return 0;
}

static int out_zero(struct perfdata_writer *w, size_t n)
{
	static const uint8_t zero[NAME_ALIGN];
	int e = 0;
	while (n && !e) {
		size_t k = n < sizeof zero ? n : sizeof zero;
		e = out(w, zero, k);
		n -= k;
	}
	return e;
}

/* ------------------------------------------------------------ open */

int perfdata_writer__open(const char *path, struct perfdata_writer **outp)
{
	struct perfdata_writer *w = calloc(1, sizeof *w);
	uint8_t hdr[FILE_HEADER_SIZE];

	*outp = NULL;
	if (!w)
		return -ENOMEM;
	w->wbuf = malloc(WBUF_SIZE);
	if (!w->wbuf) {
		free(w);
		return -ENOMEM;
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (w->fd < 0) {
		int e = -errno;
		free(w->wbuf);
		free(w);
		return e;
	}
	/* A placeholder header: rewritten at close with the real sections. */
	memset(hdr, 0, sizeof hdr);
	if (out(w, hdr, sizeof hdr) < 0) {
		int e = w->failed;
		perfdata_writer__abort(w);
		return e;
	}
	*outp = w;
	return 0;
}

int perfdata_writer__add_event(struct perfdata_writer *w, const struct perf_event_attr *attr,
			       const char *name, const uint64_t *ids, size_t nr_ids)
{
	struct wevent *e;
	size_t sz;

	if (w->started || w->nr_ev >= MAX_EVENTS)
		return -EBUSY;
	e = realloc(w->ev, (size_t)(w->nr_ev + 1) * sizeof *e);
	if (!e)
		return -ENOMEM;
	w->ev = e;
	e = &w->ev[w->nr_ev];
	memset(e, 0, sizeof *e);
	sz = attr->size && attr->size < sizeof e->attr ? attr->size : sizeof e->attr;
	memcpy(&e->attr, attr, sz);
	e->attr.size = sizeof e->attr;
	e->name = strdup(name ? name : "");
	e->ids = malloc((nr_ids ? nr_ids : 1) * sizeof *e->ids);
	if (!e->name || !e->ids) {
		free(e->name);
		free(e->ids);
		return -ENOMEM;
	}
	if (nr_ids)
		memcpy(e->ids, ids, nr_ids * sizeof *ids);
	e->nr_ids = nr_ids;
	w->nr_ev++;
	return 0;
}

static size_t trailer_size(const struct perf_event_attr *a)
{
	uint64_t st = a->sample_type;
	if (!a->sample_id_all)
		return 0;
	return 8 * (size_t)(!!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) +
			    !!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID) +
			    !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_IDENTIFIER));
}

/* ids of each event, then the attrs; the data section starts after them. */
static int start_data(struct perfdata_writer *w)
{
	uint64_t *id_off;
	int i, e = 0;

	if (w->started)
		return 0;
	if (w->nr_ev == 0)
		return -EINVAL;
	id_off = calloc((size_t)w->nr_ev, sizeof *id_off);
	if (!id_off)
		return -ENOMEM;
	for (i = 0; i < w->nr_ev && !e; i++) {
		id_off[i] = w->pos;
		e = out(w, w->ev[i].ids, w->ev[i].nr_ids * 8);
	}
	w->attr_off = w->pos;
	for (i = 0; i < w->nr_ev && !e; i++) {
		uint64_t sec[2] = { id_off[i], w->ev[i].nr_ids * 8 };
		if (!(e = out(w, &w->ev[i].attr, sizeof w->ev[i].attr)))
			e = out(w, sec, sizeof sec);
	}
	free(id_off);
	w->data_off = w->pos;
	w->id_hdr_size = trailer_size(&w->ev[0].attr);
	w->started = 1;
	return e;
}

/* ------------------------------------------------------------ records */

static void note_dso(struct perfdata_writer *w, const char *path, int kernel)
{
	size_t i;
	if (!path[0] || path[0] == '[' || !strncmp(path, "//", 2))
		return;
	for (i = 0; i < w->nr_dsos; i++)
		if (!strcmp(w->dsos[i].path, path))
			return;
	if (w->nr_dsos == w->cap_dsos) {
		size_t n = w->cap_dsos ? w->cap_dsos * 2 : 32;
		struct wdso *d = realloc(w->dsos, n * sizeof *d);
		if (!d)
			return;         /* build ids are best effort */
		w->dsos = d;
		w->cap_dsos = n;
	}
	w->dsos[w->nr_dsos].path = strdup(path);
	if (!w->dsos[w->nr_dsos].path)
		return;
	w->dsos[w->nr_dsos].kernel = kernel;
	w->nr_dsos++;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* Counts and remembers what the summary and the build-id feature need. */
static void account(struct perfdata_writer *w, const uint8_t *r, size_t len)
{
	uint32_t type;
	uint16_t misc;
	memcpy(&type, r, 4);
	memcpy(&misc, r + 4, 2);
	switch (type) {
	case PERF_RECORD_SAMPLE: w->stats.samples++; break;
	case PERF_RECORD_LOST:
		if (len >= 24)
			w->stats.lost += rd64(r + 16);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (len >= 16)
			w->stats.lost_samples += rd64(r + 8);
		break;
	case PERF_RECORD_THROTTLE: w->stats.throttled++; break;
	case PERF_RECORD_MMAP:
		if (len > 40 && !(misc & PERF_RECORD_MISC_MMAP_DATA) &&
		    memchr(r + 40, 0, len - 40))
			note_dso(w, (const char *)r + 40,
				 (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL);
		break;
	case PERF_RECORD_MMAP2:
		/* prot at 64: only executable maps carry code to symbolize */
		if (len > 72 && (r[64] & PROT_EXEC) && memchr(r + 72, 0, len - 72))
			note_dso(w, (const char *)r + 72,
				 (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL);
		break;
	}
}

int perfdata_writer__write(struct perfdata_writer *w, const void *rec, size_t len)
{
	struct perf_event_header h;
	int e;

	if (len < sizeof h)
		return -EINVAL;
	memcpy(&h, rec, sizeof h);
	if (h.size != len || len % 8)
		return -EINVAL;
	if ((e = start_data(w)))
		return e;
	account(w, rec, len);
	w->stats.records++;
	w->stats.bytes += len;
	return out(w, rec, len);
}

int perfdata_writer__finished_round(struct perfdata_writer *w)
{
	struct perf_event_header h = { REC_FINISHED_ROUND, 0, sizeof h };
	return perfdata_writer__write(w, &h, sizeof h);
}

const struct perfdata_writer_stats *perfdata_writer__stats(const struct perfdata_writer *w)
{
	return &w->stats;
}

int perfdata_writer__set_cmdline(struct perfdata_writer *w, int argc, const char *const *argv)
{
	int i;
	char **c = calloc((size_t)(argc > 0 ? argc : 1), sizeof *c);
	if (!c)
		return -ENOMEM;
	for (i = 0; i < argc; i++) {
		c[i] = strdup(argv[i]);
		if (!c[i]) {
			while (i--)
				free(c[i]);
			free(c);
			return -ENOMEM;
		}
	}
	for (i = 0; i < w->nr_cmdline; i++)
		free(w->cmdline[i]);
	free(w->cmdline);
	w->cmdline = c;
	w->nr_cmdline = argc;
	return 0;
}

/* ------------------------------------------------------------ synthesis */

/* Writes header + body (already 8-aligned) + the zero trailer. */
static int synth(struct perfdata_writer *w, uint32_t type, uint16_t misc, const void *body,
		 size_t blen)
{
	uint8_t buf[8 + 4096 + 64];
	struct perf_event_header h;
	size_t n;
	int e;

	if ((e = start_data(w)))
		return e;
	n = 8 + blen + w->id_hdr_size;
	if (n > sizeof buf || blen % 8)
		return -E2BIG;
	h.type = type;
	h.misc = misc;
	h.size = (uint16_t)n;
	memcpy(buf, &h, 8);
	memcpy(buf + 8, body, blen);
	memset(buf + 8 + blen, 0, w->id_hdr_size);
	return perfdata_writer__write(w, buf, n);
}

/* A task that exited meanwhile, or one /proc will not show us: skipped. */
static int gone(int err)
{
	return err == ENOENT || err == ESRCH || err == EACCES || err == EPERM;
}

static size_t put_name(uint8_t *dst, size_t at, const char *s, size_t max)
{
	size_t n = strnlen(s, max - 1);
	size_t padded = (n + 1 + 7) & ~(size_t)7;
	memset(dst + at, 0, padded);
	memcpy(dst + at, s, n);
	return at + padded;
}

int perfdata_writer__synthesize_kernel(struct perfdata_writer *w)
{
	FILE *f;
	char line[512];
	unsigned long long text = 0, etext = 0;
	uint8_t body[4096];
	uint32_t pt[2] = { (uint32_t)-1, 0 };
	uint64_t v[3];
	size_t n;

	if (w->kernel_done)
		return 0;
	w->kernel_done = 1;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof line, f)) {
		unsigned long long a;
		char t, name[256];
		if (sscanf(line, "%llx %c %255s", &a, &t, name) != 3)
			continue;
		if (!strcmp(name, "_text"))
			text = a;
		else if (!strcmp(name, "_etext"))
			etext = a;
		if (text && etext)
			break;
	}
	fclose(f);
	/* kptr_restrict hides addresses: no kernel map then (perf does the same). */
	if (!text)
		return 0;
	v[0] = text;
	v[1] = etext > text ? etext - text : ~0ULL - text;
	v[2] = text;
	memcpy(body, pt, 8);
	memcpy(body + 8, v, 24);
	n = put_name(body, 32, "[kernel.kallsyms]_text", 64);
	return synth(w, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, body, n);
}

static int synth_comm(struct perfdata_writer *w, pid_t pid, pid_t tid)
{
	char path[64], comm[32] = "";
	uint8_t body[64];
	uint32_t pt[2] = { (uint32_t)pid, (uint32_t)tid };
	ssize_t r;
	size_t n;

	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", pid, tid);
	r = perf_sys__read_file(path, comm, sizeof comm);
	if (r < 0)
		return gone(-(int)r) ? 0 : (int)r;
	comm[strcspn(comm, "\n")] = 0;
	memcpy(body, pt, 8);
	n = put_name(body, 8, comm, 17);
	return synth(w, PERF_RECORD_COMM, 0, body, n);
}

static int synth_maps(struct perfdata_writer *w, pid_t pid)
{
	char path[64], line[4096 + 256];
	FILE *f;
	int e = 0;

	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return gone(errno) ? 0 : -errno;
	while (!e && fgets(line, sizeof line, f)) {
		unsigned long long start, end, pgoff, ino;
		unsigned maj, min;
		char perms[8], name[4096] = "";
		uint8_t body[4096 + 128];
		uint32_t u32[2] = { (uint32_t)pid, (uint32_t)pid };
		uint64_t u64[3];
		uint32_t mm[2], prot = 0, flags;
		uint64_t ino64[2];
		size_t n;
		int k = sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095[^\n]",
			       &start, &end, perms, &pgoff, &maj, &min, &ino, name);
		if (k < 7 || perms[2] != 'x')
			continue;
		if (k == 8) {
			char *s = name;
			while (*s == ' ')
				s++;
			memmove(name, s, strlen(s) + 1);
		}
		if (!name[0])
			snprintf(name, sizeof name, "//anon");
		prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		       PROT_EXEC;
		flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		u64[0] = start;
		u64[1] = end - start;
		u64[2] = pgoff;
		mm[0] = maj;
		mm[1] = min;
		ino64[0] = ino;
		ino64[1] = 0;
		memcpy(body, u32, 8);
		memcpy(body + 8, u64, 24);
		memcpy(body + 32, mm, 8);
		memcpy(body + 40, ino64, 16);
		memcpy(body + 56, &prot, 4);
		memcpy(body + 60, &flags, 4);
		n = put_name(body, 64, name, 4096);
		e = synth(w, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, body, n);
	}
	fclose(f);
	return e;
}

static int synth_process(struct perfdata_writer *w, pid_t pid)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	int e = 0, any = 0;

	snprintf(path, sizeof path, "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return gone(errno) ? 0 : -errno;
	while (!e && (de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		e = synth_comm(w, pid, (pid_t)tid);
		any = 1;
	}
	closedir(d);
	if (!e && any)
		e = synth_maps(w, pid);
	return e;
}

int perfdata_writer__synthesize(struct perfdata_writer *w, pid_t pid)
{
	DIR *d;
	struct dirent *de;
	int e;

	if ((e = perfdata_writer__synthesize_kernel(w)) < 0 && e != -EACCES && e != -EPERM)
		return e;
	if (pid > 0)
		return synth_process(w, pid);
	d = opendir("/proc");
	if (!d)
		return -errno;
	e = 0;
	while (!e && (de = readdir(d))) {
		char *end;
		long p = strtol(de->d_name, &end, 10);
		if (*end || p <= 0)
			continue;
		/* One odd task (a vanished one, an unreadable maps) must not
		 * cost the others their names: only write failures stop. */
		e = synth_process(w, (pid_t)p);
		if (e && e != -ENOMEM && !w->failed)
			e = 0;
	}
	closedir(d);
	return e;
}

/* ------------------------------------------------------------ features */

static int feat_string(struct perfdata_writer *w, const char *s)
{
	size_t n = strlen(s) + 1;
	uint32_t len = (uint32_t)((n + NAME_ALIGN - 1) & ~(size_t)(NAME_ALIGN - 1));
	int e = out(w, &len, 4);
	if (!e)
		e = out(w, s, n);
	if (!e)
		e = out_zero(w, len - n);
	return e;
}

/* "model name" of /proc/cpuinfo; "vendor,family,model,stepping" for cpuid. */
static void cpuinfo(char *desc, size_t dn, char *id, size_t idn)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[512], vendor[64] = "", family[16] = "", model[16] = "", stepping[16] = "";
	snprintf(desc, dn, "unknown");
	if (!f) {
		snprintf(id, idn, "unknown");
		return;
	}
	while (fgets(line, sizeof line, f)) {
		char *v = strchr(line, ':');
		if (!v)
			continue;
		v++;
		while (*v == ' ')
			v++;
		v[strcspn(v, "\n")] = 0;
		if (!strncmp(line, "model name", 10))
			snprintf(desc, dn, "%s", v);
		else if (!strncmp(line, "vendor_id", 9))
			snprintf(vendor, sizeof vendor, "%s", v);
		else if (!strncmp(line, "cpu family", 10))
			snprintf(family, sizeof family, "%s", v);
		else if (!strncmp(line, "model\t", 6))
			snprintf(model, sizeof model, "%s", v);
		else if (!strncmp(line, "stepping", 8))
			snprintf(stepping, sizeof stepping, "%s", v);
		else if (line[0] == '\n' || !strncmp(line, "processor", 9)) {
			if (vendor[0] && desc[0] && strcmp(desc, "unknown"))
				break;
		}
	}
	fclose(f);
	snprintf(id, idn, "%s,%s,%s,%s", vendor, family, model, stepping);
}

/* The GNU build id of an ELF file (20 bytes for sha1); 0 when none. */
static size_t elf_build_id(const char *path, uint8_t id[20])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t got = 0;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && !got && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((const char *)d->d_buf + noff, "GNU", 4) && nh.n_descsz) {
				got = nh.n_descsz < 20 ? nh.n_descsz : 20;
				memcpy(id, (const uint8_t *)d->d_buf + doff, got);
				break;
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return got;
}

/* The running kernel's build id, from /sys/kernel/notes (raw ELF notes). */
static size_t kernel_build_id(uint8_t id[20])
{
	uint8_t buf[4096];
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	ssize_t n;
	size_t off = 0;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof buf);
	close(fd);
	while (n > 0 && off + 12 <= (size_t)n) {
		uint32_t nsz, dsz, type;
		size_t name_off = off + 12, desc_off;
		memcpy(&nsz, buf + off, 4);
		memcpy(&dsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		desc_off = name_off + ((nsz + 3) & ~3u);
		if (desc_off > (size_t)n || dsz > (size_t)n - desc_off)
			break;
		if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(buf + name_off, "GNU", 4)) {
			size_t k = dsz < 20 ? dsz : 20;
			memcpy(id, buf + desc_off, k);
			return k;
		}
		off = desc_off + ((dsz + 3) & ~3u);
	}
	return 0;
}

static int write_build_id(struct perfdata_writer *w, const char *name, const uint8_t *id,
			  size_t idlen, int kernel)
{
	struct {
		struct perf_event_header h;
		int32_t pid;
		uint8_t data[20];
		uint8_t size, r1;
		uint16_t r2;
	} b;
	size_t n = strlen(name) + 1;
	size_t len = (n + NAME_ALIGN - 1) & ~(size_t)(NAME_ALIGN - 1);
	int e;

	if (sizeof b + len > 65535)
		return 0;
	memset(&b, 0, sizeof b);
	/* misc bit 15: PERF_RECORD_MISC_BUILD_ID_SIZE (the size byte is valid) */
	b.h.misc = (uint16_t)((kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER) | (1u << 15));
	b.h.size = (uint16_t)(sizeof b + len);
	b.pid = -1;
	memcpy(b.data, id, idlen);
	b.size = (uint8_t)idlen;
	if (!(e = out(w, &b, sizeof b)) && !(e = out(w, name, n)))
		e = out_zero(w, len - n);
	return e;
}

static int feat_build_ids(struct perfdata_writer *w)
{
	uint8_t id[20];
	size_t i, n;
	int e = 0;

	if ((n = kernel_build_id(id)))
		e = write_build_id(w, "[kernel.kallsyms]", id, n, 1);
	for (i = 0; i < w->nr_dsos && !e; i++)
		if ((n = elf_build_id(w->dsos[i].path, id)))
			e = write_build_id(w, w->dsos[i].path, id, n, w->dsos[i].kernel);
	return e;
}

static int feat_nrcpus(struct perfdata_writer *w)
{
	uint32_t v[2];
	long conf = sysconf(_SC_NPROCESSORS_CONF), onl = sysconf(_SC_NPROCESSORS_ONLN);
	v[0] = (uint32_t)(conf > 0 ? conf : 1);
	v[1] = (uint32_t)(onl > 0 ? onl : 1);
	return out(w, v, sizeof v);
}

static int feat_total_mem(struct perfdata_writer *w)
{
	char buf[256];
	unsigned long long kb = 0;
	if (perf_sys__read_file("/proc/meminfo", buf, sizeof buf) > 0)
		sscanf(buf, "MemTotal: %llu", &kb);
	return out(w, &kb, 8);
}

static int feat_cmdline(struct perfdata_writer *w)
{
	uint32_t n = (uint32_t)w->nr_cmdline;
	char exe[4096];
	ssize_t k;
	int i, e;

	/* The argv given, program first (perf's is "/usr/bin/perf record
	 * ..."); without one, this process's executable. */
	if (n > 0) {
		e = out(w, &n, 4);
		for (i = 0; i < w->nr_cmdline && !e; i++)
			e = feat_string(w, w->cmdline[i]);
		return e;
	}
	k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[k > 0 ? k : 0] = 0;
	n = 1;
	if ((e = out(w, &n, 4)))
		return e;
	return feat_string(w, exe);
}

static int feat_event_desc(struct perfdata_writer *w)
{
	uint32_t v[2] = { (uint32_t)w->nr_ev, (uint32_t)sizeof(struct perf_event_attr) };
	int i, e = out(w, v, sizeof v);
	for (i = 0; i < w->nr_ev && !e; i++) {
		uint32_t nids = (uint32_t)w->ev[i].nr_ids;
		if (!(e = out(w, &w->ev[i].attr, sizeof w->ev[i].attr)) && !(e = out(w, &nids, 4)) &&
		    !(e = feat_string(w, w->ev[i].name)))
			e = out(w, w->ev[i].ids, w->ev[i].nr_ids * 8);
	}
	return e;
}

/*
 * Tracing data for tracepoint events: perf reads their formats from here
 * (not from the live system), so perf script can print their fields.
 */
static int append_file(struct perfdata_writer *w, const char *path, int size_bytes)
{
	char *buf = NULL;
	size_t cap = 0, n = 0;
	FILE *f = fopen(path, "re");
	int e;

	if (!f)
		return -errno;
	for (;;) {
		size_t r;
		if (n == cap) {
			char *nb;
			if (cap >= (1u << 24)) {
				free(buf);
				fclose(f);
				return -EFBIG;
			}
			nb = realloc(buf, cap ? cap * 2 : 8192);
			if (!nb) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = nb;
			cap = cap ? cap * 2 : 8192;
		}
		r = fread(buf + n, 1, cap - n, f);
		if (!r)
			break;
		n += r;
	}
	fclose(f);
	if (size_bytes == 8) {
		uint64_t s = n;
		e = out(w, &s, 8);
	} else {
		uint32_t s = (uint32_t)n;
		e = out(w, &s, 4);
	}
	if (!e)
		e = out(w, buf, n);
	free(buf);
	return e;
}

static int feat_tracing_data(struct perfdata_writer *w, const char *tracefs)
{
	static const uint8_t magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	char path[512];
	uint8_t b[2] = { 0, (uint8_t)sizeof(long) };
	uint32_t page = (uint32_t)sysconf(_SC_PAGESIZE), zero32 = 0, nsys = 0;
	uint64_t zero64 = 0;
	int i, k, e;

	if ((e = out(w, magic, sizeof magic)) || (e = out(w, "0.6", 4)) || (e = out(w, b, 2)) ||
	    (e = out(w, &page, 4)))
		return e;
	snprintf(path, sizeof path, "%s/events/header_page", tracefs);
	if ((e = out(w, "header_page", 12)) || (e = append_file(w, path, 8)))
		return e;
	snprintf(path, sizeof path, "%s/events/header_event", tracefs);
	if ((e = out(w, "header_event", 13)) || (e = append_file(w, path, 8)))
		return e;
	if ((e = out(w, &zero32, 4)))           /* no ftrace formats */
		return e;
	/* one system per tracepoint event (a system may repeat: readers accept it) */
	for (i = 0; i < w->nr_ev; i++)
		if (w->ev[i].attr.type == PERF_TYPE_TRACEPOINT && strchr(w->ev[i].name, ':'))
			nsys++;
	if ((e = out(w, &nsys, 4)))
		return e;
	for (i = 0; i < w->nr_ev && !e; i++) {
		char sys[256];
		const char *colon;
		uint32_t one = 1;
		if (w->ev[i].attr.type != PERF_TYPE_TRACEPOINT || !(colon = strchr(w->ev[i].name, ':')))
			continue;
		k = (int)(colon - w->ev[i].name);
		snprintf(sys, sizeof sys, "%.*s", k, w->ev[i].name);
		snprintf(path, sizeof path, "%s/events/%s/%s/format", tracefs, sys, colon + 1);
		if (!(e = out(w, sys, strlen(sys) + 1)) && !(e = out(w, &one, 4)))
			e = append_file(w, path, 8);
	}
	/* kallsyms, printk formats: empty; saved cmdlines (0.6): empty */
	if (!e && !(e = out(w, &zero32, 4)) && !(e = out(w, &zero32, 4)))
		e = out(w, &zero64, 8);
	return e;
}

static int need_tracing(const struct perfdata_writer *w)
{
	int i;
	for (i = 0; i < w->nr_ev; i++)
		if (w->ev[i].attr.type == PERF_TYPE_TRACEPOINT)
			return 1;
	return 0;
}

static int write_features(struct perfdata_writer *w, uint64_t *bits)
{
	static const int feats[] = {
		PERFDATA_FEAT_TRACING_DATA, PERFDATA_FEAT_BUILD_ID, PERFDATA_FEAT_HOSTNAME,
		PERFDATA_FEAT_OSRELEASE, PERFDATA_FEAT_VERSION, PERFDATA_FEAT_ARCH,
		PERFDATA_FEAT_NRCPUS, PERFDATA_FEAT_CPUDESC, PERFDATA_FEAT_CPUID,
		PERFDATA_FEAT_TOTAL_MEM, PERFDATA_FEAT_CMDLINE, PERFDATA_FEAT_EVENT_DESC,
	};
	const char *tracefs = perf_sys__tracefs();
	uint64_t table[2 * (sizeof feats / sizeof feats[0])];
	struct utsname u;
	char desc[256], cpuid[128], version[64];
	uint64_t table_off;
	size_t i, nf = 0;
	int e = 0;

	uname(&u);
	cpuinfo(desc, sizeof desc, cpuid, sizeof cpuid);
	snprintf(version, sizeof version, "luaperf");
	for (i = 0; i < sizeof feats / sizeof feats[0]; i++) {
		if (feats[i] == PERFDATA_FEAT_TRACING_DATA && (!need_tracing(w) || !tracefs))
			continue;
		bits[feats[i] / 64] |= 1ULL << (feats[i] % 64);
		nf++;
	}
	/* The table first (its size is known), filled in after the sections. */
	table_off = w->pos;
	memset(table, 0, sizeof table);
	if ((e = out(w, table, nf * 16)))
		return e;
	nf = 0;
	for (i = 0; i < sizeof feats / sizeof feats[0] && !e; i++) {
		uint64_t start = w->pos;
		int f = feats[i];
		if (!(bits[f / 64] & (1ULL << (f % 64))))
			continue;
		switch (f) {
		case PERFDATA_FEAT_TRACING_DATA: e = feat_tracing_data(w, tracefs); break;
		case PERFDATA_FEAT_BUILD_ID: e = feat_build_ids(w); break;
		case PERFDATA_FEAT_HOSTNAME: e = feat_string(w, u.nodename); break;
		case PERFDATA_FEAT_OSRELEASE: e = feat_string(w, u.release); break;
		case PERFDATA_FEAT_VERSION: e = feat_string(w, version); break;
		case PERFDATA_FEAT_ARCH: e = feat_string(w, u.machine); break;
		case PERFDATA_FEAT_NRCPUS: e = feat_nrcpus(w); break;
		case PERFDATA_FEAT_CPUDESC: e = feat_string(w, desc); break;
		case PERFDATA_FEAT_CPUID: e = feat_string(w, cpuid); break;
		case PERFDATA_FEAT_TOTAL_MEM: e = feat_total_mem(w); break;
		case PERFDATA_FEAT_CMDLINE: e = feat_cmdline(w); break;
		case PERFDATA_FEAT_EVENT_DESC: e = feat_event_desc(w); break;
		}
		table[2 * nf] = start;
		table[2 * nf + 1] = w->pos - start;
		nf++;
	}
	if (!e)
		e = flush(w);
	if (!e && pwrite(w->fd, table, nf * 16, (off_t)table_off) != (ssize_t)(nf * 16))
		e = -EIO;
	return e;
}

static void free_writer(struct perfdata_writer *w)
{
	int i;
	size_t k;
	for (i = 0; i < w->nr_ev; i++) {
		free(w->ev[i].name);
		free(w->ev[i].ids);
	}
	free(w->ev);
	for (i = 0; i < w->nr_cmdline; i++)
		free(w->cmdline[i]);
	free(w->cmdline);
	for (k = 0; k < w->nr_dsos; k++)
		free(w->dsos[k].path);
	free(w->dsos);
	free(w->wbuf);
	free(w);
}

int perfdata_writer__close(struct perfdata_writer *w)
{
	uint64_t hdr[FILE_HEADER_SIZE / 8];
	uint64_t data_size;
	int e;

	e = start_data(w);
	data_size = w->pos - w->data_off;
	memset(hdr, 0, sizeof hdr);
	if (!e)
		e = write_features(w, &hdr[9]);
	if (!e) {
		hdr[0] = 0x32454c4946524550ULL;           /* "PERFILE2" */
		hdr[1] = FILE_HEADER_SIZE;
		hdr[2] = sizeof(struct perf_event_attr) + 16;
		hdr[3] = w->attr_off;
		hdr[4] = (uint64_t)w->nr_ev * (sizeof(struct perf_event_attr) + 16);
		hdr[5] = w->data_off;
		hdr[6] = data_size;
		hdr[7] = hdr[8] = 0;                       /* event_types: unused */
		if (pwrite(w->fd, hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr)
			e = -EIO;
	}
	if (close(w->fd) < 0 && !e)
		e = -errno;
	free_writer(w);
	return e;
}

void perfdata_writer__abort(struct perfdata_writer *w)
{
	if (!w)
		return;
	close(w->fd);
	free_writer(w);
}
