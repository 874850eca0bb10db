#!/usr/bin/env bash
# Installs the dependencies, builds ropecheck (Release) and runs the main job: the gate on the
# built-in kernels, printing its report. Extra arguments go to `ropecheck gate`. It installs only
# what building and gating need (no Python, no torch: scripts/run-tests.sh adds those).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-debian.sh
cmake --preset default -DROPECHECK_WERROR=ON >/dev/null
cmake --build --preset default -j "$(nproc)" --target ropecheck
exec ./build/cli/ropecheck gate "$@"
