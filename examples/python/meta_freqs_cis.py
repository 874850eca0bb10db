"""Meta LLaMA's complex RoPE in torch (llama/model.py: precompute_freqs_cis +
apply_rotary_emb): freqs_cis = polar(1, outer(t, freqs)) in complex64, each (2j, 2j + 1) pair
viewed as one complex number and multiplied by it. ``rope_meta_complex128`` is the same with
float64 angles and complex128 products, rounded once to the storage dtype.
"""

import torch


def _apply(q, k, positions, params, real_dtype, complex_dtype):
    d = params["rotary_dim"]
    if params["pairing"] != "adjacent":
        raise ValueError("freqs_cis pairs (2j, 2j + 1) only")
    freqs = params["inv_freq"].to(real_dtype)
    angles = torch.outer(positions.to(real_dtype), freqs)
    if params["inverse"]:
        angles = -angles
    freqs_cis = torch.polar(torch.full_like(angles, params["attention_factor"]), angles)
    freqs_cis = freqs_cis.to(complex_dtype)[:, None, :]

    def rope(x):
        rot = x[..., :d].to(real_dtype).reshape(*x.shape[:-1], d // 2, 2)
        rotated = torch.view_as_real(torch.view_as_complex(rot.contiguous()) * freqs_cis).flatten(-2)
        out = x.clone()
        out[..., :d] = rotated.to(x.dtype)
        return out

    return rope(q), rope(k)


def rope_meta(q, k, positions, params):
    """Meta LLaMA freqs_cis RoPE: float32 angles, complex64 products."""
    return _apply(q, k, positions, params, torch.float32, torch.complex64)


def rope_meta_complex128(q, k, positions, params):
    """Meta LLaMA freqs_cis RoPE with float64 angles and complex128 products."""
    return _apply(q, k, positions, params, torch.float64, torch.complex128)
