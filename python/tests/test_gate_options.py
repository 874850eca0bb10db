"""The gate's options from Python — contract=, max_position=, positions=, properties=, serves= —
against kernels written here that imitate real recipes: a Hugging Face-style float32 kernel
(transformers' LlamaRotaryEmbedding + apply_rotary_pos_emb, in NumPy), a seeded regression of it
(cos/sin kept in float16), and a cos/sin-cache kernel over positions [0, 4096) that raises on any
call it does not serve (as the caches of Meta's and torchtune's modules do).

The expectations come from outside the code under test: the recipe is the one Hugging Face's
code follows, stage by stage; the domain is the one the cache kernel enforces itself.
"""

import json

import numpy as np
import pytest

import ropecheck
from ropecheck.testing import assert_rope_correct

# Hugging Face's float32 path, stage by stage in the audit's names (recipes/recipe_catalog.h).
HF_RECIPE = "inverse_frequencies=pow float32,angle=float32,trig=float32,arithmetic=float32"


def _hf_inv_freq(inv_freq: np.ndarray, d: int, base_offset: float = 0) -> np.ndarray:
    """transformers' `1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))` in float32. The
    gate hands the kernel θ_j (float64, scaled), not the base: the base is recovered from the
    first two pairs (θ_0/θ_1 = base^(2/d)), the powers taken in float32, and a scaling's factor
    per pair (θ_j over the plain θ_j) applied in float32, as transformers' rope_init functions do."""
    with np.errstate(over="ignore"):
        base = np.float32((inv_freq[0] / inv_freq[1]) ** (d / 2) if d >= 4 else np.inf)
    # The first pairs' ratio is the base's only where the scaling leaves them geometric (llama3
    # and YaRN keep the high frequencies; LongRoPE divides every pair by its own factor).
    geometric = d >= 6 and inv_freq[2] != 0 and abs((inv_freq[0] / inv_freq[1]) / (inv_freq[1] / inv_freq[2]) - 1) < 1e-9
    if not np.isfinite(base) or not geometric:  # no base to recover: θ_j rounded to float32
        return inv_freq.astype(np.float32)
    # powf of the float32 exponent, rounded once (NumPy's own float32 power is not powf).
    exponent = np.arange(0, d, 2, dtype=np.float32) / np.float32(d)
    plain = np.float32(1.0) / (np.float64(base + base_offset) ** exponent.astype(np.float64)).astype(np.float32)
    factor = (inv_freq / (float(base) ** (-np.arange(0, d, 2) / d))).astype(np.float32)
    return (plain * factor).astype(np.float32)


