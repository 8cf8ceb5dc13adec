#!/bin/sh
# Runs every area benchmark; each writes its own figures (see bench/*.md).
cd "$(dirname "$0")/.."
sh bench/symbols.sh
sh bench/unwind.sh
sh bench/evspec.sh
sh bench/flame.sh
sh bench/counter_read.sh
sh bench/decode.sh
sh bench/luaprofile.sh
sh bench/perfdata.sh
sh bench/dwarf_cli.sh
sh bench/record_overhead.sh
sh bench/report_scale.sh
sh bench/heap_tuning.sh
sh bench/query_scale.sh
sh bench/offcpu.sh
sh bench/trace.sh
