import numpy as np
from numpy_rope import rope_numpy  # examples/python/numpy_rope.py: put your kernel here
from ropecheck.testing import assert_audit_passes, assert_rope_correct

def test_rope_kernel_passes_the_gate():
    assert_rope_correct(rope_numpy, dtypes=["float32", "float16"], pairings=["half", "adjacent"])

def test_rope_output_passes_the_audit():
    config = {"head_dim": 128, "rope_theta": 500000.0}  # or json.load(open("config.json"))
    x, positions = np.random.default_rng(0).standard_normal((512, 8, 128)).astype(np.float32), np.arange(512)
    params = {"rotary_dim": 128, "pairing": "half", "inv_freq": 1 / 500000.0 ** (np.arange(0, 128, 2) / 128),
              "attention_factor": 1.0, "inverse": False}
    assert_audit_passes(x, positions, rope_numpy(x, x[:, :0], positions, params)[0], config)
# ---- end of the README example (README.md, "In pytest"); the check below keeps them equal ----


def test_the_readme_shows_this_example_verbatim():
    from pathlib import Path

    here = Path(__file__).read_text()
    example = here[: here.index("# ---- end of the README example")]
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "```python\n" + example + "```" in readme
