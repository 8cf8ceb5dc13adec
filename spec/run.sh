#!/bin/sh
# Runs the busted suite under Lua 5.4 and LuaJIT, each against its own build,
# (all of spec/, or the files given) and ends with one line: "N passed, N failed".
cd "$(dirname "$0")/.."
top=$(pwd)
log=build/test.log
mkdir -p build
: > "$log"
pass=0; fail=0
files=${*:-spec}
run() {
    interp=$1 cpath=$2
    echo "== $interp" | tee -a "$log"
    out=$(LUA_PATH="$top/lua/?.lua;$top/lua/?/init.lua;$top/spec/?.lua;;" \
          LUA_CPATH="$top/$cpath/?.so;;" LUAPERF_LUA=$interp LUAPERF_CPATH="$top/$cpath" \
          $interp /usr/bin/busted -o TAP ${BUSTED_ARGS:-} $files 2>&1)
    printf '%s\n' "$out" >> "$log"
    printf '%s\n' "$out" | grep -E '^not ok' -A12 | head -200
    p=$(printf '%s\n' "$out" | grep -cE '^ok ')
    f=$(printf '%s\n' "$out" | grep -cE '^not ok ')
    # A crash of the runner itself counts as a failure, not as silence.
    if [ "$p" = 0 ] && [ "$f" = 0 ]; then
        printf '%s\n' "$out" | tail -20
        f=1
    fi
    echo "$interp: $p passed, $f failed" | tee -a "$log"
    pass=$((pass + p)); fail=$((fail + f))
}
case ${LUAPERF_ONLY:-both} in
    lua5.4) run lua5.4 build ;;
    luajit) run luajit build/luajit ;;
    *) run lua5.4 build; run luajit build/luajit ;;
esac
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
