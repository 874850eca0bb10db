"""pytest helpers: one line in an existing test gates a RoPE kernel or audits its output.

    from ropecheck.testing import assert_rope_correct, assert_audit_passes
    assert_rope_correct(my_rope, dtypes=["float32"])
    assert_audit_passes(x, positions, y, "config.json")

Both raise AssertionError with what a reviewer needs: the property (or finding), the bound,
the observed error, the worst element, the shrunk counterexample and the replay call.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from . import AuditReport, GateReport, audit, gate

# Set by the pytest plugin (ropecheck.pytest) from --ropecheck-update-baseline: assert_rope_correct
# then writes each baseline= file from this run instead of comparing against it.
update_baselines = False

_COUNTEREXAMPLE_LINES = 24  # of the labelled inputs shown in a message; the report has them all


def _failing_properties(report: GateReport) -> list[dict]:
    """The failed properties, the regressed ones (a baseline/… row names them) first, then by
    worst/bound, largest first."""
    d = report.to_dict()
    regressed = [f["name"][len("baseline/"):] for f in d["fixtures"]
                 if f["name"].startswith("baseline/") and f["verdict"] == "fail"]
    failing = [dict(p, kernel=k["name"]) for k in d["kernels"] for p in k["properties"] if p["verdict"] == "fail"]
    rank = {name: i for i, name in enumerate(regressed)}
    return sorted(failing, key=lambda p: (rank.get(f"{p['kernel']}/{p['name']}", len(rank)), -p["worst_over_bound"]))


def _labelled(counterexample: str) -> list[str]:
    """The counterexample's labelled inputs: without RapidCheck's header lines and the final
    violation line (shown as the bound)."""
    lines = counterexample.splitlines()
    body = [line for line in lines[1:] if not line.startswith("Falsifiable after")]
    while body and not body[0].strip():
        body.pop(0)
    if body and "violated" in body[-1]:
        body.pop()
    while body and not body[-1].strip():
        body.pop()
    if len(body) > _COUNTEREXAMPLE_LINES:
        body = body[:_COUNTEREXAMPLE_LINES] + [f"… ({len(body) - _COUNTEREXAMPLE_LINES} more lines in the report)"]
    return body


def _report_path(report: GateReport) -> Path:
    """Where a failing gate's whole report goes: $ROPECHECK_REPORT_DIR, else the temporary
    directory, named after the running pytest test (or the kernel)."""
    directory = Path(os.environ.get("ROPECHECK_REPORT_DIR") or Path(tempfile.gettempdir()) / "ropecheck-reports")
    test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
    stem = test or "-".join(k["name"] for k in report.to_dict()["kernels"]) or "gate"
    return directory / (re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("_") + ".json")


def gate_failure_message(report: GateReport, report_file: Path | None = None) -> str:
    """A short message: the first failed property (a regressed one first) with its bound, worst
    case, labelled counterexample and replay command; the other failed checks by name; the file
    with the whole report."""
    d = report.to_dict()
    regressions = [f for f in d["fixtures"] if f["name"].startswith("baseline/") and f["verdict"] == "fail"]
    failing = _failing_properties(report)
    fixtures = [f for f in d["fixtures"] if f["verdict"] == "fail" and not f["name"].startswith("baseline/")]
    contract = d["contract"]["name"] if isinstance(d["contract"], dict) else d["contract"]
    lines = [f"RoPE kernel failed the ropecheck gate under contract {contract} (seed {report.seed}): "
             f"{len(regressions)} regression(s), {len(failing)} failed propert(ies), {len(fixtures)} failed fixture(s)"]
    for r in regressions[:1]:
        lines.append(f"regressed: {r['name'][len('baseline/'):]}: {r['detail']}")
    if failing:
        p = failing[0]
        lines.append(f"property: {p['name']} (kernel {p['kernel']}): worst/bound {p['worst_over_bound']:.4g}, "
                     f"{p.get('failed_cases', '?')} of {p['cases']} cases failed")
        if p.get("message"):
            lines.append(f"bound: {p['message']}")
        if p.get("detail"):
            lines.append(f"worst case: {p['detail'].split(';')[0]}")
        lines.append("counterexample:")
        lines += ["    " + line for line in _labelled(p.get("counterexample", ""))]
        if p.get("replay"):
            lines.append(f"replay: {p['replay']}")
    elif fixtures:
        lines.append(f"fixture: {fixtures[0]['name']}: {fixtures[0]['detail']}")
    others = [p["name"] for p in failing[1:]] + [f["name"] for f in fixtures[(0 if failing else 1):]]
    others += [f["name"] for f in regressions[1:]]
    if others:
        shown = ", ".join(others[:8]) + (f", … ({len(others) - 8} more)" if len(others) > 8 else "")
        lines.append(f"also failed: {shown}")
    for m in d.get("mutants", []):
        if not m["killed"]:
            lines.append(f"mutant {m['name']} survived: ropecheck gate --mutant {m['name']}")
    if report_file is not None:
        lines.append(f"full report: {report_file}")
    return "\n".join(lines)


def _baseline_file(baseline) -> Path | None:
    if isinstance(baseline, (str, bytes, os.PathLike)):
        return Path(os.fsdecode(baseline))
    return None


def assert_rope_correct(kernel, **gate_arguments) -> GateReport:
    """``ropecheck.gate(kernel, **gate_arguments)`` — every gate option (``contract=``,
    ``baseline=``, ``serves=``, ``max_position=``, ``positions=``, ``properties=``, ``shard=``,
    ``timeout=``, …); AssertionError unless it passes, with a short message (gate_failure_message)
    and the whole report written to the file it names.

    With ``pytest --ropecheck-update-baseline`` (``ropecheck.testing.update_baselines``), a
    ``baseline=`` path is written from this run (the gate without a baseline) instead of compared
    against: the snapshot the next runs ratchet against."""
    baseline = _baseline_file(gate_arguments.get("baseline"))
    if update_baselines and baseline is not None:
        arguments = dict(gate_arguments)
        del arguments["baseline"]
        report = gate(kernel, **arguments)
        baseline.parent.mkdir(parents=True, exist_ok=True)
        report.write(json=baseline)
        return report
    if baseline is not None and not baseline.exists():
        raise AssertionError(f"ropecheck baseline {baseline} does not exist: run pytest with "
                             "--ropecheck-update-baseline (-p ropecheck.pytest) to write it")
    report = gate(kernel, **gate_arguments)
    if not report.passed:
        path = _report_path(report)
        path.parent.mkdir(parents=True, exist_ok=True)
        report.write(json=path)
        raise AssertionError(gate_failure_message(report, path))
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
