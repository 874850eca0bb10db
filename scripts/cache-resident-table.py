#!/usr/bin/env python3
"""Regenerates docs/throughput.md's cache-resident table: the SIMD kernels at 16 KiB,
256 KiB and 4 MiB on 1 thread, in cycles per pair, beside the compute limit per pair that
docs/throughput.md derives from each loop's instruction mix and the core's port limits.

Runs build/bench/ropecheck_benchmarks (best of 5 repetitions, interleaved) once with this CPU's best SIMD target
and once with --simd-target=avx2, converts GB/s (bytes read + written) to cycles per pair at the
nominal clock in /proc/cpuinfo, and prints a Markdown table (paste it between the markers
<!-- cache-resident-table:begin --> and <!-- cache-resident-table:end --> of docs/throughput.md, or
pass --write to do so). Run it on an idle machine:  python3 scripts/cache-resident-table.py [--write]
"""
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCH = ROOT / "build" / "bench" / "ropecheck_benchmarks"
DOC = ROOT / "docs" / "throughput.md"
BEGIN, END = "<!-- cache-resident-table:begin -->", "<!-- cache-resident-table:end -->"
SIZES = [16384, 262144, 4194304]
DTYPES = ["float32", "float16", "bfloat16"]
ELEMENT = {"float32": 4, "float16": 2, "bfloat16": 2}
TARGETS = [("best", None), ("avx2", "--simd-target=avx2")]

# Compute limit, cycles per pair, of the rotation loop (docs/throughput.md, "The compute limit"):
# (target, dtype, pairing) -> cycles. on_the_fly adds its cos/sin per (token, pair) over the heads.
LIMIT = {
    ("avx2", "float32", "half"): 0.25, ("avx2", "float32", "adjacent"): 0.25,
    ("avx2", "float16", "half"): 0.50, ("avx2", "float16", "adjacent"): 0.58,
    ("avx2", "bfloat16", "half"): 0.67, ("avx2", "bfloat16", "adjacent"): 0.67,
    ("avx3", "float32", "half"): 0.125, ("avx3", "float32", "adjacent"): 0.19,
    ("avx3", "float16", "half"): 0.375, ("avx3", "float16", "adjacent"): 0.44,
    ("avx3", "bfloat16", "half"): 0.50, ("avx3", "bfloat16", "adjacent"): 0.50,
}
COS_SIN_PER_TOKEN_PAIR = {"avx2": 4.25, "avx3": 2.8}  # cycles per (token, pair)
HEADS = 32  # the benchmark's X = [tokens, 32 heads, 128]


def nominal_ghz():
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("cpu MHz"):
            return float(line.split(":")[1]) / 1000
    raise SystemExit("no 'cpu MHz' in /proc/cpuinfo")


def run(flag):
    sizes = "|".join(str(s) for s in SIZES)
    command = [str(BENCH), "--json", "--threads=1", "--repetitions=5",
               "--benchmark_enable_random_interleaving=true",
               f"--benchmark_filter=(_simd/.*|memcpy|stream_copy)/bytes:({sizes})/"]
    if flag:
        command.append(flag)
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def table(ghz):
    lines = ["| kernel, target | dtype, pairing | limit (cycles/pair) | " +
             " | ".join(f"{s // 1024} KiB" for s in SIZES) + " |",
             "| --- | --- | --- | " + " | ".join("---" for _ in SIZES) + " |"]
    for name, flag in TARGETS:
        rows = run(flag)
        for kernel in ["cache_simd", "on_the_fly_simd"]:
            for dtype in DTYPES:
                for pairing in ["half", "adjacent"]:
                    match = {r["bytes"]: r for r in rows if r["kernel"] == kernel
                             and r["dtype"] == dtype and r["pairing"] == pairing}
                    if not match:
                        continue
                    target = next(iter(match.values()))["simd_target"]
                    target = "avx3" if target.startswith("avx3") else target
                    limit = LIMIT[(target, dtype, pairing)]
                    if kernel == "on_the_fly_simd":
                        limit += COS_SIN_PER_TOKEN_PAIR[target] / HEADS
                    cells = []
                    for size in SIZES:
                        r = match.get(size)
                        if r is None:
                            cells.append("–")
                            continue
                        pairs_per_s = r["gbps"] * 1e9 / 2 / (2 * ELEMENT[dtype])
                        cycles = ghz * 1e9 / pairs_per_s
                        cells.append(f"{cycles:.2f} ({limit / cycles:.0%}; {r['ratio']:.2f}×)")
                    lines.append(f"| `{kernel}`, {target} | {dtype} {pairing} | {limit:.2f} | " +
                                 " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    ghz = nominal_ghz()
    text = (f"Cycles per pair at the nominal {ghz:.2f} GHz (share of the compute limit; ratio to "
            f"the faster copy of the same bytes, memcpy or streaming, in the same run), 1 thread, "
            f"best of 5 interleaved repetitions:\n\n" + table(ghz))
    if "--write" in sys.argv[1:]:
        doc = DOC.read_text()
        start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
        DOC.write_text(doc[:start] + "\n" + text + "\n" + doc[end:])
    print(text)


if __name__ == "__main__":
    main()
