#!/bin/sh
# Symbolizer benchmark: builds bench/symbols_bench.c against the core
# objects, runs it, and times the references on the same addresses in the
# same run (nm for loading libc's symbols, addr2line for lookups).
set -e
cd "$(dirname "$0")/.."
out=build/bench
mkdir -p $out
O=build/obj/core
for o in symbolizer addrspace dso dwarfline symtab kallsyms perfmap demangle; do
    make -s $O/$o.o >/dev/null
done
cc -O2 -g -D_GNU_SOURCE -Icsrc/core -o $out/symbols_bench bench/symbols_bench.c \
    $O/symbolizer.o $O/addrspace.o $O/dso.o $O/dwarfline.o $O/symtab.o $O/kallsyms.o \
    $O/perfmap.o $O/demangle.o $(pkg-config --libs libelf libdw) -lz -lstdc++
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
t_ref=$(ms perf report -i $data --stdio)
t_ours=$(ms env $lp lua5.4 bench/symbols_e2e.lua $data)
echo "e2e perf_report_stdio_ms $t_ref luaperf_ms $t_ours"
# perf reads its own copy of kallsyms from its build-id cache; the same file for us:
kid=$(perf buildid-list -k 2>/dev/null)
kc="$HOME/.debug/[kernel.kallsyms]/$kid/kallsyms"
if [ -n "$kid" ] && [ -r "$kc" ]; then
    echo "e2e luaperf_cached_kallsyms_ms $(ms env $lp lua5.4 bench/symbols_e2e.lua $data "$kc")"
fi
echo "ref kallsyms_read_ms $(ms cat /proc/kallsyms)"
