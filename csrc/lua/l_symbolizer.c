/*
 * perf.symbolizer{...}: a symbolizer userdata over csrc/core/symbol/symbolizer.h.
 *
 *   local sym = perf.symbolizer{ perfmap_dir = "/tmp", kallsyms = FILE | vmlinux = FILE,
 *                                symfs = DIR, offline = bool }
 *       kallsyms, vmlinux: the kernel's symbols whatever a recording says
 *       (perf's --kallsyms, --vmlinux); symfs: perf's --symfs (objects read
 *       as DIR/PATH); offline: the addresses are a recording's, nothing is
 *       read from /proc/PID/
 *   sym:feed(rec | {rec, ...} | source)   -- source: anything with :records();
 *                                         -- a file's features().build_ids too
 *                                         -- (and a file makes sym offline)
 *   sym:recording(f)                      -- f's build-id table (kernel too),
 *                                         -- offline, kernel addresses as perf
 *                                         -- reads a recording's
 *   sym:build_id(path, hex)               -- the build id a recording saw for path
 *   sym:load(pid)                         -- /proc/PID/maps
 *   sym:resolve(pid, addr[, {lines=, inlines=, kernel=}]) -> t | nil, reason
 *       kernel: true for a kernel address (cpumode, call chain marks), false
 *       for a user one; absent: told by the address (the upper half)
 *       t = { name=, mangled= (when it differs), offset=, start=, size=, dso=,
 *             dso_addr=, kind = "user"|"kernel"|"jit"|"vdso", build_id=,
 *             file=, line= (lines: addr's own line), inlined = { {name=,
 *             file=, line=}, ... } (inlines: the functions inlined at addr,
 *             innermost first), call_file=, call_line= (where the symbol's
 *             function calls the outermost inlined one) }
 *   sym:resolve_all(pid, {addr, ...}[, opts])    -> {t | false, ...}
 *   sym:map(pid, addr) -> {path=, start=, ["end"]=, pgoff=, build_id=} | nil, reason
 *   sym:map(pid, addr, {kernel = true}) -> {path = "[kernel.kallsyms]" | module,
 *       kernel = true} | nil, reason: the kernel map that holds addr
 *   sym:warning() -> the next warning (kptr_restrict; an object left
 *                    unsymbolized, and why), each once, or nil
 *   sym:close()
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "binding.h"
#include "base/hex.h"
#include "symbol/symbolizer.h"

#define SYMBOLIZER_MT "perf.symbolizer"

struct lsym {
	struct symbolizer *s;         /* NULL = closed */
};

static struct lsym *check_open(lua_State *L)
{
	struct lsym *u = luaL_checkudata(L, 1, SYMBOLIZER_MT);

	if (u->s == NULL)
		luaL_error(L, "attempt to use a closed symbolizer");
	return u;
}

static int sym_close(lua_State *L)
{
	struct lsym *u = luaL_checkudata(L, 1, SYMBOLIZER_MT);

	symbolizer__delete(u->s);
	u->s = NULL;
	return 0;
}

