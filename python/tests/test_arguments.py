"""Bad arguments to the Python entry points: each is a ropecheck.InputError (a ValueError) with
the one line the CLI prints for the same input — never a RuntimeError from a JSON parser or a
pybind11 cast, a multi-line TypeError, a RecursionError, a silent int() or float(), or a value
that breaks a report later."""

import os
import re
import subprocess

import numpy as np
import pytest

import ropecheck
from ropecheck.testing import assert_rope_correct

SPEC = {"head_dim": 64, "rope_theta": 10000.0}
CLI = os.environ.get("ROPECHECK_EXE")  # set by ctest


def case():
    x = np.random.default_rng(2).standard_normal((8, 2, 64)).astype(np.float32)
    positions = np.arange(8, dtype=np.int64)
    return x, positions, ropecheck.reference(x, positions, SPEC, out_dtype="float32")


def cli_message(*args):
    """The CLI's one stderr line, without "ropecheck: " (exit 2 asserted)."""
    run = subprocess.run([CLI, *args], capture_output=True, text=True, errors="replace")
    assert run.returncode == 2, run
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ropecheck: "), run.stderr
    return lines[0][len("ropecheck: "):]


def deep(levels):
    d = value = {}
    for _ in range(levels - 1):
        value["a"] = {}
        value = value["a"]
    value["a"] = 1
    return d


# --- spec dicts -----------------------------------------------------------------------------


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), 1e999, float("nan"), 10**400])
@pytest.mark.parametrize("where", ["rope_theta", "rope_scaling.factor", "mrope_section[1]"])
def test_a_spec_dict_with_a_non_finite_number_names_the_field(value, where):
    spec = dict(SPEC)
    if where == "rope_theta":
        spec["rope_theta"] = value
    elif where == "rope_scaling.factor":
        spec["rope_scaling"] = {"rope_type": "linear", "factor": value}
    else:
        spec["mrope_section"] = [16, value, 8]
    problem = "is not a number 'nan'" if value != value else "number out of range"
    with pytest.raises(ropecheck.InputError, match=rf"^spec: field '{re.escape(where)}': {problem}"):
        ropecheck.load_spec(spec)
    x, positions, y = case()
    for call in (lambda: ropecheck.reference(x, positions, spec), lambda: ropecheck.audit(x, positions, y, spec)):
        with pytest.raises(ropecheck.InputError, match=r"^spec: field "):
            call()


def test_a_deep_spec_dict_is_refused_at_the_json_readers_depth(tmp_path):
    for spec in (deep(5000), deep(257)):
        with pytest.raises(ropecheck.InputError, match=r"^spec: field 'a\.a\..*: nested too deeply 'depth 257' \(limit 256\)$"):
            ropecheck.load_spec(spec)
    looped = {"head_dim": 64}
    looped["self"] = looped
    with pytest.raises(ropecheck.InputError, match="nested too deeply"):
        ropecheck.load_spec(looped)
    # The same line as the same document read from a file, but for the source's name.
    path = tmp_path / "deep.json"
    path.write_text('{"a":' * 300 + "1" + "}" * 300)
    with pytest.raises(ropecheck.InputError) as from_file:
        ropecheck.load_spec(path)
    with pytest.raises(ropecheck.InputError) as from_dict:
        ropecheck.load_spec(deep(300))
    assert str(from_file.value) == f"{path}{str(from_dict.value)[len('spec'):]}"


@pytest.mark.parametrize("spec, problem", [
    ({"head_dim": 64, 3: 1}, r"^spec: document: has a key that is not a str '3' \(an int\)"),
    ({"head_dim": 64, "rope_type": "\ud800"}, r"^spec: field 'rope_type': is not text UTF-8 can hold"),
    ({"head_dim": 64, "rope_theta": object()}, r"^spec: field 'rope_theta': is not a JSON value"),
    ({"head_dim": 64, "rope_theta": {1, 2}}, r"^spec: field 'rope_theta': is not a JSON value"),
])
def test_spec_dict_values_json_cannot_hold_are_refused(spec, problem):
    with pytest.raises(ropecheck.InputError, match=problem):
        ropecheck.load_spec(spec)


def test_spec_dicts_read_as_their_json_file_would():
    as_dict = ropecheck.load_spec({"head_dim": np.int64(64), "rope_theta": np.float32(500000.0),
                                   "partial_rotary_factor": 0.5, "rope_scaling": None})
    assert (as_dict.head_dim, as_dict.rotary_dim, as_dict.base) == (64, 32, 500000.0)


@pytest.mark.parametrize("spec", [5, None, 1.5, ["head_dim"]])
def test_a_spec_of_another_type_is_refused(spec):
    with pytest.raises(ropecheck.FlagError, match=r"^spec: is not a dict, a path or a ropecheck.Spec"):
        ropecheck.load_spec(spec)


