#!/bin/sh
# Builds each libFuzzer target fuzz/fuzz_<name>.c against the plain-C core
# (clang, ASan+UBSan) and runs it for N seconds on fuzz/corpus/<name>/.
# Inputs kept in fuzz/regress/<name>/ (crashes found earlier) run first.
# Exits non-zero when a target crashes, leaks or fails to build.
set -u
cd "$(dirname "$0")/.."
secs=${1:-60}
out=build/fuzz
mkdir -p "$out"
CC=${FUZZ_CC:-clang}
# (the perf.data reader's windows small: records cross them, and some do
# not fit)
base="-g -O1 -std=gnu11 -D_GNU_SOURCE -DPERFDATA_WINDOW_SIZE=512 -Icsrc/core $(pkg-config --cflags libelf libdw libzstd libtraceevent)"
san="-fsanitize=address,undefined -fno-sanitize-recover=all"
libs="$(pkg-config --libs libelf libdw libzstd libtraceevent) -lz -liberty"
status=0
# The core is compiled once, instrumented, and linked into every target.
mkdir -p "$out/core"
core=""
for c in csrc/core/*/*.c; do
    o="$out/core/$(basename "$c" .c).o"
    if [ ! -e "$o" ] || [ "$c" -nt "$o" ]; then
        $CC $base $san -fsanitize=fuzzer-no-link -c "$c" -o "$o" || { echo "fuzz: $c does not build"; exit 1; }
    fi
    core="$core $o"
done
for src in fuzz/fuzz_*.c; do
    [ -e "$src" ] || continue
    name=$(basename "$src" .c); name=${name#fuzz_}
    bin="$out/fuzz_$name"
    echo "== fuzz $name"
    if ! $CC $base $san -fsanitize=fuzzer -o "$bin" "$src" $core $libs; then
        echo "fuzz $name: build failed"; status=1; continue
    fi
    mkdir -p "fuzz/corpus/$name" "$out/corpus/$name" "$out/crashes/$name"
    if [ -d "fuzz/regress/$name" ] && [ -n "$(ls -A "fuzz/regress/$name")" ]; then
        if ! "$bin" -runs=0 "fuzz/regress/$name"/* >"$out/$name.regress.log" 2>&1; then
            tail -30 "$out/$name.regress.log"; echo "fuzz $name: regression input fails"; status=1
        fi
    fi
    # The working corpus starts from the seeds and grows under build/.
    cp -n "fuzz/corpus/$name"/* "$out/corpus/$name/" 2>/dev/null
    if ! "$bin" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
            -artifact_prefix="$out/crashes/$name/" "$out/corpus/$name" >"$out/$name.log" 2>&1; then
        tail -40 "$out/$name.log"; echo "fuzz $name: FAILED (artifacts in $out/crashes/$name/)"; status=1
    else
        grep -E '^Done|stat::number_of_executed_units' "$out/$name.log" | tail -1
        echo "fuzz $name: ok"
    fi
done
exit $status
