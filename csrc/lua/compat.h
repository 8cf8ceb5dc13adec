/*
 * One header that lets the binding build against Lua 5.1, 5.2, 5.3, 5.4 and
 * LuaJIT 2.1.  Everything version-dependent lives here and nowhere else.
 *
 * 64-bit values (addresses, counts, times): on 5.3 and 5.4 they are Lua
 * integers (two's complement, so an address above 2^63 reads as negative,
 * as in string.format("%x")).  On 5.1 and LuaJIT, whose numbers are doubles,
 * a value up to 2^53 is a number; a larger one is pushed as a string
 * "0x<hex>" so no bit is lost.  lperf_checku64 accepts all three shapes.
 */
#ifndef LUAPERF_COMPAT_H
#define LUAPERF_COMPAT_H

#include <stdint.h>
#include <stdio.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

#if LUA_VERSION_NUM >= 503
#define LPERF_HAVE_INT64 1
#else
#define LPERF_HAVE_INT64 0
#endif

#ifndef LUA_OK
#define LUA_OK 0
#endif

#if LUA_VERSION_NUM < 502
#ifndef LUA_JITLIBNAME /* LuaJIT already has these */
void luaL_setfuncs(lua_State *L, const luaL_Reg *l, int nup);
void *luaL_testudata(lua_State *L, int ud, const char *tname);
void luaL_setmetatable(lua_State *L, const char *tname);
#define luaL_newlibtable(L, l) lua_createtable(L, 0, sizeof(l) / sizeof((l)[0]) - 1)
#define luaL_newlib(L, l) (luaL_newlibtable(L, l), luaL_setfuncs(L, l, 0))
#endif
#define lua_rawlen(L, i) lua_objlen(L, (i))
#define lua_absindex(L, i) \
	(((i) > 0 || (i) <= LUA_REGISTRYINDEX) ? (i) : lua_gettop(L) + (i) + 1)
#endif

#if LUA_VERSION_NUM < 504
#define lua_newuserdatauv(L, sz, nuv) lua_newuserdata(L, (sz))
#endif

#if LUA_VERSION_NUM < 503
#define lua_isinteger(L, i) 0
#endif

/* Pushes v losslessly (see above). */
void lperf_pushu64(lua_State *L, uint64_t v);
void lperf_pushi64(lua_State *L, int64_t v);
/* Reads an integer, an exact number, or a "0x..." / decimal string. */
uint64_t lperf_checku64(lua_State *L, int arg);
uint64_t lperf_optu64(lua_State *L, int arg, uint64_t def);
/* Field setters for the table at the top of the stack. */
void lperf_setu64(lua_State *L, const char *k, uint64_t v);
void lperf_seti64(lua_State *L, const char *k, int64_t v);
void lperf_setint(lua_State *L, const char *k, lua_Integer v);
void lperf_setnum(lua_State *L, const char *k, lua_Number v);
void lperf_setstr(lua_State *L, const char *k, const char *v);
void lperf_setbool(lua_State *L, const char *k, int v);

/*
 * luaL_fileresult's shape: pushes nil, message, errno and returns 3.
 * err is a positive errno (0 when none applies: then only nil, msg).
 */
int lperf_fail(lua_State *L, const char *msg, int err);

/* The C stream of the open Lua file at arg (io.open's, io.stdout), or an
 * argument error.  Every version's file userdata starts with its FILE *
 * (5.1's FILE **, LuaJIT's IOFileUD, 5.2+'s luaL_Stream), under the
 * metatable "FILE*"; a closed one has no stream (5.2+: no closef). */
FILE *lperf_checkfile(lua_State *L, int arg);

/* Reads an optional field of the table at index t. */
int lperf_optfield_int(lua_State *L, int t, const char *k, int def);
int lperf_optfield_bool(lua_State *L, int t, const char *k, int def);
const char *lperf_optfield_str(lua_State *L, int t, const char *k, const char *def);

/*
 * Userdata types: one metatable per type under "perf.<name>", methods in
 * __index, __gc and __close sharing one idempotent close function.
 */
/* A weak-keyed table in the registry under the light userdata key (made
 * once, at luaopen): map[value at k] = value at v. */
void lperf_weakmap_new(lua_State *L, void *key);
void lperf_weakmap_set(lua_State *L, void *key, int k, int v);
void lperf_newclass(lua_State *L, const char *tname, const luaL_Reg *methods,
		    lua_CFunction close);
/*
 * Puts the methods table of tname into the table at index t under field,
 * so the Lua layer can add methods written in Lua (perf.core.Profile.folded).
 */
void lperf_exportclass(lua_State *L, int t, const char *tname, const char *field);

#endif
