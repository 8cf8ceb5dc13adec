/* luaopen_perf_core: the only symbol the module exports. */
#include "binding.h"

__attribute__((visibility("default"))) int luaopen_perf_core(lua_State *L);

int luaopen_perf_core(lua_State *L)
{
	lua_newtable(L);
	lua_pushliteral(L, LUAPERF_VERSION);
	lua_setfield(L, -2, "version");
	lua_pushliteral(L, "luaperf " LUAPERF_VERSION);     /* as socket._VERSION */
	lua_setfield(L, -2, "_VERSION");
	lperf_open_counter(L);
	lperf_open_evspec(L);
	lperf_open_sys(L);
	lperf_open_symbolizer(L);
	lperf_open_zlib(L);
	lperf_open_luaprofile(L);
	lperf_open_file(L);
	lperf_open_record(L);
	lperf_open_session(L);
	lperf_open_syscount(L);
	lperf_open_profile(L);
	lperf_open_profview(L);
	lperf_open_unwind(L);
	lperf_open_tty(L);
	return 1;
}
