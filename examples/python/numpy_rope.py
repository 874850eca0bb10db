"""RoPE kernels in NumPy for ``ropecheck.gate``: the accurate one (float64 angles from the
integer position, rotation in float64, one rounding to the storage dtype — the algorithm of
examples/c_kernel/example_rope.c) and the adjacent/half mix-up of a port between GPT-J-style and
NeoX-style code, which always pairs (j, j + d/2) whatever the model asks for.
"""

import numpy as np


def _rotate(x, cos, sin, rotary_dim, pairing):
    out = x.copy()  # dims past rotary_dim pass through unchanged
    r = x[..., :rotary_dim].astype(np.float64)
    if pairing == "half":  # GPT-NeoX / HF rotate_half: pairs (j, j + d/2)
        a, b = r[..., : rotary_dim // 2], r[..., rotary_dim // 2 :]
        out[..., : rotary_dim // 2] = a * cos - b * sin
        out[..., rotary_dim // 2 : rotary_dim] = b * cos + a * sin
    else:  # GPT-J / Meta: pairs (2j, 2j + 1)
        a, b = r[..., 0::2], r[..., 1::2]
        out[..., 0:rotary_dim:2] = a * cos - b * sin
        out[..., 1:rotary_dim:2] = b * cos + a * sin
    return out


def _cos_sin(positions, params):
    angle = positions.astype(np.float64)[:, None] * params["inv_freq"][None, :]
    if params["inverse"]:
        angle = -angle
    factor = params["attention_factor"]
    return (np.cos(angle) * factor)[:, None, :], (np.sin(angle) * factor)[:, None, :]


def rope_numpy(q, k, positions, params):
    """NumPy RoPE: float64 angles and rotation, one rounding to the storage dtype."""
    cos, sin = _cos_sin(positions, params)
    d = params["rotary_dim"]
    return _rotate(q, cos, sin, d, params["pairing"]), _rotate(k, cos, sin, d, params["pairing"])


def rope_numpy_pairing_mixup(q, k, positions, params):
    """NumPy RoPE that always pairs (j, j + d/2): the adjacent/half mix-up."""
    cos, sin = _cos_sin(positions, params)
    d = params["rotary_dim"]
    return _rotate(q, cos, sin, d, "half"), _rotate(k, cos, sin, d, "half")
