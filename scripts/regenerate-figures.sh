#!/usr/bin/env bash
# regenerate-figures.sh: every measured figure of docs/performance.md and docs/throughput.md, one script
# after another, from an existing release build (cmake --preset default && cmake --build build).
# Run it on an idle machine (nothing else building or testing): the figures are rates.
#   scripts/throughput-table.py        kernel throughput table (64 MiB, honest copy baseline)
#   scripts/cache-resident-table.py    docs/throughput.md cache-resident table (--write)
#   scripts/property-case-figures.py   property-case rates and the deep-profile cost
#   scripts/reference-figures.py       reference speed
#   scripts/audit-figures.sh           audit speed (--update-docs)
#   scripts/python-gate-overhead.py    printed only: its table and sentences are edited by hand
#   scripts/mutant-tables.py           docs/mutants.md: the kill matrix and peer-style tables
#   scripts/report-latency.sh          printed only: the report's latency after a failure's discovery
# (all in docs/performance.md but the second).
# Usage: bash scripts/regenerate-figures.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python3 scripts/throughput-table.py
python3 scripts/cache-resident-table.py --write
python3 scripts/property-case-figures.py
python3 scripts/reference-figures.py
bash scripts/audit-figures.sh --update-docs
/usr/bin/python3 scripts/python-gate-overhead.py --mutants  # the interpreter the bindings are built for (numpy)
python3 scripts/mutant-tables.py  # runs gate --mutants
bash scripts/report-latency.sh
