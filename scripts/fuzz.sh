#!/usr/bin/env bash
# Builds kc's libFuzzer targets with clang-14 (ASan + UBSan) and runs each
# for ${KC_FUZZ_SECONDS:-60} seconds on a seed corpus taken from
# ../shared/models and ../shared/pnnx-corpus (when present) and the kept
# regressions (fuzz/regressions/<target>/, which also hold the committed
# seeds), with fuzz/<target>.dict as dictionary where there is one. A
# crash, leak, timeout or out-of-memory fails the script; its input is left
# in build-fuzz/crashes/<target>/ to be kept under fuzz/regressions/<target>/.
# Ends with one line per target: executions run and the result. KC_JOBS
# (default 2) sets the build parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."
KC_WITH_FUZZ=1 bash scripts/setup.sh
build=${KC_FUZZ_BUILD_DIR:-build-fuzz}
seconds=${KC_FUZZ_SECONDS:-60}
models=${KC_MODELS_DIR:-$PWD/../shared/models}
corpus=${KC_CORPUS_DIR:-$PWD/../shared/pnnx-corpus}
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKC_FUZZ=ON >/dev/null
targets=(param zip npy expression kcText model)
ninja -C "$build" -j"${KC_JOBS:-2}" $(printf 'kc-fuzz-%s ' "${targets[@]}") kc-opt

# Leaks fail a run, except thread pools that OpenBLAS and OpenMP keep alive.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp}
# Symbolized reports without Debian's unversioned llvm-symbolizer.
symbolizer=external_symbolizer_path=/usr/lib/llvm-14/bin/llvm-symbolizer
export ASAN_OPTIONS=${ASAN_OPTIONS:-$symbolizer}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:$symbolizer}

seeds="$build/seeds"
rm -rf "$seeds" && mkdir -p "$seeds"/{param,zip,npy,expression,kcText,model}
params=$( (ls "$models"/*/model.pnnx.param; find "$corpus" -name '*.param') 2>/dev/null || true)
for p in $params; do
  n=$(echo "$p" | md5sum | cut -c1-12)
  cp "$p" "$seeds/param/$n"
  cp "$p" "$seeds/model/$n"
  { grep -o 'expr=[^ ]*' "$p" || true; } | sed 's/^expr=//' | while read -r e; do
    printf '%s' "$e" > "$seeds/expression/$(printf '%s' "$e" | md5sum | cut -c1-12)"
  done
  "$build/bin/kc-opt" "$p" > "$seeds/kcText/$n.kc" 2>/dev/null || rm -f "$seeds/kcText/$n.kc"
done
for b in $( (ls "$models"/*/model.pnnx.bin; find "$corpus" -name '*.bin') 2>/dev/null || true); do
  # Small archives only: libFuzzer mutates whole inputs.
  if [ "$(stat -c %s "$b")" -le 1048576 ]; then
    cp "$b" "$seeds/zip/$(echo "$b" | md5sum | cut -c1-12)"
  fi
done
for n in $(ls "$models"/*/*.npy 2>/dev/null || true); do
  if [ "$(stat -c %s "$n")" -le 65536 ]; then
    cp "$n" "$seeds/npy/$(echo "$n" | md5sum | cut -c1-12)"
  fi
done
for t in "${targets[@]}"; do
  cp fuzz/regressions/$t/* "$seeds/$t/" 2>/dev/null || true
done

status=0
summary=()
for t in "${targets[@]}"; do
  mkdir -p "$build/crashes/$t" "$build/corpus/$t"
  log="$build/fuzz-$t.log"
  echo "fuzz: kc-fuzz-$t for ${seconds}s ($(ls "$seeds/$t" | wc -l) seeds)"
  result=ok
  dict=()
  [ -f "fuzz/$t.dict" ] && dict=(-dict="fuzz/$t.dict")
  if ! "$build/bin/kc-fuzz-$t" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
      "${dict[@]}" -timeout=10 -print_final_stats=1 -artifact_prefix="$build/crashes/$t/" \
      "$build/corpus/$t" "$seeds/$t" > "$log" 2>&1; then
    if grep -q "ERROR: LeakSanitizer" "$log"; then
      result=LEAK
    elif grep -q "ERROR: libFuzzer: timeout" "$log"; then
      result=TIMEOUT
    elif grep -q "ERROR: libFuzzer: out-of-memory" "$log"; then
      result=OOM
    else
      result=CRASH
    fi
    artifact=$(grep -o "Test unit written to [^ ]*" "$log" | tail -1 | sed 's/^Test unit written to //')
    result="$result${artifact:+ ($artifact)}"
    echo "fuzz: kc-fuzz-$t FAILED; see $log and $build/crashes/$t/"
    tail -40 "$log"
    status=1
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  summary+=("fuzz summary: $t: ${execs:-?} executions in ${seconds}s, $result")
done
printf '%s\n' "${summary[@]}"
exit $status
