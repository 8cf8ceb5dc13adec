#!/bin/sh
# bin/luaperf runs its interpreter with glibc's heap in huge pages
# (GLIBC_TUNABLES=glibc.malloc.hugetlb=1).  This compares each report
# command on a system-wide recording with and without it, alternated in
# ABBA order ROUNDS times (default 8): wall, user and system seconds, peak
# RSS and minor faults (GNU time), min and median of each side.  Without
# it means LUAPERF_GLIBC_TUNABLES set (empty), which bin/luaperf reads as
# "the caller's value is kept already" and leaves the heap alone.
#   sh bench/heap_tuning.sh [FILE]   (default build/bench/scale/big.data,
#   which bench/report_scale.sh records)
set -e
cd "$(dirname "$0")/.."
f=${1:-build/bench/scale/big.data}
ROUNDS=${ROUNDS:-8}
[ -f "$f" ] || { echo "heap_tuning: no $f (sh bench/report_scale.sh records it)" >&2; exit 1; }
[ -f build/perf/core.so ] || make -s >/dev/null
o=$(mktemp -d)
trap 'rm -rf "$o"' EXIT
m() { n=$1; shift; /usr/bin/time -a -o "$o/$n" -f "%e %U %S %M %R" "$@" >/dev/null 2>/dev/null; }
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for c in "report:report --stdio" "nochildren:report --stdio --no-children" \
             "folded:flame --format folded"; do
        k=${c%%:*}; a=${c#*:}
        if [ $((r % 2)) = 1 ]; then
            m "$k.huge" bin/luaperf $a -i "$f"
            LUAPERF_GLIBC_TUNABLES= m "$k.small" bin/luaperf $a -i "$f"
        else
            LUAPERF_GLIBC_TUNABLES= m "$k.small" bin/luaperf $a -i "$f"
            m "$k.huge" bin/luaperf $a -i "$f"
        fi
    done
    r=$((r + 1))
done
# col FILE N: "min median" of column N
col() { awk -v n="$2" '{ print $n }' "$1" | sort -n | awk '{ a[NR] = $1 } END { printf "%s %s", a[1], a[int((NR + 1) / 2)] }'; }
echo "## glibc.malloc.hugetlb in bin/luaperf ($(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD), $f, $ROUNDS ABBA rounds)"
echo
echo "| command | heap | wall min / median s | user min / median s | sys min / median s | peak MB (median) | minor faults (median) |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for k in report nochildren folded; do
    for h in huge small; do
        w=$(col "$o/$k.$h" 1); u=$(col "$o/$k.$h" 2); s=$(col "$o/$k.$h" 3)
        kb=$(col "$o/$k.$h" 4); fl=$(col "$o/$k.$h" 5)
        echo "| $k | $h | ${w% *} / ${w#* } | ${u% *} / ${u#* } | ${s% *} / ${s#* } | $(( ${kb#* } / 1024 )) | ${fl#* } |"
    done
done
