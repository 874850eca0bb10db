"""ropecheck.audit and assert_audit_passes: the report object, the files it writes, and the
failure message a reviewer reads."""

import json

import numpy as np
import pytest

import ropecheck
from ropecheck.testing import assert_audit_passes

SPEC = {"head_dim": 64, "rope_theta": 10000.0}


def case(tokens=256):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((tokens, 2, 64)).astype(np.float32)
    positions = np.arange(tokens, dtype=np.int64) * 97
    return x, positions


def float32_angle_rope(x, positions, base=10000.0):
    """The float32 recipe: angles float32(m)·float32(θ_j), cos/sin in float32 (independent of ropecheck)."""
    d = x.shape[-1]
    inv = (1.0 / base ** (np.arange(0, d, 2, dtype=np.float64) / d)).astype(np.float32)
    angle = positions.astype(np.float32)[:, None] * inv[None, :]
    cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
    a, b = x[..., : d // 2], x[..., d // 2 :]
    return np.concatenate((a * cos - b * sin, b * cos + a * sin), axis=-1).astype(np.float32)


def test_reference_rounded_once_passes_and_reports_the_fields():
    x, positions = case()
    y = ropecheck.reference(x, positions, SPEC, out_dtype="float32")
    report = assert_audit_passes(x, positions, y, SPEC)
    assert report.passed and report.verdict == "pass"
    # Rounding once to float32 is within half an ulp: at most 2^-24·|y| <= 2^-24·‖pair‖ per output.
    assert 0 < report.max_rel_pair_error_units <= 1.0
    d = report.to_dict()
    assert d["report"] == "audit" and d["dtype"] == "float32"
    assert d["max_rel_pair_error_units"] == report.max_rel_pair_error_units
    assert d["diagnosis"] == report.diagnosis
    assert d["inputs"] == {"spec": "spec", "x": "x", "positions": "positions", "y": "y"}


def test_float32_angles_fail_with_a_diagnosis_and_a_reviewers_message():
    x, positions = case(1024)
    positions = np.arange(1024, dtype=np.int64) * 128  # to 131072, where float32 angles drift
    y = float32_angle_rope(x, positions)
    report = ropecheck.audit(x, positions, y, SPEC)
    assert not report.passed and report.verdict == "fail"
    assert report.max_rel_pair_error_units > 100
    assert any(f["code"] == "angle_precision" for f in report.diagnosis)
    with pytest.raises(AssertionError) as failure:
        assert_audit_passes(x, positions, y, SPEC)
    message = str(failure.value)
    for needed in ("bound:", "observed:", "worst element:", "angle_precision", "replay:"):
        assert needed in message


def test_write_gives_the_four_reports(tmp_path):
    x, positions = case(64)
    y = float32_angle_rope(x, positions)
    report = ropecheck.audit(x, positions, y, SPEC, tolerance=2.5)
    paths = {kind: tmp_path / f"audit.{ext}" for kind, ext in
             (("json", "json"), ("markdown", "md"), ("html", "html"), ("junit", "xml"))}
    report.write(**paths)
    assert json.loads(paths["json"].read_text()) == report.to_dict()
    assert paths["json"].read_text() == report.to_json()
    assert "<testsuite" in paths["junit"].read_text()
    assert paths["markdown"].read_text().strip() and "<html" in paths["html"].read_text()


def test_bad_input_is_a_value_error_naming_it():
    x, positions = case(8)
    with pytest.raises(ValueError, match=r"y: shape: does not match X"):
        ropecheck.audit(x, positions, x[:4], SPEC)
    with pytest.raises(ValueError, match=r"tolerance.*not a finite number > 0"):
        ropecheck.audit(x, positions, x, SPEC, tolerance=-1)
    with pytest.raises(ValueError, match=r"16-bit integers"):
        ropecheck.audit(x, positions, x.view(np.uint16), SPEC)


def e4m3fn_bits(values, toward_zero=False):
    """float8_e4m3fn bits of `values` by nearest value from the OCP OFP8 table (ties to the even
    pattern), saturating at ±448 — independent of ropecheck's encoder. `toward_zero` truncates."""
    table = []
    for b in range(0x7F):  # 0x7F is NaN
        e, m = b >> 3, b & 7
        table.append((m / 8) * 2.0**-6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))
    table = np.array(table)
    a = np.minimum(np.abs(values.astype(np.float64)), 448.0).ravel()
    if toward_zero:
        idx = np.searchsorted(table, a, side="right") - 1
    else:
        lo = np.clip(np.searchsorted(table, a, side="right") - 1, 0, len(table) - 1)
        hi = np.clip(lo + 1, 0, len(table) - 1)
        d_lo, d_hi = a - table[lo], table[hi] - a
        idx = np.where((d_hi < d_lo) | ((d_hi == d_lo) & (lo % 2 == 1)), hi, lo)
    sign = np.where(np.signbit(values.ravel()), 0x80, 0)
    return (idx | sign).astype(np.uint8).reshape(values.shape)


