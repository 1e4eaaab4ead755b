#!/usr/bin/env bash
# Builds kc's libFuzzer targets with clang-14 (ASan + UBSan) and runs each
# for ${KC_FUZZ_SECONDS:-60} seconds on a seed corpus taken from
# ../shared/models and ../shared/pnnx-corpus (when present) and the kept
# regressions. A crash fails the script; its input is left in
# build-fuzz/crashes/<target>/ to be kept under fuzz/regressions/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
KC_WITH_FUZZ=1 bash scripts/setup.sh
build=${KC_FUZZ_BUILD_DIR:-build-fuzz}
seconds=${KC_FUZZ_SECONDS:-60}
models=${KC_MODELS_DIR:-$PWD/../shared/models}
corpus=${KC_CORPUS_DIR:-$PWD/../shared/pnnx-corpus}
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKC_FUZZ=ON >/dev/null
targets=(param zip expression kcText model)
ninja -C "$build" $(printf 'kc-fuzz-%s ' "${targets[@]}") kc-opt >/dev/null

seeds="$build/seeds"
rm -rf "$seeds" && mkdir -p "$seeds"/{param,zip,expression,kcText,model}
params=$( (ls "$models"/*/model.pnnx.param; find "$corpus" -name '*.param') 2>/dev/null || true)
for p in $params; do
  n=$(echo "$p" | md5sum | cut -c1-12)
  cp "$p" "$seeds/param/$n"
  cp "$p" "$seeds/model/$n"
  grep -o 'expr=[^ ]*' "$p" | sed 's/^expr=//' | while read -r e; do
    printf '%s' "$e" > "$seeds/expression/$(printf '%s' "$e" | md5sum | cut -c1-12)"
  done
  "$build/bin/kc-opt" "$p" > "$seeds/kcText/$n.kc" 2>/dev/null || rm -f "$seeds/kcText/$n.kc"
done
for b in $( (ls "$models"/*/model.pnnx.bin; find "$corpus" -name '*.bin') 2>/dev/null || true); do
  # Small archives only: libFuzzer mutates whole inputs.
  [ "$(stat -c %s "$b")" -le 1048576 ] && cp "$b" "$seeds/zip/$(echo "$b" | md5sum | cut -c1-12)"
done
for t in "${targets[@]}"; do
  cp fuzz/regressions/$t/* "$seeds/$t/" 2>/dev/null || true
done

status=0
for t in "${targets[@]}"; do
  mkdir -p "$build/crashes/$t" "$build/corpus/$t"
  echo "fuzz: kc-fuzz-$t for ${seconds}s ($(ls "$seeds/$t" | wc -l) seeds)"
  if ! "$build/bin/kc-fuzz-$t" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
      -timeout=10 -print_final_stats=1 -artifact_prefix="$build/crashes/$t/" \
      "$build/corpus/$t" "$seeds/$t" > "$build/fuzz-$t.log" 2>&1; then
    echo "fuzz: kc-fuzz-$t FAILED; see $build/fuzz-$t.log and $build/crashes/$t/"
    tail -30 "$build/fuzz-$t.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/fuzz-$t.log" | tr '\n' ' '
    echo
  fi
done
exit $status