static int sym_new(lua_State *L)
{
	struct lsym *u;
	const char *pmdir = NULL, *kallsyms = NULL, *vmlinux = NULL, *symfs = NULL;
	int offline = 0;

	if (!lua_isnoneornil(L, 1)) {
		luaL_checktype(L, 1, LUA_TTABLE);
		pmdir = lperf_optfield_str(L, 1, "perfmap_dir", NULL);
		kallsyms = lperf_optfield_str(L, 1, "kallsyms", NULL);
		vmlinux = lperf_optfield_str(L, 1, "vmlinux", NULL);
		symfs = lperf_optfield_str(L, 1, "symfs", NULL);
		offline = lperf_optfield_bool(L, 1, "offline", 0);
	}
	u = lua_newuserdatauv(L, sizeof(*u), 0);
	u->s = NULL;
	luaL_setmetatable(L, SYMBOLIZER_MT);
	u->s = symbolizer__new();
	if (u->s == NULL)
		return lperf_fail(L, "cannot create a symbolizer: out of memory", ENOMEM);
	if (pmdir != NULL)
		symbolizer__set_perfmap_dir(u->s, pmdir);
	symbolizer__set_offline(u->s, offline);
	if (symfs != NULL && symbolizer__set_symfs(u->s, symfs) < 0) {
		symbolizer__delete(u->s);
		u->s = NULL;
		return lperf_fail(L, "symfs: the directory name is too long", ENAMETOOLONG);
	}
	if (kallsyms != NULL || vmlinux != NULL) {
		const char *path = kallsyms != NULL ? kallsyms : vmlinux;
		int rc = kallsyms != NULL ? symbolizer__load_kallsyms(u->s, kallsyms) :
			 symbolizer__load_vmlinux(u->s, vmlinux);
		if (rc < 0) {
			/* The userdata owns it: closing here only saves waiting for the GC. */
			symbolizer__delete(u->s);
			u->s = NULL;
			lua_pushfstring(L, "cannot read %s: %s", path, strerror(-rc));
			return lperf_fail(L, lua_tostring(L, -1), -rc);
		}
	}
	return 1;
}

/* A hex build id ("" or absent: none) into bid; returns its size. */
static size_t field_build_id(lua_State *L, int t, uint8_t bid[20])
{
	const char *h = lperf_optfield_str(L, t, "build_id", NULL);
	size_t n = 0;

	if (h == NULL)
		return 0;
	while (n < 20 && hex_digit((unsigned char)h[2 * n]) >= 0 &&
	       hex_digit((unsigned char)h[2 * n + 1]) >= 0) {
		bid[n] = (uint8_t)(hex_digit((unsigned char)h[2 * n]) << 4 |
				   hex_digit((unsigned char)h[2 * n + 1]));
		n++;
	}
	return n;
}

static uint64_t field_u64(lua_State *L, int t, const char *k)
{
	uint64_t v;

	lua_getfield(L, t, k);
	if (lua_isnil(L, -1))
		luaL_error(L, "record field '%s' is missing", k);
	v = lperf_checku64(L, lua_gettop(L));
	lua_pop(L, 1);
	return v;
}

/* Feeds one record table (the shape l_record.c pushes); 1 when it was used. */
static int feed_table(lua_State *L, struct symbolizer *s, int t)
{
	const char *type;
	int rc = 0, used = 1;

	t = lua_absindex(L, t);
	lua_getfield(L, t, "type");
	type = lua_tostring(L, -1);
	lua_pop(L, 1);  /* the table keeps the string alive */
	if (type == NULL)
		luaL_error(L, "a record needs a string field 'type'");
	if (strcmp(type, "MMAP") == 0 || strcmp(type, "MMAP2") == 0) {
		int pid = lperf_optfield_int(L, t, "pid", -1);
		const char *cpumode = lperf_optfield_str(L, t, "cpumode", "user");
		const char *fn = lperf_optfield_str(L, t, "filename", "");
		uint64_t start, len, pgoff;
		uint8_t bid[20];
		size_t nbid;

		int kernel = strcmp(cpumode, "kernel") == 0;

		if (lperf_optfield_bool(L, t, "data", 0) || (pid == -1 && !kernel))
			return 0;
		start = field_u64(L, t, "start");
		len = field_u64(L, t, "len");
		pgoff = field_u64(L, t, "pgoff");
		nbid = field_build_id(L, t, bid);
		if (kernel)
			rc = symbolizer__feed_kernel_map(s, start, len, pgoff, fn);
		else
			rc = symbolizer__add_map(s, (uint32_t)pid, start, len, pgoff, fn,
						 nbid ? bid : NULL, nbid);
	} else if (strcmp(type, "FORK") == 0) {
		rc = symbolizer__fork(s, (uint32_t)lperf_optfield_int(L, t, "ppid", -1),
				      (uint32_t)lperf_optfield_int(L, t, "pid", -1));
	} else {
		used = 0;
	}
	if (rc < 0)
		luaL_error(L, "symbolizer: %s", strerror(-rc));
	return used;
}

