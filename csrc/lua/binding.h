/*
 * The binding (perf.core): one file per userdata type or area, each with an
 * opener that registers its metatables and adds its functions to the module
 * table on top of the stack.  lperf.c calls them all.
 */
#ifndef LUAPERF_BINDING_H
#define LUAPERF_BINDING_H

#include "compat.h"
#include "event/evspec.h"

#define LUAPERF_VERSION "0.2.0"

struct record;
struct evtab;
/*
 * Pushes a decoded record as a table (l_record.c): the shape of DESIGN.md,
 * the same for live sessions and perf.data files.  t names the events
 * (rec.event) and may be NULL.
 */
void lperf_push_record(lua_State *L, const struct record *r, const struct evtab *t);
void lperf_open_record(lua_State *L);   /* perf.core.decode_record (tests, tools) */
void lperf_open_session(lua_State *L);
void lperf_open_profile(lua_State *L);
/* perf.ProfileView, p:view() (l_profview.c); after lperf_open_profile */
void lperf_open_profview(lua_State *L);
/* ANDs a query's `where` table (at index w) into keep, a byte per stack of
 * the view (l_pvwhere.c); raises on a key the view cannot answer. */
struct profview;
void lperf_where_mask(lua_State *L, struct profview *pv, int w, unsigned char *keep);
/* s against a where value at idx (exact, '^' pattern, or a list of them). */
int lperf_where_match(lua_State *L, int idx, const char *s, size_t len);
/* Profiles (l_profile.c): a new closed Profile userdata on the stack whose
 * stacktab slot the caller fills (ownership passes to the userdata at once);
 * and the stacktab of an open Profile at idx (raises otherwise). */
struct stacktab;
struct stacktab **lperf_newprofile(lua_State *L);
struct stacktab *lperf_checkprofile(lua_State *L, int idx);
/* Ties the symbolizer at sym to the profile at profile (p:symbolizer()). */
void lperf_profile_set_symbolizer(lua_State *L, int profile, int sym);
/* The core session of an open perf.session at idx (raises otherwise). */
struct session;
struct session *lperf_checksession(lua_State *L, int idx);
/* s:syscalls() (l_syscount.c): drains s into *scp (made on first use; the
 * session frees it with syscount__delete) and pushes the rows. */
struct syscount;
int lperf_session_syscalls(lua_State *L, struct session *s, struct syscount **scp);
void lperf_open_syscount(lua_State *L); /* perf.syscall_name, perf.syscall_number */
void lperf_open_counter(lua_State *L);
void lperf_open_evspec(lua_State *L);   /* perf.parse, perf.list, perf.split (l_evspec.c) */
void lperf_open_sys(lua_State *L);      /* perf.caps (l_sys.c) */
struct evspec;
/* Pushes a parsed spec as perf.parse returns it (l_evspec.c). */
void lperf_push_evspec(lua_State *L, const struct evspec *ev);
/* A group's members parsed ("{a,b}:mods"), in a userdata left on the stack:
 * returns how many (>= 1) or -errno with a message in err (nothing pushed). */
struct lperf_member {
	struct evspec ev;             /* with the group's modifiers applied */
	char text[EVSPEC_NAME_MAX];   /* the member as written */
};
int lperf_parse_group(lua_State *L, const char *spec, struct lperf_member **out,
		      char *err, size_t errlen);
void lperf_open_symbolizer(lua_State *L);
struct symbolizer *lperf_tosymbolizer(lua_State *L, int idx); /* NULL unless an open perf.symbolizer */
/* Pushes a new perf.symbolizer; returns its core object (NULL: out of memory). */
struct symbolizer *lperf_newsymbolizer(lua_State *L);

void lperf_open_zlib(lua_State *L);
void lperf_open_luaprofile(lua_State *L);  /* perf.luaprofile (luaprofile/, one file a stage) */

void lperf_open_file(lua_State *L);       /* perf.open: perf.data files (l_file.c) */
/* The reader of the open perf.File at idx, rewound for a pass of its own
 * (an f:records() iteration in progress is superseded); raises when closed. */
struct perfdata;
struct perfdata *lperf_file_pass(lua_State *L, int idx);
/* Its tracepoint formats (parsed on first use), or NULL. */
struct tracefmt;
struct tracefmt *lperf_file_tracefmt(lua_State *L, int idx);
int lperf_file_script_text(lua_State *L);  /* f:script_text (l_script.c) */
/* perf's --time and -C of an options table (time = { start=, stop= } in ns,
 * cpus = { [c] = true }) into w; the CPUs' array lives in a userdata left
 * on the stack (l_script.c). */
struct record_window;
void lperf_window(lua_State *L, int t, struct record_window *w);
void lperf_open_unwind(lua_State *L);     /* perf.unwinder, perf.unwind_* (l_unwind.c) */
void lperf_open_tty(lua_State *L);        /* perf.core.terminal, isatty (l_tty.c) */

#endif
