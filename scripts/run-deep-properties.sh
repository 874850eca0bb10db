#!/bin/bash
# The property suite's deep profile (docs/error-bounds.md §14): every ctest test labelled
# `properties`, with ROPECHECK_PROFILE=deep — 10^6 cases per kernel property, split over the
# registered kernels × dtypes; 2·10^4 per reference property — then one line per property run:
# kernel/property, dtype, cases, observed worst / derived bound.
#
#   scripts/run-deep-properties.sh [BUILD_DIR] [JOBS] [LOG]
#
# Defaults: build, $(nproc), BUILD_DIR/deep-properties.log (the tests' whole output, copied from
# ctest's LastTest.log). About 1.5 hours on 2 cores with
# this registry. Give RC_PARAMS=max_success=N to run N cases in every test instead (e.g.
# 1000000 for a million per kernel × property × dtype on a machine with the time for it).
set -euo pipefail
build=${1:-build}
jobs=${2:-$(nproc)}
log=${3:-$build/deep-properties.log}
source_dir=$(cd "$(dirname "$0")/.." && pwd)

status=0
(cd "$source_dir" && ROPECHECK_PROFILE=deep ctest --test-dir "$build" -L properties -j "$jobs" \
   --timeout 86400) || status=$?
cp "$source_dir/$build/Testing/Temporary/LastTest.log" "$log" 2>/dev/null ||
  cp "$build/Testing/Temporary/LastTest.log" "$log"

echo
echo "observed worst / derived bound, deep profile (from $log):"
grep -a '^\[ property \]' "$log" |
  awk '{ if ($5 == "cases") printf "%-64s %-9s %9s  %s\n", $4, "-", $6, $8;
         else printf "%-64s %-9s %9s  %s\n", $4, $5, $7, $9 }' | sort
exit "$status"
