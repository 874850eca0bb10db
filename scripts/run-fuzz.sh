#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for SECONDS (default 20)
# from an empty corpus. A crash, a leak or an unexpected exception fails the run.
# libFuzzer runs one process on one core: the targets run as many at a time as there are cores
# (each still gets its SECONDS on a core of its own), and are reported in their fixed order.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
bash scripts/setup-debian.sh --fuzz
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"
corpus_root=$(mktemp -d)
trap 'rm -rf "$corpus_root"' EXIT
targets=(npy_fuzzer safetensors_fuzzer spec_fuzzer report_fuzzer)
at_once=$(nproc)
failed=()
for ((first = 0; first < ${#targets[@]}; first += at_once)); do
  batch=("${targets[@]:first:at_once}")
  pids=()
  for target in "${batch[@]}"; do
    mkdir -p "$corpus_root/$target"
    # Each its own artifact folder: two targets crashing at once must not write one file.
    mkdir -p "$corpus_root/artifacts/$target"
    ./build-fuzz/fuzz/$target -max_total_time="$seconds" -rss_limit_mb=2048 \
      -artifact_prefix="$corpus_root/artifacts/$target/" "$corpus_root/$target" \
      >"$corpus_root/$target.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!batch[@]}"; do
    if ! wait "${pids[$i]}"; then failed+=("${batch[$i]}"); fi
  done
done
for target in "${targets[@]}"; do
  log="$corpus_root/$target.log"
  if [[ " ${failed[*]} " == *" $target "* ]]; then
    tail -n 60 "$log"
    echo "fuzz: $target found a failing input (see above)" >&2
  else
    echo "fuzz: $target: $(grep -E '^Done [0-9]+ runs' "$log" || echo 'ran')"
  fi
done
if ((${#failed[@]} > 0)); then exit 1; fi
echo "fuzz: all targets ran ${seconds} s without a finding"
