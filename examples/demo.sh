#!/bin/sh
# The quick start (`make demo`): records the bundled workload (the shaped
# call tree of spec/progs/shaped.c) with call chains, prints the top
# functions, and writes flame.svg.  `make demo` has built everything first.
set -e
cd "$(dirname "$0")/.."
data=build/demo.data
prog=build/progs/shaped
[ -x "$prog" ] || { echo "demo: $prog is missing: run make progs" >&2; exit 1; }

echo "== recording $prog with call chains (about one second)"
# luaperf record writes a perf.data that perf reads too.
bin/luaperf record -F 999 -g -o "$data" -- "$prog" 3000
echo
echo "== top functions (self), as perf report --no-children shows them"
bin/luaperf report -i "$data" --no-children --sort sym --rows 10

echo "== top functions with their callees (children)"
bin/luaperf report -i "$data" --children --sort sym --rows 8

bin/luaperf flame -i "$data" -o flame.svg
echo
echo "flame.svg written: open it in a browser (click a box to zoom, Search"
echo "to highlight a function and see its share).  Also try:"
echo "  bin/luaperf flame -i $data --format folded -o -"
echo "  bin/luaperf flame -i $data --inverted -o icicle.svg"
echo "  bin/luaperf flame -i $data --format pprof -o profile.pb.gz   # go tool pprof -top"
