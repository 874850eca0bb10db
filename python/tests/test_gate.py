"""ropecheck.gate on Python callables: a correct NumPy kernel passes, wrong ones fail with the
property, counterexample, seed and replay; properties a Python kernel cannot express are listed
as skipped; the kernel's own exception ends the gate as itself."""

import time

import numpy as np
import pytest

import ropecheck
from numpy_rope import rope_numpy
from ropecheck.testing import assert_rope_correct

SKIPPED = {"in_place_equals_out_of_place", "layout_invariant", "rejects_invalid_calls",
           # position streams: the bridge passes one position per token
           "streams_equal_one_d", "streams_within_bound_of_reference", "streams_norm_preserved",
           "streams_layout_invariance",
           # the fp8 output scale: the bridge passes none
           "output_scale_within_bound"}
# Run only on kernels that declare one rounding per output (fast::kernel_info::rounds_once).
NOT_CLAIMED = {"rounded_once_within_half_ulp"}


def test_correct_kernel_passes_every_property_it_can_be_held_to():
    report = assert_rope_correct(rope_numpy, dtypes=["float32", "float16"], seed=7)
    assert report.passed and report.verdict == "pass" and report.seed == 7
    # The report lists every property on every dtype, as `ropecheck gate --json` does: those of
    # the kernel's dtypes that it is held to ran; every other row is skipped, with the reason.
    ran = {p["name"] for p in report.properties if p["verdict"] != "skipped"}
    expected = {f"{name}/{dtype}" for name in ropecheck._core.kernel_property_names()
                for dtype in ("float32", "float16") if name not in SKIPPED | NOT_CLAIMED}
    assert ran == expected
    assert all(p["verdict"] == "skipped" for p in report.properties
               if not p["name"].endswith(("/float32", "/float16")))
    # rounded_once_within_half_ulp runs only on kernels that declare one rounding per output
    # (fast::kernel_info::rounds_once): shown, with 0 cases and the reason, for this one.
    assert all(p["cases"] > 0 for p in report.properties if p["name"] in ran)
    # Never silently dropped: each property it cannot express is listed with the reason.
    assert {(s["property"], s["dtype"]) for s in report.skipped} == {
        (name, dtype) for name in SKIPPED | {"rounded_once_within_half_ulp"}
        for dtype in ("float32", "float16")}
    assert all(s["reason"] for s in report.skipped)
    assert any(f["name"].startswith("golden/") for f in report.fixtures)
    assert report.to_dict()["kernels"][0]["name"] == "rope_numpy"


def sin_sign_flipped(q, k, positions, params):
    """rotate_half with the sign convention inverted: rotates by −angle."""
    return rope_numpy(q, k, positions, dict(params, inverse=not params["inverse"]))


def test_wrong_kernel_fails_with_what_a_reviewer_needs():
    report = ropecheck.gate(sin_sign_flipped, pairings=["half"])
    assert not report.passed
    within = [f for f in report.failures if f.check == "within_bound_of_reference/float32"]
    assert within, report.failures
    failure = within[0]
    assert failure.worst_over_bound > 1 and failure.seed == ropecheck._core.default_seed()
    assert "within_bound_of_reference" in failure.counterexample.splitlines()[-1]
    assert "seed=" in failure.replay and "ropecheck.gate(sin_sign_flipped" in failure.replay
    with pytest.raises(AssertionError) as raised:
        assert_rope_correct(sin_sign_flipped, pairings=["half"])
    message = str(raised.value)
    for needed in ("within_bound_of_reference/float32", "worst/bound", "replay:", "seed", "full report: "):
        assert needed in message


class KernelBug(Exception):
    pass


def test_an_exception_in_the_kernel_ends_the_gate_as_itself():
    calls = []

    def raising(q, k, positions, params):
        calls.append(1)
        raise KernelBug("boom")

    start = time.perf_counter()
    with pytest.raises(KernelBug, match="boom"):
        ropecheck.gate(raising)
    assert len(calls) == 1  # no call after the first exception
    assert time.perf_counter() - start < 60


