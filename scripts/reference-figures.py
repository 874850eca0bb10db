#!/usr/bin/env python3
"""Regenerates docs/performance.md's reference-speed figures.

Runs build/bench/ropecheck_reference_benchmarks (Google Benchmark, real time: the tensor path uses
every core) and writes head vectors per second per form between the markers
<!-- reference-figures:begin --> and <!-- reference-figures:end --> of docs/performance.md. Run it on an idle machine:
    python3 scripts/reference-figures.py
"""
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCH = ROOT / "build" / "bench" / "ropecheck_reference_benchmarks"
PAGE = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- reference-figures:begin -->", "<!-- reference-figures:end -->"


def main():
    if not BENCH.exists():
        sys.exit(f"{BENCH} not found: build first (cmake --build --preset default)")
    out = subprocess.run([str(BENCH), "--benchmark_format=json", "--benchmark_repetitions=3",
                          "--benchmark_report_aggregates_only=true"],
                         check=True, capture_output=True, text=True).stdout
    rows = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            rows[b["run_name"].split("/real_time")[0].rsplit("/", 1)[0]] = b["items_per_second"]
    before = rows["reference/elementwise/per_vector"]
    lines = [f"| form (32 heads × 128, base 5e5, positions ≥ 100 000, {os.cpu_count()} cores) "
             "| head vectors/s |", "| --- | --- |",
             f"| elementwise, one vector at a time (the old path, one core) | {before:,.0f} |"]
    for form in ["elementwise", "complex", "matrix"]:
        rate = rows[f"reference/{form}/tensor"]
        lines.append(f"| {form}, `reference::rope_tensor` | {rate:,.0f} ({rate / before:.1f}×) |")
    table = "\n".join(lines)
    text = PAGE.read_text()
    if BEGIN not in text or END not in text:
        sys.exit(f"{PAGE}: markers {BEGIN} / {END} not found")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    PAGE.write_text(head + BEGIN + "\n" + table + "\n" + END + tail)
    print(table)


if __name__ == "__main__":
    main()
