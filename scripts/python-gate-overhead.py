#!/usr/bin/env python3
"""The overhead of gating a Python kernel (docs/performance.md, "Gating a Python kernel"): the
quick-profile gate on the NumPy kernel of examples/python/numpy_rope.py through ropecheck.gate,
and on the same algorithm in C (examples/c_kernel/example_rope.c) through the C ABI with
`ropecheck gate --kernel-lib`; float32, both pairings, same seed. Prints property cases, wall seconds (properties + fixtures; the best
of 3 runs each, the VM being shared) and cases per second; with --mutants, also
gate(mutants=True) on the NumPy kernel. Run from the repository root after building:
    python3 scripts/python-gate-overhead.py [--mutants]
"""

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

root = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(root / "build" / "python"), str(root / "examples" / "python")]

import ropecheck  # noqa: E402
from numpy_rope import rope_numpy  # noqa: E402


def cases(report_dict):
    return sum(p["cases"] for k in report_dict["kernels"] for p in k["properties"])


calls, in_kernel = 0, 0.0


def timed_rope_numpy(q, k, positions, params):
    global calls, in_kernel
    start = time.perf_counter()
    try:
        return rope_numpy(q, k, positions, params)
    finally:
        calls += 1
        in_kernel += time.perf_counter() - start


python_seconds = float("inf")
for _ in range(3):
    calls, in_kernel = 0, 0.0
    start = time.perf_counter()
    report = ropecheck.gate(timed_rope_numpy, dtypes=["float32"], pairings=["half", "adjacent"])
    if time.perf_counter() - start < python_seconds:
        python_seconds, best_calls, best_in_kernel = time.perf_counter() - start, calls, in_kernel
calls, in_kernel = best_calls, best_in_kernel
python_cases = cases(report.to_dict())

with tempfile.TemporaryDirectory() as tmp:
    out = Path(tmp) / "gate.json"
    c_seconds = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([str(root / "build" / "cli" / "ropecheck"), "gate", "--kernel-lib",
                        str(root / "build" / "examples" / "libexample_rope.so"), "--json", str(out)],
                       check=True, capture_output=True)
        c_seconds = min(c_seconds, time.perf_counter() - start)
    c_cases = cases(json.loads(out.read_text()))

print("| kernel | verdict | property cases | wall s (properties + fixtures) | cases/s |")
print("| --- | --- | --- | --- | --- |")
print(f"| NumPy `rope_numpy` via `ropecheck.gate` | {report.verdict} | {python_cases} | "
      f"{python_seconds:.2f} | {python_cases / python_seconds:.0f} |")
print(f"| C `example_rope` via `--kernel-lib` | pass | {c_cases} | {c_seconds:.2f} | "
      f"{c_cases / c_seconds:.0f} |")
try:
    from hf_rotate_half import rope_hf_float64_angles
except ImportError:  # no torch
    rope_hf_float64_angles = None
if rope_hf_float64_angles is not None:
    start = time.perf_counter()
    torch_report = ropecheck.gate(rope_hf_float64_angles, dtypes=["float32", "float16", "bfloat16"],
                                  pairings=["half"], tensor_type="torch")
    torch_seconds = time.perf_counter() - start
    torch_cases = cases(torch_report.to_dict())
    print(f"| torch `rope_hf_float64_angles`, float32 + float16 + bfloat16, half only (one run) | "
          f"{torch_report.verdict} | {torch_cases} | {torch_seconds:.2f} | {torch_cases / torch_seconds:.0f} |")
print()
print(f"The NumPy kernel was called {calls} times, {1e6 * in_kernel / calls:.0f} µs per call inside it "
      f"({in_kernel:.2f} s in all, {100 * in_kernel / python_seconds:.0f}% of the gate).")

if "--mutants" in sys.argv:  # docs/python.md: gate(mutants=True) on the same kernel
    start = time.perf_counter()
    report = ropecheck.gate(rope_numpy, dtypes=["float32"], pairings=["half", "adjacent"], mutants=True)
    killed = sum(m["killed"] for m in report.mutants)
    print(f"\nmutants=True: {killed} of {len(report.mutants)} applicable mutants killed, "
          f"{len(report.mutants_not_applicable)} not applicable, {time.perf_counter() - start:.0f} s")
