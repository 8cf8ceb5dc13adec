/*
 * Explanations for perf_event_open(2) and ring mmap failures (errmsg.h).
 * Each message says what was refused and what to do.  For EINVAL the
 * machine is asked: the open is retried (disabled, alone) with one
 * suspicious field cleared at a time, and the field whose clearing makes
 * it succeed is named.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "event/errmsg.h"
#include "base/perf_sys.h"
#include "event/pmu.h"

static void add(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Appends to buf, truncating quietly. */
static void add(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(buf, len);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

static int is_hw_type(__u32 type)
{
	/* PMU types from sysfs (cpu, uncore, ...) are >= PERF_TYPE_MAX. */
	return type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE ||
	       type == PERF_TYPE_RAW || type >= PERF_TYPE_MAX;
}

/* Opens attr alone and disabled; 0 when the kernel accepts it. */
static int try_open(const struct perf_event_attr *attr, pid_t pid, int cpu)
{
	struct perf_event_attr a = *attr;
	int fd;

	a.disabled = 1;
	a.enable_on_exec = 0;
	fd = perf_sys__open(&a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

static long long max_precise(void)
{
	long long v;

	if (perf_sys__read_int("/sys/bus/event_source/devices/cpu/caps/max_precise", &v) < 0)
		return -1;
	return v;
}

static int owned_by_other(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof path, "/proc/%d", (int)pid);
	return stat(path, &st) == 0 && st.st_uid != geteuid();
}

/* "uprobe" or "kprobe" when attr is of a probe PMU (event/probe.h), else NULL. */
static const char *probe_pmu(const struct perf_event_attr *attr)
{
	char name[PMU_NAME_MAX];

	if (attr->type < PERF_TYPE_MAX || pmu__name_of(attr->type, name, sizeof name) < 0)
		return NULL;
	return !strcmp(name, "uprobe") ? "uprobe" : !strcmp(name, "kprobe") ? "kprobe" : NULL;
}

static void explain_access(char *buf, size_t len, const struct perf_event_attr *attr,
			   pid_t pid, int cpu)
{
	int p = perf_sys__paranoid();
	const char *fix = "CAP_PERFMON (or root)";
	const char *probe = probe_pmu(attr);

	if (geteuid() == 0) {
		add(buf, len, "refused even for root: a seccomp filter, an LSM policy or a "
			      "container without CAP_PERFMON blocks perf_event_open");
		return;
	}
	if (probe != NULL) {
		/* perf_uprobe_event_init and perf_kprobe_event_init check
		 * CAP_SYS_ADMIN; CAP_PERFMON alone is refused (measured). */
		add(buf, len, "%ss need CAP_SYS_ADMIN (or root): the kernel's %s PMU checks "
			      "it whatever kernel.perf_event_paranoid (%d) says, even on your own "
			      "process, and CAP_PERFMON is not enough; run as root or give the "
			      "interpreter CAP_SYS_ADMIN", probe, probe, p);
		return;
	}
	if (pid > 0 && owned_by_other(pid)) {
		add(buf, len, "pid %d belongs to another user: counting it needs ptrace "
			      "rights over it or %s", (int)pid, fix);
		return;
	}
	if (p >= 3) {
		add(buf, len, "perf_event_paranoid is %d: all perf events need %s or "
			      "kernel.perf_event_paranoid<=2", p, fix);
		return;
	}
	if (pid == -1 && p >= 1) {
		add(buf, len, "perf_event_paranoid is %d: CPU-wide counting (pid -1%s) needs "
			      "%s or kernel.perf_event_paranoid<=0; count a process "
			      "(pid or a command) instead", p, cpu >= 0 ? ", one CPU" : "", fix);
		return;
	}
	if (attr->type == PERF_TYPE_TRACEPOINT && p >= 0 &&
	    (attr->sample_type & PERF_SAMPLE_RAW)) {
		add(buf, len, "perf_event_paranoid is %d: raw tracepoint data needs %s or "
			      "kernel.perf_event_paranoid<=-1", p, fix);
		return;
	}
	if (p >= 2 && (!attr->exclude_kernel || !attr->exclude_hv)) {
		add(buf, len, "perf_event_paranoid is %d: kernel profiling needs %s or "
			      "kernel.perf_event_paranoid<=1; add :u to count user space only",
		    p, fix);
		return;
	}
	add(buf, len, "perf_event_paranoid is %d; this event may need %s or a lower "
		      "kernel.perf_event_paranoid (a seccomp filter may also block it)", p, fix);
}

/* A field that, cleared, may make the kernel accept the attr. */
struct probe {
	const char *what;
	int (*set)(const struct perf_event_attr *a);
	void (*clear)(struct perf_event_attr *a);
};

#define BITPROBE(field)                                                       \
	static int set_##field(const struct perf_event_attr *a) { return a->field != 0; } \
	static void clear_##field(struct perf_event_attr *a) { a->field = 0; }
BITPROBE(exclude_user)
BITPROBE(exclude_kernel)
BITPROBE(exclude_hv)
BITPROBE(exclude_idle)
BITPROBE(exclude_host)
BITPROBE(exclude_guest)
BITPROBE(exclude_callchain_user)
BITPROBE(exclude_callchain_kernel)
BITPROBE(pinned)
BITPROBE(exclusive)
BITPROBE(inherit)
BITPROBE(precise_ip)
BITPROBE(branch_sample_type)
BITPROBE(sample_regs_user)
BITPROBE(sample_stack_user)
BITPROBE(aux_watermark)
BITPROBE(sigtrap)
BITPROBE(remove_on_exec)
BITPROBE(inherit_thread)
BITPROBE(config1)
BITPROBE(config2)

static const struct probe probes[] = {
	{ "precise_ip (the :p modifiers)", set_precise_ip, clear_precise_ip },
	{ "exclude_user (:k)", set_exclude_user, clear_exclude_user },
	{ "exclude_kernel (:u)", set_exclude_kernel, clear_exclude_kernel },
	{ "exclude_hv (:u/:k)", set_exclude_hv, clear_exclude_hv },
	{ "exclude_idle", set_exclude_idle, clear_exclude_idle },
	{ "exclude_host (:G)", set_exclude_host, clear_exclude_host },
	{ "exclude_guest (:H)", set_exclude_guest, clear_exclude_guest },
	{ "exclude_callchain_user", set_exclude_callchain_user, clear_exclude_callchain_user },
	{ "exclude_callchain_kernel", set_exclude_callchain_kernel, clear_exclude_callchain_kernel },
	{ "pinned", set_pinned, clear_pinned },
	{ "exclusive", set_exclusive, clear_exclusive },
	{ "inherit", set_inherit, clear_inherit },
	{ "inherit_thread", set_inherit_thread, clear_inherit_thread },
	{ "remove_on_exec", set_remove_on_exec, clear_remove_on_exec },
	{ "sigtrap", set_sigtrap, clear_sigtrap },
	{ "branch_sample_type (branch stack)", set_branch_sample_type, clear_branch_sample_type },
	{ "sample_regs_user", set_sample_regs_user, clear_sample_regs_user },
	{ "sample_stack_user (dwarf stack size)", set_sample_stack_user, clear_sample_stack_user },
	{ "aux_watermark", set_aux_watermark, clear_aux_watermark },
	{ "config1", set_config1, clear_config1 },
	{ "config2", set_config2, clear_config2 },
};

static void explain_invalid(char *buf, size_t len, const struct perf_event_attr *attr,
			    pid_t pid, int cpu)
{
	long long rate = perf_sys__sysctl("perf_event_max_sample_rate", -1);
	long long stack = perf_sys__sysctl("perf_event_max_stack", -1);
	long long mp = max_precise();
	struct perf_event_attr a;
	size_t i;

	/* Known limits first: they need no probing. */
	if (attr->freq && rate >= 0 && attr->sample_freq > (unsigned long long)rate) {
		add(buf, len, "sample_freq %llu is above kernel.perf_event_max_sample_rate %lld: "
			      "use -F %lld or less, or raise the sysctl",
		    (unsigned long long)attr->sample_freq, rate, rate);
		return;
	}
	if (attr->precise_ip > 0 && is_hw_type(attr->type) && mp >= 0 &&
	    (long long)attr->precise_ip > mp) {
		add(buf, len, "precise_ip %u is above this PMU's caps/max_precise %lld: "
			      "drop the :p modifiers (or use fewer p's)",
		    (unsigned)attr->precise_ip, mp);
		return;
	}
	if ((attr->sample_type & PERF_SAMPLE_CALLCHAIN) && stack >= 0 &&
	    attr->sample_max_stack > stack) {
		add(buf, len, "sample_max_stack %u is above kernel.perf_event_max_stack %lld",
		    (unsigned)attr->sample_max_stack, stack);
		return;
	}
	if (cpu >= 0) {
		char path[96];
		struct stat st;
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d", cpu);
		if (stat(path, &st) != 0) {
			add(buf, len, "cpu %d does not exist on this machine "
				      "(see /sys/devices/system/cpu/online)", cpu);
			return;
		}
	}
	if (attr->type == PERF_TYPE_BREAKPOINT) {
		add(buf, len, "the breakpoint is refused: its length must be 1, 2, 4 or 8 "
			      "(8 on 64-bit only), the address aligned to it, and an "
			      "execute breakpoint has the length of a long");
		return;
	}
	if (pid == -1 && cpu == -1) {
		add(buf, len, "pid -1 needs a cpu: count a process, or give cpu= a number or \"all\"");
		return;
	}
	/* Accepted alone: the group or the caller's combination was refused. */
	if (try_open(attr, pid, cpu) == 0) {
		add(buf, len, "the event opens alone but not with the others: group members "
			      "must be on one PMU (or software events) and fit the counters together");
		return;
	}
	for (i = 0; i < sizeof probes / sizeof probes[0]; i++) {
		if (!probes[i].set(attr))
			continue;
		a = *attr;
		probes[i].clear(&a);
		if (try_open(&a, pid, cpu) == 0) {
			add(buf, len, "this PMU refuses %s: remove it", probes[i].what);
			return;
		}
	}
	if (attr->sample_period != 0 || attr->freq) {
		a = *attr;
		a.freq = 0;
		a.sample_period = 0;
		if (try_open(&a, pid, cpu) == 0) {
			add(buf, len, "this event cannot sample (no overflow interrupt): count it "
				      "instead, or pick another event to sample");
			return;
		}
	}
	add(buf, len, "the kernel rejects the attr (type %u, config 0x%llx): check the "
		      "event's terms against its PMU's format", (unsigned)attr->type,
	    (unsigned long long)attr->config);
}

const char *errmsg__open(char *buf, size_t len, int err, const char *name,
			 const struct perf_event_attr *attr, pid_t pid, int cpu)
{
	if (len == 0)
		return buf;
	buf[0] = '\0';
	if (name == NULL)
		name = "event";
	add(buf, len, "cannot open '%s'", name);
	if (pid > 0)
		add(buf, len, " on pid %d", (int)pid);
	if (cpu >= 0)
		add(buf, len, " on cpu %d", cpu);
	add(buf, len, " (%s): ", strerror(err));

	switch (err) {
	case EACCES:
	case EPERM:
		explain_access(buf, len, attr, pid, cpu);
		break;
	case ENOENT:
	case EOPNOTSUPP:
		if (attr->type == PERF_TYPE_TRACEPOINT)
			add(buf, len, "no such tracepoint id %llu (is tracefs mounted at "
				      "/sys/kernel/tracing?)", (unsigned long long)attr->config);
		else if (is_hw_type(attr->type))
			add(buf, len, "this machine's PMU has no such event (virtual machines "
				      "often have no hardware counters at all); use software events "
				      "such as task-clock, page-faults or context-switches");
		else if (err == EOPNOTSUPP && (attr->sample_period != 0 || attr->freq))
			add(buf, len, "this event cannot sample; count it instead");
		else
			add(buf, len, "the kernel does not support this event (type %u, config "
				      "0x%llx)", (unsigned)attr->type,
			    (unsigned long long)attr->config);
		break;
	case EINVAL:
		if (probe_pmu(attr) != NULL && attr->config2 != 0)
			add(buf, len, "the kernel refused the %s at file offset 0x%llx: an "
				      "offset must be at an instruction boundary inside the function "
				      "(FUNC+OFF)", probe_pmu(attr),
			    (unsigned long long)attr->config2);
		else
			explain_invalid(buf, len, attr, pid, cpu);
		break;
	case EMFILE:
		add(buf, len, "the process ran out of file descriptors (one per event per "
			      "CPU): raise the limit with `ulimit -n`, or count fewer events "
			      "or CPUs");
		break;
	case ENFILE:
		add(buf, len, "the system file table is full (fs.file-max)");
		break;
	case ESRCH:
		add(buf, len, "process %d exited or never existed", (int)pid);
		break;
	case E2BIG:
		add(buf, len, "this kernel does not know attr size %u or a field set in it: "
			      "it is older than the feature asked for", (unsigned)attr->size);
		break;
	case ENODEV:
		if (cpu >= 0)
			add(buf, len, "cpu %d is offline or does not exist, or the PMU lacks "
				      "the feature asked for", cpu);
		else
			add(buf, len, "the PMU lacks the feature asked for (branch stack, "
				      "precise sampling...)");
		break;
	case EBUSY:
		add(buf, len, "the PMU is in exclusive use by another event (pinned or "
			      "exclusive, or another profiler)");
		break;
	case ENOSPC:
		add(buf, len, "no free hardware breakpoint slots: use fewer mem: events");
		break;
	case EOVERFLOW:
		add(buf, len, "sample_max_stack %u is above kernel.perf_event_max_stack %lld",
		    (unsigned)attr->sample_max_stack,
		    perf_sys__sysctl("perf_event_max_stack", -1));
		break;
	case EINTR:
		add(buf, len, "interrupted: retry");
		break;
	default:
		add(buf, len, "perf_event_open failed");
		break;
	}
	return buf;
}

const char *errmsg__mmap(char *buf, size_t len, int err, size_t pages)
{
	long long mlock_kb = perf_sys__sysctl("perf_event_mlock_kb", -1);
	long page_kb = sysconf(_SC_PAGESIZE) / 1024;
	unsigned long long kb = (unsigned long long)(pages + 1) * (unsigned long long)page_kb;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	add(buf, len, "cannot mmap a ring of %zu data pages (%llu kB): %s: ", pages, kb,
	    strerror(err));
	switch (err) {
	case ENOMEM:
	case EPERM:
		add(buf, len, "above the locked-memory budget: kernel.perf_event_mlock_kb is "
			      "%lld kB per CPU (shared by this user's rings) plus RLIMIT_MEMLOCK; "
			      "use fewer pages (-m), stop other profilers, raise the sysctl, or "
			      "get CAP_IPC_LOCK", mlock_kb);
		break;
	case EINVAL:
		add(buf, len, "the data pages must be a power of two (%zu is not%s)", pages,
		    pages == 0 ? ", and not 0" : "");
		break;
	default:
		add(buf, len, "mmap of the perf ring failed");
		break;
	}
	return buf;
}
