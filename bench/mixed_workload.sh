#!/bin/sh
# A mixed workload for system-wide recordings (bench/report_scale.sh): a
# compiler, a compressor, an interpreter and idle gaps, in a loop for
# $1 seconds (default 25). Two lanes, so both CPUs of the usual 2-core
# machine are busy most of the time, with different programs.
cd "$(dirname "$0")/.." || exit 1
secs=${1:-25}
end=$(( $(date +%s) + secs ))
tmp=${TMPDIR:-/tmp}/luaperf-mixed.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT INT TERM
src=csrc/core/symbol/symbolizer.c
lane() {
    while [ "$(date +%s)" -lt "$end" ]; do
        case $1 in
        a)  gcc -O2 -Icsrc/core -Icsrc/include -c "$src" -o "$tmp/a.o" 2>/dev/null
            head -c 20000000 /dev/urandom | gzip -6 > /dev/null ;;
        b)  python3 -c 'import json; d=[{"a":i,"b":str(i)*3} for i in range(200000)]; s=json.dumps(d); json.loads(s)'
            gcc -O2 -Icsrc/core -Icsrc/include -c csrc/core/perfdata/perfdata_read.c -o "$tmp/b.o" 2>/dev/null ;;
        esac
        sleep 0.3
    done
}
lane a & pa=$!
lane b & pb=$!
wait $pa $pb
