#!/bin/sh
# Cost per probe hit and per system call traced (issue 19).  Figures:
# bench/trace.md.
#   probe hit: build/progs/known_calls loop N (a tight loop calling
#     probe_target) unprobed, under luaperf stat -e uprobe:/uretprobe:, and
#     under perf stat -e on perf probe's tracefs uprobe (removed after);
#   system call: known_calls syscalls N (4N calls: getppid, a failing
#     openat, a failing close, a write to /dev/null) plain, under luaperf
#     trace -s, perf trace -s and strace -c -f.
# Each figure is the median of R runs (env R, default 5) of wall time.
set -e
cd "$(dirname "$0")/.."
make -s all progs >/dev/null
P=build/progs/known_calls
N=${N:-1000000}
S=${S:-100000}
R=${R:-5}
now() { date +%s%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
timeit() {   # command... -> median ns
    i=0
    while [ $i -lt $R ]; do
        t0=$(now); "$@" >/dev/null 2>&1; t1=$(now)
        echo $((t1 - t0))
        i=$((i + 1))
    done | median
}
per() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.0f", (a - b) / n }'; }

base=$(timeit $P loop $N)
up=$(timeit bin/luaperf stat -e uprobe:$P:probe_target -- $P loop $N)
both=$(timeit bin/luaperf stat -e uprobe:$P:probe_target,uretprobe:$P:probe_target -- $P loop $N)
empty=$(timeit bin/luaperf stat -e task-clock -- $P loop $N)
grp=lpbench$$
ref=none
if perf probe -q -x "$(pwd)/$P" -a $grp:hit=probe_target 2>/dev/null; then
    ref=$(timeit perf stat -e $grp:hit -- $P loop $N)
    pbase=$(timeit perf stat -e task-clock -- $P loop $N)
    perf probe -q -d "$grp:*" >/dev/null 2>&1 || true
fi
echo "probe hit, $N calls (median of $R, wall):"
echo "  unprobed loop                     $((base / 1000000)) ms"
echo "  luaperf stat, task-clock only     $((empty / 1000000)) ms"
echo "  luaperf stat -e uprobe            $((up / 1000000)) ms   = $(per $up $empty $N) ns per hit"
echo "  luaperf stat -e uprobe,uretprobe  $((both / 1000000)) ms   = $(per $both $empty $N) ns per call"
[ "$ref" != none ] && echo "  perf stat -e (perf probe uprobe)  $((ref / 1000000)) ms   = $(per $ref $pbase $N) ns per hit"

sbase=$(timeit $P syscalls $S)
ours=$(timeit bin/luaperf trace -s -- $P syscalls $S)
perf_s=$(timeit perf trace -s -- $P syscalls $S)
strace_c=$(timeit strace -f -c -o /dev/null $P syscalls $S)
calls=$((4 * S))
echo "system calls, $calls (median of $R, wall):"
echo "  untraced                          $((sbase / 1000000)) ms"
echo "  luaperf trace -s                  $((ours / 1000000)) ms   = $(per $ours $sbase $calls) ns per call"
echo "  perf trace -s                     $((perf_s / 1000000)) ms   = $(per $perf_s $sbase $calls) ns per call"
echo "  strace -c -f                      $((strace_c / 1000000)) ms   = $(per $strace_c $sbase $calls) ns per call"
