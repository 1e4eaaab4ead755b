#!/usr/bin/env bash
# What a user of an installed kc does, run as CI runs it: installs the build
# (${KC_BUILD_DIR:-build}) into a fresh prefix; builds examples/api and
# examples/plugin against it with find_package(kc), with the commands of
# docs/api.md and docs/writing-a-pass.md, and runs their tests (the program on
# the bundled model against PyTorch's outputs; the plugin's lit test, which
# loads it into the installed kc-opt and kc-run); loads the plugin into both
# tools on the bundled model; builds the program again with pkg-config; and
# runs the Python tests against the installed module.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${KC_BUILD_DIR:-build}
work=$(realpath -m "${KC_INSTALL_TEST_DIR:-$build/install-test}")
prefix=$work/prefix
rm -rf "$work" && mkdir -p "$work"
step() { echo "kc install test: $*" >&2; }

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null

step "examples/api against the installed kc"
cmake -S examples/api -B "$work/build-api" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/build-api"
ctest --test-dir "$work/build-api" --output-on-failure

step "examples/plugin against the installed kc"
cmake -S examples/plugin -B "$work/build-plugin" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/build-plugin"
ctest --test-dir "$work/build-plugin" --output-on-failure

step "the plugin in the installed kc-opt and kc-run, on the bundled model"
m=examples/cnn_basic
plugin=$work/build-plugin/libKcExamplePlugin.so
"$prefix/bin/kc-opt" "$m/model.pnnx.param" --load-pass-plugin="$plugin" -p relu6-to-hardtanh \
  --pass-statistics -o /dev/null 2>&1 | grep -q "1 num-rewritten"
"$prefix/bin/kc-run" "$m/model.pnnx.param" --load-pass-plugin="$plugin" -p relu6-to-hardtanh \
  -i "$m/in0.npy" --expect "$m/out0.npy" --expect "$m/out1.npy" -q

step "examples/api with pkg-config"
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs kc)
c++ -std=c++17 -O1 examples/api/run_model.cpp -o "$work/run_model-pkg-config" $flags \
  -Wl,-rpath,"$prefix/lib"
"$work/run_model-pkg-config" "$m/model.pnnx.param" --input "$m/in0.npy" \
  --expect "$m/out0.npy" --expect "$m/out1.npy" | grep -c ", ok$" | grep -qx 2

python_dir=$(sed -n 's/^KC_PYTHON_INSTALL_DIR:STRING=//p' "$build/CMakeCache.txt")
if [ -n "$python_dir" ]; then
  step "the Python tests against $prefix/$python_dir/kc"
  PYTHONPATH="$prefix/$python_dir" /usr/bin/python3 -c \
    "import kc, sys; sys.exit(not kc.__file__.startswith('$prefix/'))"
  PYTHONPATH="$prefix/$python_dir" /usr/bin/python3 python/tests/run.py
else
  step "the Python module was not built; its installed tests are skipped"
fi
step "ok"
