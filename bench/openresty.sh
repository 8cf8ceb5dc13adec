#!/bin/sh
# Requests/s of examples/openresty's /hot under wrk (1 worker, 4
# connections): unprofiled (no perf.jitmap), with perf.jitmap on, and with
# it on while the admin location profiles at 99 Hz.  Rounds alternate, so
# drift on a shared machine spreads over all three; the median is printed.
#   sh bench/openresty.sh [rounds] [seconds]
set -eu
cd "$(dirname "$0")/.."
ROUNDS=${1:-5} SECS=${2:-5}
PORT=${PORT:-18189} PREFIX=$(mktemp -d /tmp/luaperf-bench-nginx.XXXXXX)
export PORT PREFIX
base=http://127.0.0.1:$PORT
# "REQ/S US" for one wrk run: requests a second, and the worker's CPU time
# (utime + stime from /proc) per request in microseconds.  The CPU cost is
# the steadier figure on a shared machine: other tenants slow the wall clock
# (req/s) far more than they inflate the worker's own CPU time.
hz=$(getconf CLK_TCK)
rps() {
    w=$(curl -s "$base/luaperf/workers" | awk 'NR == 1 {print $4}')
    c0=$(awk '{print $14 + $15}' "/proc/$w/stat")
    out=$(wrk -t1 -c4 -d"${SECS}s" "$base/hot")
    c1=$(awk '{print $14 + $15}' "/proc/$w/stat")
    echo "$out" | awk -v c="$((c1 - c0))" -v hz="$hz" '
        / requests in / {n = $1} /Requests\/sec/ {r = $2}
        END {printf "%s %.0f\n", r, c / hz * 1e6 / n}'
}
# stops nginx and removes its workers' perf maps
stop() {
    pids=$(curl -s "$base/luaperf/workers" | awk '{print $4}')
    sh examples/openresty/run.sh stop >/dev/null
    for p in $pids; do rm -f "/tmp/perf-$p.map"; done
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
: > "$PREFIX/off"; : > "$PREFIX/on"; : > "$PREFIX/prof"
for r in $(seq 1 "$ROUNDS"); do
    LUAPERF_JITMAP=0 sh examples/openresty/run.sh start >/dev/null
    wrk -t1 -c4 -d1s "$base/hot" >/dev/null            # warm: traces compiled
    rps >> "$PREFIX/off"
    stop
    sh examples/openresty/run.sh start >/dev/null
    wrk -t1 -c4 -d1s "$base/hot" >/dev/null
    rps >> "$PREFIX/on"
    curl -s "$base/luaperf/profile?seconds=$((SECS + 2))&freq=99" > /dev/null &
    sleep 0.5
    rps >> "$PREFIX/prof"
    wait
    stop
done
col() { awk -v k="$1" '{print $k}' "$2"; }
echo "rounds=$ROUNDS seconds=$SECS"
for f in off on prof; do
    r=$(col 1 "$PREFIX/$f" | median); u=$(col 2 "$PREFIX/$f" | median)
    eval "r_$f=$r u_$f=$u"
    printf '%-18s %8s req/s  %6s us CPU/req   (req/s: %s; us/req: %s)\n' \
        "$(case $f in off) echo unprofiled ;; on) echo perf.jitmap on ;; *) echo jitmap + 99 Hz ;; esac):" \
        "$r" "$u" "$(col 1 "$PREFIX/$f" | tr '\n' ' ')" "$(col 2 "$PREFIX/$f" | tr '\n' ' ')"
done
awk -v a="$r_off" -v b="$r_on" -v c="$r_prof" -v x="$u_off" -v y="$u_on" -v z="$u_prof" 'BEGIN {
    printf "req/s:       jitmap %+.1f%%  jitmap+99 Hz %+.1f%%\n", (b-a)/a*100, (c-a)/a*100
    printf "CPU/request: jitmap %+.1f%%  jitmap+99 Hz %+.1f%%\n", (y-x)/x*100, (z-x)/x*100 }'
rm -rf "$PREFIX"
