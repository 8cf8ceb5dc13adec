#!/bin/sh
# examples/openresty: Debian's nginx with its Lua module (LuaJIT), serving
# examples/openresty/app.lua and an admin location that profiles the worker.
#
#   examples/openresty/run.sh start     # builds what is missing, starts nginx, prints the URLs
#   examples/openresty/run.sh stop      # stops it and waits until every process is gone
#   examples/openresty/run.sh status
#
# Environment: PORT (8089), WORKERS (1), PREFIX (/tmp/luaperf-nginx: conf,
# logs and nginx's temp dirs live there), LUAPERF_JITMAP=0 (no perf.jitmap
# in the workers).  Needs nginx and
# libnginx-mod-http-lua (make deps).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PORT=${PORT:-8089}
WORKERS=${WORKERS:-1}
PREFIX=${PREFIX:-/tmp/luaperf-nginx}
NGINX=${NGINX:-/usr/sbin/nginx}
MODULE=/usr/lib/nginx/modules/ngx_http_lua_module.so

die() { echo "run.sh: $*" >&2; exit 1; }

nginx_cmd() {
    LUAPERF_ROOT=$ROOT "$NGINX" -p "$PREFIX/" -c "$PREFIX/nginx.conf" -e "$PREFIX/logs/error.log" "$@"
}

running_pid() {
    [ -f "$PREFIX/logs/nginx.pid" ] || return 1
    pid=$(cat "$PREFIX/logs/nginx.pid" 2>/dev/null) || return 1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

start() {
    [ -x "$NGINX" ] && [ -f "$MODULE" ] ||
        die "needs nginx and libnginx-mod-http-lua: make deps (or apt-get install nginx libnginx-mod-http-lua)"
    case $PORT in *[!0-9]*|'') die "PORT must be a number, not '$PORT'" ;; esac
    case $WORKERS in *[!0-9]*|''|0) die "WORKERS must be a number >= 1, not '$WORKERS'" ;; esac
    if pid=$(running_pid); then
        die "already running (master $pid, prefix $PREFIX): run.sh stop first"
    fi
    # nginx runs LuaJIT: the module's LuaJIT build
    if [ ! -f "$ROOT/build/luajit/perf/core.so" ]; then
        echo "building build/luajit/perf/core.so ..."
        make -s -C "$ROOT" LUA=luajit >/dev/null
    fi
    mkdir -p "$PREFIX/logs" "$PREFIX/temp/body" "$PREFIX/temp/proxy" "$PREFIX/temp/fastcgi" \
             "$PREFIX/temp/uwsgi" "$PREFIX/temp/scgi"
    sed -e "s/127\.0\.0\.1:8089/127.0.0.1:$PORT/" -e "s/^worker_processes 1;/worker_processes $WORKERS;/" \
        "$ROOT/examples/openresty/nginx.conf" > "$PREFIX/nginx.conf"
    nginx_cmd -t -q || die "nginx -t failed: see above and $PREFIX/logs/error.log"
    nginx_cmd || die "nginx did not start: see $PREFIX/logs/error.log"
    i=0
    until curl -sf -o /dev/null "http://127.0.0.1:$PORT/cold"; do
        i=$((i + 1))
        [ $i -lt 100 ] || die "nginx does not answer on 127.0.0.1:$PORT: see $PREFIX/logs/error.log"
        sleep 0.1
    done
    base="http://127.0.0.1:$PORT"
    echo "nginx (master $(running_pid), $WORKERS worker(s)) on $base, prefix $PREFIX"
    echo "  $base/hot                                   an expensive handler"
    echo "  $base/cold                                  a cheap one"
    echo "  $base/luaperf/profile?seconds=5             folded stacks of the worker that serves it"
    echo "  $base/luaperf/profile?seconds=5&format=svg  flame graph (also pprof, speedscope)"
    echo "  $base/luaperf/jitmap                        its JIT map: /tmp/perf-PID.map for perf report"
    echo "  $base/luaperf/workers                       every worker's pid (profile one: &worker=PID)"
    echo "stop: $0 stop"
}

stop() {
    pid=$(running_pid) || { echo "not running (prefix $PREFIX)"; return 0; }
    nginx_cmd -s stop
    i=0
    while kill -0 "$pid" 2>/dev/null; do
        i=$((i + 1))
        [ $i -lt 100 ] || die "master $pid still running after 10 s"
        sleep 0.1
    done
    echo "stopped (master $pid)"
}

case ${1:-} in
    start) start ;;
    stop) stop ;;
    status) if pid=$(running_pid); then echo "running: master $pid, prefix $PREFIX"; else echo "not running"; exit 1; fi ;;
    *) echo "usage: $0 start|stop|status   (env PORT, WORKERS, PREFIX)" >&2; exit 2 ;;
esac
