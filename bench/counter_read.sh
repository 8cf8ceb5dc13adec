#!/bin/sh
# counter:read() from Lua (5.4 and LuaJIT) against a raw read(2) loop in C
# on a counter opened the same way (bench/counter_read.c), in one run,
# alternating the three so machine noise hits them alike; best of ROUNDS.
# Target <= 1.3x.  Also checks that a reused result table makes no garbage
# (collectgarbage("count") flat over N reads).  Figures: bench/counter.md.
set -e
cd "$(dirname "$0")/.."
make -s all >/dev/null
make -s LUA=luajit all >/dev/null
out=build/bench
mkdir -p $out
cc -O2 -o $out/counter_read bench/counter_read.c
N=${N:-1000000}
ROUNDS=${ROUNDS:-5}
LP="lua/?.lua;lua/?/init.lua;;"
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }'; }
for ev in task-clock:u context-switches:u; do
    case $ev in task-clock*) cfg=1 ;; *) cfg=3 ;; esac
    c=; l=; j=; frs=; fls=; gl=0; gj=0
    i=0
    while [ $i -lt "$ROUNDS" ]; do
        c=$(min "$c" "$($out/counter_read $cfg $N 1)")
        set -- $(LUA_PATH="$LP" LUA_CPATH="build/?.so;;" lua5.4 bench/counter_read.lua $ev $N 1)
        l=$(min "$l" "$1"); gl=$(awk -v a="$gl" -v b="$2" 'BEGIN { print (b > a) ? b : a }')
        set -- $(LUA_PATH="$LP" LUA_CPATH="build/luajit/?.so;;" luajit bench/counter_read.lua $ev $N 1)
        j=$(min "$j" "$1"); gj=$(awk -v a="$gj" -v b="$2" 'BEGIN { print (b > a) ? b : a }')
        frs="$frs $4"; fls="$fls $5"
        i=$((i + 1))
    done
    median() { echo $* | tr ' ' '\n' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
    fr=$(median $frs); fl=$(median $fls)
    ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
    echo "$ev (best of $ROUNDS rounds of $N reads)"
    echo "  C read(2) loop (separate process)     $c ns"
    echo "  lua5.4 counter:read(t)                $l ns  = $(ratio "$l" "$c")x   heap growth over $N reads: ${gl} KB"
    echo "  luajit counter:read(t)                $j ns  = $(ratio "$j" "$c")x   heap growth: ${gj} KB (JIT traces are GC objects)"
    echo "  luajit, same fd, alternating 5k-read chunks (medians): FFI read(2) $fr ns, counter:read(t) $fl ns = $(ratio "$fl" "$fr")x"
done