def test_fp8_output_as_uint8_bits_needs_the_dtype_and_saturation_is_judged():
    # Inputs up to ~3·448·0.3: some rotated outputs exceed 448 and must be stored as ±448.
    x, positions = case(64)
    x = (x * 400).astype(np.float32)
    exact = ropecheck.reference(x, positions, SPEC, out_dtype="float64")
    assert np.abs(exact).max() > 448
    y = e4m3fn_bits(exact)
    report = ropecheck.audit(x, positions, y, SPEC, dtype="float8_e4m3fn")
    assert report.passed, str(report)
    assert report.to_dict()["dtype"] == "float8_e4m3fn"
    assert not ropecheck.audit(x, positions, e4m3fn_bits(exact, toward_zero=True), SPEC,
                               dtype="float8_e4m3fn").passed
    with pytest.raises(ValueError, match="float8_e4m3fn"):
        ropecheck.audit(x, positions, y, SPEC)


def test_fp8_output_scale_keyword_judges_round_of_y_over_scale():
    # A pipeline's fp8 store with scale S: round(y / S), made here from the float64 reference
    # divided by S in NumPy and the independent encoder above; judged with output_scale=S it
    # passes, unscaled or with S's reciprocal it fails. reference(output_scale=4) is ref / 4.
    x, positions = case(64)
    x = (x * 400).astype(np.float32)
    exact = ropecheck.reference(x, positions, SPEC, out_dtype="float64")
    scale = np.float32(3.0)
    y = e4m3fn_bits((exact / np.float64(scale)).astype(np.float32))
    scaled = ropecheck.audit(x, positions, y, SPEC, dtype="float8_e4m3fn", output_scale=3.0)
    assert scaled.passed
    assert scaled.to_dict()["output_scale"] == float(scale)  # the report records the scale judged with
    assert scaled.to_dict()["schema_version"] == 2
    unscaled = ropecheck.audit(x, positions, y, SPEC, dtype="float8_e4m3fn")
    assert not unscaled.passed and unscaled.to_dict()["output_scale"] == 1.0
    # Judged with the reciprocal, y / 3 is y · σ for σ = 1/3: the diagnosis, run with the scale,
    # names the scale multiplied instead of divided.
    reciprocal = ropecheck.audit(x, positions, y, SPEC, dtype="float8_e4m3fn", output_scale=1 / 3)
    assert not reciprocal.passed
    assert reciprocal.to_dict()["output_scale"] == float(np.float32(1 / 3))
    assert reciprocal.diagnosis[0]["code"] == "output_scale_misapplied", reciprocal.diagnosis
    quarter = ropecheck.reference(x, positions, SPEC, out_dtype="float64", output_scale=4.0)
    assert np.array_equal(quarter, exact / 4)
    for bad in (0.0, -1.0, float("inf"), float("nan"), 1e39):
        with pytest.raises(ValueError, match="output_scale"):
            ropecheck.audit(x, positions, y, SPEC, dtype="float8_e4m3fn", output_scale=bad)
    with pytest.raises(ValueError, match="fp8"):
        ropecheck.audit(x, positions, exact.astype(np.float32), SPEC, output_scale=2.0)


def test_audit_takes_a_contract_as_the_gate_does():
    """audit(contract=): the dump is held to the recipe's per-output bound — green for the float32
    recipe it follows, by name and by its own audit's recipe, red for a 16-bit cache under that
    same contract — and a contract with tolerance= is refused."""
    x, positions = case()
    positions = positions * 64  # to ~1.6e6: float32 angles are far past the exact bound
    y = float32_angle_rope(x, positions)
    exact = ropecheck.audit(x, positions, y, SPEC)
    assert not exact.passed
    assert exact.to_dict()["tolerance_terms"]["contract"] is None
    named = ropecheck.audit(x, positions, y, SPEC, contract="float32_angles")
    assert named.passed, named.render_terminal()
    assert named.to_dict()["tolerance_terms"]["contract"] == "float32_angles"
    assert ropecheck.audit(x, positions, y, SPEC, contract=exact).passed
    # The regression: cos/sin kept in float16 where the kernel kept them in float32.
    d = x.shape[-1]
    inv = (1.0 / 10000.0 ** (np.arange(0, d, 2, dtype=np.float64) / d)).astype(np.float32)
    angle = positions.astype(np.float32)[:, None] * inv[None, :]
    cos = np.cos(angle).astype(np.float16).astype(np.float32)[:, None, :]
    sin = np.sin(angle).astype(np.float16).astype(np.float32)[:, None, :]
    a, b = x[..., : d // 2], x[..., d // 2 :]
    regressed = np.concatenate((a * cos - b * sin, b * cos + a * sin), axis=-1).astype(np.float32)
    assert not ropecheck.audit(x, positions, regressed, SPEC, contract="float32_angles").passed
    with pytest.raises(ValueError, match="tolerance: is not allowed with contract="):
        ropecheck.audit(x, positions, y, SPEC, contract="float32_angles", tolerance=3)
