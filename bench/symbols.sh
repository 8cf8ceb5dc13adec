#!/bin/sh
# Symbolizer benchmark: builds bench/symbols_bench.c against the core
# objects, runs it, and times the references on the same addresses in the
# same run (nm for loading libc's symbols, addr2line for lookups).
set -e
cd "$(dirname "$0")/.."
out=build/bench
mkdir -p $out
O=build/obj/core/symbol
for o in symbolizer addrspace dso dwarfline symtab kallsyms perfmap demangle; do
    make -s $O/$o.o >/dev/null
done
cc -O2 -g -D_GNU_SOURCE -Icsrc/core -o $out/symbols_bench bench/symbols_bench.c \
    $O/symbolizer.o $O/addrspace.o $O/dso.o $O/dwarfline.o $O/symtab.o $O/kallsyms.o \
    $O/perfmap.o $O/demangle.o $(pkg-config --libs libelf libdw) -lz -liberty
N=${N:-100000}
# libc as shipped, without the build id and debuglink that lead to libc6-dbg's
# file: the .dynsym-only load (what a machine without debug packages does).
libc=$(ldd $out/symbols_bench | sed -n 's/.*libc.so.6 => \([^ ]*\).*/\1/p')
objcopy --remove-section .note.gnu.build-id --remove-section .gnu_debuglink "$libc" $out/libc-nodebug.so
$out/symbols_bench $N $out/symbols_addrs.txt $out/libc-nodebug.so | tee $out/symbols.txt
libc=$(sed -n 's/^libc: \([^,]*\),.*/\1/p' $out/symbols.txt)
ms() { s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
echo "ref nm_D_libc_ms $(ms nm -D --defined-only "$libc")"
n=$(wc -l < $out/symbols_addrs.txt)
t=$(ms sh -c "addr2line -f -e '$libc' < $out/symbols_addrs.txt")
echo "ref addr2line_f_ms $t for $n addresses ($(( n * 1000 / (t + 1) )) addresses/s)"

# End to end on a ~100k-sample perf.data (perf record -g, cpu-clock every 20us).
if ! make -s all progs >/dev/null 2>&1; then echo "e2e skipped: the module does not build"; exit 0; fi
data=$out/symbols_e2e.data
perf record -q -g -e cpu-clock -c 20000 -o $data -- build/progs/sym_prog 2000 exit >/dev/null 2>&1
echo "e2e_samples $(perf report -i $data --stdio 2>/dev/null | sed -n 's/^# Samples: \([^ ]*\) .*/\1/p')"
lp="LUA_PATH=lua/?.lua;lua/?/init.lua;; LUA_CPATH=build/?.so;;"
# median of 11 wall times (ms, one decimal), the two commands alternating so
# that machine noise hits both alike (a burst of noise on this shared VM can
# cover 3 of 5 runs of the 25 ms side)
R=${E2E_ROUNDS:-11}
med() { sort -n | sed -n "$(( (R + 1) / 2 ))p"; }
now() { date +%s%N; }
: > $out/e2e.ref; : > $out/e2e.ours
for i in $(seq $R); do
    s=$(now); perf report -i $data --stdio >/dev/null 2>&1; e=$(now)
    echo $(( (e - s) / 100000 )) >> $out/e2e.ref
    s=$(now); env $lp lua5.4 bench/symbols_e2e.lua $data >/dev/null 2>&1; e=$(now)
    echo $(( (e - s) / 100000 )) >> $out/e2e.ours
done
t_ref=$(med < $out/e2e.ref); t_ours=$(med < $out/e2e.ours)
ms1() { awk '{ printf "%s%.1f", (NR > 1 ? " " : ""), $1 / 10 }' "$1"; }
echo "e2e perf_report_stdio_ms $(echo $t_ref | awk '{printf "%.1f", $1/10}') luaperf_ms $(echo $t_ours | awk '{printf "%.1f", $1/10}') ratio $(awk -v a=$t_ref -v b=$t_ours 'BEGIN{printf "%.1fx", a/b}') (medians of $R; perf report: $(ms1 $out/e2e.ref); luaperf: $(ms1 $out/e2e.ours))"
# perf reads its own copy of kallsyms from its build-id cache, and so does
# perf.stacks.load (found through the file's build ids); /proc/kallsyms:
echo "ref kallsyms_read_ms $(ms cat /proc/kallsyms)"
