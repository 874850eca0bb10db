#!/usr/bin/env python3
"""Regenerates the README's kernel-property cost figures (issue 17 §2).

1. Runs build/bench/ropecheck_property_benchmarks (Google Benchmark, CPU time, one thread):
   cases per second of every kernel property but call_size_invariant, on on_the_fly_simd and
   cache_simd over float32/float16/bfloat16, with the oracle's tables built per case (the old
   path) and memoized (the new one) in the same run, each run from a cold memo. The mean cost of
   a case weighs every (kernel, property) alike, as the deep profile's equal budgets do.
2. Estimates the deep profile (`ropecheck gate --profile deep`, the built-in kernels): it runs a
   fixed fraction of every run's cases (RC_PARAMS max_success = fraction × the deep share;
   call_size_invariant, whose deep budget is 100 cases per kernel and dtype, 1 case per run),
   measures the gate's CPU time, and scales each part up by its fraction. The gate uses one
   core; scripts/run-deep-properties.sh (ctest -j 2) spreads the same work over two, so the
   2-core wall time is the CPU time / 2 (the reference properties it also runs are not counted).

Writes the table between <!-- property-case-figures:begin --> and
<!-- property-case-figures:end --> in README.md. Run it on an idle machine:
    python3 scripts/property-case-figures.py [--cases N] [--fraction F]
"""
import argparse
import json
import os
import pathlib
import resource
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCH = ROOT / "build" / "bench" / "ropecheck_property_benchmarks"
CLI = ROOT / "build" / "cli" / "ropecheck"
README = ROOT / "README.md"
BEGIN, END = "<!-- property-case-figures:begin -->", "<!-- property-case-figures:end -->"
DEEP_CASES = 1_000_000      # per property (properties/property_runner.h)
CALL_SIZE_DEEP = 1_200      # call_size_invariant's deep budget (kernel_properties_exact.cpp)


def child_cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def gate_cpu(env_cases, properties):
    args = [str(CLI), "gate", "--profile", "deep"]
    for p in properties:
        args += ["--property", p]
    env = dict(os.environ, RC_PARAMS=f"max_success={env_cases}")
    before = child_cpu_seconds()
    subprocess.run(args, check=True, env=env, stdout=subprocess.DEVNULL)
    return child_cpu_seconds() - before


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=300, help="cases per dtype per benchmark")
    parser.add_argument("--fraction", type=float, default=1 / 200, help="of the deep profile")
    a = parser.parse_args()
    for binary in (BENCH, CLI):
        if not binary.exists():
            sys.exit(f"{binary} not found: build first (cmake --build build)")

    out = subprocess.run([str(BENCH), f"--cases={a.cases}", "--benchmark_format=json"],
                         check=True, capture_output=True, text=True).stdout
    rate = {}
    for b in json.loads(out)["benchmarks"]:
        _, kernel, prop, oracle = b["run_name"].split("/iterations")[0].split("/")
        rate[(kernel, prop, oracle)] = b["items_per_second"]
    kernels = sorted({k for k, _, _ in rate}, reverse=True)
    props = list(dict.fromkeys(p for _, p, _ in rate))
    lines = ["| property | kernel | cases/s, tables per case (old) | cases/s, memoized (new) | new / old |",
             "| --- | --- | --- | --- | --- |"]
    mean_cost = {"per_case": 0.0, "memoized": 0.0}
    for p in props:
        for k in kernels:
            old, new = rate[(k, p, "per_case")], rate[(k, p, "memoized")]
            mean_cost["per_case"] += 1 / old / (len(props) * len(kernels))
            mean_cost["memoized"] += 1 / new / (len(props) * len(kernels))
            lines.append(f"| {p} | {k} | {old:,.0f} | {new:,.0f} | {new / old:.2f}× |")
    ratio = mean_cost["per_case"] / mean_cost["memoized"]
    lines.append(f"| **mean cost of a case** | both | {mean_cost['per_case'] * 1e3:.3f} ms | "
                 f"{mean_cost['memoized'] * 1e3:.3f} ms | **{ratio:.2f}×** |")

    kernel_count = 4 * 3  # built-in kernels × dtypes: the runs a property's budget is split over
    per_run = DEEP_CASES // kernel_count + 1
    sample = max(1, round(per_run * a.fraction))
    others = [p for p in props]
    cpu = gate_cpu(sample, others) * per_run / sample
    call_size_per_run = CALL_SIZE_DEEP // kernel_count
    cpu += gate_cpu(1, ["call_size_invariant"]) * call_size_per_run
    lines.append("")
    lines.append(f"Deep profile (`ropecheck gate --profile deep`, 4 built-in kernels, memoized oracle): "
                 f"{sample} of {per_run} cases per kernel × property × dtype run measured "
                 f"(1 of {call_size_per_run} for call_size_invariant), scaled up: "
                 f"**{cpu / 3600:.2f} CPU-hours, about {cpu / 2 / 3600:.2f} h on 2 cores**. "
                 f"Measured {time.strftime('%Y-%m-%d')} on {os.cpu_count()} cores with "
                 f"`scripts/property-case-figures.py --cases {a.cases} --fraction {a.fraction:g}`.")
    table = "\n".join(lines)
    text = README.read_text()
    if BEGIN not in text or END not in text:
        sys.exit(f"{README}: markers {BEGIN} / {END} not found")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    README.write_text(head + BEGIN + "\n" + table + "\n" + END + tail)
    print(table)


if __name__ == "__main__":
    main()
