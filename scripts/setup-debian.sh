#!/usr/bin/env bash
# Installs what ropecheck builds with, from Debian 12 packages. Idempotent, non-interactive.
#   (no flag)  what building ropecheck and running its gate need: the compiler, CMake, and the
#              libraries of the core, the CLI, the tests and the benchmarks (the default preset
#              configures them all).
#   --tests    also what the whole test suite needs: pybind11 and the Python packages that build
#              and test the Python module (python/), and python3-torch for the Python examples'
#              tests (examples/python). torch pulls in most of the packages this adds.
#   --fuzz     also clang and its libFuzzer runtime (the `fuzz` preset).
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  libboost-dev libmpfr-dev libgmp-dev libmpc-dev
  libfmt-dev libcli11-dev nlohmann-json3-dev libhwy-dev
  libxml2-dev
)
for flag in "$@"; do
  case "$flag" in
    --tests) packages+=(pybind11-dev python3-dev python3-numpy python3-pytest python3-torch) ;;
    --fuzz) packages+=(clang libclang-rt-14-dev) ;;
    *) echo "setup-debian.sh: unknown flag '$flag' (one of: --tests, --fuzz)" >&2; exit 2 ;;
  esac
done
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