def _rotate_f32(x, cos, sin, d, pairing):
    """The rotation in float32 without FMA: q * cos + rotate_half(q) * sin."""
    out = x.copy()
    r = x[..., :d].astype(np.float32)
    if pairing == "half":
        a, b = r[..., : d // 2], r[..., d // 2:]
        out[..., : d // 2] = (a * cos - b * sin).astype(x.dtype)
        out[..., d // 2: d] = (b * cos + a * sin).astype(x.dtype)
    else:
        a, b = r[..., 0::2], r[..., 1::2]
        out[..., 0:d:2] = (a * cos - b * sin).astype(x.dtype)
        out[..., 1:d:2] = (b * cos + a * sin).astype(x.dtype)
    return out


def _hf_cos_sin(positions, params, cache_dtype=np.float32, base_offset=0):
    d = params["rotary_dim"]
    inv_freq = _hf_inv_freq(params["inv_freq"], d, base_offset)
    angle = positions.astype(np.float32)[:, None] * inv_freq[None, :]  # float32 product
    # float32 cos/sin: of the float32 angle, rounded once to float32 (cosf/sinf within half an
    # ulp; NumPy's own float32 cos/sin are not, and no recipe names their extra bits).
    wide = angle.astype(np.float64)
    cos, sin = np.cos(wide).astype(np.float32), np.sin(wide).astype(np.float32)
    a = np.float32(params["attention_factor"])
    cos, sin = (cos * a).astype(cache_dtype), (sin * a).astype(cache_dtype)
    if params["inverse"]:
        sin = -sin
    return cos.astype(np.float32)[:, None, :], sin.astype(np.float32)[:, None, :]


def hf_float32_rope(q, k, positions, params):
    """Hugging Face-style float32 RoPE (float32 θ_j, angles, cos/sin and rotation)."""
    cos, sin = _hf_cos_sin(positions, params)
    d, p = params["rotary_dim"], params["pairing"]
    return _rotate_f32(q, cos, sin, d, p), _rotate_f32(k, cos, sin, d, p)


def hf_float16_cache_rope(q, k, positions, params):
    """The same with cos/sin kept in float16: the seeded regression."""
    cos, sin = _hf_cos_sin(positions, params, np.float16)
    d, p = params["rotary_dim"], params["pairing"]
    return _rotate_f32(q, cos, sin, d, p), _rotate_f32(k, cos, sin, d, p)


def hf_base_plus_one_rope(q, k, positions, params):
    """The same with the base one too large (10001 for 10000): a seeded regression."""
    cos, sin = _hf_cos_sin(positions, params, base_offset=1)
    d, p = params["rotary_dim"], params["pairing"]
    return _rotate_f32(q, cos, sin, d, p), _rotate_f32(k, cos, sin, d, p)


def _dump(kernel, d=128, tokens=4096, heads=2):
    """A dump of the kernel's own output on a Llama-like spec, as a user would save one."""
    spec = {"head_dim": d, "rope_theta": 10000.0}
    rng = np.random.default_rng(7)
    x = rng.standard_normal((tokens, heads, d)).astype(np.float32)
    positions = np.arange(tokens, dtype=np.int64)
    inv_freq = 10000.0 ** (-np.arange(0, d, 2) / d)
    params = {"rotary_dim": d, "pairing": "half", "inv_freq": inv_freq, "attention_factor": 1.0, "inverse": False}
    y, _ = kernel(x, x[:, :0], positions, params)
    return x, positions, y, spec


def test_hf_float32_fails_exact_and_passes_its_recipe():
    exact = ropecheck.gate(hf_float32_rope)
    assert not exact.passed
    assert any(f.check.startswith("within_bound_of_reference/") for f in exact.failures), exact.failures
    report = ropecheck.gate(hf_float32_rope, contract=HF_RECIPE)
    assert report.passed, "\n".join(str(f) for f in report.failures)
    d = report.to_dict()
    assert d["contract"]["name"] == HF_RECIPE
    assert d["contract"]["statement"] == "recipe " + HF_RECIPE
    assert d["contract"]["derivation"].startswith("every dtype: " + HF_RECIPE + " (extra at A = 1")
    # The same through assert_rope_correct, both ways.
    assert_rope_correct(hf_float32_rope, contract=HF_RECIPE)
    with pytest.raises(AssertionError, match="within_bound_of_reference"):
        assert_rope_correct(hf_float32_rope)


def test_a_contract_as_a_dict_or_a_file_is_the_recipe_string(tmp_path):
    recipe = dict(item.split("=") for item in HF_RECIPE.split(","))
    as_dict = ropecheck.gate(hf_float32_rope, contract={"recipe": recipe}, properties=["within_bound_of_reference"])
    assert as_dict.passed
    assert as_dict.to_dict()["contract"]["name"] == HF_RECIPE
    per_dtype = ropecheck.gate(hf_float32_rope, contract={"recipes": {"float32": recipe}},
                               properties=["within_bound_of_reference"])
    assert per_dtype.passed
    assert per_dtype.to_dict()["contract"]["name"] == "float32: " + HF_RECIPE
    path = tmp_path / "contract.json"
    path.write_text(json.dumps({"recipe": recipe}))
    from_file = ropecheck.gate(hf_float32_rope, contract=path, properties=["within_bound_of_reference"])
    assert from_file.passed and str(path) in from_file.to_dict()["contract"]["statement"]


def test_own_audit_is_a_contract_and_catches_the_float16_cache_regression():
    x, positions, y, spec = _dump(hf_float32_rope)
    audit = ropecheck.audit(x, positions, y, spec)
    assert audit.to_dict()["recipe"]["angle"] == "float32"  # the audit found float32 angles
    report = ropecheck.gate(hf_float32_rope, contract=audit)
    assert report.passed, "\n".join(str(f) for f in report.failures)
    assert report.to_dict()["contract"]["name"].startswith("audited float32: ")
    assert "found by the audit of y" in report.to_dict()["contract"]["statement"]
    # The regressions: green before, red now, under both contracts.
    for contract in (audit, HF_RECIPE):
        for regression in (hf_float16_cache_rope, hf_base_plus_one_rope):
            regressed = ropecheck.gate(regression, contract=contract)
            assert not regressed.passed
            assert any(f.check.startswith("within_bound_of_reference/") for f in regressed.failures), regression


CACHE_LENGTH = 4096
_caches = {}


def cache_rope(q, k, positions, params):
    """A cos/sin cache over positions [0, 4096), built once per θ (float64 cos/sin, float64
    rotation, one rounding): serves forward calls with A = 1, rotary_dim = head_dim, Q and K
    both present; raises on anything else, as a module indexing its cache would."""
    d = params["rotary_dim"]
    if params["inverse"] or params["attention_factor"] != 1.0:
        raise ValueError("cache_rope: forward only, no attention factor")
    if d != q.shape[-1] or q.shape[1] == 0 or k.shape[1] == 0:
        raise ValueError("cache_rope: rotary_dim == head_dim, Q and K present")
    if positions.size and (positions.min() < 0 or positions.max() >= CACHE_LENGTH):
        raise IndexError(f"cache_rope: position outside [0, {CACHE_LENGTH})")
    key = params["inv_freq"].tobytes()
    if key not in _caches:
        angle = np.arange(CACHE_LENGTH, dtype=np.float64)[:, None] * params["inv_freq"][None, :]
        _caches[key] = (np.cos(angle), np.sin(angle))
    cos, sin = (c[positions][:, None, :] for c in _caches[key])

    def rotate(x):
        r = x.astype(np.float64)
        out = np.empty_like(r)
        if params["pairing"] == "half":
            a, b = r[..., : d // 2], r[..., d // 2:]
            out[..., : d // 2], out[..., d // 2:] = a * cos - b * sin, b * cos + a * sin
        else:
            a, b = r[..., 0::2], r[..., 1::2]
            out[..., 0::2], out[..., 1::2] = a * cos - b * sin, b * cos + a * sin
        return out.astype(x.dtype)

    return rotate(q), rotate(k)


CACHE_SERVES = dict(negative_positions=False, max_position=CACHE_LENGTH - 1, inverse=False,
                    attention_factor=False, partial_rotary=False, absent_tensor=False)


def test_cache_kernel_declared_domain_passes_and_shows_what_is_skipped():
    # Undeclared, the gate calls it where its cache has no row (the kernel raises: the gate ends).
    with pytest.raises((ValueError, IndexError), match="cache_rope"):
        ropecheck.gate(cache_rope)
    report = ropecheck.gate(cache_rope, serves=CACHE_SERVES)
    assert report.passed, "\n".join(str(f) for f in report.failures)
    assert "refused a valid call" not in report.to_json()
    domain = report.to_dict()["kernels"][0]["domain"]
    assert domain == {"positions": "nonnegative", "max_position": CACHE_LENGTH - 1, "inverse": False,
                      "attention_factor": False, "partial_rotary": False, "absent_tensor": False}
    reasons = {s["property"]: s["reason"] for s in report.skipped}
    assert "inverse direction" in reasons["inverse_round_trip"], reasons
    assert any("partial rotary" in r for r in reasons.values()), reasons
    assert any("Q or K absent" in r for r in reasons.values()), reasons
    assert [p["verdict"] for p in report.properties if p["name"] == "inverse_round_trip/float32"] == ["skipped"]
    assert sum(p["cases"] for p in report.properties) > 0


def test_max_position_positions_and_properties_bound_the_cases():
    seen = []

    def recording(q, k, positions, params):
        seen.append((int(positions.min()), int(positions.max())) if positions.size else (0, 0))
        return hf_float32_rope(q, k, positions, params)

    report = ropecheck.gate(recording, max_position=100, positions="nonnegative", contract=HF_RECIPE,
                            properties=["within_bound_of_reference", "norm_preserved"])
    assert report.passed
    assert seen and min(lo for lo, _ in seen) >= 0 and max(hi for _, hi in seen) <= 100
    d = report.to_dict()
    assert d["max_position"] == 100
    assert d["selected_properties"] == ["within_bound_of_reference", "norm_preserved"]
    assert d["fixtures"] == []  # as --property: no fixture
    verdicts = {p["name"].split("/")[0]: p["verdict"] for p in report.properties if p["name"].endswith("/float32")}
    assert verdicts["within_bound_of_reference"] == "pass" and verdicts["strategies_agree"] == "not_run"
    assert d["kernels"][0]["domain"]["positions"] == "nonnegative"
    # A failure's replay repeats the options.
    failed = ropecheck.gate(hf_float16_cache_rope, contract=HF_RECIPE, max_position=100000,
                            properties=["within_bound_of_reference"])
    assert not failed.passed
    assert f"contract={HF_RECIPE!r}, max_position=100000" in failed.failures[0].replay


@pytest.mark.parametrize("arguments, named", [
    (dict(contract="nonsense"), "contract"),
    (dict(contract="angle=float8"), "contract"),
    (dict(contract=3), "contract"),
    (dict(contract={"recipe": {"angle": "float99"}}), "recipe.angle"),
    (dict(contract={"recipe": {}, "extra": 1}), "extra"),
    (dict(contract=[1]), "contract"),
    (dict(max_position=0), "max_position"),
    (dict(max_position=-5), "max_position"),
    (dict(max_position=1.5), "max_position"),
    (dict(max_position=True), "max_position"),
    (dict(positions="some"), "positions"),
    (dict(properties=["no_such_property"]), "no_such_property"),
    (dict(properties=[]), "properties"),
    (dict(properties="norm_preserved"), "properties"),
    (dict(serves={"bogus": True}), "bogus"),
    (dict(serves={"inverse": 1}), "serves['inverse']"),
    (dict(serves={"max_position": 0}), "serves['max_position']"),
    (dict(serves=["inverse"]), "serves"),
])
def test_bad_option_values_are_value_errors_naming_them(arguments, named):
    calls = []
    with pytest.raises(ValueError) as e:
        ropecheck.gate(lambda q, k, p, params: calls.append(1) or (q, k), **arguments)
    assert named in str(e.value), str(e.value)
    assert not calls  # refused before the kernel is called


def test_baseline_ratchet_passes_known_failures_and_fails_a_regression(tmp_path):
    # Under exact, the float32 kernel fails: saved, its failures become known failures.
    before = ropecheck.gate(hf_float32_rope, name="hf_rope")
    assert not before.passed
    path = tmp_path / "baseline.json"
    before.write(json=path)
    for baseline in (path, str(path), before):
        again = ropecheck.gate(hf_float32_rope, name="hf_rope", baseline=baseline)
        assert again.passed, "\n".join(str(f) for f in again.failures)
        verdicts = {p["verdict"] for p in again.properties}
        assert "known_failure" in verdicts, verdicts
    assert again.to_dict()["baseline"] == "baseline (a GateReport)"
    # The float16 cache: worst/bound grows past 10% — a regression that fails the run.
    regressed = ropecheck.gate(hf_float16_cache_rope, name="hf_rope", baseline=path)
    assert not regressed.passed
    rows = [f for f in regressed.fixtures if f["name"].startswith("baseline/") and f["verdict"] == "fail"]
    # float16's 2^-11 on cos/sin shows at small positions, where float32 angles are still exact.
    assert {r["name"] for r in rows} >= {"baseline/hf_rope/norm_preserved/float32",
                                         "baseline/seed000_worked_example/hf_rope/float32"}, rows
    assert regressed.to_dict()["baseline"] == str(path)


def test_a_baseline_under_another_contract_or_domain_is_refused(tmp_path):
    before = ropecheck.gate(hf_float32_rope, name="hf_rope", contract=HF_RECIPE,
                            properties=["within_bound_of_reference"])
    with pytest.raises(ValueError, match="field 'contract'"):
        ropecheck.gate(hf_float32_rope, name="hf_rope", baseline=before, properties=["within_bound_of_reference"])
    with pytest.raises(ValueError, match="domain"):
        ropecheck.gate(hf_float32_rope, name="hf_rope", contract=HF_RECIPE, baseline=before, max_position=1000,
                       properties=["within_bound_of_reference"])
    with pytest.raises(ValueError, match="baseline"):
        ropecheck.gate(hf_float32_rope, baseline=3)
    with pytest.raises(ValueError, match="missing.json"):
        ropecheck.gate(hf_float32_rope, baseline=tmp_path / "missing.json")


def test_mutants_face_the_checks_and_domain_of_a_python_kernel():
    # The one mutants=True run of the Python suite (each mutant costs a whole gate): a declared
    # domain exercises every way a mutant is judged against an in-process kernel — killed within
    # the domain, killed only outside it (the gate's second run, over every call, is the one an
    # undeclared kernel's mutants get), the frequency code, properties the bridge is not held to.
    report = ropecheck.gate(cache_rope, serves=CACHE_SERVES, mutants=True, pairings=("half",))
    assert report.passed, "\n".join(str(f) for f in report.failures)
    assert all(m["killed"] and m["killed_by"] for m in report.mutants)
    killed = {m["name"] for m in report.mutants}
    reasons = {m["name"]: m["reason"] for m in report.mutants_not_applicable}
    assert not killed & set(reasons), killed & set(reasons)
    assert len(killed) >= 10
    # Killed where this kernel is called (positions 0 ... 4095, forward, A = 1).
    assert {"float32_angles", "pairing_swapped", "position_plus_one"} <= killed
    # Its cache wraps at row 4096 and its inverse rotates forward: calls this kernel never gets.
    # The evidence is the first property (in the report's order) that kills it over every call.
    for name, killer in (("cache_wraps_at_4096", "within_bound_of_reference/float32"),
                         ("backward_rotates_forward", "inverse_round_trip/float32")):
        assert reasons[name] == ("its defect is outside the kernel's declared domain "
                                 f"(killed by {killer} over every call)"), reasons[name]
    assert "frequency code" in reasons["llama3_factors_swapped"]
    assert "not held to" in reasons["head_stride_ignored"]  # only layout_invariant kills it
    assert report.to_dict()["mutants"] == report.mutants
