#!/usr/bin/env python3
"""mutant-tables.py: regenerate the two mutant tables (the gate's kill matrix and the peer-style
verdicts) in the document that holds them, from a release build.

  1. `ropecheck gate --mutants --json` (exit 0: every mutant killed, every correct kernel passes);
  2. `ropecheck_mutant_tables REPORT.json` renders both tables (mutants/mutant_tables.cpp);
  3. the rendering is checked before anything is written: every mutant of the report has one row
     in each table; a peer-style row with no measured cell says "not run" and no count includes
     it; the "lets through" counts are the rows' own verdicts recounted; the kill table's heading
     counts the report's mutants. Any mismatch: exit 1, nothing written;
  4. the block from the kill table's heading to the peer-style summary line is replaced in place
     (the heading level the document uses is kept).

Usage (from the repository root, after building ropecheck and ropecheck_mutant_tables):
    python3 scripts/mutant-tables.py [--report GATE.json] [DOC.md]   (default: docs/mutants.md)
        --report: a saved `ropecheck gate --mutants --json` report of a passing run, instead of
        running the gate (about three minutes)
    python3 scripts/mutant-tables.py --check FILE  (check a saved rendering only)
"""
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROPECHECK = ROOT / "build" / "cli" / "ropecheck"
TABLES = ROOT / "build" / "mutants" / "ropecheck_mutant_tables"

KILL_HEADING = re.compile(r"^(#+) ropecheck gate --mutants \(profile [^)]*\): (\d+) of (\d+) mutants killed$")
PEER_SUMMARY = re.compile(
    r"^Mutants the peer-style test lets through: (\d+) of (\d+) measured with strict tolerances .*?, "
    r"(\d+) of (\d+) with relaxed tolerances\.(?: Not run \((\d+) of (\d+) kernels: [^)]*\): (.*)\.)?$")
RELAXED = re.compile(r"float32 ×([0-9.e+]+), bfloat16 ×([0-9.e+]+), float16 ×([0-9.e+]+)")
ROW = re.compile(r"^\| `([a-z0-9_]+)`( \(correct\))? \|(.*)\|$")


def fail(message):
    print(f"mutant-tables: {message}", file=sys.stderr)
    sys.exit(1)


def table_rows(lines, start):
    """(name, is_correct, cells) of the table that follows lines[start]."""
    rows, seen = [], False
    for line in lines[start + 1:]:
        if not line.startswith("|"):
            if seen:
                break
            continue
        seen = True
        m = ROW.match(line)
        if m:
            rows.append((m.group(1), m.group(2) is not None, [c.strip() for c in m.group(3).split("|")]))
    return rows


def check(rendering, mutant_names):
    """Refuses a rendering that counts an unmeasured row or miscounts its own rows."""
    lines = rendering.splitlines()
    kill = [i for i, line in enumerate(lines) if KILL_HEADING.match(line)]
    if len(kill) != 1:
        fail("the rendering has no kill-table heading (was a gate report given?)")
    heading = KILL_HEADING.match(lines[kill[0]])
    if int(heading.group(3)) != len(mutant_names):
        fail(f"the kill table counts {heading.group(3)} mutants, the report has {len(mutant_names)}")
    kill_rows = table_rows(lines, kill[0])
    if [r[0] for r in kill_rows] != mutant_names:
        fail("the kill table's rows are not the report's mutants")
    peer = [i for i, line in enumerate(lines) if line.startswith("#") and "Peer-style test" in line]
    if len(peer) != 1:
        fail("the rendering has no peer-style table")
    factors = RELAXED.search(rendering)
    if not factors:
        fail("the peer-style table does not state its relaxed tolerances")
    relaxed = [float(f) for f in factors.groups()]
    rows = table_rows(lines, peer[0])
    if [r[0] for r in rows if not r[1]] != mutant_names:
        fail("the peer-style table's mutant rows are not the report's mutants")
    strict_through = relaxed_through = measured = 0
    not_run = []
    for name, correct, cells in rows:
        values, verdicts = cells[:3], cells[3:]
        numbers = [None if v in ("n/a", "not run") else float(v) for v in values]
        if all(n is None for n in numbers):
            if values != ["not run"] * 3 or verdicts != ["not run", "not run"]:
                fail(f"`{name}` was not measured (no dtype the peer-style test covers) but its row gives "
                     f"verdicts: {cells}")
            not_run.append(name)
            continue
        fails_strict = any(n is not None and n > 1 for n in numbers)
        fails_relaxed = any(n is not None and n > r for n, r in zip(numbers, relaxed))
        word = (lambda f: "caught" if f else "**lets it through**") if not correct else \
               (lambda f: "**false alarm**" if f else "passes")
        if verdicts != [word(fails_strict), word(fails_relaxed)]:
            fail(f"`{name}`: verdicts {verdicts} do not follow from its cells {values}")
        if not correct:
            measured += 1
            strict_through += 0 if fails_strict else 1
            relaxed_through += 0 if fails_relaxed else 1
    summary = [PEER_SUMMARY.match(line) for line in lines if line.startswith("Mutants the peer-style test")]
    if len(summary) != 1 or summary[0] is None:
        fail("the peer-style summary line is missing or not in the expected words")
    s = summary[0]
    said = (int(s.group(1)), int(s.group(2)), int(s.group(3)), int(s.group(4)))
    if said != (strict_through, measured, relaxed_through, measured):
        fail(f"the summary says {said}, the rows give {(strict_through, measured, relaxed_through, measured)}"
             " (an unmeasured row counted?)")
    listed = re.findall(r"`([a-z0-9_]+)`", s.group(7) or "")
    if listed != not_run or (not_run and int(s.group(5)) != len(not_run)):
        fail(f"the summary names {listed} as not run, the rows {not_run}")
    return kill[0], heading.group(1)


