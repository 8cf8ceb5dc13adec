/*
 * perf.core.gzip(s [, level]) -> string
 * perf.core.gunzip(s [, max_bytes]) -> string | nil, msg
 *
 * gzip framing over zlib, for pprof's gzipped profile.proto.  The stream
 * state and the output buffer live in a userdata ("perf.zstream") so a
 * Lua error (out of memory while pushing the result) cannot leak them.
 * gunzip output is capped (default 1 GiB): the input is untrusted.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "binding.h"

#define ZSTREAM "perf.zstream"
#define CHUNK_IN ((size_t)1 << 30)
#define GUNZIP_MAX_DEFAULT ((size_t)1 << 30)

struct zstream {
	z_stream z;
	int open;           /* 0: closed, 1: deflate, 2: inflate */
	unsigned char *buf;
	size_t len, cap;
};

static int zstream_close(lua_State *L)
{
	struct zstream *zs = luaL_checkudata(L, 1, ZSTREAM);
	if (zs->open == 1)
		deflateEnd(&zs->z);
	else if (zs->open == 2)
		inflateEnd(&zs->z);
	zs->open = 0;
	free(zs->buf);
	zs->buf = NULL;
	zs->len = zs->cap = 0;
	return 0;
}

static struct zstream *zstream_new(lua_State *L)
{
	struct zstream *zs = lua_newuserdatauv(L, sizeof *zs, 0);
	memset(zs, 0, sizeof *zs);
	luaL_setmetatable(L, ZSTREAM);
	return zs;
}

/* Makes room for at least one more byte, doubling; -E2BIG past max. */
static int zstream_grow(struct zstream *zs, size_t max)
{
	size_t cap;
	unsigned char *p;
	if (zs->len < zs->cap)
		return 0;
	if (zs->cap >= max)
		return -E2BIG;
	cap = zs->cap ? zs->cap * 2 : 65536;
	if (cap > max)
		cap = max;
	p = realloc(zs->buf, cap);
	if (p == NULL)
		return -ENOMEM;
	zs->buf = p;
	zs->cap = cap;
	return 0;
}

static void zstream_setout(struct zstream *zs)
{
	size_t room = zs->cap - zs->len;
	zs->z.next_out = zs->buf + zs->len;
	zs->z.avail_out = room > UINT_MAX ? UINT_MAX : (uInt)room;
}

static int l_gzip(lua_State *L)
{
	size_t n, fed = 0;
	const char *s = luaL_checklstring(L, 1, &n);
	int level = (int)luaL_optinteger(L, 2, Z_DEFAULT_COMPRESSION);
	struct zstream *zs;
	int rc = Z_OK;

	luaL_argcheck(L, level >= -1 && level <= 9, 2, "level must be -1..9");
	zs = zstream_new(L);
	if (deflateInit2(&zs->z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return lperf_fail(L, "gzip: zlib could not start a stream", ENOMEM);
	zs->open = 1;
	while (rc != Z_STREAM_END) {
		size_t before;
		int flush;
		if (zs->z.avail_in == 0 && fed < n) {
			size_t part = n - fed > CHUNK_IN ? CHUNK_IN : n - fed;
			zs->z.next_in = (Bytef *)(s + fed);
			zs->z.avail_in = (uInt)part;
			fed += part;
		}
		flush = (fed == n) ? Z_FINISH : Z_NO_FLUSH;
		if (zstream_grow(zs, SIZE_MAX / 2) < 0)
			return lperf_fail(L, "gzip: out of memory", ENOMEM);
		zstream_setout(zs);
		before = zs->z.avail_out;
		rc = deflate(&zs->z, flush);
		if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
			return lperf_fail(L, "gzip: zlib failed", EIO);
		zs->len += before - zs->z.avail_out;
	}
	lua_pushlstring(L, (const char *)zs->buf, zs->len);
	lua_pushcfunction(L, zstream_close);
	lua_pushvalue(L, -3);
	lua_call(L, 1, 0);
	return 1;
}

static int l_gunzip(lua_State *L)
{
	size_t n;
	const char *s = luaL_checklstring(L, 1, &n);
	lua_Integer maxi = luaL_optinteger(L, 2, (lua_Integer)GUNZIP_MAX_DEFAULT);
	size_t max;
	struct zstream *zs;
	size_t fed = 0;
	int rc = Z_OK;

	luaL_argcheck(L, maxi > 0, 2, "max_bytes must be positive");
	max = (size_t)maxi;
	zs = zstream_new(L);
	/* 15 + 32: zlib or gzip header, detected */
	if (inflateInit2(&zs->z, 15 + 32) != Z_OK)
		return lperf_fail(L, "gunzip: zlib could not start a stream", ENOMEM);
	zs->open = 2;
	while (rc != Z_STREAM_END) {
		size_t before;
		if (zs->z.avail_in == 0) {
			size_t part;
			if (fed == n)
				return lperf_fail(L, "gunzip: truncated input (the stream does not end)", EINVAL);
			part = n - fed > CHUNK_IN ? CHUNK_IN : n - fed;
			zs->z.next_in = (Bytef *)(s + fed);
			zs->z.avail_in = (uInt)part;
			fed += part;
		}
		if (zstream_grow(zs, max) < 0) {
			if (zs->cap >= max) {
				lua_pushnil(L);
				lua_pushfstring(L, "gunzip: output larger than the %d byte limit", (int)(max > INT_MAX ? INT_MAX : max));
				lua_pushinteger(L, E2BIG);
				return 3;
			}
			return lperf_fail(L, "gunzip: out of memory", ENOMEM);
		}
		zstream_setout(zs);
		before = zs->z.avail_out;
		rc = inflate(&zs->z, Z_NO_FLUSH);
		if (rc == Z_NEED_DICT || rc == Z_DATA_ERROR || rc == Z_MEM_ERROR) {
			lua_pushnil(L);
			lua_pushfstring(L, "gunzip: bad data (%s)", zs->z.msg ? zs->z.msg : "corrupt stream");
			lua_pushinteger(L, EINVAL);
			return 3;
		}
		zs->len += before - zs->z.avail_out;
	}
	lua_pushlstring(L, (const char *)zs->buf, zs->len);
	lua_pushcfunction(L, zstream_close);
	lua_pushvalue(L, -3);
	lua_call(L, 1, 0);
	return 1;
}

void lperf_open_zlib(lua_State *L)
{
	static const luaL_Reg none[] = { { NULL, NULL } };
	static const luaL_Reg fns[] = {
		{ "gzip", l_gzip },
		{ "gunzip", l_gunzip },
		{ NULL, NULL },
	};
	lperf_newclass(L, ZSTREAM, none, zstream_close);
	luaL_setfuncs(L, fns, 0);
}
