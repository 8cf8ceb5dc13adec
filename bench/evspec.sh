#!/bin/sh
# perf.parse cost per spec and `luaperf list` against `perf list`.
cd "$(dirname "$0")/.."
LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/?.so;;' lua5.4 bench/evspec.lua
