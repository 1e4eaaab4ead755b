#!/usr/bin/env bash
# Builds kc and runs every test: doctest unit tests, lit/FileCheck tests,
# model conformance against PyTorch's outputs (../shared/models, or
# $KC_MODELS_DIR) and the Python module's tests. A suite that cannot run here
# is reported as skipped, and why.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
build=${KC_BUILD_DIR:-build}
export KC_MODELS_DIR=${KC_MODELS_DIR:-$PWD/../shared/models}
export KC_CORPUS_DIR=${KC_CORPUS_DIR:-$PWD/../shared/pnnx-corpus}
status=0
ctest --test-dir "$build" --output-on-failure || status=$?
# ctest lists skipped suites by name; each said why in its output.
awk '/^[0-9]+\/[0-9]+ Testing: / { name = $3 }
     /^skipped: / { print "kc test: " name " " $0 }' "$build/Testing/Temporary/LastTest.log"
exit $status
