#!/usr/bin/env python3
"""Regenerates docs/performance.md's kernel-property cost figures.

1. Cases per second of every kernel property but call_size_invariant, on on_the_fly_simd and
   cache_simd over float32/float16/bfloat16 (Google Benchmark, CPU time, one thread, a cold
   oracle memo per run): this tree's build/bench/ropecheck_property_benchmarks against the
   same benchmark built from the tree before the case-generation work (--baseline, default
   17dc5fd: its `per_case` path, the 266-bit oracle tables built for every case, which is the
   path the issue measured). The baseline is exported with `git archive` into
   build/baseline-<commit>/ (inside the build folder, which the layering test and git skip) and
   its benchmark target built there once (ccache is used when
   installed). The two binaries run alternately, --rounds times, in this one run; each cell is
   the median. The mean cost of a case weighs every (kernel, property) alike, as the deep
   profile's equal budgets do; it is taken over the properties both trees have.
2. Estimates the deep profile (`ropecheck gate --profile deep`, every built-in kernel): per
   kernel, a property's 10^6 cases are split over the kernel's dtypes (core/gate_run.cpp), so
   each run takes ⌈10^6 / dtypes⌉ cases (call_size_invariant ⌈1200 / dtypes⌉). It runs a fixed
   fraction of every run's cases (RC_PARAMS max_success), measures the gate's CPU time and
   scales it up. The gate uses one core; scripts/run-deep-properties.sh (ctest -j 2) spreads the
   same work over two, so the 2-core wall time is the CPU time / 2.

Writes the table between <!-- property-case-figures:begin --> and
<!-- property-case-figures:end --> in docs/performance.md. Run it on an idle machine:
    python3 scripts/property-case-figures.py [--cases N] [--rounds R] [--fraction F] [--baseline C]
"""
import argparse
import json
import math
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCH = ROOT / "build" / "bench" / "ropecheck_property_benchmarks"
CLI = ROOT / "build" / "cli" / "ropecheck"
PAGE = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- property-case-figures:begin -->", "<!-- property-case-figures:end -->"
DEEP_CASES = 1_000_000      # per property and kernel (properties/property_runner.h)
CALL_SIZE_DEEP = 1_200      # call_size_invariant's deep budget (kernel_properties_exact.cpp)
BASELINE = "17dc5fd"        # main before the case-generation work


def build_baseline(commit):
    """The baseline's property benchmark, built once into build/baseline-<commit>/."""
    full = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", commit + "^{commit}"],
                          check=True, capture_output=True, text=True).stdout.strip()
    source = ROOT / "build" / f"baseline-{full[:12]}"
    binary = source / "build" / "bench" / "ropecheck_property_benchmarks"
    if binary.exists():
        return full, binary
    if source.exists():
        shutil.rmtree(source)
    source.mkdir(parents=True)
    archive = subprocess.Popen(["git", "-C", str(ROOT), "archive", full], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(source)], check=True, stdin=archive.stdout)
    if archive.wait() != 0:
        sys.exit(f"git archive {full} failed")
    env = dict(os.environ)
    if shutil.which("ccache"):
        env.setdefault("CMAKE_CXX_COMPILER_LAUNCHER", "ccache")
        env.setdefault("CMAKE_C_COMPILER_LAUNCHER", "ccache")
    print(f"building the baseline benchmark of {full[:12]} in {source} …", file=sys.stderr)
    subprocess.run(["cmake", "--preset", "default"], cwd=source, check=True, env=env,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", "build", "-j", str(os.cpu_count() or 2), "--target",
                    "ropecheck_property_benchmarks"], cwd=source, check=True, env=env,
                   stdout=subprocess.DEVNULL)
    return full, binary


def run_bench(binary, cases, benchmark_filter=None):
    """{(kernel, property): cases/s} of one benchmark run."""
    command = [str(binary), f"--cases={cases}", "--benchmark_format=json"]
    if benchmark_filter:
        command.append(f"--benchmark_filter={benchmark_filter}")
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    rates = {}
    for b in json.loads(out)["benchmarks"]:
        parts = b["run_name"].split("/iterations")[0].split("/")
        if b.get("items_per_second", 0) > 0:  # a property the kernel skips runs 0 cases
            rates[(parts[1], parts[2])] = b["items_per_second"]
    return rates


