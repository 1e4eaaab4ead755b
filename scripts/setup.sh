#!/usr/bin/env bash
# Installs the Debian packages kc needs to build and test; a no-op when they
# are all present. Run as root (or with sudo available).
set -euo pipefail

packages=(
  cmake ninja-build g++ python3
  llvm-14-dev llvm-14-tools
  libfmt-dev doctest-dev libarmadillo-dev libopenblas-dev libopenblas-openmp-dev
  # The Python module and its tests; pkg-config for the installed kc.pc.
  pybind11-dev python3-dev python3-numpy python3-pytest pkgconf
)
if [ "${KC_WITH_FUZZ:-0}" = 1 ]; then
  packages+=(clang-14 libclang-rt-14-dev libomp-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "kc setup: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
