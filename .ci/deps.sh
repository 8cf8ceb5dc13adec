#!/bin/sh
# Installs the Debian packages that the build, the tests and the benchmarks
# need, only when some are missing.  LuaJIT is OpenResty's branch (luajit2,
# a drop-in /usr/bin/luajit and luajit.pc): Debian's nginx Lua module pulls
# it in and it conflicts with Debian's luajit packages.
set -e
PKGS="build-essential pkg-config lua5.4 liblua5.4-dev luajit2 libluajit2-5.1-dev
lua5.1 liblua5.1-0-dev lua-busted luarocks libelf-dev libdw-dev zlib1g-dev
libzstd-dev libtraceevent-dev libiberty-dev linux-perf binutils elfutils util-linux
procps tmux bc
clang libclang-rt-14-dev valgrind cppcheck clang-tidy
chromium chromium-driver golang-go libxml2-utils python3
nginx libnginx-mod-http-lua curl libc6-dbg wrk"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "installing:$missing"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
# Tracepoints need tracefs; mount it when we can and it is not.
if [ "$(id -u)" = 0 ] && [ -d /sys/kernel/tracing ] && [ ! -e /sys/kernel/tracing/events ]; then
    mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi
exit 0
