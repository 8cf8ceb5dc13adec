/*
 * perf.data, both directions.  Plain C, no Lua.
 *
 * Reading (perfdata_read.c): file mode ("PERFILE2" header, attrs + ids,
 * event-types, data section, feature sections after the data) and pipe mode
 * (a 16-byte header, then attrs/features as user-space records in the
 * stream).  Records come out one at a time, time-ordered across CPUs the
 * way perf's ordered events do it (flushed by FINISHED_ROUND, memory
 * bounded), with COMPRESSED records expanded through libzstd.  Every size
 * read from the file is checked before use; errors name the file offset.
 *
 *   struct perfdata *pd;
 *   char err[256];
 *   if (perfdata__open("perf.data", &pd, err, sizeof err) < 0) ...
 *   struct perfdata_rec r;
 *   while ((n = perfdata__next(pd, &r)) > 0) { ... r.hdr, r.size, r.offset ... }
 *   if (n < 0) puts(perfdata__errmsg(pd));
 *   perfdata__close(pd);
 *
 * Writing (perfdata_write.c): a file-mode perf.data that perf 6.1 reads:
 * the events with their ids first, then the records as the kernel wrote
 * them, then the feature sections and the final header at close.
 */
#ifndef LUAPERF_PERFDATA_H
#define LUAPERF_PERFDATA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include "record/record.h"

/* Feature ids (the adds_features bits of the file header). */
enum {
	PERFDATA_FEAT_TRACING_DATA = 1,
	PERFDATA_FEAT_BUILD_ID = 2,
	PERFDATA_FEAT_HOSTNAME = 3,
	PERFDATA_FEAT_OSRELEASE = 4,
	PERFDATA_FEAT_VERSION = 5,
	PERFDATA_FEAT_ARCH = 6,
	PERFDATA_FEAT_NRCPUS = 7,
	PERFDATA_FEAT_CPUDESC = 8,
	PERFDATA_FEAT_CPUID = 9,
	PERFDATA_FEAT_TOTAL_MEM = 10,
	PERFDATA_FEAT_CMDLINE = 11,
	PERFDATA_FEAT_EVENT_DESC = 12,
	PERFDATA_FEAT_CPU_TOPOLOGY = 13,
	PERFDATA_FEAT_NUMA_TOPOLOGY = 14,
	PERFDATA_FEAT_BRANCH_STACK = 15,
	PERFDATA_FEAT_PMU_MAPPINGS = 16,
	PERFDATA_FEAT_GROUP_DESC = 17,
	PERFDATA_FEAT_AUXTRACE = 18,
	PERFDATA_FEAT_STAT = 19,
	PERFDATA_FEAT_CACHE = 20,
	PERFDATA_FEAT_SAMPLE_TIME = 21,
	PERFDATA_FEAT_MEM_TOPOLOGY = 22,
	PERFDATA_FEAT_CLOCKID = 23,
	PERFDATA_FEAT_DIR_FORMAT = 24,
	PERFDATA_FEAT_BPF_PROG_INFO = 25,
	PERFDATA_FEAT_BPF_BTF = 26,
	PERFDATA_FEAT_COMPRESSED = 27,
	PERFDATA_FEAT_CPU_PMU_CAPS = 28,
	PERFDATA_FEAT_CLOCK_DATA = 29,
	PERFDATA_FEAT_HYBRID_TOPOLOGY = 30,
	PERFDATA_FEAT_PMU_CAPS = 31,
	PERFDATA_FEAT_BITS = 256,
};

/* "hostname", "build_id", ...; NULL for ids perf does not define. */
const char *perfdata__feature_name(int feat);

/* perf's name for an event from its attr alone (evsel__name when the file
 * names none: "cycles:ppH"), NUL-terminated in buf (perfdata_evname.c). */
void perfdata__attr_name(const struct perf_event_attr *a, char *buf, size_t n);

/* ---------------------------------------------------------------- reading */

struct perfdata;

struct perfdata_build_id {
	int32_t pid;
	uint16_t cpumode;             /* header.misc & PERF_RECORD_MISC_CPUMODE_MASK */
	uint8_t size;                 /* bytes of id used (20 for sha1) */
	uint8_t id[20];
	const char *filename;
};

struct perfdata_numa_node {
	uint32_t node;
	uint64_t mem_total, mem_free;   /* kB */
	const char *cpus;               /* "0-3" */
};

struct perfdata_group {               /* an event group (group_desc) */
	const char *name;               /* "{anon_group}" when it has none */
	uint32_t leader;                /* the leader's index among the events */
	uint32_t nr_members;            /* the leader's included */
};

