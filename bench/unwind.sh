#!/bin/sh
# DWARF unwinding benchmark: a `perf record --call-graph dwarf` file of the
# shaped program built without frame pointers (>= 20k samples), unwound by
# bench/unwind_bench.c (the core's reader, symbolizer and unwinder) and by
# `perf script` in the same run; the stacks must be identical (checked by
# bench/unwind.lua, sample by sample, every user frame).
set -e
cd "$(dirname "$0")/.."
make -s all >/dev/null
out=build/bench
mkdir -p $out
# An archive, so only the objects the harness needs are linked in.
rm -f $out/unwind_core.a
ar rcs $out/unwind_core.a build/obj/core/*/*.o
cc -O2 -g -D_GNU_SOURCE -Icsrc/core -o $out/unwind_bench bench/unwind_bench.c \
    $out/unwind_core.a $(pkg-config --libs libelf libdw libzstd) -lz -liberty
cc -O1 -g -fomit-frame-pointer -fno-inline -o $out/shaped_nofp spec/progs/shaped.c
data=$out/unwind.data
ROUNDS=${ROUNDS:-2000}
FREQ=${FREQ:-25000}
perf record -q --call-graph dwarf -F $FREQ -o $data $out/shaped_nofp $ROUNDS >/dev/null 2>&1
ms() { s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }

# Identical stacks first: our frames against perf script's, sample by sample.
perf script -i $data -F pid,tid,time,ip,sym,dso --no-inline > $out/unwind.perf.txt 2>/dev/null
$out/unwind_bench -p -s $data > $out/unwind.ours.txt 2>/dev/null
lua5.4 bench/unwind.lua $out/unwind.perf.txt $out/unwind.ours.txt

# Then time, best of 3 each.
best() { b=; for i in 1 2 3; do t=$(ms "$@"); [ -z "$b" ] || [ "$t" -lt "$b" ] && b=$t; done; echo $b; }
n=$($out/unwind_bench $data 2>&1 | sed -n 's/.*unwound \([0-9]*\).*/\1/p')
t_ours=$(best $out/unwind_bench $data)
t_ours_slow=$(best $out/unwind_bench -S $data)
t_ours_print=$(best sh -c "$out/unwind_bench -p -s $data")
t_perf=$(best perf script -i $data)
t_perf_min=$(best perf script -i $data -F pid,tid,time,ip,sym,dso --no-inline)
rate() { echo $(( n * 1000 / ($1 + 1) )); }
echo "samples $n (perf.data $(du -m $data | cut -f1) MB)"
echo "luaperf unwind (read+decode+maps+unwind)      ${t_ours} ms  $(rate $t_ours) samples/s"
echo "luaperf unwind, libdwfl steps only (-S)       ${t_ours_slow} ms  $(rate $t_ours_slow) samples/s"
echo "luaperf unwind + symbolize + print            ${t_ours_print} ms  $(rate $t_ours_print) samples/s"
echo "perf script (default)                         ${t_perf} ms  $(rate $t_perf) samples/s"
echo "perf script -F pid,tid,time,ip,sym,dso --no-inline  ${t_perf_min} ms  $(rate $t_perf_min) samples/s"
echo "ratio unwind vs perf script: $(echo "scale=2; $t_perf / ($t_ours + 0.5)" | bc)x;" \
     "printed vs same-fields perf script: $(echo "scale=2; $t_perf_min / ($t_ours_print + 0.5)" | bc)x"
