#!/bin/sh
# Runs the busted suite under Lua 5.4 and LuaJIT, each against its own build,
# (all of spec/, or the files given) and ends with one line: "N passed, N failed".
cd "$(dirname "$0")/.."
top=$(pwd)
log=build/test.log
mkdir -p build
: > "$log"
pass=0; fail=0; skip=0
files=${*:-spec}
run() {
    interp=$1 cpath=$2
    echo "== $interp" | tee -a "$log"
    pre=""
    # Sanitizer runs preload the runtime into the interpreter only; the
    # specs strip it again for the reference tools they start (spec/util.lua).
    [ -n "${LUAPERF_PRELOAD:-}" ] && pre="LD_PRELOAD=$LUAPERF_PRELOAD"
    vg=""
    [ -n "${LUAPERF_VALGRIND:-}" ] && vg="valgrind -q --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite --suppressions=$top/spec/valgrind.supp"
    out=$(env $pre LUA_PATH="$top/lua/?.lua;$top/lua/?/init.lua;$top/spec/?.lua;;" \
          LUA_CPATH="$top/$cpath/?.so;;" LUAPERF_LUA=$interp LUAPERF_CPATH="$top/$cpath" \
          $vg $interp /usr/bin/busted --ignore-lua --lpath="$top/lua/?.lua;$top/lua/?/init.lua;$top/spec/?.lua" --cpath="$top/$cpath/?.so" -o TAP ${BUSTED_ARGS:-} $files 2>&1)
    printf '%s\n' "$out" >> "$log"
    printf '%s\n' "$out" | grep -E '^not ok' -A12 | head -200
    p=$(printf '%s\n' "$out" | grep -E '^ok ' | grep -cv '# SKIP')
    k=$(printf '%s\n' "$out" | grep -E '^ok ' | grep -c '# SKIP')
    f=$(printf '%s\n' "$out" | grep -cE '^not ok ')
    # Sanitizer reports fail the run even when every assertion held.
    s=$(printf '%s\n' "$out" | grep -cE 'ERROR: (Address|Leak)Sanitizer|runtime error:|Invalid (read|write)|are definitely lost')
    if [ "$s" != 0 ]; then
        printf '%s\n' "$out" | grep -E 'ERROR: (Address|Leak)Sanitizer|runtime error:|Invalid (read|write)|are definitely lost' -A15 | head -80
        f=$((f + s))
    fi
    # A crash of the runner itself counts as a failure, not as silence:
    # busted prints its plan (1..N) last, and every planned test once.
    plan=$(printf '%s\n' "$out" | sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' | tail -1)
    if [ -z "$plan" ] || [ "$plan" != $((p + k + $(printf '%s\n' "$out" | grep -cE '^not ok '))) ]; then
        echo "$interp: the runner stopped early (plan '${plan:-none}', $p passed, $f failed, $k skipped):"
        printf '%s\n' "$out" | tail -20
        f=$((f + 1))
    fi
    echo "$interp: $p passed, $f failed, $k skipped" | tee -a "$log"
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + k))
}
case ${LUAPERF_ONLY:-both} in
    lua5.4) run lua5.4 "${LUAPERF_BUILD54:-build}" ;;
    luajit) run luajit "${LUAPERF_BUILDJIT:-build/luajit}" ;;
    *) run lua5.4 "${LUAPERF_BUILD54:-build}"; run luajit "${LUAPERF_BUILDJIT:-build/luajit}" ;;
esac
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
