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