/* One {filename=, build_id=, cpumode=} of a file's features().build_ids. */
static void feed_build_id(lua_State *L, struct lsym *u, int t)
{
	const char *fn = lperf_optfield_str(L, t, "filename", NULL);
	const char *mode = lperf_optfield_str(L, t, "cpumode", "user");
	uint8_t bid[20];
	size_t n = field_build_id(L, t, bid);
	int rc;

	if (fn == NULL || n == 0 || u->s == NULL)
		return;
	if (strcmp(mode, "kernel") == 0)
		rc = symbolizer__set_kernel_build_id(u->s, fn, bid, n);
	else
		rc = symbolizer__set_build_id(u->s, fn, bid, n);
	if (rc < 0)
		luaL_error(L, "symbolizer: %s", strerror(-rc));
}

/* sym:build_id(path, hex) */
static int sym_build_id(lua_State *L)
{
	struct lsym *u = check_open(L);
	const char *path = luaL_checkstring(L, 2);
	const char *hex = luaL_checkstring(L, 3);
	uint8_t bid[20];
	size_t n;
	int rc;

	lua_createtable(L, 0, 1);
	lua_pushvalue(L, 3);
	lua_setfield(L, -2, "build_id");
	n = field_build_id(L, lua_gettop(L), bid);
	if (n == 0 || strlen(hex) != 2 * n)
		luaL_argerror(L, 3, "expected a build id in hex (up to 40 digits)");
	rc = symbolizer__set_build_id(u->s, path, bid, n);
	if (rc < 0)
		luaL_error(L, "symbolizer: %s", strerror(-rc));
	return 0;
}

/* The build-id table of src (a perf.File: src:features().build_ids); a
 * file's pids are not this machine's: the symbolizer goes offline. */
static void feed_build_ids(lua_State *L, struct lsym *u, int src)
{
	int top = lua_gettop(L);

	lua_getfield(L, src, "features");
	if (lua_isfunction(L, -1)) {
		symbolizer__set_offline(u->s, 1);
		lua_pushvalue(L, src);
		lua_call(L, 1, 1);
		if (lua_type(L, -1) == LUA_TTABLE) {
			lua_getfield(L, -1, "build_ids");
			if (lua_type(L, -1) == LUA_TTABLE) {
				size_t i, n = lua_rawlen(L, -1);
				for (i = 1; i <= n; i++) {
					lua_rawgeti(L, -1, (int)i);
					if (lua_type(L, -1) == LUA_TTABLE)
						feed_build_id(L, u, lua_gettop(L));
					lua_pop(L, 1);
				}
			}
		}
	}
	lua_settop(L, top);
}

/* sym:recording(f): f's build-id table, and f's kernel addresses read as a
 * recording's (only inside its kernel maps, with its kernel's symbols). */
static int sym_recording(lua_State *L)
{
	struct lsym *u = check_open(L);

	if (lua_isnoneornil(L, 2))
		luaL_argerror(L, 2, "expected a perf.data file (perf.open)");
	symbolizer__set_recorded(u->s);
	feed_build_ids(L, u, 2);
	return 0;
}

