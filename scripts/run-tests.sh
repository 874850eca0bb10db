#!/usr/bin/env bash
# Installs the dependencies of the whole suite (setup-debian.sh --tests), builds with the given
# CMake preset (default: "default", Release; "asan": AddressSanitizer + UndefinedBehaviorSanitizer)
# and runs the whole ctest suite.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
bash scripts/setup-debian.sh --tests
python_module=()
# The Python module's tests are part of the Release suite. Ask for the module outright: a build
# directory first configured by run-gate.sh, before pybind11 was installed, has it cached OFF.
# (The sanitizer and fuzz presets never build it.)
if [ "$preset" = default ]; then python_module=(-DROPECHECK_PYTHON=ON); fi
cmake --preset "$preset" -DROPECHECK_WERROR=ON "${python_module[@]}"
cmake --build --preset "$preset" -j "$(nproc)"
ctest --preset "$preset"
