#!/usr/bin/env bash
# Builds kc and runs every test: doctest unit tests, lit/FileCheck tests and
# model conformance against PyTorch's outputs (../shared/models, or
# $KC_MODELS_DIR, and the zoo ../shared-zoo, or $KC_ZOO_DIR, made by
# scripts/zoo.py; each skipped with a message when absent).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
build=${KC_BUILD_DIR:-build}
export KC_MODELS_DIR=${KC_MODELS_DIR:-$PWD/../shared/models}
export KC_ZOO_DIR=${KC_ZOO_DIR:-$PWD/../shared-zoo}
export KC_CORPUS_DIR=${KC_CORPUS_DIR:-$PWD/../shared/pnnx-corpus}
ctest --test-dir "$build" --output-on-failure
