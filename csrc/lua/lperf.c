/* luaopen_perf_core: the only symbol the module exports. */
#include "luaperf.h"

__attribute__((visibility("default"))) int luaopen_perf_core(lua_State *L);

int luaopen_perf_core(lua_State *L)
{
	lua_newtable(L);
	lua_pushliteral(L, LUAPERF_VERSION);
	lua_setfield(L, -2, "version");
	return 1;
}
