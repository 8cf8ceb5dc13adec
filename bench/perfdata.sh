#!/bin/sh
# perf.data reading benchmark: a perf.data of at least 100 MB (perf record
# -g of deep stacks on every CPU), then in the same run:
#   perf script > /dev/null          the reference (CPU seconds),
#   bench/perfdata.c                 the C path: perfdata__next + record__decode,
#                                    and perfdata__profile (file -> stack table),
#   bench/perfdata.lua               the Lua iterator and f:scan(), 5.4 and LuaJIT.
# Figures are MB of perf.data per CPU second; ratios against perf script.
set -e
cd "$(dirname "$0")/.."
make -s all >/dev/null
make -s LUA=luajit all >/dev/null || true
out=build/bench
mkdir -p $out
cc -O2 -g -D_GNU_SOURCE -Icsrc/core -o $out/perfdata bench/perfdata.c \
    build/obj/core/*/*.o $(pkg-config --libs libelf libdw libzstd libtraceevent) -lz -liberty -lm
cat > $out/perfdata_deep.c <<'EOC'
#include <stdlib.h>
volatile unsigned long sink;
__attribute__((noinline)) void leaf(long n) { for (long i = 0; i < n; i++) sink += i; }
__attribute__((noinline)) void rec(int d, long n) { if (d == 0) leaf(n); else rec(d - 1, n); sink++; }
int main(int argc, char **argv) {
  long rounds = argc > 1 ? atol(argv[1]) : 1000;
  for (long r = 0; r < rounds; r++) rec(40 + (int)(r % 8), 20000);
  return 0;
}
EOC
cc -O1 -g -fno-omit-frame-pointer -fno-inline -o $out/perfdata_deep $out/perfdata_deep.c
data=$out/perfdata.data
MB=${MB:-100}
# Record until the file holds MB megabytes (about 380 bytes per sample).
rounds=${ROUNDS:-40000}
while :; do
    perf record -q -g -e cpu-clock -c 10000 -o $data -- sh -c \
        "$out/perfdata_deep $rounds & $out/perfdata_deep $rounds; wait" >/dev/null 2>&1
    size=$(($(stat -c %s $data) / 1048576))
    [ $size -ge $MB ] && break
    rounds=$((rounds * (MB + 10) / (size + 1)))
done
cpu() { /usr/bin/time -f "%U %S" -o $out/time.txt "$@" >/dev/null 2>&1; awk '{print $1 + $2}' $out/time.txt; }
samples=$(perf report -i $data --stats 2>/dev/null | awk '/SAMPLE events/ {print $3; exit}')
echo "perf.data: $size MB, $samples samples"
t_script=$(cpu perf script -i $data)
printf '%-32s %10.3f s %10.1f MB/s\n' "perf script > /dev/null" $t_script $(echo "$size / $t_script" | bc -l)
$out/perfdata $data 3 | while read name n t rate; do
    printf '%-32s %10.3f s %10.1f MB/s  %6.1fx perf script\n' "C $name" $t $rate \
        $(echo "$rate / ($size / $t_script)" | bc -l)
done
for lua in lua5.4 luajit; do
    command -v $lua >/dev/null || { echo "== $lua: not installed"; continue; }
    [ $lua = lua5.4 ] && cp=build || cp=build/luajit
    LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH="$cp/?.so;;" $lua bench/perfdata.lua $data |
    while read name n t rate; do
        printf '%-32s %10.3f s %10.1f MB/s  %6.1fx perf script\n' "$lua $name" $t $rate \
            $(echo "$rate / ($size / $t_script)" | bc -l)
    done
done
