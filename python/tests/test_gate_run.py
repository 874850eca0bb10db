"""One gate run: ropecheck.gate runs `ropecheck gate`'s own run (core/gate_run.h) with the Python
kernel as its in-process kernel, so the report has the CLI's shape — the same properties in the
same order, the same fixtures, the same fields — and the CLI's options work: shard=(i, n) splits
the cases as --shard I/N does.

The expectations come from the `ropecheck` executable (ROPECHECK_EXE), run on a built-in
kernel: what the command reports is what the Python gate must report.
"""

import json
import os
import subprocess

import pytest

import ropecheck
from numpy_rope import rope_numpy

EXE = os.environ.get("ROPECHECK_EXE")


def cli_gate(tmp_path, *flags):
    out = tmp_path / "cli.json"
    subprocess.run([EXE, "gate", *flags, "--json", str(out)], check=True, capture_output=True)
    return json.loads(out.read_text())


@pytest.mark.skipif(not EXE, reason="ROPECHECK_EXE (set by ctest) names the ropecheck executable")
def test_the_python_report_is_the_cli_reports_shape(tmp_path):
    cli = cli_gate(tmp_path, "--kernel", "on_the_fly_scalar", "--property", "norm_preserved")
    py = ropecheck.gate(rope_numpy, dtypes=["float32", "float16"], properties=["norm_preserved"]).to_dict()
    assert set(py) == set(cli)
    assert set(py["kernels"][0]) == set(cli["kernels"][0])
    # Every property on every storage dtype, in the CLI's order; the selected one ran.
    assert [p["name"] for p in py["kernels"][0]["properties"]] == [p["name"] for p in cli["kernels"][0]["properties"]]
    for p, c in zip(py["kernels"][0]["properties"], cli["kernels"][0]["properties"]):
        if p["verdict"] == c["verdict"]:
            assert set(p) == set(c), p["name"]
    ran = {p["name"] for p in py["kernels"][0]["properties"] if p["verdict"] == "pass"}
    assert "norm_preserved/float32" in ran


@pytest.mark.skipif(not EXE, reason="ROPECHECK_EXE (set by ctest) names the ropecheck executable")
def test_the_fixtures_are_the_clis(tmp_path):
    cli = cli_gate(tmp_path, "--kernel", "on_the_fly_scalar")
    py = ropecheck.gate(rope_numpy, name="on_the_fly_scalar", dtypes=["float32", "float16"]).to_dict()
    wanted = {f["name"] for f in cli["fixtures"] if f["name"].endswith(("/float32", "/float16")) or "/float32 " in
              f["name"] or "/float16 " in f["name"]}
    have = {f["name"] for f in py["fixtures"]}
    assert wanted and wanted <= have, sorted(wanted - have)


def test_shards_split_the_cases_of_the_whole_run():
    whole = ropecheck.gate(rope_numpy, properties=["within_bound_of_reference", "norm_preserved"])
    shards = [ropecheck.gate(rope_numpy, properties=["within_bound_of_reference", "norm_preserved"], shard=(i, 3))
              for i in range(3)]
    for s, i in zip(shards, range(3)):
        d = s.to_dict()
        assert (d["shard"]["index"], d["shard"]["count"]) == (i, 3), d["shard"]

    def cases(report):
        return {p["name"]: p["cases"] for p in report.properties if p["verdict"] == "pass"}

    total = cases(whole)
    assert total
    for name, n in total.items():
        assert sum(cases(s).get(name, 0) for s in shards) == n, name
        assert all(cases(s).get(name, 0) < n for s in shards), name


@pytest.mark.parametrize("shard", [(3, 3), (-1, 2), (0, 0), "0/2", (0.5, 2), (0, 2, 1), (True, 2)])
def test_bad_shards_are_refused_before_the_kernel_is_called(shard):
    calls = []
    with pytest.raises(ropecheck.FlagError, match="shard"):
        ropecheck.gate(lambda q, k, p, params: calls.append(1) or (q, k), shard=shard)
    assert not calls


def _devices_seen(device):
    torch = pytest.importorskip("torch")
    from hf_rotate_half import rope_hf_float64_angles

    seen = set()

    def on_device(q, k, positions, params):
        seen.add((q.device.type, k.device.type, positions.device.type, params["inv_freq"].device.type))
        return rope_hf_float64_angles(q, k, positions, params)

    report = ropecheck.gate(on_device, pairings=["half"], tensor_type="torch", device=device,
                            properties=["within_bound_of_reference", "norm_preserved"])
    return report, seen, torch


def test_device_makes_the_kernels_tensors_there():
    report, seen, _ = _devices_seen("cpu")
    assert report.passed and seen == {("cpu", "cpu", "cpu", "cpu")}


def test_a_cuda_kernel_is_gated_on_its_device():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine (docs/python.md: run this test on a GPU machine)")
    report, seen, _ = _devices_seen("cuda")
    assert report.passed and seen == {("cuda", "cuda", "cuda", "cuda")}


@pytest.mark.parametrize("arguments", [dict(device="no-such-device", tensor_type="torch"), dict(device="cpu")])
def test_bad_devices_are_refused_before_the_kernel_is_called(arguments):
    if arguments.get("tensor_type") == "torch":
        pytest.importorskip("torch")
    calls = []
    with pytest.raises(ropecheck.FlagError, match="^device: "):
        ropecheck.gate(lambda q, k, p, params: calls.append(1) or (q, k), **arguments)
    assert not calls
