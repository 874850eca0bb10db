"""The Python examples, gated and audited (ctest label `python`): the Hugging Face rotate_half
and Meta freqs_cis recipes fail the gate with float32 angles and pass with float64 ones; the
NumPy adjacent/half mix-up is killed; an audit of a torch bfloat16 output read through its raw
bits writes the same JSON report, byte for byte, as `ropecheck audit` on the same tensors as .npy.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

import ropecheck  # noqa: E402
from numpy_rope import rope_numpy, rope_numpy_pairing_mixup  # noqa: E402

torch = pytest.importorskip("torch")
from hf_rotate_half import rope_hf, rope_hf_float64_angles, rope_model_dtype_cache  # noqa: E402
from meta_freqs_cis import rope_meta, rope_meta_complex128  # noqa: E402

LLAMA = {"head_dim": 128, "rope_theta": 500000.0, "max_position_embeddings": 131072}


def failed_properties(report):
    return {f.check.split("/")[0] for f in report.failures}


def test_numpy_kernel_passes_and_its_pairing_mixup_is_killed():
    assert ropecheck.gate(rope_numpy, dtypes=["float32", "float16"]).passed
    report = ropecheck.gate(rope_numpy_pairing_mixup)
    assert not report.passed
    # Killed by a property on adjacent calls (not by fixtures alone), every failure replayable.
    assert "within_bound_of_reference" in failed_properties(report)
    assert all("seed=" in f.replay for f in report.failures if f.check.startswith("within_bound"))


def test_hf_rotate_half_float32_angles_fails_the_gate_float64_angles_pass():
    report = ropecheck.gate(rope_hf, pairings=["half"], tensor_type="torch")
    assert not report.passed
    assert "within_bound_of_reference" in failed_properties(report)
    assert ropecheck.gate(rope_hf_float64_angles, pairings=["half"], tensor_type="torch").passed


def test_meta_freqs_cis_complex64_fails_the_gate_complex128_passes():
    report = ropecheck.gate(rope_meta, pairings=["adjacent"], tensor_type="torch")
    assert not report.passed
    assert "within_bound_of_reference" in failed_properties(report)
    assert ropecheck.gate(rope_meta_complex128, pairings=["adjacent"], tensor_type="torch").passed


def rope_case(dtype, positions):
    """4 heads of Llama-3's 128 dims at the given positions."""
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(len(positions), 4, 128, generator=gen).to(dtype)
    inv_freq = 1.0 / (LLAMA["rope_theta"] ** (torch.arange(0, 128, 2, dtype=torch.float64) / 128))
    params = {"rotary_dim": 128, "pairing": "half", "inv_freq": inv_freq, "attention_factor": 1.0,
              "inverse": False}
    return x, positions, params


def long_context_case(dtype):
    """Positions to 131072 (every 64th, and the last one the context has)."""
    return rope_case(dtype, torch.cat((torch.arange(0, 131072, 64), torch.tensor([131071]))))


def codes(report):
    return {f["code"] for f in report.diagnosis}


def test_audit_diagnoses_the_hf_recipe_at_long_context():
    x, positions, params = long_context_case(torch.float32)
    y, _ = rope_hf(x, x[:, :0], positions, params)
    report = ropecheck.audit(x, positions, y, LLAMA)
    assert not report.passed
    assert "angle_precision" in codes(report)

    x, positions, params = long_context_case(torch.float32)
    y, _ = rope_hf_float64_angles(x, x[:, :0], positions, params)
    assert ropecheck.audit(x, positions, y, LLAMA).passed


def test_audit_of_a_bfloat16_cos_sin_cache():
    # HF's own bfloat16 path fails, and the recipe fit reproduces it: cos/sin kept in bfloat16
    # and the products rounded to bfloat16 (docs/python.md says so), nothing left unexplained.
    x, positions, params = long_context_case(torch.bfloat16)
    y, _ = rope_hf(x, x[:, :0], positions, params)
    report = ropecheck.audit(x, positions, y, LLAMA)
    assert not report.passed
    recipe = report.to_dict()["recipe"]
    assert (recipe["trig_cache"], recipe["arithmetic"], recipe["bit_exact"]) == ("bfloat16", "bfloat16", 1.0)
    assert {"low_precision_arithmetic", "low_precision_trig_cache"} <= codes(report)
    assert "unexplained" not in codes(report)
    # The cache cast to bfloat16 with the rotation in float32 is diagnosed as such.
    x, positions, params = rope_case(torch.bfloat16, torch.arange(0, 4096, 2))
    y, _ = rope_model_dtype_cache(x, x[:, :0], positions, params)
    report = ropecheck.audit(x, positions, y, LLAMA)
    assert not report.passed
    assert "low_precision_trig_cache" in codes(report)


def test_bfloat16_audit_matches_the_cli_byte_for_byte(tmp_path, monkeypatch):
    x, positions, params = long_context_case(torch.bfloat16)
    y, _ = rope_hf(x, x[:, :0], positions, params)
    monkeypatch.chdir(tmp_path)
    Path("spec.json").write_text(json.dumps(LLAMA))
    # The raw bfloat16 bits as uint16 .npy, as a dump would store them.
    np.save("x.npy", x.view(torch.int16).numpy().view(np.uint16))
    np.save("y.npy", y.view(torch.int16).numpy().view(np.uint16))
    np.save("pos.npy", positions.numpy())
    cli = subprocess.run([os.environ.get("ROPECHECK_EXE", "ropecheck"), "audit", "--spec", "spec.json",
                          "--x", "x.npy", "--pos", "pos.npy", "--y", "y.npy", "--dtype", "bfloat16",
                          "--json", "cli.json"], capture_output=True, text=True)
    assert cli.returncode == 1, cli.stderr  # the audit fails (the recipe is wrong), not bad input
    report = ropecheck.audit(x, positions, y, "spec.json", dtype="bfloat16",
                             labels={"x": "x.npy", "positions": "pos.npy", "y": "y.npy"})
    report.write(json="python.json")
    assert Path("python.json").read_bytes() == Path("cli.json").read_bytes()
    assert report.to_dict() == json.loads(Path("cli.json").read_text())
