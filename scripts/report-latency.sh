#!/usr/bin/env bash
# How long a maintainer waits for the report once a failure is found: the quick gate of the
# mutant large_call_query_at_last_position (calls of >= 10 240 token-heads rotate every Q token at
# the last token's position; mutants/mutant_registry.cpp), which only call_size_invariant's large
# calls catch. Every line the gate prints (stderr and stdout) is stamped with the seconds since
# the start; prints the CPU, the stamped log from the first "failed its first case" line, and the
# time from that line (the failure's discovery) to the report's end: the gate's exit, after its
# terminal report and its JSON and HTML files are written.
# Usage: scripts/report-latency.sh [EXTRA GATE FLAGS...]   (e.g. --property call_size_invariant)
# Needs a Release build in build/ (scripts/run-gate.sh or run-tests.sh makes one).
set -euo pipefail
cd "$(dirname "$0")/.."
exe=build/cli/ropecheck
[ -x "$exe" ] || { echo "report-latency: build first ($exe)" >&2; exit 2; }
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log="$work/log"
stamp() { awk -v now="$(date +%s.%N)" -v start="$start" 'BEGIN { printf "%8.2f", now - start }'; }
start=$(date +%s.%N)
# Exit 0: the mutant is killed (the gate passes only if it is).
set +e
"$exe" gate --mutant large_call_query_at_last_position --json "$work/gate.json" --html "$work/gate.html" "$@" 2>&1 |
  while IFS= read -r line; do printf '%s  %s\n' "$(stamp)" "$line"; done >"$log"
status=${PIPESTATUS[0]}
printf '%s  (the gate exited, its report files written)\n' "$(stamp)" >>"$log"
set -e
echo "CPU: $cpu ($(nproc) cores)"
echo "gate --mutant large_call_query_at_last_position $*: exit $status"
first=$(grep -m1 "failed its first case" "$log" | awk '{print $1}')
last=$(tail -n1 "$log" | awk '{print $1}')
if [ -z "$first" ]; then
  cat "$log"
  echo "report-latency: the gate printed no \"failed its first case\" line" >&2
  exit 1
fi
sed -n "/failed its first case/,\$p" "$log" | grep -E "failed its first case|^ *[0-9.]+  gate:|call_size_invariant|exited" | head -20
echo "first failure found at ${first} s; report ended at ${last} s; report $(awk -v a="$last" -v b="$first" 'BEGIN { printf "%.2f", a - b }') s after the failure's discovery"
