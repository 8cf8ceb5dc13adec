#!/bin/sh
# Soak (make soak; not in CI): SECS seconds (default 600) of sampling at the
# machine's maximum rate with inherit over a fork+exec loop; see bench/soak.lua.
# SOAK_EVERY: seconds between RSS samples; SOAK_PAGES: ring pages (1: lossy).
cd "$(dirname "$0")/.."
secs=${1:-600}
LUA=${LUAPERF_LUA:-lua5.4}
case $LUA in
    luajit*) cpath=build/luajit ;;
    *) cpath=build ;;
esac
LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="$cpath/?.so;;" \
    exec "$LUA" bench/soak.lua "$secs" "${SOAK_EVERY:-5}" ${SOAK_PAGES:-}