/* sym:feed(rec | {rec, ...} | source with :records()) -> records used */
static int sym_feed(lua_State *L)
{
	struct lsym *u = check_open(L);
	lua_Integer used = 0;

	if (lua_type(L, 2) == LUA_TTABLE) {
		lua_getfield(L, 2, "type");
		if (!lua_isnil(L, -1)) {
			lua_pop(L, 1);
			lua_pushinteger(L, feed_table(L, u->s, 2));
			return 1;
		}
		lua_pop(L, 1);
		if (lua_rawlen(L, 2) > 0) {
			size_t i, n = lua_rawlen(L, 2);
			for (i = 1; i <= n; i++) {
				lua_rawgeti(L, 2, (int)i);
				if (lua_type(L, -1) != LUA_TTABLE)
					luaL_error(L, "feed: element %d is not a record table", (int)i);
				used += feed_table(L, u->s, -1);
				lua_pop(L, 1);
				if (u->s == NULL)
					luaL_error(L, "attempt to use a closed symbolizer");
			}
			lua_pushinteger(L, used);
			return 1;
		}
	}
	/* A session or a file: for rec in src:records() do ... end */
	if (lua_isnoneornil(L, 2))
		luaL_argerror(L, 2, "expected a record, an array of records or a source");
	lua_settop(L, 2);
	lua_getfield(L, 2, "records");
	if (!lua_isfunction(L, -1))
		luaL_argerror(L, 2, "expected a record, an array of records or an object with :records()");
	lua_pushvalue(L, 2);
	/* Only the records that shape address spaces: sessions and files
	 * filter in C (their records{type=} option). */
	lua_createtable(L, 0, 1);
	lua_createtable(L, 5, 0);
	{
		static const char *const types[] = { "MMAP", "MMAP2", "COMM", "FORK", "EXIT" };
		int i;
		for (i = 0; i < 5; i++) {
			lua_pushstring(L, types[i]);
			lua_rawseti(L, -2, i + 1);
		}
	}
	lua_setfield(L, -2, "type");
	lua_call(L, 2, 3);                /* f, s, ctl at 3, 4, 5 */
	for (;;) {
		lua_pushvalue(L, 3);
		lua_pushvalue(L, 4);
		lua_pushvalue(L, 5);
		lua_call(L, 2, 1);
		if (lua_isnil(L, -1)) {
			lua_pop(L, 1);
			break;
		}
		if (u->s == NULL)
			luaL_error(L, "attempt to use a closed symbolizer");
		if (lua_type(L, -1) == LUA_TTABLE)
			used += feed_table(L, u->s, -1);
		lua_replace(L, 5);
	}
	/* A perf.data file knows the build ids of the objects it hit; its pids
	 * are not this machine's to read in /proc. */
	feed_build_ids(L, u, 2);
	lua_pushinteger(L, used);
	return 1;
}

static int sym_load(lua_State *L)
{
	struct lsym *u = check_open(L);
	lua_Integer pid = luaL_checkinteger(L, 2);
	int rc;

	if (pid < 0 || pid > 0x7fffffff)
		luaL_argerror(L, 2, "pid out of range");
	rc = symbolizer__load_proc(u->s, (uint32_t)pid);
	if (rc < 0)
		return lperf_fail(L, symbolizer__last_error(u->s), -rc);
	lua_pushboolean(L, 1);
	return 1;
}

static const char *const kinds[] = { "user", "kernel", "jit", "vdso" };

static void push_result(lua_State *L, const struct sym_result *r)
{
	lua_createtable(L, 0, 12);
	lperf_setstr(L, "name", r->name);
	if (r->raw_name != NULL && strcmp(r->raw_name, r->name) != 0)
		lperf_setstr(L, "mangled", r->raw_name);
	lperf_setu64(L, "offset", r->offset);
	lperf_setu64(L, "start", r->sym_start);
	lperf_setu64(L, "size", r->sym_size);
	lperf_setstr(L, "dso", r->dso);
	lperf_setu64(L, "dso_addr", r->dso_addr);
	/* the symbol's start in its object: what perf tells symbols apart by */
	lperf_setu64(L, "sym_start", r->dso_addr - r->offset);
	lperf_setstr(L, "kind", kinds[r->kind]);
	if (r->build_id[0] != '\0')
		lperf_setstr(L, "build_id", r->build_id);
	if (r->file != NULL) {
		lperf_setstr(L, "file", r->file);
		lperf_setint(L, "line", (lua_Integer)r->line);
	}
	if (r->nr_inlined > 0) {
		unsigned i;
		lua_createtable(L, (int)r->nr_inlined, 0);
		for (i = 0; i < r->nr_inlined; i++) {
			lua_createtable(L, 0, 3);
			lperf_setstr(L, "name", r->inlined[i].name);
			if (r->inlined[i].file != NULL) {
				lperf_setstr(L, "file", r->inlined[i].file);
				lperf_setint(L, "line", (lua_Integer)r->inlined[i].line);
			}
			lua_rawseti(L, -2, (int)i + 1);
		}
		lua_setfield(L, -2, "inlined");
		if (r->call_file != NULL)
			lperf_setstr(L, "call_file", r->call_file);
		lperf_setint(L, "call_line", (lua_Integer)r->call_line);
	}
	if (r->func != NULL)
		lperf_setstr(L, "func", r->func);
}