def replace_block(doc, rendering):
    """Between the document's <!-- mutant-tables:begin … --> and <!-- mutant-tables:end --> lines if
    it has them, else from the kill table's heading to the peer-style summary line."""
    text = doc.read_text(encoding="utf-8")
    lines = text.split("\n")
    begin = [i for i, line in enumerate(lines) if line.startswith("<!-- mutant-tables:begin")]
    end = [i for i, line in enumerate(lines) if line.startswith("<!-- mutant-tables:end")]
    if len(begin) == 1 and len(end) == 1 and begin[0] < end[0]:
        start = [i for i in range(begin[0], end[0]) if KILL_HEADING.match(lines[i])]
        if len(start) == 1:
            end = [end[0] - 1]  # the block ends before the end marker
    else:
        start = [i for i, line in enumerate(lines) if KILL_HEADING.match(line)]
        end = [i for i, line in enumerate(lines) if line.startswith("Mutants the peer-style test lets through")]
    if len(start) != 1 or len(end) != 1 or end[0] < start[0]:
        fail(f"{doc}: no single block from the kill table's heading to the peer-style summary line")
    level = KILL_HEADING.match(lines[start[0]]).group(1)
    new = rendering.rstrip("\n").split("\n")
    # The document's heading level for both tables.
    new = [re.sub(r"^#+ ", level + " ", line) if line.startswith("#") else line for line in new]
    doc.write_text("\n".join(lines[:start[0]] + new + lines[end[0] + 1:]), encoding="utf-8")


def main():
    args = sys.argv[1:]
    if args[:1] == ["--check"] and len(args) == 2:
        rendering = Path(args[1]).read_text(encoding="utf-8")
        names = [r[0] for r in table_rows(rendering.splitlines(),
                                          next(i for i, l in enumerate(rendering.splitlines()) if KILL_HEADING.match(l)))]
        check(rendering, names)
        print("mutant-tables: the rendering counts what it measured")
        return
    saved = None
    if args[:1] == ["--report"] and len(args) >= 2:
        saved, args = Path(args[1]).resolve(), args[2:]
    if len(args) > 1 or (args and args[0].startswith("-")):
        fail("usage: mutant-tables.py [--report GATE.json] [DOC.md] | --check RENDERING.md")
    doc = ROOT / (args[0] if args else "docs/mutants.md")
    if not doc.exists():
        fail(f"{doc} does not exist")
    with tempfile.TemporaryDirectory() as tmp:
        report = saved or Path(tmp) / "mutants.json"
        if saved is None:
            gate = subprocess.run([str(ROPECHECK), "gate", "--mutants", "--json", str(report)],
                                  cwd=ROOT, stdout=subprocess.DEVNULL)
            if gate.returncode != 0:
                fail(f"`ropecheck gate --mutants` exited {gate.returncode}: a mutant survived or a correct "
                     "kernel failed")
        gate_json = json.loads(report.read_text())
        if gate_json.get("verdict") != "pass" or not all(m["killed"] for m in gate_json["mutants"]):
            fail(f"{report}: not a passing `gate --mutants` run")
        names = [m["name"] for m in gate_json["mutants"]]
        rendering = subprocess.run([str(TABLES), str(report)], check=True, capture_output=True,
                                   text=True).stdout
    check(rendering, names)
    replace_block(doc, rendering)
    print(f"mutant-tables: {doc.relative_to(ROOT)} updated ({len(names)} mutants)")


if __name__ == "__main__":
    main()