def test_spec_paths_are_file_names_not_text(tmp_path):
    name = os.fsencode(tmp_path) + b"/\xff.json"  # a Linux file name that is not UTF-8
    with open(name, "w") as f:
        f.write('{"head_dim": 64}')
    spec = ropecheck.load_spec(name)
    assert os.fsencode(spec.source) == name and "\\xff" in repr(spec)
    x, positions, y = case()
    report = ropecheck.audit(x, positions, y, os.fsdecode(name))
    assert report.to_dict()["inputs"]["spec"].endswith("\ufffd.json") and str(report)
    with pytest.raises(ropecheck.FlagError, match="NUL"):
        ropecheck.load_spec(str(tmp_path / "a\0b.json"))
    with pytest.raises(ropecheck.FlagError, match=r"^spec: is empty"):
        ropecheck.load_spec("")


# --- labels and names -----------------------------------------------------------------------


@pytest.mark.parametrize("label, problem", [
    (None, r"^labels\['x'\]: is not a str 'None' \(a NoneType\)$"),
    ("\ud800", r"^labels\['x'\]: is not text UTF-8 can hold \(it has a lone surrogate\) '\\ud800'$"),
    ("a\nb", r"^labels\['x'\]: contains a control character 'a\\x0ab'"),
    ("a\x85b", r"^labels\['x'\]: contains a control character"),
    ("", r"^labels\['x'\]: is empty"),
])
def test_bad_labels_are_refused(label, problem):
    x, positions, y = case()
    with pytest.raises(ropecheck.FlagError, match=problem):
        ropecheck.audit(x, positions, y, SPEC, labels={"x": label})


def test_labels_are_a_dict_of_the_four_inputs():
    x, positions, y = case()
    with pytest.raises(ropecheck.FlagError, match=r"^labels: has a key that is not .* 'X'$"):
        ropecheck.audit(x, positions, y, SPEC, labels={"X": "x.npy"})
    with pytest.raises(ropecheck.FlagError, match=r"^labels: is not a dict"):
        ropecheck.audit(x, positions, y, SPEC, labels=[("x", "x.npy")])
    report = ropecheck.audit(x, positions, y, SPEC, labels={"x": "X.npy", "y": "Y ∈ ℝ.npy"})
    assert report.to_dict()["inputs"]["y"] == "Y ∈ ℝ.npy"


def rope_zero(q, k, positions, params):
    return np.zeros_like(q), np.zeros_like(k)


@pytest.mark.parametrize("name", ["a\nb", "a|b", "`x`", "", "\ud800", "k" * 129, 5])
def test_gate_names_are_kernel_names(name):
    with pytest.raises(ropecheck.FlagError, match=r"^name: "):
        ropecheck.gate(rope_zero, name=name)
    with pytest.raises(ropecheck.FlagError, match=r"^name: "):
        assert_rope_correct(rope_zero, name=name)


def test_default_gate_names_and_descriptions_are_made_printable():
    def kernel(q, k, positions, params):
        """a docstring\twith a tab"""

    lam = lambda q, k, p, params: (q, k)  # noqa: E731
    args = ("float32", "half", "quick", None, False, "numpy", None)
    assert ropecheck._core.gate_arguments(lam, *args)["name"] == "_lambda_"
    assert ropecheck._core.gate_arguments(kernel, *args)["description"] == "a docstring with a tab"


# --- numbers --------------------------------------------------------------------------------


@pytest.mark.parametrize("seed, problem", [
    (-1, r"^seed: is not an integer in 0 \.\.\. 18446744073709551615 '-1'"),
    (2**64, r"^seed: is not an integer in 0 \.\.\. 18446744073709551615 '18446744073709551616'"),
    (10**5000, r"^seed: is not an integer in 0 \.\.\. 18446744073709551615"),
    (1.5, r"^seed: is not an integer in 0 \.\.\. 18446744073709551615 '1\.5'"),
    (2.0, r"^seed: is not an integer"),
    ("1", r"^seed: is not an int '1' \(a str\)$"),
    (True, r"^seed: is not an int 'True' \(a bool\)$"),
], ids=["-1", "2^64", "10^5000", "1.5", "2.0", "str", "bool"])
def test_bad_seeds_are_refused(seed, problem):
    with pytest.raises(ropecheck.FlagError, match=problem):
        ropecheck.gate(rope_zero, seed=seed)


