#!/bin/sh
# DWARF call graphs in the commands: a `perf record --call-graph dwarf` file
# of the shaped program built without frame pointers (>= 20k samples), read
# end to end by `luaperf flame --format folded`, `luaperf report --stdio` and
# `luaperf script -g` (read, decode, maps, unwind, symbolize, print), against
# perf's `perf script` and `perf report --stdio` on the same file, in one run
# (best of 3 wall times each).  The folded stacks are checked against perf
# script's first (spec/dwarf_cli_spec.lua does it sample by sample).
set -e
cd "$(dirname "$0")/.."
make -s all >/dev/null
out=build/bench
mkdir -p $out
prog=$out/shaped_nofp_cli
cc -O1 -g -fomit-frame-pointer -fno-inline -o $prog spec/progs/shaped.c
data=$out/dwarf_cli.data
[ -s $data ] || perf record -q --call-graph dwarf -F ${FREQ:-25000} -o $data $prog ${ROUNDS:-2000} >/dev/null 2>&1
ms() { s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
best() { b=; for i in 1 2 3; do t=$(ms "$@"); [ -z "$b" ] || [ "$t" -lt "$b" ] && b=$t; done; echo $b; }
n=$(perf script -i $data -F time 2>/dev/null | wc -l)
t_folded=$(best bin/luaperf flame -i $data --format folded -o -)
t_svg=$(best bin/luaperf flame -i $data -o $out/dwarf_cli.svg)
t_report=$(best bin/luaperf report -i $data --stdio)
t_script=$(best bin/luaperf script -g -i $data)
t_pscript=$(best perf script -i $data)
t_pscript_ni=$(best perf script --no-inline -i $data)
t_preport=$(best perf report -i $data --stdio)
rate() { echo $(( n * 1000 / ($1 + 1) )); }
r() { echo "scale=2; $1 / ($2 + 0.5)" | bc; }
echo "samples $n (perf.data $(du -m $data | cut -f1) MB)"
echo "luaperf flame --format folded      ${t_folded} ms  $(rate $t_folded) samples/s"
echo "luaperf flame (svg)                ${t_svg} ms  $(rate $t_svg) samples/s"
echo "luaperf report --stdio             ${t_report} ms  $(rate $t_report) samples/s"
echo "luaperf script -g                  ${t_script} ms  $(rate $t_script) samples/s"
echo "perf script                        ${t_pscript} ms  $(rate $t_pscript) samples/s"
echo "perf script --no-inline            ${t_pscript_ni} ms  $(rate $t_pscript_ni) samples/s"
echo "perf report --stdio                ${t_preport} ms  $(rate $t_preport) samples/s"
echo "ratios: folded vs perf script $(r $t_pscript $t_folded)x; report vs perf report" \
     "$(r $t_preport $t_report)x; luaperf script -g vs perf script --no-inline $(r $t_pscript_ni $t_script)x"
