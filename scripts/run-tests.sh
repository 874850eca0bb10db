#!/usr/bin/env bash
# Installs the dependencies, builds with the given CMake preset (default: "default", Release;
# "asan": AddressSanitizer + UndefinedBehaviorSanitizer) and runs the whole ctest suite.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
bash scripts/setup-debian.sh
cmake --preset "$preset" -DROPECHECK_WERROR=ON
cmake --build --preset "$preset" -j "$(nproc)"
ctest --preset "$preset"
