#!/usr/bin/env python3
"""The overhead of gating a Python kernel (README, "From Python"): the quick-profile gate on the
NumPy kernel of examples/python/numpy_rope.py through ropecheck.gate, and on the same algorithm in
C (examples/c_kernel/example_rope.c) through the C ABI with `ropecheck gate --kernel-lib`; float32,
both pairings, same seed. Prints property cases, wall seconds (properties + fixtures) and cases
per second. Run from the repository root after building: python3 scripts/python-gate-overhead.py
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


start = time.perf_counter()
report = ropecheck.gate(rope_numpy, dtypes=["float32"], pairings=["half", "adjacent"])
python_seconds = time.perf_counter() - start
python_cases = cases(report.to_dict())

with tempfile.TemporaryDirectory() as tmp:
    out = Path(tmp) / "gate.json"
    start = time.perf_counter()
    subprocess.run([str(root / "build" / "cli" / "ropecheck"), "gate", "--kernel-lib",
                    str(root / "build" / "examples" / "libexample_rope.so"), "--json", str(out)],
                   check=True, capture_output=True)
    c_seconds = time.perf_counter() - start
    c_cases = cases(json.loads(out.read_text()))

print("| kernel | verdict | property cases | wall s (properties + fixtures) | cases/s |")
print("| --- | --- | --- | --- | --- |")
print(f"| NumPy `rope_numpy` via `ropecheck.gate` | {report.verdict} | {python_cases} | "
      f"{python_seconds:.2f} | {python_cases / python_seconds:.0f} |")
print(f"| C `example_rope` via `--kernel-lib` | pass | {c_cases} | {c_seconds:.2f} | "
      f"{c_cases / c_seconds:.0f} |")
