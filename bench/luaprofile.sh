#!/bin/sh
# perf.luaprofile overhead (figures in bench/luaprofile.md and BENCHMARKS.md):
#  1. a CPU-bound Lua benchmark, unprofiled vs profiled at 99/999 Hz (and
#     vs jit.p at the same rates on LuaJIT), one process per interpreter;
#     the C loop of bench/luaprofile_sigcost.c gives the kernel's part;
#  2. nginx (libnginx-mod-http-lua) requests per second with wrk, with and
#     without the admin location's profile at 99 Hz, alternating rounds.
cd "$(dirname "$0")/.."
top=$(pwd)
export LUA_PATH="$top/lua/?.lua;$top/lua/?/init.lua;;"
ROUNDS=${ROUNDS:-9}
LUA_CPATH="$top/build/?.so;;" lua5.4 bench/luaprofile.lua "$ROUNDS"
LUA_CPATH="$top/build/luajit/?.so;;" luajit bench/luaprofile.lua "$ROUNDS"
LUA_CPATH="$top/build/?.so;;" lua5.4 bench/luaprofile_coroutines.lua
# against perf record -F 999 -g on the same work, each variant a child process
LUA_CPATH="$top/build/?.so;;" lua5.4 bench/luaprofile_perf.lua "$ROUNDS"
LUA_CPATH="$top/build/luajit/?.so;;" luajit bench/luaprofile_perf.lua "$ROUNDS"
# where a sample's cost goes (timer, call chains, signal and hook, safe point)
LUA_CPATH="$top/build/?.so;;" lua5.4 bench/luaprofile_parts.lua
# the kernel's part of each sample, without Lua
cc -O2 -Icsrc/core -o build/luaprofile_sigcost bench/luaprofile_sigcost.c \
    build/obj/core/sample/sigsample.o build/obj/core/base/perf_sys.o -lpthread &&
    build/luaprofile_sigcost 999 5 && build/luaprofile_sigcost 5000 5
# a loop at the sampler's own rate: drawn intervals against a fixed period
LUA_CPATH="$top/build/?.so;;" lua5.4 bench/luaprofile_phase.lua "$ROUNDS"
LUA_CPATH="$top/build/luajit/?.so;;" luajit bench/luaprofile_phase.lua "$ROUNDS"
# alloc and wait on their own, against the same loops unprofiled
LUA_CPATH="$top/build/?.so;;" lua5.4 bench/luaprofile_costs.lua 15
LUA_CPATH="$top/build/luajit/?.so;;" luajit bench/luaprofile_costs.lua 15
LUA_CPATH="$top/build/?.so;;" lua5.4 bench/luaprofile_costs.lua 9 waitcost
LUA_CPATH="$top/build/luajit/?.so;;" luajit bench/luaprofile_costs.lua 9 waitcost
# frames, wait and alloc (issue 17), and the kernel's part of a wait
LUA_CPATH="$top/build/?.so;;" lua5.4 bench/luaprofile_frames.lua "$ROUNDS"
LUA_CPATH="$top/build/luajit/?.so;;" luajit bench/luaprofile_frames.lua "$ROUNDS"
cc -O2 -Icsrc/core -o build/luaprofile_waitcost bench/luaprofile_waitcost.c \
    build/obj/core/sample/sigsample.o build/obj/core/base/perf_sys.o -lpthread && {
    echo "two CPUs:"; build/luaprofile_waitcost 5000 5
    echo "one CPU (taskset -c 0):"; taskset -c 0 build/luaprofile_waitcost 5000 5; }

if ! command -v wrk >/dev/null || [ ! -e /usr/lib/nginx/modules/ngx_http_lua_module.so ]; then
    echo "nginx rps: skipped (needs nginx, libnginx-mod-http-lua and wrk: make deps)"
    exit 0
fi
dir=$(mktemp -d /tmp/luaperf-bench.XXXXXX)
mkdir -p "$dir/logs" "$dir/temp"
port=18089
sed "s/127.0.0.1:8089/127.0.0.1:$port/" examples/openresty/nginx.conf > "$dir/nginx.conf"
ngx="nginx -p $dir -c $dir/nginx.conf -e $dir/logs/error.log"
LUAPERF_ROOT=$top $ngx || exit 1
trap '$ngx -s stop' EXIT
sleep 0.5
url=http://127.0.0.1:$port/cold
rps() { wrk -t1 -c8 -d"${SECS:-5}s" "$url" | awk '/Requests\/sec/ {print $2}'; }
rps >/dev/null   # warm up (traces compiled)
off=""; on=""
for i in $(seq 1 "${NGX_ROUNDS:-5}"); do
    off="$off $(rps)"
    curl -s "http://127.0.0.1:$port/luaperf/profile?seconds=$(( ${SECS:-5} + 1 ))&freq=99" > "$dir/prof.folded" &
    sleep 0.2
    on="$on $(rps)"
    wait
done
median() { echo "$@" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
moff=$(median $off); mon=$(median $on)
echo "nginx /cold, wrk -t1 -c8 -d${SECS:-5}s, ${NGX_ROUNDS:-5} alternating rounds (median rps)"
echo "unprofiled:          $moff   ($off )"
echo "luaprofile 99 Hz:    $mon   ($on )"
awk -v a="$moff" -v b="$mon" 'BEGIN {printf "change: %+.2f%%\n", 100 * (b / a - 1)}'
echo "samples in the last profile: $(awk '{s += $NF} END {print s}' "$dir/prof.folded")"
