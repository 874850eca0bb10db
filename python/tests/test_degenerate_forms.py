"""Every public entry point, fed the degenerate forms of its inputs — 0 tokens, 0 heads, a batch
of 0, empty positions, 0 dtypes, 0 pairings, a config whose every layer skips RoPE, a tolerance
or output scale that overflows — raises ropecheck.InputError (a ValueError) naming why: a
verifier never passes over nothing, and never crashes the interpreter on an empty array."""

import numpy as np
import pytest

import ropecheck
from numpy_rope import rope_numpy
from ropecheck.testing import assert_audit_passes, assert_rope_correct

SPEC = {"head_dim": 64, "rope_theta": 10000.0}
# Llama 4's no_rope_layers: 1 = the layer uses RoPE, 0 = NoPE. Every layer NoPE.
ALL_NOPE = {"model_type": "llama4_text", "head_dim": 64, "rope_theta": 500000.0, "num_hidden_layers": 2,
            "no_rope_layers": [0, 0]}
# Qwen3-Next: linear_attention layers (Gated DeltaNet) apply no RoPE. Every layer linear.
ALL_LINEAR = {"model_type": "qwen3_next", "head_dim": 64, "rope_theta": 10000.0, "num_hidden_layers": 2,
              "layer_types": ["linear_attention", "linear_attention"]}
FP8_BITS_OF_ONE = 0x38  # float8_e4m3fn 1.0


def case(tokens=8, heads=2):
    x = np.random.default_rng(5).standard_normal((tokens, heads, 64)).astype(np.float32)
    positions = np.arange(tokens, dtype=np.int64)
    return x, positions


def exact(x, positions):
    return ropecheck.reference(x, positions, SPEC, out_dtype="float32")


# --- the shapes: nothing to compute or judge -------------------------------------------------

EMPTY_SHAPES = {
    "0 tokens": (lambda x, p: (x[:0], p[:0])),
    "0 heads": (lambda x, p: (x[:, :0], p)),
    "a batch of 0": (lambda x, p: (x[None][:0], p[None][:0])),
    "empty positions": (lambda x, p: (x, p[:0])),
}


@pytest.mark.parametrize("form", EMPTY_SHAPES)
def test_reference_refuses_empty_shapes(form):
    x, p = EMPTY_SHAPES[form](*case())
    with pytest.raises(ropecheck.InputError, match=r"^(x|positions): "):
        ropecheck.reference(x, p, SPEC)


@pytest.mark.parametrize("form", EMPTY_SHAPES)
def test_audit_refuses_empty_shapes(form):
    x, p = case()
    y = exact(x, p)
    ex, ep = EMPTY_SHAPES[form](x, p)
    ey = EMPTY_SHAPES[form](y, p)[0]
    with pytest.raises(ropecheck.InputError, match=r"^(x|y|positions): "):
        ropecheck.audit(ex, ep, ey, SPEC)
    with pytest.raises(ropecheck.InputError):
        assert_audit_passes(ex, ep, ey, SPEC)


def test_zero_heads_are_refused_not_a_crash():
    # Used to kill the interpreter with SIGFPE (a division by the head count).
    x, p = case()
    y = exact(x, p)
    with pytest.raises(ropecheck.InputError, match=r"^x: shape: .*nothing to check '\(8, 0, 64\)'"):
        ropecheck.audit(x[:, :0], p, y[:, :0], SPEC)


# --- specs that define no RoPE --------------------------------------------------------------


@pytest.mark.parametrize("spec", [ALL_NOPE, ALL_LINEAR, {}], ids=["all NoPE", "all linear attention", "empty"])
def test_specs_without_rope_are_refused_by_every_entry_point(spec):
    x, p = case()
    y = x.copy()  # what a model that applies no RoPE returns: must not be judged as RoPE
    with pytest.raises(ropecheck.SpecError):
        ropecheck.load_spec(spec)
    with pytest.raises(ropecheck.SpecError):
        ropecheck.reference(x, p, spec)
    with pytest.raises(ropecheck.SpecError):
        ropecheck.audit(x, p, y, spec)
    with pytest.raises(ropecheck.SpecError):
        assert_audit_passes(x, p, y, spec)


# --- tolerances and output scales that overflow -----------------------------------------------


