/* Helpers behind compat.h: lossless 64-bit values and small field setters. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "compat.h"

#if LUA_VERSION_NUM < 502 && !defined(LUA_JITLIBNAME)
void luaL_setfuncs(lua_State *L, const luaL_Reg *l, int nup)
{
	luaL_checkstack(L, nup, "too many upvalues");
	for (; l->name != NULL; l++) {
		int i;
		for (i = 0; i < nup; i++)
			lua_pushvalue(L, -nup);
		lua_pushcclosure(L, l->func, nup);
		lua_setfield(L, -(nup + 2), l->name);
	}
	lua_pop(L, nup);
}

void *luaL_testudata(lua_State *L, int ud, const char *tname)
{
	void *p = lua_touserdata(L, ud);
	if (p == NULL || !lua_getmetatable(L, ud))
		return NULL;
	luaL_getmetatable(L, tname);
	if (!lua_rawequal(L, -1, -2))
		p = NULL;
	lua_pop(L, 2);
	return p;
}

void luaL_setmetatable(lua_State *L, const char *tname)
{
	luaL_getmetatable(L, tname);
	lua_setmetatable(L, -2);
}
#endif

void lperf_pushu64(lua_State *L, uint64_t v)
{
#if LPERF_HAVE_INT64
	lua_pushinteger(L, (lua_Integer)v);
#else
	if (v <= (UINT64_C(1) << 53)) {
		lua_pushnumber(L, (lua_Number)v);
	} else {
		char buf[24];
		snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
		lua_pushstring(L, buf);
	}
#endif
}

void lperf_pushi64(lua_State *L, int64_t v)
{
#if LPERF_HAVE_INT64
	lua_pushinteger(L, (lua_Integer)v);
#else
	if (v >= -(INT64_C(1) << 53) && v <= (INT64_C(1) << 53))
		lua_pushnumber(L, (lua_Number)v);
	else
		lperf_pushu64(L, (uint64_t)v);
#endif
}

uint64_t lperf_checku64(lua_State *L, int arg)
{
	if (lua_type(L, arg) == LUA_TSTRING) {
		const char *s = lua_tostring(L, arg);
		char *end;
		unsigned long long v;
		errno = 0;
		v = strtoull(s, &end, 0);
		if (errno != 0 || end == s || *end != '\0')
			luaL_argerror(L, arg, "expected an integer or a \"0x...\" string");
		return (uint64_t)v;
	}
#if LPERF_HAVE_INT64
	if (lua_isinteger(L, arg))
		return (uint64_t)lua_tointeger(L, arg);
#endif
	{
		lua_Number n = luaL_checknumber(L, arg);
		if (n < 0) {
			if (n < -9223372036854775808.0 || n != (lua_Number)(int64_t)n)
				luaL_argerror(L, arg, "number has no integer representation");
			return (uint64_t)(int64_t)n;
		}
		if (n >= 18446744073709551616.0 || n != (lua_Number)(uint64_t)n)
			luaL_argerror(L, arg, "number has no integer representation");
		return (uint64_t)n;
	}
}

uint64_t lperf_optu64(lua_State *L, int arg, uint64_t def)
{
	return lua_isnoneornil(L, arg) ? def : lperf_checku64(L, arg);
}

void lperf_setu64(lua_State *L, const char *k, uint64_t v)
{
	lperf_pushu64(L, v);
	lua_setfield(L, -2, k);
}

void lperf_seti64(lua_State *L, const char *k, int64_t v)
{
	lperf_pushi64(L, v);
	lua_setfield(L, -2, k);
}

void lperf_setint(lua_State *L, const char *k, lua_Integer v)
{
	lua_pushinteger(L, v);
	lua_setfield(L, -2, k);
}

void lperf_setnum(lua_State *L, const char *k, lua_Number v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, k);
}

void lperf_setstr(lua_State *L, const char *k, const char *v)
{
	lua_pushstring(L, v);
	lua_setfield(L, -2, k);
}

void lperf_setbool(lua_State *L, const char *k, int v)
{
	lua_pushboolean(L, v);
	lua_setfield(L, -2, k);
}

int lperf_fail(lua_State *L, const char *msg, int err)
{
	lua_pushnil(L);
	lua_pushstring(L, msg != NULL ? msg : strerror(err));
	if (err == 0)
		return 2;
	lua_pushinteger(L, err);
	return 3;
}

int lperf_optfield_int(lua_State *L, int t, const char *k, int def)
{
	int v = def;
	lua_getfield(L, t, k);
	if (!lua_isnil(L, -1)) {
		if (!lua_isnumber(L, -1))
			luaL_error(L, "field '%s' must be a number", k);
		v = (int)lua_tointeger(L, -1);
	}
	lua_pop(L, 1);
	return v;
}

int lperf_optfield_bool(lua_State *L, int t, const char *k, int def)
{
	int v = def;
	lua_getfield(L, t, k);
	if (!lua_isnil(L, -1))
		v = lua_toboolean(L, -1);
	lua_pop(L, 1);
	return v;
}

/* The string stays valid while the table holds it. */
const char *lperf_optfield_str(lua_State *L, int t, const char *k, const char *def)
{
	const char *v = def;
	lua_getfield(L, t, k);
	if (!lua_isnil(L, -1)) {
		if (lua_type(L, -1) != LUA_TSTRING)
			luaL_error(L, "field '%s' must be a string", k);
		v = lua_tostring(L, -1);
	}
	lua_pop(L, 1);
	return v;
}

void lperf_weakmap_new(lua_State *L, void *key)
{
	lua_pushlightuserdata(L, key);
	lua_newtable(L);
	lua_createtable(L, 0, 1);
	lua_pushliteral(L, "k");
	lua_setfield(L, -2, "__mode");
	lua_setmetatable(L, -2);
	lua_rawset(L, LUA_REGISTRYINDEX);
}

void lperf_weakmap_set(lua_State *L, void *key, int k, int v)
{
	k = lua_absindex(L, k);
	v = lua_absindex(L, v);
	lua_pushlightuserdata(L, key);
	lua_rawget(L, LUA_REGISTRYINDEX);
	lua_pushvalue(L, k);
	lua_pushvalue(L, v);
	lua_rawset(L, -3);
	lua_pop(L, 1);
}

void lperf_newclass(lua_State *L, const char *tname, const luaL_Reg *methods,
		    lua_CFunction close)
{
	luaL_newmetatable(L, tname);
	lua_newtable(L);
	luaL_setfuncs(L, methods, 0);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, close);
	lua_setfield(L, -2, "__gc");
	lua_pushcfunction(L, close);
	lua_setfield(L, -2, "__close");
	lua_pushstring(L, tname);
	lua_setfield(L, -2, "__name");
	lua_pop(L, 1);
}

void lperf_exportclass(lua_State *L, int t, const char *tname, const char *field)
{
	t = lua_absindex(L, t);
	luaL_getmetatable(L, tname);
	lua_getfield(L, -1, "__index");
	lua_setfield(L, t, field);
	lua_pop(L, 1);
}

FILE *lperf_checkfile(lua_State *L, int arg)
{
#if LUA_VERSION_NUM >= 502
	luaL_Stream *s = luaL_checkudata(L, arg, LUA_FILEHANDLE);

	if (!s->closef)
		luaL_argerror(L, arg, "attempt to use a closed file");
	return s->f;
#else
	FILE **f = luaL_checkudata(L, arg, "FILE*");

	if (!*f)
		luaL_argerror(L, arg, "attempt to use a closed file");
	return *f;
#endif
}