def child_cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def gate_cpu(kernel, env_cases, properties):
    args = [str(CLI), "gate", "--profile", "deep", "--kernel", kernel]
    for p in properties:
        args += ["--property", p]
    env = dict(os.environ, RC_PARAMS=f"max_success={env_cases}")
    before = child_cpu_seconds()
    subprocess.run(args, check=True, env=env, stdout=subprocess.DEVNULL)
    return child_cpu_seconds() - before


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=300, help="cases per dtype per benchmark")
    parser.add_argument("--rounds", type=int, default=3, help="alternating runs of each binary")
    parser.add_argument("--fraction", type=float, default=1 / 200, help="of the deep profile")
    parser.add_argument("--baseline", default=BASELINE, help="commit of the tree before")
    a = parser.parse_args()
    for binary in (BENCH, CLI):
        if not binary.exists():
            sys.exit(f"{binary} not found: build first (cmake --build build)")
    baseline, old_bench = build_baseline(a.baseline)

    old_runs, new_runs = [], []
    for _ in range(a.rounds):
        old_runs.append(run_bench(old_bench, a.cases, "/per_case"))
        new_runs.append(run_bench(BENCH, a.cases))
    median = lambda runs, key: statistics.median(r[key] for r in runs)  # noqa: E731
    new = {key: median(new_runs, key) for key in new_runs[0]}
    old = {key: median(old_runs, key) for key in old_runs[0]}
    kernels = sorted({k for k, _ in new}, reverse=True)
    props = list(dict.fromkeys(p for _, p in new))

    lines = [f"| property | kernel | cases/s before ({baseline[:7]}) | cases/s now | now / before |",
             "| --- | --- | --- | --- | --- |"]
    cost_old = cost_new = 0.0
    common = [(k, p) for p in props for k in kernels if (k, p) in old and (k, p) in new]
    for p in props:
        for k in kernels:
            if (k, p) not in new:
                continue
            if (k, p) in old:
                cost_old += 1 / old[(k, p)] / len(common)
                cost_new += 1 / new[(k, p)] / len(common)
                lines.append(f"| {p} | {k} | {old[(k, p)]:,.0f} | {new[(k, p)]:,.0f} | "
                             f"{new[(k, p)] / old[(k, p)]:.2f}× |")
            else:
                lines.append(f"| {p} | {k} | – (new) | {new[(k, p)]:,.0f} | – |")
    lines.append(f"| **mean cost of a case** | both | {cost_old * 1e3:.3f} ms | "
                 f"{cost_new * 1e3:.3f} ms | **{cost_old / cost_new:.2f}×** |")

    registry = json.loads(subprocess.run([str(CLI), "kernels", "--json"], check=True,
                                         capture_output=True, text=True).stdout)
    cpu = 0.0
    samples = []
    for kernel in registry:
        runs = len(kernel["dtypes"])
        share = math.ceil(DEEP_CASES / runs)
        sample = max(1, round(share * a.fraction))
        samples.append(f"{kernel['name']} {sample}/{share}")
        cpu += gate_cpu(kernel["name"], sample, [p for p in props]) * share / sample
        cpu += gate_cpu(kernel["name"], 1, ["call_size_invariant"]) * math.ceil(CALL_SIZE_DEEP / runs)
    lines.append("")
    lines.append(f"Deep profile (`ropecheck gate --profile deep`, {len(registry)} built-in kernels, "
                 f"10^6 cases per kernel × property split over the kernel's dtypes): measured on "
                 f"a fraction of every run's cases ({', '.join(samples)} per property and dtype; "
                 f"call_size_invariant 1 case), scaled up: **{cpu / 3600:.2f} CPU-hours, about "
                 f"{cpu / 2 / 3600:.2f} h on 2 cores**. Measured {time.strftime('%Y-%m-%d')} on "
                 f"{os.cpu_count()} cores with `scripts/property-case-figures.py --cases {a.cases} "
                 f"--rounds {a.rounds} --fraction {a.fraction:g} --baseline {a.baseline}`.")
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