@pytest.mark.parametrize("tolerance", [1e400, float("inf"), float("nan"), 10**400, 1e300, 0.0, -1.0])
def test_audit_refuses_a_tolerance_that_could_not_fail(tolerance):
    x, p = case()
    y = 3 * x + 1  # junk: only a vacuous tolerance would pass it
    with pytest.raises(ropecheck.FlagError, match="tolerance"):
        ropecheck.audit(x, p, y, SPEC, tolerance=tolerance)
    with pytest.raises(ropecheck.FlagError, match="tolerance"):
        assert_audit_passes(x, p, y, SPEC, tolerance=tolerance)


@pytest.mark.parametrize("scale", [1e39, float("inf"), float("nan"), 0.0, -1.0, 1e-46])
def test_output_scales_outside_float32_are_refused(scale):
    x, p = case()
    with pytest.raises(ropecheck.FlagError, match="output_scale"):
        ropecheck.reference(x, p, SPEC, output_scale=scale)
    y = np.full(x.shape, FP8_BITS_OF_ONE, dtype=np.uint8)
    with pytest.raises(ropecheck.FlagError, match="output_scale"):
        ropecheck.audit(x, p, y, SPEC, dtype="float8_e4m3fn", output_scale=scale)


def test_a_tiny_fp8_output_scale_does_not_pass_junk():
    # At S = 1e-45 (a float32 subnormal) every y/S overflows fp8: no stored value could be judged
    # wrong. Used to print PASS with "max pair error inf".
    x, p = case(64)
    y = np.full(x.shape, FP8_BITS_OF_ONE, dtype=np.uint8)  # all 1.0: junk
    with pytest.raises(ropecheck.InputError, match="output.scale"):
        ropecheck.audit(x, p, y, SPEC, dtype="float8_e4m3fn", output_scale=1e-45)
    with pytest.raises(ropecheck.InputError, match="output.scale"):
        assert_audit_passes(x, p, y, SPEC, dtype="float8_e4m3fn", output_scale=1e-45)


def test_a_reference_whose_scaled_outputs_overflow_is_refused():
    # y / S at S = 1e-45 is about 1e45: past float32's range, so every float32 output would be
    # inf — refused rather than returned.
    x, p = case()
    with pytest.raises(ropecheck.InputError, match="output.scale"):
        ropecheck.reference(x, p, SPEC, out_dtype="float32", output_scale=1e-45)


def test_a_spec_whose_tolerance_overflows_is_refused():
    # Linear scaling by 1e-300 makes the inverse frequencies, and so the derived tolerance,
    # infinite: Y = 3X + 1 used to pass with "tolerance inf units".
    spec = {"head_dim": 64, "rope_scaling": {"rope_type": "linear", "factor": 1e-300}}
    x = np.random.default_rng(1).standard_normal((16, 1, 64)).astype(np.float32)
    p = np.arange(16, dtype=np.int64) * 13000
    with pytest.raises(ropecheck.InputError):
        ropecheck.audit(x, p, 3 * x + 1, spec)


# --- the gate: 0 dtypes, 0 pairings ---------------------------------------------------------


@pytest.mark.parametrize("argument", ["dtypes", "pairings"])
@pytest.mark.parametrize("empty", [[], (), ""], ids=["list", "tuple", "str"])
def test_gate_refuses_empty_lists(argument, empty):
    def wrong(q, k, positions, params):  # any kernel used to pass with dtypes=[]
        return q * 0, k * 0

    with pytest.raises(ropecheck.FlagError, match=f"^{argument}: "):
        ropecheck.gate(wrong, **{argument: empty})
    with pytest.raises(ropecheck.FlagError, match=f"^{argument}: "):
        assert_rope_correct(wrong, **{argument: empty})
    with pytest.raises(ropecheck.FlagError, match=f"^{argument}: "):
        ropecheck.gate(rope_numpy, mutants=True, **{argument: empty})


# --- the reports' write: nothing to write to ------------------------------------------------


def test_write_refuses_empty_and_shared_paths(tmp_path):
    x, p = case()
    report = ropecheck.audit(x, p, exact(x, p), SPEC)
    for paths in ({"json": ""}, {"html": b""}, {"json": tmp_path / "r", "html": tmp_path / "r"}):
        with pytest.raises(ropecheck.InputError):
            report.write(**paths)
    assert list(tmp_path.iterdir()) == []
