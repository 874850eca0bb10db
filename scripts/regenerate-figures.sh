#!/usr/bin/env bash
# regenerate-figures.sh: every measured figure of README.md and docs/throughput.md, one script
# after another, from an existing release build (cmake --preset default && cmake --build build).
# Run it on an idle machine (nothing else building or testing): the figures are rates.
#   scripts/throughput-table.py        README throughput table (64 MiB, honest copy baseline)
#   scripts/cache-resident-table.py    docs/throughput.md cache-resident table (--write)
#   scripts/property-case-figures.py   README property-case rates and the deep-profile cost
#   scripts/reference-figures.py       README reference speed
#   scripts/audit-figures.sh           README audit speed (--update-readme)
#   scripts/python-gate-overhead.py    printed only: its two README sentences are edited by hand
# Usage: bash scripts/regenerate-figures.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python3 scripts/throughput-table.py
python3 scripts/cache-resident-table.py --write
python3 scripts/property-case-figures.py
python3 scripts/reference-figures.py
bash scripts/audit-figures.sh --update-readme
/usr/bin/python3 scripts/python-gate-overhead.py --mutants  # the interpreter the bindings are built for (numpy)