@pytest.mark.skipif(not CLI, reason="ROPECHECK_EXE (set by ctest) names the CLI")
def test_messages_are_the_clis_for_the_same_values(tmp_path):
    for seed in ("-1", "18446744073709551616", "1.5"):
        with pytest.raises(ropecheck.FlagError) as raised:
            ropecheck.gate(rope_zero, seed=eval(seed))
        assert "--" + str(raised.value) == cli_message("gate", "--kernel", "on_the_fly_scalar", "--seed", seed)
    x, positions, y = case()
    files = {}
    for key, value in (("x", x), ("pos", positions), ("y", y)):
        files[key] = str(tmp_path / f"{key}.npy")
        np.save(files[key], value)
    spec = tmp_path / "spec.json"
    spec.write_text('{"head_dim": 64, "rope_theta": 10000.0}')
    inputs = ["audit", "--spec", str(spec), "--x", files["x"], "--pos", files["pos"], "--y", files["y"]]
    with pytest.raises(ropecheck.FlagError) as raised:
        ropecheck.audit(x, positions, y, SPEC, tolerance=float("inf"))
    # The CLI's note on decimal syntax is about text; a Python float has none.
    assert cli_message(*inputs, "--tolerance", "inf").startswith("--" + str(raised.value))
    out = str(tmp_path / "r")
    with pytest.raises(ropecheck.InputError) as raised:
        ropecheck.audit(x, positions, y, SPEC).write(json=out, html=out)
    assert str(raised.value).replace(": json", ": --json").replace(": html", ": --html").replace(
        "of json", "of --json") == cli_message(*inputs, "--json", out, "--html", out)


@pytest.mark.parametrize("tolerance", ["1", b"1", True, [1.0], complex(1, 0)])
def test_a_tolerance_is_a_number(tolerance):
    x, positions, y = case()
    with pytest.raises(ropecheck.FlagError, match=r"^tolerance: is not a number"):
        ropecheck.audit(x, positions, y, SPEC, tolerance=tolerance)


def test_numbers_of_numpy_are_numbers():
    x, positions, y = case()
    assert ropecheck.audit(x, positions, y, SPEC, tolerance=np.float32(4)).passed
    assert ropecheck.gate(rope_zero, seed=np.uint64(2**64 - 1), dtypes="float32", pairings="half").seed == 2**64 - 1


@pytest.mark.parametrize("scale", ["2", None, True])
def test_an_output_scale_is_a_number(scale):
    x, positions, y = case()
    with pytest.raises(ropecheck.FlagError, match=r"^output_scale: is not a number"):
        ropecheck.reference(x, positions, SPEC, output_scale=scale)


@pytest.mark.parametrize("argument, value", [
    ("profile", None), ("tensor_type", "jax"), ("mutants", "yes"), ("mutants", 1), ("dtypes", 32),
    ("dtypes", ["float32", "float32"]), ("dtypes", ["float64"]), ("kernel", None),
])
def test_gate_arguments_are_checked(argument, value):
    arguments = {"kernel": rope_zero, argument: value}
    with pytest.raises(ropecheck.FlagError, match=rf"^{argument}"):
        ropecheck.gate(**arguments)


@pytest.mark.parametrize("argument, value", [("dtype", "float64"), ("dtype", 5)])
def test_audit_arguments_are_checked(argument, value):
    x, positions, y = case()
    with pytest.raises(ropecheck.FlagError, match=rf"^{argument}: "):
        ropecheck.audit(x, positions, y, SPEC, **{argument: value})


@pytest.mark.parametrize("x", [None, [[1.0], [1.0, 2.0]], "x"])
def test_arrays_that_are_not_arrays_are_refused(x):
    with pytest.raises(ropecheck.InputError, match=r"^x: "):
        ropecheck.reference(x, np.arange(1), SPEC)


# --- report files ---------------------------------------------------------------------------


def test_write_checks_its_paths_as_the_cli_checks_its_report_flags(tmp_path):
    x, positions, y = case()
    spec_file = tmp_path / "config.json"
    spec_file.write_text('{"head_dim": 64, "rope_theta": 10000.0}')
    report = ropecheck.audit(x, positions, y, spec_file)
    with pytest.raises(ropecheck.InputError, match=r"html: is the same file as the output of json"):
        report.write(json=tmp_path / "r", html=tmp_path / "r")
    with pytest.raises(ropecheck.InputError, match=r"json: .*input"):  # never the config it read
        report.write(json=spec_file)
    with pytest.raises(ropecheck.InputError, match=r"json: .*input"):
        ropecheck.audit(x, positions, y, ropecheck.load_spec(spec_file)).write(json=spec_file)
    with pytest.raises(ropecheck.FlagError, match=r"^markdown: is empty"):
        report.write(json=tmp_path / "r.json", markdown="")
    with pytest.raises(ropecheck.FlagError, match=r"^junit: contains a NUL byte"):
        report.write(junit=str(tmp_path / "a\0b"))
    with pytest.raises(ropecheck.FlagError, match=r"^json: is not a path"):
        report.write(json=5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json"]
    report.write(json=tmp_path / "r.json", html=os.fsencode(tmp_path / "r.html"))
    assert (tmp_path / "r.json").read_text() == report.to_json()


def test_a_gate_reports_name_cannot_break_its_markdown_table(tmp_path):
    report = ropecheck.gate(rope_zero, name="rope.zero-v2", dtypes="float32", pairings="half")
    assert not report.passed
    report.write(markdown=tmp_path / "r.md")
    lines = (tmp_path / "r.md").read_text().splitlines()
    header = next(line for line in lines if line.startswith("| kernel |"))
    table = [line for line in lines if line.startswith("| `rope.zero-v2`")]
    assert len(table) == 1 and table[0].count("|") == header.count("|")
