/*
 * Fuzz target: perf script's listing in C (perfdata__script_text) over
 * bytes read as a perf.data, with every field and call chains, then with
 * the filters and DWARF unwinding on too, text discarded.  The symbolizer
 * reads objects under a symfs that does not exist, so hostile map paths
 * open nothing of the host's, and kernel symbols from a small kallsyms
 * file (the machine's would be read again for every input).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "perfdata/perfdata.h"
#include "perfdata/script_text.h"
#include "symbol/symbolizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A kallsyms of a few symbols, written once; NULL: none. */
static const char *small_kallsyms(void)
{
	static char path[] = "/tmp/fuzz-kallsyms-XXXXXX";
	static int done;
	static const char text[] =
		"ffffffff81000000 T _text\n"
		"ffffffff81000100 T _stext\n"
		"ffffffff81001000 T do_syscall_64\n"
		"ffffffff81002000 t helper\n"
		"ffffffffc0000000 t mod_fn\t[mod]\n";
	int fd;

	if (!done) {
		done = 1;
		if ((fd = mkstemp(path)) < 0)
			return NULL;
		if (write(fd, text, sizeof text - 1) != (ssize_t)(sizeof text - 1))
			path[0] = '\0';
		close(fd);
	}
	return path[0] ? path : NULL;
}

static int discard(void *arg, const void *buf, size_t len)
{
	(void)arg;
	(void)buf;
	(void)len;
	return 0;
}

static void listing(const uint8_t *data, size_t size, int filters)
{
	static const uint8_t cpus[] = { 1, 0, 1 };
	static const int32_t ids[] = { 0, 1, -1 };
	static const char *const comms[] = { "swapper", ":1" };
	struct perfdata_opts opts = { .max_queue = 1 << 16 };
	struct script_text_opts o = { .callchain = 1, .write = discard };
	struct symbolizer *sym;
	struct perfdata *pd;
	char err[512];
	int i;

	for (i = 0; i < SCRIPT_NTYPES; i++)
		o.fields[i] = SCRIPT_F_ALL;
	if (filters) {
		o.fields[1] &= ~(unsigned)SCRIPT_F_COMM;
		o.ns = 1;
		o.unwind = o.inlines = 1;
		o.max_stack = 3;
		o.window.has_start = o.window.has_stop = 1;
		o.window.start = 1;
		o.window.stop = UINT64_MAX / 2;
		o.window.cpus = cpus;
		o.window.nr_cpus = sizeof cpus;
		o.pids = o.tids = ids;
		o.nr_pids = o.nr_tids = 3;
		o.comms = comms;
		o.nr_comms = 2;
	}
	if (perfdata__read_buffer(data, size, &opts, &pd, err, sizeof err) != 0)
		return;
	if ((sym = symbolizer__new()) != NULL) {
		symbolizer__set_offline(sym, 1);
		symbolizer__set_recorded(sym);
		symbolizer__set_symfs(sym, "/nonexistent-fuzz-symfs");
		if (small_kallsyms())
			symbolizer__load_kallsyms(sym, small_kallsyms());
		perfdata__script_text(pd, sym, &o, NULL, err, sizeof err);
		symbolizer__delete(sym);
	}
	perfdata__close(pd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	listing(data, size, 0);
	listing(data, size, 1);
	return 0;
}
