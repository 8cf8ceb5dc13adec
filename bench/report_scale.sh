#!/bin/sh
# Reports at the scale of real system-wide recordings: `perf record -a -g
# -F 4999` of a mixed workload (bench/mixed_workload.sh: gcc, gzip, python3,
# idle gaps) at >= 150k and >= 800k samples, read by luaperf report, flame
# and script against perf report and perf script, in one run (median of
# RUNS wall times and peak RSS, GNU time's %e and %M); then how luaperf
# report and flame grow with samples and distinct stacks over four captures
# of 5, 10, 20 and 40 seconds, beside perf report.
# The recordings are cached under build/bench/scale (remove them to record
# again). Figures go to stdout as markdown; bench/report_scale.md keeps a copy.
#
# RUNS (default 3): runs of each command; a command whose first run takes
# more than SLOW seconds (default 15) is run once. LIMIT (default 120):
# seconds before a run is killed; a command killed on the smaller file, or
# whose time there scaled by the sample counts is over LIMIT, is not run on
# the larger one (shown as ">LIMIT", with the estimate).
set -e
cd "$(dirname "$0")/.."
out=build/bench/scale
mkdir -p "$out"
RUNS=${RUNS:-3}
SLOW=${SLOW:-15}
LIMIT=${LIMIT:-120}
[ -f build/perf/core.so ] || make -s >/dev/null

samples_of() {
    [ -s "$1" ] || { echo 0; return; }
    perf report -i "$1" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }'
}

# record FILE SECONDS MIN_SAMPLES: a system-wide capture of the workload,
# unless FILE is there with enough samples; a short one is recorded again,
# longer in proportion (cpu-clock samples idle CPUs too, so the count is
# about 2 x 4999 a second on 2 CPUs, less when the box is loaded).
record() {
    f=$1 secs=$2 want=$3 try=0
    n=$(samples_of "$f")
    while [ "$n" -eq 0 ] || [ "$n" -lt "$want" ]; do
        [ "$try" -lt 3 ] || { echo "report_scale: $f: $n samples < $want after 3 tries" >&2; exit 1; }
        if [ "$n" -gt 0 ]; then
            secs=$(awk -v s="$secs" -v n="$n" -v w="$want" 'BEGIN { printf "%d", s * w * 1.1 / n + 1 }')
        fi
        echo "report_scale: recording $f ($secs s system-wide)" >&2
        perf record -q -a -g -F 4999 -o "$f.tmp" -- sh bench/mixed_workload.sh "$secs" >/dev/null 2>&1
        mv "$f.tmp" "$f"
        n=$(samples_of "$f")
        try=$((try + 1))
    done
}

record "$out/mid.data" 20 150000
record "$out/big.data" 85 800000
for s in 5 10 20 40; do record "$out/grow$s.data" "$s" 0; done

