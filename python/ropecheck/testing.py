"""pytest helpers: one line in an existing test gates a RoPE kernel or audits its output.

    from ropecheck.testing import assert_rope_correct, assert_audit_passes
    assert_rope_correct(my_rope, dtypes=["float32"])
    assert_audit_passes(x, positions, y, "config.json")

Both raise AssertionError with what a reviewer needs: the property (or finding), the bound,
the observed error, the worst element, the shrunk counterexample and the replay call.
"""

from __future__ import annotations

from . import AuditReport, GateReport, audit, gate


def gate_failure_message(report: GateReport) -> str:
    failures = report.failures
    lines = [f"RoPE kernel failed the ropecheck gate: {len(failures)} check(s) failed (seed {report.seed})"]
    for f in failures:
        lines.append(f"- {f.check}: observed worst error / derived bound = {f.worst_over_bound:.4g}")
        lines += ["    " + line for line in f.counterexample.splitlines()]
        if f.replay:
            lines.append(f"    replay: {f.replay}")
    return "\n".join(lines)


def assert_rope_correct(kernel, **gate_arguments) -> GateReport:
    """``ropecheck.gate(kernel, **gate_arguments)`` — every gate option (``contract=``,
    ``baseline=``, ``serves=``, ``max_position=``, ``positions=``, ``properties=``, ``timeout=``,
    …); AssertionError unless it passes."""
    report = gate(kernel, **gate_arguments)
    if not report.passed:
        raise AssertionError(gate_failure_message(report))
    return report


def audit_failure_message(report: AuditReport) -> str:
    d = report.to_dict()
    w = d["worst"]
    lines = [
        f"RoPE output failed the ropecheck audit ({d['dtype']}): "
        f"{d['outputs_beyond_tolerance']} of {d['outputs']} outputs beyond tolerance",
        f"- bound: {d['tolerance_units']:.4g} units of 2^-24 x pair norm",
        f"- observed: max norm-relative pair error {d['max_rel_pair_error_units']:.4g} units "
        f"(max |y - y_exact| = {d['max_abs_error']:.4g})",
        f"- worst element: batch {w['batch']}, token {w['token']}, head {w['head']}, dim {w['dim']}, "
        f"position {w['position']}: {w['value']!r}, reference {w['expected']!r}",
    ]
    lines += [f"- {f['code']}: {f['message']}" for f in d["diagnosis"]]
    lines.append("- replay: ropecheck.audit(x, positions, y, spec) on the same tensors; "
                 "report.write(json=..., html=...) saves the full report")
    return "\n".join(lines)


def assert_audit_passes(x, positions, y, spec, **audit_arguments) -> AuditReport:
    """``ropecheck.audit(x, positions, y, spec, **audit_arguments)``; AssertionError unless it passes."""
    report = audit(x, positions, y, spec, **audit_arguments)
    if not report.passed:
        raise AssertionError(audit_failure_message(report))
    return report
