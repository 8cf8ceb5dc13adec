/*
 * For `make lint` only (clang-tidy -include): Lua's error functions never
 * return (they longjmp), but lauxlib.h does not say so, and the static
 * analyzer then follows impossible paths past luaL_argerror & co.  These
 * redeclarations add the attribute; the build never sees this file.
 */
#include <lua.h>
#include <lauxlib.h>

int lua_error(lua_State *L) __attribute__((noreturn));
int luaL_error(lua_State *L, const char *fmt, ...) __attribute__((noreturn));
int luaL_argerror(lua_State *L, int arg, const char *extramsg) __attribute__((noreturn));
int luaL_typeerror(lua_State *L, int arg, const char *tname) __attribute__((noreturn));