# measure_once NAME CMD...: one run of CMD (stdout dropped) under GNU time,
# its "seconds KiB" added to $out/m.NAME.runs ("timeout" when killed); none
# once a run timed out or the first took over SLOW seconds.
measure_once() {
    name=$1; shift
    runs=$out/m.$name.runs
    if [ -s "$runs" ]; then
        grep -q timeout "$runs" && return 0
        awk -v s="$SLOW" 'NR == 1 { exit !($1 > s) }' "$runs" && return 0
    fi
    rc=0
    timeout "$LIMIT" /usr/bin/time -f '%e %M' -o "$out/m.time" "$@" >/dev/null 2>"$out/m.err" || rc=$?
    if [ "$rc" -eq 124 ] || [ ! -s "$out/m.time" ]; then
        echo timeout >> "$runs"
        rm -f "$out/m.time"
        return 0
    fi
    [ "$rc" -eq 0 ] || echo "report_scale: $* exited with $rc: $(tail -1 "$out/m.err")" >&2
    tail -1 "$out/m.time" >> "$runs"
    rm -f "$out/m.time"
}
# finish NAME: the median time and, on its own, the median RSS of NAME's
# runs in $out/m.NAME ("seconds KiB runs"), or "timeout".
finish() {
    runs=$out/m.$1.runs
    if grep -q timeout "$runs"; then
        echo timeout > "$out/m.$1"
        return 0
    fi
    t=$(sort -n "$runs" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    m=$(sort -n -k2 "$runs" | awk '{ v[NR] = $2 } END { print v[int((NR + 1) / 2)], NR }')
    echo "$t $m" > "$out/m.$1"
}
# measure NAME CMD...: RUNS runs of CMD in a row (the growth table's)
measure() {
    : > "$out/m.$1.runs"
    i=0
    while [ "$i" -lt "$RUNS" ]; do
        measure_once "$@"
        i=$((i + 1))
    done
    finish "$1"
}
secs() {
    case $(cat "$out/m.$1") in
    timeout) echo ">$LIMIT" ;;
    skip*) awk -v l="$LIMIT" '{ printf ">%s (est. %.0f)", l, $2 }' "$out/m.$1" ;;
    *) awk '{ print $1 }' "$out/m.$1" ;;
    esac
}
mb() {
    case $(cat "$out/m.$1") in
    timeout|skip*) echo "?" ;;
    *) awk '{ printf "%.0f", $2 / 1024 }' "$out/m.$1" ;;
    esac
}
# skip_big NAME: true (and m.big.NAME says why) when the command is not
# worth running on the big file: killed on the mid one, or its time there
# scaled by the sample counts is over LIMIT
skip_big() {
    case $(cat "$out/m.mid.$1") in
    timeout) echo timeout > "$out/m.big.$1"; return 0 ;;
    esac
    est=$(awk -v a="$n_mid" -v b="$n_big" '{ printf "%.0f", $1 * b / a }' "$out/m.mid.$1")
    [ "$est" -gt "$LIMIT" ] || return 1
    echo "skip $est" > "$out/m.big.$1"
}
# ratio A B: A/B, "faster"/"slower" when it is a time ratio (perf/luaperf)
ratio() {
    case "$1" in '>'*) echo "?"; return ;; esac
    case "$2" in
    '>'*) awk -v a="$1" -v b="${2#>}" 'BEGIN { printf "< %.2fx slower", a / b }'; return ;;
    esac
    awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) b = 0.005; r = a / b
        printf "%.2fx %s", r, (r >= 1 ? "faster" : "slower") }'
}
mratio() {
    case "$1$2" in *'?'*) echo "?"; return ;; esac
    awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'
}

