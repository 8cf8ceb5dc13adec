#!/bin/sh
# Recording overhead and memory (issue 3): a CPU-bound program that reports
# its own run time (bench/cpu_work.c), run plain, under `perf record -F 999
# -g` and under `luaperf record -F 999 -g`, alternated in one run (ROUNDS
# rounds, each in another order), the median of each; and the peak RSS of
# each recorder (GNU time's %M of the recorder process tree).
set -e
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-7}
WORK=${WORK:-3000}
out=build/bench/overhead
mkdir -p "$out"
cc -O2 -g -fno-omit-frame-pointer -o "$out/cpu_work" bench/cpu_work.c

plain()   { "$out/cpu_work" "$WORK"; }
perfrec() { perf record -q -F 999 -g -o "$out/perf.data" -- "$out/cpu_work" "$WORK" 2>/dev/null; }
ourrec()  { bin/luaperf record -F 999 -g -o "$out/luaperf.data" -- "$out/cpu_work" "$WORK" 2>/dev/null | grep -E '^[0-9.]+$'; }

: > "$out/plain"; : > "$out/perf"; : > "$out/luaperf"
i=0
while [ $i -lt "$ROUNDS" ]; do
    case $((i % 3)) in
        0) plain >> "$out/plain"; perfrec >> "$out/perf"; ourrec >> "$out/luaperf" ;;
        1) perfrec >> "$out/perf"; ourrec >> "$out/luaperf"; plain >> "$out/plain" ;;
        2) ourrec >> "$out/luaperf"; plain >> "$out/plain"; perfrec >> "$out/perf" ;;
    esac
    i=$((i + 1))
done
median() { sort -n "$1" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
p=$(median "$out/plain"); q=$(median "$out/perf"); l=$(median "$out/luaperf")
echo "cpu_work $WORK rounds, median of $ROUNDS (seconds):"
awk -v p="$p" -v q="$q" -v l="$l" 'BEGIN {
    printf "  plain          %.3f\n", p
    printf "  perf record    %.3f  slowdown %+.2f%%\n", q, (q / p - 1) * 100
    printf "  luaperf record %.3f  slowdown %+.2f%%\n", l, (l / p - 1) * 100 }'

# Peak RSS of the recorder (the workload is small: its own RSS is ~1 MB).
rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }
pr=$(rss perf record -q -F 999 -g -o "$out/perf.data" -- "$out/cpu_work" "$WORK")
lr=$(rss bin/luaperf record -F 999 -g -o "$out/luaperf.data" -- "$out/cpu_work" "$WORK")
echo "peak RSS: perf record ${pr} KiB, luaperf record ${lr} KiB (ratio $(awk -v a="$lr" -v b="$pr" 'BEGIN{printf "%.2f", a/b}'))"
