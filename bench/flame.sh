#!/bin/sh
# Flame graph benchmark: a perf.data of >= 100k samples with call chains
# to SVG, end to end (luaperf flame), against `perf script` alone (the first
# stage of perf's flame graph pipeline) and `perf report --stdio` on the
# same file, in one run (median of 5 wall times each); then the SVG (and a
# synthetic one at the box cap) opened and zoomed in headless Chromium.
# Figures go to stdout as markdown; bench/flame.md keeps a copy.
set -e
cd "$(dirname "$0")/.."
out=build/bench
mkdir -p "$out"
data=$out/flame.data
prog=build/progs/shaped
[ -x "$prog" ] || make progs >/dev/null

if [ ! -s "$data" ]; then
    # cpu-clock every 40 us: about 25k samples a second of the workload
    perf record -q -e cpu-clock -c 40000 -g -o "$data" "$prog" 12000 >/dev/null 2>&1
fi

now() { date +%s.%N; }
# median wall time of 5 runs of "$@" (stdout and stderr dropped)
median() {
    for i in 1 2 3 4 5; do
        t0=$(now); "$@" >/dev/null 2>&1; t1=$(now)
        echo "$t0 $t1" | awk '{ printf "%.4f\n", $2 - $1 }'
    done | sort -n | sed -n 3p
}

samples=$(bin/luaperf flame -i "$data" -o "$out/flame.svg" 2>&1 | sed -n 's/.*svg, \([0-9]*\) samples.*/\1/p')
stacks=$(bin/luaperf flame -i "$data" --format folded -o - 2>/dev/null | wc -l)
t_lua=$(median bin/luaperf flame -i "$data" -o "$out/flame.svg")
t_script=$(median perf script -i "$data")
t_report=$(median perf report -i "$data" --stdio)
t_folded=$(median bin/luaperf flame -i "$data" --format folded -o "$out/flame.folded")
t_lreport=$(median bin/luaperf report -i "$data" --stdio)

# a synthetic profile at the renderer's box cap (30000 boxes)
SVG=$out/big.svg LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="build/?.so;;" lua5.4 -e '
local lines = {}
for i = 1, 6000 do
  lines[#lines + 1] = string.format("main;m%03d;f%05d;g;h 1", i % 300, i)
end
local list = require("perf.folded").parse(table.concat(lines, "\n"))
local svg, info = require("perf.flame").render(list, { minwidth = 0 })
io.open(os.getenv("SVG"), "wb"):write(svg)
io.stderr:write(info.boxes, " boxes, ", #svg, " bytes\n")' 2>"$out/big.info"

browser() {
    printf '[{"op":"open","url":"file://%s"},{"op":"click","expr":"document.querySelectorAll(\\"g.f\\")[%s]"},{"op":"open","url":"file://%s?again"},{"op":"click","expr":"document.querySelectorAll(\\"g.f\\")[%s]"}]' \
        "$(pwd)/$1" "$2" "$(pwd)/$1" "$2" | python3 spec/browser/drive.py 2>/dev/null
}
b1=$(browser "$out/flame.svg" 3)
b2=$(browser "$out/big.svg" 5)
ms() { echo "$1" | sed 's/.*"results": \[//' | tr '}' '\n' | grep -o '"ms": [0-9.]*' | sed -n "$2p" | awk '{ printf "%.0f", $2 }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fx", a / b }'; }
echo "## luaperf flame vs perf ($(date -u +%Y-%m-%d), $(nproc) cores, perf $(perf --version | awk '{print $3}'))"
echo
echo "Input: \`$data\`: $samples samples, $stacks unique folded stacks, $(du -h "$data" | cut -f1)."
echo
echo "| command (median of 5 wall times) | seconds | luaperf flame is |"
echo "| --- | --- | --- |"
echo "| \`bin/luaperf flame -i $data -o flame.svg\` (end to end) | $t_lua | |"
echo "| \`perf script -i $data > /dev/null\` | $t_script | $(ratio "$t_script" "$t_lua") faster |"
echo "| \`perf report -i $data --stdio > /dev/null\` | $t_report | $(ratio "$t_report" "$t_lua") faster |"
echo "| \`bin/luaperf flame ... --format folded\` | $t_folded | |"
echo "| \`bin/luaperf report -i $data --stdio\` | $t_lreport | $(ratio "$t_report" "$t_lreport") faster than perf report |"
echo
echo "Headless Chromium (spec/browser/drive.py): navigation to the load event (first: a fresh"
echo "browser's first page; second: the same file opened again), then a click on a box until its"
echo "zoom has run:"
echo
echo "| SVG | size | first open ms | click-zoom ms | second open ms | click-zoom ms |"
echo "| --- | --- | --- | --- | --- | --- |"
echo "| $out/flame.svg | $(du -h "$out/flame.svg" | cut -f1) | $(ms "$b1" 1) | $(ms "$b1" 2) | $(ms "$b1" 3) | $(ms "$b1" 4) |"
echo "| $out/big.svg ($(cut -d, -f1 "$out/big.info")) | $(du -h "$out/big.svg" | cut -f1) | $(ms "$b2" 1) | $(ms "$b2" 2) | $(ms "$b2" 3) | $(ms "$b2" 4) |"