static unsigned check_flags(lua_State *L, int arg)
{
	unsigned flags = SYM_NAMES;

	if (lua_isnoneornil(L, arg))
		return flags;
	luaL_checktype(L, arg, LUA_TTABLE);
	if (lperf_optfield_bool(L, arg, "lines", 0))
		flags |= SYM_LINES;
	if (lperf_optfield_bool(L, arg, "inlines", 0))
		flags |= SYM_LINES | SYM_INLINES;
	lua_getfield(L, arg, "kernel");
	if (!lua_isnil(L, -1))
		flags |= lua_toboolean(L, -1) ? SYM_KERNEL : SYM_USER;
	lua_pop(L, 1);
	return flags;
}

/* opts.gen: the generation of the pid's mappings to look in (a profile
 * entry's gen, sym:space_gen(pid)); the latest when absent. */
static uint32_t check_gen(lua_State *L, int arg)
{
	lua_Integer g;

	if (lua_isnoneornil(L, arg))
		return UINT32_MAX;
	luaL_checktype(L, arg, LUA_TTABLE);
	g = lperf_optfield_int(L, arg, "gen", -1);
	if (g < -1 || g > (lua_Integer)UINT32_MAX - 1)
		luaL_argerror(L, arg, "gen out of range");
	return g < 0 ? UINT32_MAX : (uint32_t)g;
}

static uint32_t check_pid(lua_State *L, int arg)
{
	lua_Integer pid = lua_isnoneornil(L, arg) ? -1 : luaL_checkinteger(L, arg);

	if (pid < -1 || pid > 0x7fffffff)
		luaL_argerror(L, arg, "pid out of range");
	return (uint32_t)pid;
}

static int sym_resolve(lua_State *L)
{
	struct lsym *u = check_open(L);
	uint32_t pid = check_pid(L, 2);
	uint64_t addr = lperf_checku64(L, 3);
	unsigned flags = check_flags(L, 4);
	uint32_t gen = check_gen(L, 4);
	struct sym_result r;

	if (symbolizer__resolve_at(u->s, pid, gen, addr, flags, &r) < 0)
		return lperf_fail(L, symbolizer__last_error(u->s), 0);
	push_result(L, &r);
	return 1;
}

/* sym:resolve_all(pid, {addr, ...}[, opts]) -> {t | false, ...}, resolved */
static int sym_resolve_all(lua_State *L)
{
	struct lsym *u = check_open(L);
	uint32_t pid = check_pid(L, 2);
	unsigned flags;
	size_t i, n, ok;
	uint64_t *addrs;
	struct sym_result *res;
	int *errs;

	luaL_checktype(L, 3, LUA_TTABLE);
	flags = check_flags(L, 4);
	n = lua_rawlen(L, 3);
	if (n > ((size_t)1 << 26))
		luaL_argerror(L, 3, "too many addresses");
	/* Scratch owned by the Lua GC, so a raise below leaks nothing. */
	addrs = lua_newuserdatauv(L, (n ? n : 1) * (sizeof(*addrs) + sizeof(*res) + sizeof(*errs)), 0);
	res = (struct sym_result *)(void *)(addrs + (n ? n : 1));
	errs = (int *)(void *)(res + (n ? n : 1));
	for (i = 0; i < n; i++) {
		lua_rawgeti(L, 3, (int)(i + 1));
		addrs[i] = lperf_checku64(L, -1);
		lua_pop(L, 1);
	}
	ok = symbolizer__resolve_many_at(u->s, pid, check_gen(L, 4), addrs, n, flags, res, errs);
	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		if (errs[i] == 0)
			push_result(L, &res[i]);
		else
			lua_pushboolean(L, 0);
		lua_rawseti(L, -2, (int)(i + 1));
	}
	lua_pushinteger(L, (lua_Integer)ok);
	return 2;
}