struct perfdata_event_desc {          /* one event of event_desc */
	struct perf_event_attr attr;    /* as written, zero past attr_size */
	uint32_t attr_size;             /* the file's attr size */
	const char *name;
	uint32_t nr_ids;
	const uint64_t *ids;
};

struct perfdata_pmu {                 /* pmu_mappings: a PMU's type */
	uint32_t type;
	const char *name;
};

struct perfdata_pmu_caps {            /* cpu_pmu_caps, pmu_caps */
	const char *pmu;                /* NULL for cpu_pmu_caps */
	unsigned nr_caps;
	const char **caps;              /* "name=value" */
};

struct perfdata_bpf_prog {            /* bpf_prog_info: a JITed program */
	uint32_t id, btf_id;
	char name[16];                  /* the kernel's short name */
	uint32_t nr_subs;               /* its functions (0: perf prints none) */
	const uint8_t *tags;            /* 8 bytes a function */
	const uint64_t *addrs;
	const uint32_t *lens;
	const uint32_t *func_types;     /* each function's BTF type; NULL: none */
};

struct perfdata_btf {                 /* bpf_btf: a BTF object */
	uint32_t id, size;
	const uint8_t *data;
};

struct perfdata_skipped {             /* a feature present but not decoded */
	int id;
	uint64_t offset, size;
};

/* What the header and feature sections say; strings are NULL when absent. */
struct perfdata_info {
	int pipe;                       /* pipe-mode stream */
	uint64_t file_size;
	uint64_t data_offset, data_size;
	uint64_t attr_size;             /* bytes per perf_file_attr (file mode) */
	uint64_t features[PERFDATA_FEAT_BITS / 64];   /* bits present */

	const char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
	uint32_t nr_cpus_avail, nr_cpus_online;
	uint64_t total_mem;             /* kB */
	unsigned nr_cmdline;
	const char **cmdline;
	unsigned nr_build_ids;
	struct perfdata_build_id *build_ids;
	/* cpu_topology */
	unsigned nr_core_siblings, nr_thread_siblings, nr_die_siblings;
	const char **core_siblings, **thread_siblings, **die_siblings;
	unsigned nr_cpu_topo;           /* entries in the arrays below */
	uint32_t *core_id, *socket_id, *die_id;   /* die_id NULL when absent */
	/* numa_topology */
	unsigned nr_numa_nodes;
	struct perfdata_numa_node *numa_nodes;
	uint64_t clockid_res_ns;
	unsigned nr_groups;
	struct perfdata_group *groups;
	unsigned nr_event_desc;
	struct perfdata_event_desc *event_desc;
	unsigned nr_pmus;
	struct perfdata_pmu *pmus;
	struct perfdata_pmu_caps cpu_pmu_caps;
	unsigned nr_pmu_caps;
	struct perfdata_pmu_caps *pmu_caps;
	uint64_t dir_format;            /* the directory data version */
	unsigned nr_bpf_progs, nr_btfs;
	struct perfdata_bpf_prog *bpf_progs;
	struct perfdata_btf *btfs;
	struct { uint32_t version, type, level, ratio, mmap_len; } compressed;
	struct { uint32_t version, clockid; uint64_t wall_clock_ns, clockid_time_ns; } clock_data;
	struct { uint64_t first, last; } sample_time;
	/* tracing data (file section or pipe record), for tracefmt */
	const void *tracing_data;
	uint64_t tracing_data_size;
	unsigned nr_skipped;
	struct perfdata_skipped *skipped;
	/* What was read around rather than refused: a malformed or misplaced
	 * feature section (skipped), a data section cut short (read up to
	 * the cut).  One line each, naming the offset; at most
	 * PERFDATA_MAX_WARNINGS, oldest first.  Records cut at the end add
	 * theirs while the data is read. */
	unsigned nr_warnings;
	const char *const *warnings;
};
#define PERFDATA_MAX_WARNINGS 32

/* One record as delivered: contiguous, valid until the next call. */
struct perfdata_rec {
	const struct perf_event_header *hdr;
	size_t size;                    /* == hdr->size, or more (TRACING_DATA payload) */
	uint64_t offset;                /* file offset of the record, or of the
	                                   COMPRESSED record it came out of */
	uint64_t time;                  /* the time it was ordered by; 0 when it
	                                   has none, and in file order (unordered:
	                                   record__decode gives a record's time) */
	int compressed;                 /* came out of a COMPRESSED record */
};

struct perfdata_opts {
	int unordered;                  /* deliver in file order (no sorting) */
	size_t max_queue;               /* bytes the ordering queue may hold
	                                   (0: 64 MiB); past it, half is flushed */
};

/*
 * Opens path ("-" or a FIFO reads the stream into memory first).  Returns 0
 * or -errno with a message in err naming the offset and what was expected.
 */
