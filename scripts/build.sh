#!/usr/bin/env bash
# Configures and builds kc in Release into ${KC_BUILD_DIR:-build}, showing
# ninja's progress ([done/total] per step) on standard error.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build=${KC_BUILD_DIR:-build}
type=${KC_BUILD_TYPE:-Release}
echo "kc build: configuring $build ($type)" >&2
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="$type" ${KC_CMAKE_ARGS:-} >/dev/null
echo "kc build: compiling (a first build takes a few minutes; later ones only what changed)" >&2
ninja -C "$build" ${KC_NINJA_ARGS:-} >&2
