#!/usr/bin/env bash
# Configures and builds kc in Release into ${KC_BUILD_DIR:-build}.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build=${KC_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${KC_BUILD_TYPE:-Release} ${KC_CMAKE_ARGS:-} >/dev/null
ninja -C "$build" ${KC_NINJA_ARGS:-}
