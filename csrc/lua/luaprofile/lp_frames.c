/*
 * perf.luaprofile's frames (lprof.h): which addresses are code (native
 * frames, the Lua runtime's among them), and the Lua frames of the state
 * at a safe point, named once per function, read on through the states
 * that resumed it.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include "luaprofile/lprof.h"

/* ---- native frames --------------------------------------------------- */

/* Is a an address in some object's executable segments (a real frame)? */
int lp_exec_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct lprof *p = arg;
	int i;
	(void)size;
	for (i = 0; i < info->dlpi_phnum && p->nexec < LP_MAX_EXEC; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			p->exec_lo[p->nexec] = info->dlpi_addr + ph->p_vaddr;
			p->exec_hi[p->nexec] = p->exec_lo[p->nexec] + ph->p_memsz;
			p->nexec++;
		}
	}
	return 0;
}

int lp_in_exec(const struct lprof *p, uint64_t a)
{
	int i;
	for (i = 0; i < p->nexec; i++)
		if (a >= p->exec_lo[i] && a < p->exec_hi[i])
			return 1;
	return 0;
}

/* Finds the executable segments of the object that holds the Lua API. */
int lp_rt_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct lprof *p = arg;
	uintptr_t api = (uintptr_t)lua_gettop;
	int i, k;
	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD || api < lo || api >= lo + ph->p_memsz)
			continue;
		for (k = 0; k < info->dlpi_phnum && p->nrt < 4; k++) {
			const ElfW(Phdr) *q = &info->dlpi_phdr[k];
			if (q->p_type == PT_LOAD && (q->p_flags & PF_X)) {
				p->rt_lo[p->nrt] = info->dlpi_addr + q->p_vaddr;
				p->rt_hi[p->nrt] = p->rt_lo[p->nrt] + q->p_memsz;
				p->nrt++;
			}
		}
		return 1;
	}
	return 0;
}

int lp_in_runtime(const struct lprof *p, uint64_t a)
{
	int i;
	for (i = 0; i < p->nrt; i++)
		if (a >= p->rt_lo[i] && a < p->rt_hi[i])
			return 1;
	return 0;
}

/* ---- Lua frames ------------------------------------------------------ */

/* Pushes the started profiler of L's universe (its userdata, anchoring it
 * on the stack while the caller uses it) or nil; returns it or NULL. */
struct lprof *lp_push_profiler(lua_State *L)
{
	lua_pushlightuserdata(L, &lp_registry_key);
	lua_rawget(L, LUA_REGISTRYINDEX);
	return lua_touserdata(L, -1);
}

/* "string.rep" for a function found in a loaded module; pushes it or nothing. */
static int find_global_name(lua_State *L, int fn)
{
	lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
	if (!lua_istable(L, -1)) {
		lua_pop(L, 1);
		return 0;
	}
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		if (lua_istable(L, -1) && lua_type(L, -2) == LUA_TSTRING) {
			lua_pushnil(L);
			while (lua_next(L, -2)) {
				if (lua_rawequal(L, -1, fn) && lua_type(L, -2) == LUA_TSTRING) {
					const char *mod = lua_tostring(L, -4);
					if (strcmp(mod, "_G") == 0)
						lua_pushvalue(L, -2);
					else
						lua_pushfstring(L, "%s.%s", mod, lua_tostring(L, -2));
					lua_replace(L, -6);
					lua_pop(L, 4);
					return 1;
				}
				lua_pop(L, 1);
			}
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return 0;
}

/*
 * The frame name of the function at the top of the stack, cached in a
 * weak-keyed registry table (a function's name is computed once).
 */
static void frame_name(lua_State *L, lua_Debug *ar, char *out)
{
	int fn = lua_gettop(L);
	lua_pushlightuserdata(L, &lp_cache_key);
	lua_rawget(L, LUA_REGISTRYINDEX);
	lua_pushvalue(L, fn);
	lua_rawget(L, -2);
	if (lua_type(L, -1) == LUA_TSTRING) {
		/* the hot path: no formatting, a bounded copy */
		size_t len;
		const char *name = lua_tolstring(L, -1, &len);
		if (len >= LP_FRAME_MAX)
			len = LP_FRAME_MAX - 1;
		memcpy(out, name, len);
		out[len] = '\0';
		lua_pop(L, 2);
		return;
	}
	lua_pop(L, 1);
	lua_getinfo(L, "Sn", ar);
	if (strcmp(ar->what, "C") == 0) {
		if (lp_is_wrapper(lua_tocfunction(L, fn))) {
			out[0] = '\0';       /* ours: not a frame of the program */
		} else if (find_global_name(L, fn)) {
			snprintf(out, LP_FRAME_MAX, "%s", lua_tostring(L, -1));
			lua_pop(L, 1);
		} else if (ar->name != NULL) {
			snprintf(out, LP_FRAME_MAX, "%s", ar->name);
		} else {
			Dl_info info;
			lua_CFunction f = lua_tocfunction(L, fn);
			if (f != NULL && dladdr((void *)f, &info) && info.dli_sname != NULL)
				snprintf(out, LP_FRAME_MAX, "%s", info.dli_sname);
			else
				snprintf(out, LP_FRAME_MAX, "%s", "?");
		}
	} else if (strcmp(ar->what, "main") == 0) {
		snprintf(out, LP_FRAME_MAX, "[Lua] main chunk %s", ar->short_src);
	} else if (find_global_name(L, fn)) {
		/* A global or module name is stable; the call site's is not. */
		snprintf(out, LP_FRAME_MAX, "[Lua] %s %s:%d", lua_tostring(L, -1),
			 ar->short_src, ar->linedefined);
		lua_pop(L, 1);
	} else {
		snprintf(out, LP_FRAME_MAX, "[Lua] %s %s:%d",
			 ar->name != NULL ? ar->name : "?", ar->short_src, ar->linedefined);
	}
	lua_pushvalue(L, fn);
	lua_pushstring(L, out);
	lua_rawset(L, -3);
	lua_pop(L, 1);
}

/*
 * Reads L's stack from level first up, then the states that resumed it.
 * Naming a function allocates, so the collector (and any finalizer, which
 * may stop this profiler) can run: returns 0 when the profiler was
 * stopped meanwhile, and then touches neither it nor its states again.
 */
int lp_read_lua_stack(struct lprof *p, lua_State *L, int first)
{
	lua_Debug ar;
	int level, k;
	unsigned epoch = p->epoch;
	p->nlua = 0;
	if (!lua_checkstack(L, 24))
		return 1;
	for (;;) {
		for (level = first; p->nlua < LP_MAX_DEPTH && lua_getstack(L, level, &ar); level++) {
			lua_getinfo(L, "f", &ar);
			frame_name(L, &ar, p->lua_frames[p->nlua]);
			lua_pop(L, 1);
			if (!p->started || p->epoch != epoch)
				return 0;
			if (p->lua_frames[p->nlua][0] == '\0')
				continue;
			p->nlua++;
		}
		/* A coroutine: continue in the state that resumed it. */
		for (k = p->codepth - 1; k >= 0 && p->costack[k].co->L != L; k--)
			;
		if (k < 0)
			break;
		L = p->costack[k].from;
		first = 0;
		if (!lua_checkstack(L, 24))
			break;
	}
	return 1;
}