def test_bad_return_values_are_errors_naming_the_output():
    with pytest.raises(TypeError, match=r"q_out has dtype float64"):
        ropecheck.gate(lambda q, k, p, params: (q.astype(np.float64), k))
    with pytest.raises(ValueError, match=r"k_out has shape"):
        ropecheck.gate(lambda q, k, p, params: (q, k[:, :, :2]))
    with pytest.raises(TypeError, match=r"must return \(q_out, k_out\)"):
        ropecheck.gate(lambda q, k, p, params: q)


def test_arguments_are_checked():
    with pytest.raises(ropecheck.FlagError, match="dtypes: bfloat16 needs tensor_type=\"torch\""):
        ropecheck.gate(rope_numpy, dtypes=["bfloat16"])
    with pytest.raises(ropecheck.FlagError, match="pairings\\[0\\]: is not \"half\" or \"adjacent\" 'neox'"):
        ropecheck.gate(rope_numpy, pairings=["neox"])
    with pytest.raises(ropecheck.FlagError, match="profile: is not \"quick\" or \"deep\" 'slow'"):
        ropecheck.gate(rope_numpy, profile="slow")


def test_torch_bfloat16_kernel_gets_bfloat16_tensors():
    torch = pytest.importorskip("torch")
    seen = set()

    def rope_torch(q, k, positions, params):
        seen.add((q.dtype, positions.dtype, params["inv_freq"].dtype))
        qn, kn = rope_numpy(q.float().numpy(), k.float().numpy(), positions.numpy(),
                            dict(params, inv_freq=params["inv_freq"].numpy()))
        # float32 → bfloat16 after the float64 rotation rounded to float32: a double rounding,
        # within the bound's half bfloat16 unit plus 2^-24 relative. The pass-through dims are
        # copied from the input: a round trip through float32 would lose NaN payload bits
        # (pass_through_bit_exact catches that).
        d = params["rotary_dim"]
        q_out, k_out = q.clone(), k.clone()
        q_out[..., :d] = torch.from_numpy(qn[..., :d]).to(q.dtype)
        k_out[..., :d] = torch.from_numpy(kn[..., :d]).to(k.dtype)
        return q_out, k_out

    report = ropecheck.gate(rope_torch, dtypes=["bfloat16"], tensor_type="torch")
    assert seen == {(torch.bfloat16, torch.int64, torch.float64)}
    assert report.passed, [str(f) for f in report.failures]


def test_the_replay_line_reproduces_the_failure_alone(tmp_path):
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    report = ropecheck.gate(sin_sign_flipped, pairings=["half"])
    failure = next(f for f in report.failures if f.check == "within_bound_of_reference/float32")
    rc_params = re.match(r'RC_PARAMS="([^"]*)"', failure.replay).group(1)
    script = tmp_path / "replay.py"
    script.write_text(
        "import ropecheck, test_gate\n"
        "r = ropecheck.gate(test_gate.sin_sign_flipped, pairings=['half'])\n"
        "print([(p['name'], p['cases']) for p in r.properties if p['cases']])\n"
        "print(r.failures[0].counterexample.splitlines()[-1])\n")
    env = dict(os.environ, RC_PARAMS=rc_params)
    examples = Path(__file__).resolve().parents[2] / "examples" / "python"
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), str(examples), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, check=True)
    ran, last_line = out.stdout.splitlines()[:2]
    assert ran == "[('within_bound_of_reference/float32', 1)]"  # only the failing property, its one case
    assert last_line == failure.counterexample.splitlines()[-1]


# mutants=True (each mutant a whole gate) runs once in the Python suite, on a kernel with a
# declared domain, which judges mutants every way an undeclared one does and more:
# test_gate_options.py, test_mutants_face_the_checks_and_domain_of_a_python_kernel.