int perfdata__open(const char *path, const struct perfdata_opts *opts,
		   struct perfdata **out, char *err, size_t errlen);
/*
 * The same over bytes in memory (the fuzz entry point).  buf must stay
 * valid until perfdata__close; nothing is copied.
 */
int perfdata__read_buffer(const void *buf, size_t len, const struct perfdata_opts *opts,
			  struct perfdata **out, char *err, size_t errlen);
void perfdata__close(struct perfdata *pd);

const struct perfdata_info *perfdata__info(const struct perfdata *pd);
/*
 * perf report --header-only's text for pd (perf 6.1's lines), "captured
 * on" the time given (the file's mtime, as perf takes it), in a malloc'ed
 * buffer: 0, or -errno (perfdata_header.c).
 */
int perfdata__header_text(const struct perfdata *pd, int64_t captured, char **out, size_t *len);
/* The events, their names (event_desc or EVENT_UPDATE) and ids. */
const struct evtab *perfdata__evtab(const struct perfdata *pd);

/*
 * 1 with *r filled, 0 at the end, -errno on bad input (see errmsg).  A
 * record cut by the end of the input (a recorder killed mid-write, a file
 * truncated) ends the data with a warning (perfdata_info.warnings), not an
 * error; a record header that cannot be (size below 8) is an error.
 */
int perfdata__next(struct perfdata *pd, struct perfdata_rec *r);
/* Back to the first record of the data. */
int perfdata__rewind(struct perfdata *pd);
/* 1 when records come in file order (perfdata_opts.unordered), else 0. */
int perfdata__unordered(const struct perfdata *pd);
/* Bytes of the data read so far, of *total (a progress bar's figures). */
uint64_t perfdata__progress(const struct perfdata *pd, uint64_t *total);
/*
 * Back to the first record, as perfdata__rewind, with records from then on
 * in file order (unordered = 1) or time-ordered (0): a pass that needs the
 * maps before the samples over a file opened unordered.
 */
int perfdata__rewind_order(struct perfdata *pd, int unordered);
const char *perfdata__errmsg(const struct perfdata *pd);

/* Counters over what was read so far. */
struct perfdata_stats {
	uint64_t records, bytes, compressed_records, decompressed_bytes;
	uint64_t unordered;             /* older than a record already delivered (perf's
	                                   "out of order events") */
	uint64_t forced_flushes;        /* queue bound reached */
};
const struct perfdata_stats *perfdata__stats(const struct perfdata *pd);

/* ---------------------------------------------------------------- writing */

struct perfdata_writer;

/* Creates path (truncating it).  Returns 0 or -errno. */
int perfdata_writer__open(const char *path, struct perfdata_writer **out);
/*
 * Declares an event and the sample ids the kernel gave its fds.  All events
 * are declared before the first record is written.  Returns 0 or -errno.
 */
int perfdata_writer__add_event(struct perfdata_writer *w, const struct perf_event_attr *attr,
			       const char *name, const uint64_t *ids, size_t nr_ids);
/* Appends one record exactly as the kernel wrote it (len == header.size). */
int perfdata_writer__write(struct perfdata_writer *w, const void *rec, size_t len);
/* Appends FINISHED_ROUND: every ring was drained once since the last one. */
int perfdata_writer__finished_round(struct perfdata_writer *w);
/*
 * Synthesizes what the kernel will not report for tasks that exist already:
 * the kernel map (once per file), then COMM for every thread of pid and
 * MMAP2 for its executable mappings, from /proc/PID/{comm,task,maps}.
 * pid -1 does every process.  Returns 0 or -errno (a vanished pid is not
 * an error).
 */
int perfdata_writer__synthesize(struct perfdata_writer *w, pid_t pid);
int perfdata_writer__synthesize_kernel(struct perfdata_writer *w);
/* Sets the cmdline feature: the recording command's argv, program first
 * (unset: this process's executable alone). */
int perfdata_writer__set_cmdline(struct perfdata_writer *w, int argc, const char *const *argv);

struct perfdata_writer_stats {
	uint64_t records, bytes, samples, lost, lost_samples, throttled;
};
const struct perfdata_writer_stats *perfdata_writer__stats(const struct perfdata_writer *w);

/*
 * Writes the feature sections (build ids of the mapped files, hostname,
 * osrelease, version, arch, nrcpus, cpudesc, total_mem, cmdline,
 * event_desc) and the header, then closes the file.  Returns 0 or -errno;
 * w is freed either way.
 */
int perfdata_writer__close(struct perfdata_writer *w);
/* Frees w without finishing the file (after an error). */
void perfdata_writer__abort(struct perfdata_writer *w);

#endif
