#!/usr/bin/env bash
# Times kc against PyTorch (jit) and ncnn on the reference models and the zoo
# (scripts/zoo.py) in one run and writes docs/benchmarks.md. Installs Debian's
# PyTorch when it is missing.
# Not part of the test command: run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
missing=()
for p in python3-torch python3-torchvision python3-numpy; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
bash scripts/build.sh >/dev/null
exec /usr/bin/python3 scripts/bench.py "$@"
