#!/usr/bin/env bash
# Builds kc (its progress on standard error) and runs the small model bundled
# in examples/cnn_basic, comparing its outputs with PyTorch's.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
build=${KC_BUILD_DIR:-build}
m=examples/cnn_basic
"$build/bin/kc-run" "$m/model.pnnx.param" --input "$m/in0.npy" \
  --expect "$m/out0.npy" --expect "$m/out1.npy" -O "$@"
