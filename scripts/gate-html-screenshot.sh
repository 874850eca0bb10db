#!/usr/bin/env bash
# Renders the HTML page of a ratchet failure and screenshots it in headless Chromium, to look at
# what a kernel author sees the day a change breaks their kernel: the float32 recipe example
# kernel under `exact` saved as the baseline, then its build with a seeded regression
# (EXAMPLE_REGRESSED) gated against it (docs/ci.md, "Gating a kernel that is not exact"). The
# regression leads the page; the known failures come after it. Needs a build
# (scripts/run-tests.sh) and `apt-get install chromium`.
# Usage: bash scripts/gate-html-screenshot.sh [OUT_DIR] (default /tmp/ropecheck-html).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-/tmp/ropecheck-html}"
mkdir -p "$out"
# Exit 1 both times (the recipe is not exact; the regressed build regresses) is what this is about.
"$root/build/cli/ropecheck" gate --kernel-lib "$root/build/examples/libfloat32_recipe_rope.so" \
  --json "$out/baseline.json" > "$out/baseline.txt" 2>&1 || [ $? -eq 1 ]
"$root/build/cli/ropecheck" gate --kernel-lib "$root/build/examples/libfloat32_recipe_rope_regressed.so" \
  --baseline "$out/baseline.json" --html "$out/gate.html" > "$out/gate.txt" 2>&1 || [ $? -eq 1 ]
# One laptop screen: what is above the fold is what a maintainer sees first.
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,900 \
  --screenshot="$out/gate.png" "file://$out/gate.html" > /dev/null 2>&1
echo "$out/gate.html -> $out/gate.png"
