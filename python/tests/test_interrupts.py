"""Stopping a gate or an audit: gate(timeout=…) ends a kernel call that runs too long with
KernelTimeout naming the check and the call, bad timeouts are InputError, and Ctrl-C (SIGINT)
ends a gate or a long audit with KeyboardInterrupt within a second or two."""

import math
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import ropecheck
from numpy_rope import rope_numpy
from ropecheck.testing import assert_rope_correct


def loops_forever(q, k, positions, params):
    while True:
        pass


def test_a_kernel_that_never_returns_is_stopped_by_the_timeout():
    start = time.monotonic()
    with pytest.raises(ropecheck.KernelTimeout) as raised:
        ropecheck.gate(loops_forever, timeout=1)
    assert time.monotonic() - start < 10  # ten times timeout=1: a smoke guard
    message = str(raised.value)
    first_property = ropecheck._core.kernel_property_names()[0]
    assert "kernel loops_forever" in message and "timeout=1 s" in message
    assert f"in {first_property}/float32" in message
    for field in ("tokens=", "heads=", "head_dim=", "rotary_dim=", "dtype=float32", "pairing="):
        assert field in message
    assert isinstance(raised.value, TimeoutError)
    # The gate restores the SIGALRM handler it found and leaves no timer armed.
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_assert_rope_correct_takes_the_timeout_too():
    with pytest.raises(ropecheck.KernelTimeout):
        assert_rope_correct(loops_forever, timeout=0.5)


def test_a_fast_kernel_passes_under_a_timeout_as_without_one():
    with_timeout = assert_rope_correct(rope_numpy, timeout=60, seed=3)
    without = ropecheck.gate(rope_numpy, seed=3)
    assert with_timeout.to_dict()["verdict"] == without.to_dict()["verdict"] == "pass"
    assert with_timeout.properties == without.properties


@pytest.mark.parametrize("timeout", [0, -1, math.inf, math.nan, "1", True])
def test_bad_timeouts_are_input_errors(timeout):
    with pytest.raises(ropecheck.InputError, match=r"^timeout: ") as raised:
        ropecheck.gate(rope_numpy, timeout=timeout)
    assert "\n" not in str(raised.value)


def test_a_timeout_off_the_main_thread_is_refused_saying_why():
    caught = []

    def run():
        try:
            ropecheck.gate(rope_numpy, timeout=5)
        except Exception as e:  # noqa: BLE001 - handed to the main thread's asserts
            caught.append(e)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert len(caught) == 1 and isinstance(caught[0], ropecheck.InputError)
    assert "main thread" in str(caught[0])


def run_and_interrupt(script: str, delay: float):
    """Runs `script` in /usr/bin/python3 (the built module on PYTHONPATH), sends SIGINT `delay`
    seconds after it prints "ready"; returns the seconds from SIGINT to its exit, its stdout
    after "ready" and its stderr."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    process = subprocess.Popen(["/usr/bin/python3", "-c", textwrap.dedent(script)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "ready"
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
        sent = time.monotonic()
        stdout, stderr = process.communicate(timeout=120)
        return time.monotonic() - sent, stdout, stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def assert_interrupted(elapsed, stdout, stderr, within):
    # `within` is ten times the goal (a smoke guard, not a timing: loaded CI machines vary); the
    # work itself must not have finished.
    assert "finished" not in stdout, "the work ended before the signal: make it longer"
    assert stderr.rstrip().splitlines()[-1] == "KeyboardInterrupt"
    assert elapsed < within


def test_ctrl_c_ends_a_gate_on_a_slow_kernel():
    assert_interrupted(*run_and_interrupt("""
        import time
        import ropecheck
        from numpy_rope import rope_numpy
        def slow(q, k, positions, params):
            time.sleep(0.05)
            return rope_numpy(q, k, positions, params)
        print("ready", flush=True)
        ropecheck.gate(slow, profile="deep")
        print("finished")
    """, 1), within=30)


def test_ctrl_c_ends_a_gate_in_its_mutant_phase():
    # The Python kernel's checks take about a second; the mutants (C++ kernels, tens of
    # seconds) see the signal only through the gate's own checks between properties.
    assert_interrupted(*run_and_interrupt("""
        import ropecheck
        from numpy_rope import rope_numpy
        print("ready", flush=True)
        ropecheck.gate(rope_numpy, mutants=True)
        print("finished")
    """, 4), within=30)


def test_ctrl_c_ends_a_long_audit():
    # About three seconds of judging; the signal is seen at the audit's progress reports
    # (every 1% of rows). One period of the positions' rows is drawn and repeated: drawing all
    # 2·10^6 × 128 normals would take several times longer than the audit until the signal.
    assert_interrupted(*run_and_interrupt("""
        import numpy as np
        import ropecheck
        rows, period = 2_000_000, 100_000
        block = np.random.default_rng(0).standard_normal((period, 1, 128)).astype(np.float16)
        x = np.tile(block, (rows // period, 1, 1))
        positions = np.arange(rows, dtype=np.int64) % period
        print("ready", flush=True)
        ropecheck.audit(x, positions, x, {"head_dim": 128, "rope_theta": 10000.0})
        print("finished")
    """, 0.5), within=10)
