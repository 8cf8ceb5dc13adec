#!/bin/sh
# The query API (f:report, f:paths, f:timeline) on the system-wide
# recordings of bench/report_scale.sh (build/bench/scale/{mid,big}.data,
# recorded there when missing), each query in a fresh process (open, one
# pass, rows), against the perf invocation that answers the same question,
# in one run: median of RUNS (default 3; RUNS_BIG, default 1, on the big
# file, where perf takes up to a minute a query) wall times and peak RSS
# (GNU time). Figures go to stdout as markdown; bench/query_scale.md keeps
# a copy.
set -e
cd "$(dirname "$0")/.."
out=build/bench/scale
RUNS=${RUNS:-3}
[ -f build/perf/core.so ] || make -s >/dev/null
if [ ! -s "$out/mid.data" ] || [ ! -s "$out/big.data" ]; then
    echo "query_scale: recording through bench/report_scale.sh" >&2
    sh bench/report_scale.sh >/dev/null
fi

# measure CMD...: "seconds MB", medians of RUNS runs, stdout dropped
measure() {
    : > "$out/q.runs"
    i=0
    while [ "$i" -lt "$RUNS" ]; do
        /usr/bin/time -f '%e %M' -o "$out/q.time" "$@" >/dev/null 2>"$out/q.err" ||
            echo "query_scale: $* failed: $(tail -1 "$out/q.err")" >&2
        tail -1 "$out/q.time" >> "$out/q.runs"
        i=$((i + 1))
    done
    t=$(sort -n "$out/q.runs" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    m=$(sort -n -k2 "$out/q.runs" | awk '{ v[NR] = $2 } END { printf "%.0f", v[int((NR + 1) / 2)] / 1024 }')
    echo "$t $m"
}

Q="env LUA_PATH=lua/?.lua;lua/?/init.lua;; LUA_CPATH=build/?.so;; lua5.4 bench/query.lua"
for k in mid big; do
    f=$out/$k.data
    [ "$k" = big ] && RUNS=${RUNS_BIG:-1}
    echo
    echo "Input: \`$f\`: $(perf report -i "$f" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }') samples, $(du -h "$f" | cut -f1)."
    echo
    echo "| query | luaperf s | MB | perf invocation | perf s | MB | perf/luaperf |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    while IFS='|' read -r name lua pcmd; do
        # shellcheck disable=SC2086
        set -- $(measure $Q "$f" "$name")
        lt=$1 lm=$2
        # shellcheck disable=SC2086
        set -- $(measure $pcmd -i "$f")
        awk -v n="$lua" -v lt="$lt" -v lm="$lm" -v p="$pcmd" -v pt="$1" -v pm="$2" 'BEGIN {
            if (lt == 0) lt = 0.005
            printf "| `%s` | %s | %s | `%s` | %s | %s | %.1fx faster |\n", n, lt, lm, p, pt, pm, pt / lt }'
    done <<'TABLE'
comm_dso|f:report{ by = {"comm", "dso"} }|perf report --stdio --no-children -g none --sort comm,dso
comm|f:report{ by = "comm" }|perf report --stdio --no-children -g none --sort comm
sym_children|f:report{ by = "sym", children = true }|perf report --stdio --children -g none --sort sym
dso_of_gzip|f:report{ by = "dso", where = { comm = "gzip" } }|perf report --stdio --no-children -g none --comms gzip --sort dso
cpu|f:report{ by = "cpu" }|perf report --stdio --no-children -g none --sort cpu
callers|f:paths{ ending = "_PyObject_Malloc", top = 20 }|perf report --stdio --no-children -G --symbols _PyObject_Malloc
timeline|f:timeline{ bucket = 1, by = "comm" }|perf script -F comm,time
TABLE
done
rm -f "$out/q.runs" "$out/q.err" "$out/q.time"
