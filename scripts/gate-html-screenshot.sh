#!/usr/bin/env bash
# Renders the HTML page of a failing gate and screenshots it in headless Chromium, to look at
# what a kernel author sees: the float32 recipe example kernel under `exact` (README, "Gating
# a kernel that is not exact"). Needs a build (scripts/run-tests.sh) and `apt-get install
# chromium`. Usage: bash scripts/gate-html-screenshot.sh [OUT_DIR] (default /tmp/ropecheck-html).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-/tmp/ropecheck-html}"
mkdir -p "$out"
# Exit 1 (the gate fails) is what this page is about.
"$root/build/cli/ropecheck" gate --kernel-lib "$root/build/examples/libfloat32_recipe_rope.so" \
  --property within_bound_of_reference --property norm_preserved --html "$out/gate.html" \
  > "$out/gate.txt" 2>&1 || [ $? -eq 1 ]
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,3600 \
  --screenshot="$out/gate.png" "file://$out/gate.html" > /dev/null 2>&1
echo "$out/gate.html -> $out/gate.png"
