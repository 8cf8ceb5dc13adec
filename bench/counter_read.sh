#!/bin/sh
# counter:read(t) from Lua 5.4 and LuaJIT against read(2) in a C loop on the
# same fd (bench/counter_read.c as a tiny Lua module), alternating chunks in
# one process; target <= 1.3x.  Also: collectgarbage("count") must stay flat
# over N reads into a reused table.  Figures: bench/counter.md.
set -e
cd "$(dirname "$0")/.."
make -s all >/dev/null
make -s LUA=luajit all >/dev/null
out=build/bench
mkdir -p $out/lua5.4 $out/luajit
cc -O2 -shared -fPIC $(pkg-config --cflags lua5.4) -o $out/lua5.4/rawread.so bench/counter_read.c
cc -O2 -shared -fPIC $(pkg-config --cflags luajit) -o $out/luajit/rawread.so bench/counter_read.c
N=${N:-1000000}
LP="lua/?.lua;lua/?/init.lua;;"
for ev in task-clock:u context-switches:u; do
    for lua in lua5.4 luajit; do
        case $lua in lua5.4) mod=build ;; *) mod=build/luajit ;; esac
        set -- $(LUA_PATH="$LP" LUA_CPATH="$mod/?.so;$out/$lua/?.so;;" $lua bench/counter_read.lua $ev $N)
        printf '%-19s %-7s read(2) %7.1f ns  counter:read(t) %7.1f ns  = %sx (medians; mins %.1f / %.1f = %sx)  heap +%s KB over %s reads  [fresh table per read: %.1f ns]\n' \
            "$ev" "$lua" "$1" "$2" "$(awk -v a="$2" -v b="$1" 'BEGIN { printf "%.2f", a / b }')" \
            "$3" "$4" "$(awk -v a="$4" -v b="$3" 'BEGIN { printf "%.2f", a / b }')" "$5" "$N" "$6"
    done
done
