#!/bin/sh
# Decode + aggregate benchmark: `perf record -g` of a deep-recursion program
# (>= 100k samples, ~44 frames each), then in the same run:
#   perf script and perf report --stdio on it (the reference),
#   bench/decode.c: the C path (stacktab__add_records over the data section,
#     and the perf.data reader + stacktab__add_record),
#   bench/decode.lua: f:profile(), the Lua iterator, and a live s:profile().
# All times are CPU seconds (user+sys), so a loaded machine counts less.
set -e
cd "$(dirname "$0")/.."
make -s all >/dev/null
make -s LUA=luajit all >/dev/null || true
out=build/bench
mkdir -p $out
cc -O2 -g -D_GNU_SOURCE -Icsrc/core -o $out/decode bench/decode.c \
    build/obj/core/*/*.o $(pkg-config --libs libelf libdw libzstd libtraceevent) -lz -liberty -lm
cat > $out/decode_deep.c <<'EOF'
#include <stdlib.h>
#include <time.h>
volatile unsigned long sink;
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec / 1e9; }
__attribute__((noinline)) void leaf(double end) { while (cpu() < end) for (int i = 0; i < 2000; i++) sink += i; }
/* recursion 40 deep, forking into two branches every 7 levels: ~100 distinct stacks */
__attribute__((noinline)) void rec(int d, int v, double end) {
  if (d == 0) leaf(end);
  else if (d % 7 == 0 && v) { rec(d - 1, 0, end - (end - cpu()) / 2); rec(d - 1, 0, end); }
  else rec(d - 1, v, end);
  sink++;
}
int main(int argc, char **argv) {
  rec(argc > 2 ? atoi(argv[2]) : 40, 1, cpu() + (argc > 1 ? atof(argv[1]) : 1));
  return 0;
}
EOF
cc -O1 -g -fno-omit-frame-pointer -fno-inline -o $out/decode_deep $out/decode_deep.c
data=$out/decode.data
perf record -q -g -e cpu-clock:u -c 20000 -o $data $out/decode_deep ${SECS:-4} 40 >/dev/null 2>&1

cpu() { /usr/bin/time -f "%U %S" -o $out/time.txt "$@" >/dev/null 2>&1; awk '{print $1 + $2}' $out/time.txt; }
samples=$(perf script -i $data -F pid 2>/dev/null | wc -l)
t_script=$(cpu perf script -i $data)
t_report=$(cpu perf report --stdio -i $data)
echo "perf.data: $samples samples, $(du -m $data | cut -f1) MB, $(perf script -i $data 2>/dev/null | awk 'NF==0{if(d)s+=d;c++;d=0;next} /cpu-clock/{next} {d++} END{printf "%.1f", s/c}') frames/sample"
printf '%-34s %8d samples %8.4f s %12.0f samples/s\n' "perf script" $samples $t_script \
    $(echo "$samples / $t_script" | bc)
printf '%-34s %8d samples %8.4f s %12.0f samples/s\n' "perf report --stdio" $samples $t_report \
    $(echo "$samples / $t_report" | bc)
$out/decode $data 20 | while read name n s rate rest; do
    printf '%-34s %8d samples %8.4f s %12.0f samples/s\n' "C $name (bench/decode.c)" $n $s $rate
done
for lua in lua5.4 luajit; do
    command -v $lua >/dev/null || { echo "== $lua: not installed"; continue; }
    [ $lua = lua5.4 ] && cp=build || cp=build/luajit
    echo "== $lua"
    LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH="$cp/?.so;;" $lua bench/decode.lua $data $out/decode_deep $samples
done
bulk=$($out/decode $data 20 | awk '/^bulk/{print $4}')
echo "C bulk path vs perf script: $(echo "scale=1; $bulk / ($samples / $t_script)" | bc)x;" \
     "vs perf report: $(echo "scale=1; $bulk / ($samples / $t_report)" | bc)x"
