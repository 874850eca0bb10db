#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for SECONDS (default 20)
# from an empty corpus. A crash, a leak or an unexpected exception fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
bash scripts/setup-debian.sh --fuzz
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"
corpus_root=$(mktemp -d)
trap 'rm -rf "$corpus_root"' EXIT
for target in npy_fuzzer safetensors_fuzzer spec_fuzzer report_fuzzer; do
  mkdir -p "$corpus_root/$target"
  log="$corpus_root/$target.log"
  if ! ./build-fuzz/fuzz/$target -max_total_time="$seconds" -rss_limit_mb=2048 \
       -artifact_prefix="$corpus_root/" "$corpus_root/$target" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz: $target found a failing input (see above)" >&2
    exit 1
  fi
  echo "fuzz: $target: $(grep -E '^Done [0-9]+ runs' "$log" || echo 'ran')"
done
echo "fuzz: all targets ran ${seconds} s without a finding"
