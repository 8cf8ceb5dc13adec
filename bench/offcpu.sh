#!/bin/sh
# The cost of off-CPU recording (issue 20): every switch-out of the target
# is a sample with its call chain, every switch a SWITCH record.  A program
# that blocks N times in 1 us nanosleeps (spec/progs/offcpu_work.c
# "switch", about one voluntary switch-out each) is timed plain, under
# `luaperf record --off-cpu` and under `perf record -e context-switches
# -c 1 -g --switch-events` (the same kernel work, with perf's writer: the
# reference for what the kernel side costs), alternated, ROUNDS rounds, the
# median of each; the cost per switch-out is (time - plain) / N.
set -e
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
N=${N:-50000}
out=build/bench/offcpu
mkdir -p "$out"
make -s progs
prog=build/progs/offcpu_work

now() { date +%s.%N; }
timed() { t0=$(now); "$@" >/dev/null 2>&1; t1=$(now); echo "$t1 - $t0" | bc -l; }
plain()   { timed "$prog" switch "$N"; }
ourrec()  { timed bin/luaperf record --off-cpu -o "$out/luaperf.data" -- "$prog" switch "$N"; }
perfrec() { timed perf record -q -e context-switches -c 1 -g --switch-events -o "$out/perf.data" -- "$prog" switch "$N"; }

: > "$out/plain"; : > "$out/luaperf"; : > "$out/perf"
i=0
while [ $i -lt "$ROUNDS" ]; do
    case $((i % 3)) in
        0) plain >> "$out/plain"; ourrec >> "$out/luaperf"; perfrec >> "$out/perf" ;;
        1) ourrec >> "$out/luaperf"; perfrec >> "$out/perf"; plain >> "$out/plain" ;;
        2) perfrec >> "$out/perf"; plain >> "$out/plain"; ourrec >> "$out/luaperf" ;;
    esac
    i=$((i + 1))
done
median() { sort -n "$1" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
p=$(median "$out/plain"); l=$(median "$out/luaperf"); q=$(median "$out/perf")
# what the last luaperf recording kept: samples, switch-outs, bytes
summary=$(bin/luaperf record --off-cpu -o "$out/luaperf.data" -- "$prog" switch "$N" 2>&1 >/dev/null | grep 'off-CPU samples' || true)
size=$(stat -c %s "$out/luaperf.data")
echo "offcpu_work switch $N, median of $ROUNDS rounds (seconds, wall):"
awk -v p="$p" -v l="$l" -v q="$q" -v n="$N" 'BEGIN {
    printf "  plain                                  %.3f\n", p
    printf "  luaperf record --off-cpu               %.3f  +%.2f us per switch-out\n", l, (l - p) / n * 1e6
    printf "  perf record -e cs -c 1 -g --switch-ev  %.3f  +%.2f us per switch-out\n", q, (q - p) / n * 1e6 }'
echo "  $summary"
echo "  luaperf's file: $size bytes ($(awk -v s="$size" -v n="$N" 'BEGIN{printf "%.0f", s/n}') per nap)"
