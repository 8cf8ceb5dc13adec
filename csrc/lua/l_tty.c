/*
 * perf.core.terminal([fd]): a terminal in key-at-a-time mode, for live
 * views (luaperf top).  Keys arrive unbuffered and unechoed (signals keep
 * working: ^C is still SIGINT); restore(), close(), __gc and __close put
 * the saved settings back, once.
 *
 *   local t, err = perf.core.terminal(0)     -- nil, msg when fd is no terminal
 *   t:key(ms)      -> one key ("q", "\27", ...) or nil after ms (0: no wait)
 *   t:size()       -> rows, cols of the terminal on stdout (else of fd)
 *   t:restore()
 *   perf.core.isatty(fd) -> boolean
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>
#include "binding.h"

#define TERMINAL "perf.Terminal"

struct lterm {
	int fd;
	int raw;                 /* settings changed, not restored yet */
	struct termios saved;
};

static struct lterm *check(lua_State *L)
{
	struct lterm *t = luaL_checkudata(L, 1, TERMINAL);

	if (!t->raw)
		luaL_error(L, "attempt to use a closed " TERMINAL);
	return t;
}

static int t_restore(lua_State *L)
{
	struct lterm *t = luaL_checkudata(L, 1, TERMINAL);

	if (t->raw) {
		tcsetattr(t->fd, TCSAFLUSH, &t->saved);
		t->raw = 0;
	}
	return 0;
}

static int t_key(lua_State *L)
{
	struct lterm *t = check(L);
	int ms = (int)luaL_optinteger(L, 2, 0);
	struct pollfd p = { .fd = t->fd, .events = POLLIN };
	char c;
	int n;

	do
		n = poll(&p, 1, ms);
	while (n < 0 && errno == EINTR);
	if (n <= 0 || !(p.revents & POLLIN) || read(t->fd, &c, 1) != 1)
		return 0;
	lua_pushlstring(L, &c, 1);
	return 1;
}

static int t_size(lua_State *L)
{
	struct lterm *t = check(L);
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0 && ioctl(t->fd, TIOCGWINSZ, &ws) < 0)
		return lperf_fail(L, strerror(errno), errno);
	lua_pushinteger(L, ws.ws_row);
	lua_pushinteger(L, ws.ws_col);
	return 2;
}

static int l_terminal(lua_State *L)
{
	int fd = (int)luaL_optinteger(L, 1, STDIN_FILENO);
	struct lterm *t;
	struct termios raw;

	t = lua_newuserdatauv(L, sizeof *t, 0);
	t->fd = fd;
	t->raw = 0;
	luaL_setmetatable(L, TERMINAL);
	if (!isatty(fd))
		return lperf_fail(L, "not a terminal", ENOTTY);
	if (tcgetattr(fd, &t->saved) < 0)
		return lperf_fail(L, strerror(errno), errno);
	raw = t->saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(fd, TCSAFLUSH, &raw) < 0)
		return lperf_fail(L, strerror(errno), errno);
	t->raw = 1;
	return 1;
}

static int l_isatty(lua_State *L)
{
	lua_pushboolean(L, isatty((int)luaL_checkinteger(L, 1)));
	return 1;
}

void lperf_open_tty(lua_State *L)
{
	static const luaL_Reg methods[] = {
		{ "key", t_key },
		{ "size", t_size },
		{ "restore", t_restore },
		{ "close", t_restore },
		{ NULL, NULL },
	};

	if (luaL_newmetatable(L, TERMINAL)) {
		lua_newtable(L);
		luaL_setfuncs(L, methods, 0);
		lua_setfield(L, -2, "__index");
		lua_pushcfunction(L, t_restore);
		lua_setfield(L, -2, "__gc");
		lua_pushcfunction(L, t_restore);
		lua_setfield(L, -2, "__close");
	}
	lua_pop(L, 1);
	lua_pushcfunction(L, l_terminal);
	lua_setfield(L, -2, "terminal");
	lua_pushcfunction(L, l_isatty);
	lua_setfield(L, -2, "isatty");
}
