"""Shared by the python/ tests: the examples' NumPy kernels (examples/python/numpy_rope.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "python"))
