"""The storage dtypes as the Python package sees them: ``ropecheck.storage_dtypes`` is the C++
core's one list (numeric/dtype.h's catalog, whose rows numeric_dtype_lists_test pins), and every
front end takes exactly those — the CLI's built-in kernels, gate()'s ``dtypes`` and audit()'s
``dtype``. A dtype missing from any of them fails here by name."""

import json
import os
import subprocess

import numpy as np
import pytest

import ropecheck

CLI = os.environ.get("ROPECHECK_EXE")  # set by ctest
SPEC = {"head_dim": 8, "rope_theta": 10000.0}


def test_the_lists_nest_as_the_formats_do():
    assert ropecheck.storage_dtypes[0] == "float32"
    assert "float64" not in ropecheck.storage_dtypes  # the oracle's, not a kernel's
    # NumPy has float32 and float16 but no bfloat16 and no fp8: those travel as raw bits.
    for name in ropecheck.storage_dtypes:
        assert (name in ropecheck.raw_bits_dtypes) == (name not in ("float32", "float16")), name
    assert set(ropecheck.float8_dtypes) < set(ropecheck.raw_bits_dtypes) <= set(ropecheck.storage_dtypes)
    assert all(name.startswith("float8_") for name in ropecheck.float8_dtypes)


@pytest.mark.skipif(CLI is None, reason="needs the ropecheck executable (ctest sets ROPECHECK_EXE)")
def test_every_builtin_kernel_takes_every_storage_dtype():
    run = subprocess.run([CLI, "kernels", "--json"], capture_output=True, text=True, check=True)
    for kernel in json.loads(run.stdout):
        assert kernel["dtypes"] == list(ropecheck.storage_dtypes), kernel["name"]


def test_gate_takes_every_storage_dtype_and_nothing_else():
    def kernel(q, k, positions, params):
        return q, k

    # dtypes is checked before profile, so a refusal naming profile means every dtype passed.
    with pytest.raises(ropecheck.InputError, match="^profile"):
        ropecheck.gate(kernel, dtypes=list(ropecheck.storage_dtypes), profile="bogus")
    with pytest.raises(ropecheck.InputError, match="^dtypes\\[0\\].*float8_e5m2"):
        ropecheck.gate(kernel, dtypes=["float64"])


def test_audit_takes_every_storage_dtype_as_its_dtype():
    x = np.random.default_rng(3).standard_normal((4, 1, 8)).astype(np.float32)
    positions = np.arange(4, dtype=np.int64)
    y = ropecheck.reference(x, positions, SPEC, out_dtype="float32")
    for name in ropecheck.storage_dtypes:
        if name in ropecheck.raw_bits_dtypes:
            continue  # judged from raw bits: y would have to be given as them
        report = ropecheck.audit(x, positions, y, SPEC, dtype=name)
        assert report.to_dict()["dtype"] == name, name
    with pytest.raises(ropecheck.InputError, match="^dtype.*float8_e4m3fn"):
        ropecheck.audit(x, positions, y, SPEC, dtype="float64")