/* sym:space_gen(pid) -> the generation of pid's mappings now */
static int sym_space_gen(lua_State *L)
{
	struct lsym *u = check_open(L);

	lua_pushinteger(L, (lua_Integer)symbolizer__space_gen(u->s, check_pid(L, 2)));
	return 1;
}

static int sym_map(lua_State *L)
{
	struct lsym *u = check_open(L);
	uint32_t pid = check_pid(L, 2);
	uint64_t addr = lperf_checku64(L, 3);
	struct sym_map m;
	static const char digits[] = "0123456789abcdef";
	char h[41];
	size_t i;

	if (check_flags(L, 4) & SYM_KERNEL) {
		const char *dso;
		uint64_t mod;
		if (symbolizer__find_kernel_map(u->s, addr, &dso, &mod) < 0)
			return lperf_fail(L, symbolizer__last_error(u->s), 0);
		lua_createtable(L, 0, 4);
		lperf_setstr(L, "path", dso);
		lperf_setbool(L, "kernel", 1);
		if (mod != UINT64_MAX) {
			/* a module the recording mapped: where */
			lperf_setu64(L, "start", mod);
			lperf_setu64(L, "pgoff", 0);
		}
		return 1;
	}
	if (symbolizer__find_map_at(u->s, pid, check_gen(L, 4), addr, &m) < 0) {
		char buf[96];
		snprintf(buf, sizeof(buf), "no mapping for 0x%llx in pid %d",
			 (unsigned long long)addr, (int)pid);
		return lperf_fail(L, buf, 0);
	}
	lua_createtable(L, 0, 5);
	lperf_setstr(L, "path", m.path);
	lperf_setu64(L, "start", m.start);
	lperf_setu64(L, "end", m.end);
	lperf_setu64(L, "pgoff", m.pgoff);
	for (i = 0; i < m.build_id_size; i++) {
		h[2 * i] = digits[m.build_id[i] >> 4];
		h[2 * i + 1] = digits[m.build_id[i] & 15];
	}
	h[2 * i] = '\0';
	if (m.build_id_size > 0)
		lperf_setstr(L, "build_id", h);
	return 1;
}

static int sym_warning(lua_State *L)
{
	struct lsym *u = check_open(L);
	const char *w = symbolizer__take_warning(u->s);

	if (w == NULL)
		return 0;
	lua_pushstring(L, w);
	return 1;
}

/* perf.demangle(name [, verbose]): perf's form, or with the parameters. */
static int l_demangle(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	char buf[4096];

	if (lua_toboolean(L, 2))
		lua_pushstring(L, symbolizer__demangle_verbose(name, buf, sizeof(buf)));
	else
		lua_pushstring(L, symbolizer__demangle(name, buf, sizeof(buf)));
	return 1;
}

struct symbolizer *lperf_newsymbolizer(lua_State *L)
{
	lua_pushcfunction(L, sym_new);
	lua_call(L, 0, 1);
	return lperf_tosymbolizer(L, -1);
}

struct symbolizer *lperf_tosymbolizer(lua_State *L, int idx)
{
	struct lsym *u = luaL_testudata(L, idx, SYMBOLIZER_MT);

	return u != NULL ? u->s : NULL;
}

static const luaL_Reg methods[] = {
	{ "feed", sym_feed },
	{ "load", sym_load },
	{ "resolve", sym_resolve },
	{ "resolve_all", sym_resolve_all },
	{ "map", sym_map },
	{ "space_gen", sym_space_gen },
	{ "build_id", sym_build_id },
	{ "recording", sym_recording },
	{ "warning", sym_warning },
	{ "close", sym_close },
	{ NULL, NULL },
};

void lperf_open_symbolizer(lua_State *L)
{
	lperf_newclass(L, SYMBOLIZER_MT, methods, sym_close);
	lua_pushcfunction(L, sym_new);
	lua_setfield(L, -2, "symbolizer");
	lua_pushcfunction(L, l_demangle);
	lua_setfield(L, -2, "demangle");
}
