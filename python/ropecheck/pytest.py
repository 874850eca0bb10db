"""ropecheck's pytest plugin (entry point ``pytest11``; or ``pytest -p ropecheck.pytest``).

    def test_my_rope(ropecheck_gate):
        ropecheck_gate(my_rope, contract="angle=float32,trig=float32,arithmetic=float32",
                       baseline="my_rope.json")

``ropecheck_gate(kernel, baseline=None, **gate_options)`` is ropecheck.testing.assert_rope_correct
with a baseline kept beside the test, as snapshot-testing tools keep theirs: a relative
``baseline=`` path is under ``ropecheck_baselines/`` in the test file's directory (``True``:
``<test file>.<test>.json`` there). ``pytest --ropecheck-update-baseline`` writes or refreshes
those files from the run instead of comparing against them; without it, a regression against
the baseline fails the test (--baseline's ratchet: a known failure may not grow by more than
10%), with a short message naming the regressed property first, its bound, worst case,
labelled counterexample and replay command (``RC_PARAMS="…" pytest FILE::TEST``), and the
file holding the whole report.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from . import testing

BASELINE_DIRECTORY = "ropecheck_baselines"


def pytest_addoption(parser):
    group = parser.getgroup("ropecheck")
    group.addoption("--ropecheck-update-baseline", action="store_true", default=False,
                    help="write or refresh the ropecheck baselines of the tests run (ropecheck_baselines/ beside "
                         "each test) instead of comparing against them")


def pytest_configure(config):
    testing.update_baselines = bool(config.getoption("ropecheck_update_baseline"))


def _baseline_path(request, baseline):
    if baseline is None or baseline is False:
        return None
    here = Path(str(request.node.fspath)).parent / BASELINE_DIRECTORY
    if baseline is True:
        # A parametrised test's id may hold '/' or spaces: one file name, as _report_path makes it.
        test = re.sub(r"[^A-Za-z0-9_.\[\]-]+", "_", request.node.name)
        return here / f"{Path(str(request.node.fspath)).stem}.{test}.json"
    if isinstance(baseline, (str, bytes, os.PathLike)):
        path = Path(os.fsdecode(baseline))
        return path if path.is_absolute() else here / path
    return baseline  # a GateReport: compared as is


@pytest.fixture
def ropecheck_gate(request):
    """Gates a kernel as assert_rope_correct does, its ``baseline=`` kept beside the test."""

    def run(kernel, baseline=None, **gate_options):
        path = _baseline_path(request, baseline)
        if path is not None:
            gate_options["baseline"] = path
        return testing.assert_rope_correct(kernel, **gate_options)

    return run
