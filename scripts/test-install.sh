#!/usr/bin/env bash
# What a user of an installed kc does, run as CI runs it: installs the build
# (${KC_BUILD_DIR:-build}) into a fresh prefix; builds examples/api and
# examples/plugin against it with find_package(kc) and runs their tests (the
# program on the bundled model against PyTorch's outputs; the plugin's lit
# test, which loads it into the installed kc-opt and kc-run); loads the plugin
# into both tools on the bundled model -- each step with the very commands of
# docs/api.md and docs/writing-a-pass.md; builds the program again with
# pkg-config; and runs the Python tests against the installed module.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${KC_BUILD_DIR:-build}
work=$(realpath -m "${KC_INSTALL_TEST_DIR:-$build/install-test}")
prefix=$work/prefix
rm -rf "$work" && mkdir -p "$work"
step() { echo "kc install test: $*" >&2; }

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null

# The ```sh block of DOC that contains TEXT, run from kc's source directory
# as the doc shows it, with the installed tools first on PATH, the doc's
# build-* directories under $work and its prefix $HOME/kc as $prefix.
run_doc_block() {
  local doc=$1 text=$2 commands
  commands=$(awk -v text="$text" '
    /^```sh$/ { inside = 1; block = ""; next }
    inside && /^```$/ { inside = 0; if (index(block, text)) { printf "%s", block; exit } }
    inside { block = block $0 "\n" }' "$doc" |
    sed -e "s|\$HOME/kc|$prefix|g" -e "s|\([ =]\)\(build-[a-z]*\)|\1$work/\2|g")
  if [ -z "$commands" ]; then
    echo "kc install test: $doc has no sh block with '$text'" >&2
    return 1
  fi
  PATH="$prefix/bin:$PATH" bash -euo pipefail -xc "$commands"
}

step "examples/api against the installed kc, as docs/api.md builds it"
run_doc_block docs/api.md "cmake -S examples/api"

step "examples/plugin against the installed kc, as docs/writing-a-pass.md builds it"
run_doc_block docs/writing-a-pass.md "cmake -S examples/plugin"

step "the plugin in the installed kc-opt and kc-run, as docs/writing-a-pass.md loads it"
loaded=$(run_doc_block docs/writing-a-pass.md "--load-pass-plugin" 2>&1) || {
  echo "$loaded" >&2
  exit 1
}
echo "$loaded" >&2
grep -q "^ *(S) *1 num-rewritten - ReLU6 calls rewritten" <<<"$loaded"
grep -q "^ *relu6-to-hardtanh *- Example plugin" <<<"$loaded"
grep -q "^output 0 vs out0.npy: ok" <<<"$loaded"
grep -q "^output 1 vs out1.npy: ok" <<<"$loaded"
grep -q "^nn.Hardtanh " <<<"$loaded"
m=examples/cnn_basic

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
