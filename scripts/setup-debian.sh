#!/usr/bin/env bash
# Installs everything ropecheck builds with, from Debian 12 packages. Idempotent, non-interactive.
# The python3-* packages and pybind11 build and test the Python module (python/; python3-torch
# for the examples' tests). --fuzz also installs clang and its libFuzzer runtime (`fuzz` preset).
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  libboost-dev libmpfr-dev libgmp-dev libmpc-dev
  libfmt-dev libcli11-dev nlohmann-json3-dev libhwy-dev
  libxml2-dev
  pybind11-dev python3-dev python3-numpy python3-pytest python3-torch
)
if [ "${1:-}" = "--fuzz" ]; then packages+=(clang libclang-rt-14-dev); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
