"""ropecheck.reference: the 256-bit reference from Python, held to an independent oracle
(mpmath at 60 digits), and the one-line errors of bad input."""

import json
import math

import mpmath
import numpy as np
import pytest

import ropecheck

mpmath.mp.dps = 60


def mp_rope_half(x, m, base, d):
    """RoPE of one head vector, half-split pairs, in mpmath: θ_j = base^(-2j/d), angle m·θ_j."""
    y = [mpmath.mpf(float(v)) for v in x]
    out = list(y)
    for j in range(d // 2):
        theta = mpmath.power(base, -mpmath.mpf(2 * j) / d)
        c, s = mpmath.cos(m * theta), mpmath.sin(m * theta)
        a, b = y[j], y[j + d // 2]
        out[j], out[j + d // 2] = a * c - b * s, b * c + a * s
    return out


def test_reference_matches_mpmath_at_large_positions():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 2, 8))
    positions = np.array([0, 131071, 2**31 - 1], dtype=np.int64)
    y = ropecheck.reference(x, positions, {"head_dim": 8, "rope_theta": 10000.0})
    assert y.dtype == np.float64 and y.shape == x.shape
    for t, m in enumerate(positions):
        for h in range(2):
            exact = mp_rope_half(x[t, h], int(m), 10000, 8)
            for c in range(8):
                assert y[t, h, c] == pytest.approx(float(exact[c]), rel=0, abs=2**-52 * (abs(float(exact[c])) + 1e-300))


def test_forms_and_float32_output_and_spec_kinds(tmp_path):
    x = np.arange(16, dtype=np.float32).reshape(1, 2, 8) / 7
    positions = np.array([5], dtype=np.int32)
    spec = {"head_dim": 8, "rope_theta": 10000.0, "pairing": "adjacent"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(spec))
    by_dict = ropecheck.reference(x, positions, spec)
    by_path = ropecheck.reference(x, positions, path)
    by_object = ropecheck.reference(x, positions, ropecheck.load_spec(str(path)), form="complex")
    np.testing.assert_array_equal(by_dict, by_path)
    np.testing.assert_array_equal(by_dict, by_object)
    f32 = ropecheck.reference(x, positions, spec, out_dtype="float32")
    assert f32.dtype == np.float32
    # Adjacent pair (0, 1) rotated by 5 rad, against libm's correctly rounded-to-1-ulp cos/sin.
    c, s = math.cos(5.0), math.sin(5.0)
    assert by_dict[0, 0, 0] == pytest.approx(float(x[0, 0, 0]) * c - float(x[0, 0, 1]) * s, rel=1e-15)


def test_torch_bfloat16_is_read_through_its_bits():
    torch = pytest.importorskip("torch")
    x = torch.tensor([[[1.0078125, -3.0, 0.5, 2.0]]], dtype=torch.bfloat16)  # 1 + 2^-7: exact in bf16
    y = ropecheck.reference(x, torch.tensor([3]), {"head_dim": 4})
    expected = ropecheck.reference(x.float().numpy(), np.array([3]), {"head_dim": 4})
    np.testing.assert_array_equal(y, expected)


def test_bad_input_names_the_field():
    spec = {"head_dim": 8}
    with pytest.raises(ValueError, match=r"x: shape: .*head_dim"):
        ropecheck.reference(np.zeros((2, 1, 6)), np.arange(2), spec)
    with pytest.raises(ValueError, match=r"positions: element \[1\]: position outside"):
        ropecheck.reference(np.zeros((2, 1, 8)), np.array([0, 2**31]), spec)
    with pytest.raises(ValueError, match="rope_scaling"):
        ropecheck.reference(np.zeros((1, 1, 8)), np.arange(1), {"head_dim": 8, "rope_scaling": {"type": "bogus"}})
    with pytest.raises(ropecheck.FlagError, match="form: is not \"elementwise\", \"complex\" or \"matrix\" 'polar'"):
        ropecheck.reference(np.zeros((1, 1, 8)), np.arange(1), spec, form="polar")
    with pytest.raises(ValueError, match="dtype complex128"):
        ropecheck.reference(np.zeros((1, 1, 8), dtype=np.complex128), np.arange(1), spec)


def test_cuda_tensors_are_copied_at_the_boundary_by_the_caller():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    with pytest.raises(ValueError, match=r"copy it to the CPU"):
        ropecheck.reference(torch.zeros(1, 1, 8, device="cuda"), np.arange(1), {"head_dim": 8})


def test_the_gil_is_released_while_the_reference_runs():
    import threading
    import time

    def watch(tokens):
        """Runs the reference on another thread; returns (elapsed, longest gap of this loop)."""
        x = np.random.default_rng(0).standard_normal((tokens, 8, 64))
        done = threading.Event()
        thread = threading.Thread(
            target=lambda: (ropecheck.reference(x, np.arange(tokens), {"head_dim": 64}), done.set()))
        start = last = time.perf_counter()
        longest_gap = 0.0
        thread.start()
        while not done.is_set():  # this thread runs only while the other one does not hold the GIL
            now = time.perf_counter()
            longest_gap, last = max(longest_gap, now - last), now
        thread.join()
        return time.perf_counter() - start, longest_gap

    # The reference's speed varies by machine: grow the workload until it takes long enough.
    for tokens in (256, 1024, 4096, 16384, 65536):
        elapsed, longest_gap = watch(tokens)
        if elapsed > 0.2:
            break
    assert elapsed > 0.2, "too small a workload to see the GIL"
    # Held for the whole computation, the GIL would stop this loop for about all of it.
    assert longest_gap < 0.5 * elapsed, (longest_gap, elapsed)


def test_spec_records_the_layers_without_rope():
    """Llama 4's NoPE layers (no_rope_layers: 1 = RoPE, 0 = NoPE; else every 4th
    layer, transformers Llama4TextConfig) are on the spec, and a NoPE layer is refused."""
    listed = ropecheck.load_spec({"model_type": "llama4_text", "head_dim": 8, "rope_theta": 500000.0,
                                  "num_hidden_layers": 6, "no_rope_layers": [1, 1, 0, 1, 0, 1]})
    assert listed.layers_without_rope == [2, 4]
    assert listed.layer is None
    assert "layers without RoPE: 2, 4 (2 of 6 layers;" in listed.layers_without_rope_rule
    assert "layers without RoPE" in repr(listed)
    periodic = ropecheck.load_spec({"model_type": "llama4_text", "head_dim": 8, "rope_theta": 500000.0,
                                    "num_hidden_layers": 8, "layer": 5})
    assert periodic.layers_without_rope == [3, 7]
    assert periodic.layer == 5
    with pytest.raises(ropecheck.SpecError, match=r"field 'layer': 7 is a layer that applies no RoPE"):
        ropecheck.load_spec({"model_type": "llama4_text", "head_dim": 8, "rope_theta": 500000.0,
                             "num_hidden_layers": 8, "layer": 7})
    plain = ropecheck.load_spec({"head_dim": 8})
    assert plain.layers_without_rope == [] and plain.layers_without_rope_rule == "every layer applies RoPE"
