#!/usr/bin/env bash
# The worker process's cost (abi/kernel_worker.h): the quick gate of the C example kernel
# (examples/c_kernel/example_rope.c) through the worker and in process (--isolate never),
# alternated ROUNDS times (default 9), each run's wall time; prints the CPU, both medians and
# their ratio. Needs a Release build in build/ (scripts/run-gate.sh or run-tests.sh makes one).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-9}"
exe=build/cli/ropecheck
lib=build/examples/libexample_rope.so
[ -x "$exe" ] && [ -f "$lib" ] || { echo "isolation-overhead: build first (build/cli/ropecheck, $lib)" >&2; exit 2; }
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
python3 - "$exe" "$lib" "$rounds" "$cpu" <<'PY'
import statistics, subprocess, sys, time
exe, lib, rounds, cpu = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
times = {"library": [], "never": []}
for _ in range(rounds):
    for mode in ("never", "library"):
        start = time.perf_counter()
        r = subprocess.run([exe, "gate", "--kernel-lib", lib, "--isolate", mode],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times[mode].append(time.perf_counter() - start)
        if r.returncode != 0:
            sys.exit(f"isolation-overhead: the gate of {lib} exited {r.returncode} with --isolate {mode}")
never, worker = statistics.median(times["never"]), statistics.median(times["library"])
print(f"CPU: {cpu}")
print(f"quick gate of example_c, median of {rounds} alternated runs: in process {never:.3f} s, "
      f"worker {worker:.3f} s, ratio {worker / never:.2f}")
PY
