"""The pytest plugin (ropecheck.pytest), run as a user runs it: pytest in a subprocess on a test
file of their own, with ``-p ropecheck.pytest``.

The flow is the one the engineer of the issue hand-rolled: a Hugging Face-style float32 kernel
(test_gate_options.hf_float32_rope) is green under its recipe; --ropecheck-update-baseline
snapshots its report beside the test; then each of five seeded regressions of it — a wrong base,
an off-by-one position, the swapped pairing, a float16 cos/sin cache and a sign flip — fails
against that baseline, with a short message whose first check is a regressed property, a
replay command that runs, and the whole report in the file the message names.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parents[1] / "examples" / "python"

USER_TESTS = '''
import numpy as np
from test_gate_options import HF_RECIPE, _hf_cos_sin, _rotate_f32, hf_float32_rope

OPTIONS = dict(name="hf_rope", contract=HF_RECIPE, pairings=["half"])


def _rope(q, k, positions, params, **how):
    cos, sin = _hf_cos_sin(positions, params, **how)
    d, p = params["rotary_dim"], params["pairing"]
    return _rotate_f32(q, cos, sin, d, p), _rotate_f32(k, cos, sin, d, p)


def wrong_base(q, k, positions, params):
    return _rope(q, k, positions, params, base_offset=1)


def off_by_one(q, k, positions, params):
    return hf_float32_rope(q, k, positions + 1, params)


def swapped_pairing(q, k, positions, params):
    return hf_float32_rope(q, k, positions, dict(params, pairing="adjacent"))


def float16_cache(q, k, positions, params):
    return _rope(q, k, positions, params, cache_dtype=np.float16)


def sign_flip(q, k, positions, params):
    return hf_float32_rope(q, k, positions, dict(params, inverse=not params["inverse"]))


def test_hf(ropecheck_gate):
    ropecheck_gate(hf_float32_rope, baseline="hf_rope.json", **OPTIONS)


def test_wrong_base(ropecheck_gate):
    ropecheck_gate(wrong_base, baseline="hf_rope.json", **OPTIONS)


def test_off_by_one(ropecheck_gate):
    ropecheck_gate(off_by_one, baseline="hf_rope.json", **OPTIONS)


def test_swapped_pairing(ropecheck_gate):
    ropecheck_gate(swapped_pairing, baseline="hf_rope.json", **OPTIONS)


def test_float16_cache(ropecheck_gate):
    ropecheck_gate(float16_cache, baseline="hf_rope.json", **OPTIONS)


def test_sign_flip(ropecheck_gate):
    ropecheck_gate(sign_flip, baseline="hf_rope.json", **OPTIONS)
'''

REGRESSIONS = ("test_wrong_base", "test_off_by_one", "test_swapped_pairing", "test_float16_cache", "test_sign_flip")


def run_pytest(directory, *arguments, env_extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), str(EXAMPLES), env.get("PYTHONPATH", "")])
    env["ROPECHECK_REPORT_DIR"] = str(directory / "reports")
    env.update(env_extra or {})
    env.pop("PYTEST_CURRENT_TEST", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "ropecheck.pytest", "-p", "no:cacheprovider",
                           "-q", "-rN", *arguments], cwd=directory, env=env, capture_output=True, text=True)


def failure_sections(output: str) -> dict:
    """pytest's failure sections by test name: the AssertionError's message lines (E …)."""
    sections, name = {}, None
    for line in output.splitlines():
        header = re.match(r"_{3,} (test_\w+) _{3,}$", line)
        if header:
            name = header.group(1)
            sections[name] = []
        elif name and line.startswith("E "):
            sections[name].append(line[1:].strip())
    return {n: "\n".join(lines) for n, lines in sections.items()}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    directory = tmp_path_factory.mktemp("user_project")
    (directory / "test_user_rope.py").write_text(USER_TESTS)
    return directory


def test_the_plugin_snapshots_a_baseline_and_catches_five_regressions(project):
    baseline = project / "ropecheck_baselines" / "hf_rope.json"
    # Without a baseline: the test fails, saying how to make one.
    missing = run_pytest(project, "test_user_rope.py::test_hf")
    assert missing.returncode == 1 and "--ropecheck-update-baseline" in missing.stdout, missing.stdout[-3000:]
    # The snapshot, beside the test.
    update = run_pytest(project, "--ropecheck-update-baseline", "test_user_rope.py::test_hf")
    assert update.returncode == 0, update.stdout[-3000:] + update.stderr[-3000:]
    assert baseline.is_file() and '"verdict": "pass"' in baseline.read_text()
    before = baseline.stat().st_mtime_ns

    checked = run_pytest(project, "test_user_rope.py")
    assert checked.returncode == 1
    assert baseline.stat().st_mtime_ns == before  # compared against, not rewritten
    assert re.search(r"\b5 failed, 1 passed\b", checked.stdout), checked.stdout[-3000:]
    sections = failure_sections(checked.stdout)
    assert set(sections) == set(REGRESSIONS), sorted(sections)
    for name, message in sections.items():
        lines = message.splitlines()
        assert lines[0].startswith("AssertionError: RoPE kernel failed the ropecheck gate"), (name, lines[:3])
        # The regressed property comes first: the regression row, then that property's failure.
        regressed = re.match(r"regressed: hf_rope/([a-z_0-9]+)/float32: ", lines[1])
        assert regressed, (name, lines[:4])
        assert lines[2].startswith(f"property: {regressed.group(1)}/float32 "), (name, lines[:4])
        assert any(line.startswith("bound: ") and "bound" in line for line in lines), name
        assert any(line.startswith("worst case: worst at ") for line in lines), name
        replay = next(line for line in lines if line.startswith("replay: "))
        assert re.match(r'replay: RC_PARAMS="seed=\d+ reproduce=\S+" .*pytest \S+test_user_rope\.py::' + name + " ",
                        replay), replay
        report = Path(next(line for line in lines if line.startswith("full report: "))[len("full report: "):])
        assert report.is_file() and '"verdict": "fail"' in report.read_text()
        assert len(message) < 6000, (name, len(message))
    # A labelled counterexample, not RapidCheck's raw dump.
    assert "positions (" in sections["test_off_by_one"] and "std::vector" not in sections["test_off_by_one"]


def test_the_replay_command_reruns_the_failing_case(project):
    if not (project / "ropecheck_baselines" / "hf_rope.json").is_file():
        run_pytest(project, "--ropecheck-update-baseline", "test_user_rope.py::test_hf")
    first = failure_sections(run_pytest(project, "test_user_rope.py::test_sign_flip").stdout)["test_sign_flip"]
    replay = next(line for line in first.splitlines() if line.startswith("replay: "))[len("replay: "):]
    rc_params = re.match(r'RC_PARAMS="([^"]*)"', replay).group(1)
    again = run_pytest(project, "test_user_rope.py::test_sign_flip", env_extra={"RC_PARAMS": rc_params})
    assert again.returncode == 1
    second = failure_sections(again.stdout)["test_sign_flip"]
    counterexample = [line for line in first.splitlines() if line.startswith("bound: ")]
    assert counterexample and counterexample[0] in second.splitlines()


def test_the_update_flag_refreshes_a_baseline(project, tmp_path):
    baseline = project / "ropecheck_baselines" / "hf_rope.json"
    baseline.parent.mkdir(exist_ok=True)
    baseline.write_text("{}")  # stale: not a gate report
    refused = run_pytest(project, "test_user_rope.py::test_hf")
    assert refused.returncode == 1 and "hf_rope.json" in refused.stdout
    refreshed = run_pytest(project, "--ropecheck-update-baseline", "test_user_rope.py::test_hf")
    assert refreshed.returncode == 0, refreshed.stdout[-3000:]
    assert '"verdict": "pass"' in baseline.read_text()