L=bin/luaperf
# Each luaperf command runs right after the perf command it is compared
# with, RUNS rounds of all of them: the load of this shared machine drifts
# over minutes, and both sides of a ratio see the same drift.
# (name:command; perf script is run before each command compared with it)
run_file() {
    f=$1 k=$2
    set -- pr:"perf report -i $f --stdio -g none" lr:"$L report -i $f --stdio" \
        prn:"perf report -i $f --stdio --no-children -g none" \
        lrn:"$L report -i $f --stdio --no-children" \
        prg:"perf report -i $f --stdio" lrg:"$L report -i $f --stdio -g" \
        prng:"perf report -i $f --stdio --no-children" \
        lrng:"$L report -i $f --stdio --no-children -g" \
        ps:"perf script -i $f" lff:"$L flame -i $f --format folded -o $out/$k.folded" \
        ps:"perf script -i $f" lfs:"$L flame -i $f -o $out/$k.svg" \
        ps:"perf script -i $f" ls:"$L script -i $f"
    for p in "$@"; do
        : > "$out/m.$k.${p%%:*}.runs"
    done
    round=0
    while [ "$round" -lt "$RUNS" ]; do
        for p in "$@"; do
            name=${p%%:*}
            [ "$k" = big ] && skip_big "$name" && continue
            # shellcheck disable=SC2086
            measure_once "$k.$name" ${p#*:}
        done
        round=$((round + 1))
    done
    for p in "$@"; do
        name=${p%%:*}
        [ "$k" = big ] && skip_big "$name" && continue
        finish "$k.$name"
    done
}

row() { # label luaperf-key perf-key
    echo "| $1 | $(secs "$2") | $(secs "$3") | $(ratio "$(secs "$3")" "$(secs "$2")") | $(mb "$2") | $(mb "$3") | $(mratio "$(mb "$2")" "$(mb "$3")") |"
}
table() {
    f=$1 k=$2
    echo "Input: \`$f\`: $(samples_of "$f") samples, $(wc -l < "$out/$k.folded" 2>/dev/null || echo '?') distinct folded stacks, $(du -h "$f" | cut -f1)."
    echo
    echo "| luaperf command (vs perf command) | luaperf s | perf s | perf/luaperf | luaperf MB | perf MB | luaperf/perf MB |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    row "\`report --stdio\` (vs \`perf report --stdio -g none\`)" "$k.lr" "$k.pr"
    row "\`report --stdio --no-children\` (vs \`perf report --stdio --no-children -g none\`)" "$k.lrn" "$k.prn"
    row "\`report --stdio -g\` (vs \`perf report --stdio\`)" "$k.lrg" "$k.prg"
    row "\`report --stdio --no-children -g\` (vs \`perf report --stdio --no-children\`)" "$k.lrng" "$k.prng"
    row "\`flame --format folded\` (vs \`perf script\`)" "$k.lff" "$k.ps"
    row "\`flame -o out.svg\` (vs \`perf script\`)" "$k.lfs" "$k.ps"
    row "\`script\` (vs \`perf script\`)" "$k.ls" "$k.ps"
    echo
}

n_mid=$(samples_of "$out/mid.data")
n_big=$(samples_of "$out/big.data")
run_file "$out/mid.data" mid
run_file "$out/big.data" big

echo "## luaperf report, flame and script vs perf on system-wide recordings ($(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD), $(nproc) cores, perf $(perf --version | awk '{ print $3 }'))"
echo
echo "Recordings: \`perf record -a -g -F 4999 -- sh bench/mixed_workload.sh SECONDS\` (cpu-clock;"
echo "gcc -O2, gzip -6, python3 json, sleep gaps, on two lanes). Median of up to $RUNS wall"
echo "times and peak RSS (GNU time %e, %M) each, stdout to /dev/null, each luaperf run"
echo "right after a run of the perf command it is compared with; a command whose"
echo "first run took over $SLOW s ran once; \`>$LIMIT\`: killed after $LIMIT s, or not run"
echo "on the big file when its time on the mid one scaled by the samples (est.) is over. luaperf"
echo "report prints no call graph by default, perf report prints one for files with call"
echo "chains: so plain luaperf report is compared with \`perf report -g none\`, and"
echo "\`luaperf report -g\` with perf report's default. Targets: report >= 5x faster,"
echo "flame >= 10x faster than perf script, script >= 1.5x faster, peak RSS <= perf's."
echo
table "$out/mid.data" mid
table "$out/big.data" big

echo "### Growth with samples and distinct stacks"
echo
echo "Four captures of 5, 10, 20 and 40 s of the same workload (median of up to $RUNS)."
echo
echo "| capture | samples | distinct stacks | luaperf report s | MB | luaperf flame folded s | MB | perf report -g none s | MB |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for s in 5 10 20 40; do
    f=$out/grow$s.data k=g$s
    measure "$k.lr" $L report -i "$f" --stdio
    measure "$k.lff" $L flame -i "$f" --format folded -o "$out/$k.folded"
    measure "$k.pr" perf report -i "$f" --stdio -g none
    echo "| ${s} s | $(samples_of "$f") | $(wc -l < "$out/$k.folded" 2>/dev/null || echo '?') | $(secs "$k.lr") | $(mb "$k.lr") | $(secs "$k.lff") | $(mb "$k.lff") | $(secs "$k.pr") | $(mb "$k.pr") |"
done
