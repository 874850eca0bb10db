"""Hugging Face-style RoPE in torch, as transformers' LlamaRotaryEmbedding + apply_rotary_pos_emb
compute it: inv_freq and positions in float32, freqs = positions ⊗ inv_freq in float32,
emb = cat(freqs, freqs), cos/sin of it cast to the model dtype, then q·cos + rotate_half(q)·sin.
The float32 angle m·θ_j loses |m·θ_j|·2^-24 rad, which grows with the position (long-context
drift); the cast of cos/sin to bfloat16 adds 2^-9 relative. ``rope_hf_float64_angles`` is the
same function with the angles and cos/sin in float64, rounded once to the model dtype.
"""

import torch


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def _apply(q, k, positions, params, angle_dtype):
    d = params["rotary_dim"]
    if params["pairing"] != "half":
        raise ValueError("rotate_half pairs (j, j + d/2) only")
    inv_freq = params["inv_freq"].to(angle_dtype)
    freqs = positions.to(angle_dtype)[:, None] * inv_freq[None, :]
    if params["inverse"]:
        freqs = -freqs
    emb = torch.cat((freqs, freqs), dim=-1)
    factor = params["attention_factor"]
    cos = (emb.cos() * factor).to(q.dtype)[:, None, :]  # cos_cached.to(dtype)
    sin = (emb.sin() * factor).to(q.dtype)[:, None, :]

    def rope(x):
        rot, passthrough = x[..., :d], x[..., d:]
        return torch.cat((rot * cos + rotate_half(rot) * sin, passthrough), dim=-1)

    return rope(q), rope(k)


def rope_hf(q, k, positions, params):
    """Hugging Face rotate_half RoPE: float32 angles, cos/sin cast to the model dtype."""
    return _apply(q, k, positions, params, torch.float32)


def rope_hf_float64_angles(q, k, positions, params):
    """The same rotate_half RoPE with float64 angles and rotation, rounded once."""
    d = params["rotary_dim"]
    inv_freq = params["inv_freq"].to(torch.float64)
    freqs = positions.to(torch.float64)[:, None] * inv_freq[None, :]
    if params["inverse"]:
        freqs = -freqs
    emb = torch.cat((freqs, freqs), dim=-1)
    factor = params["attention_factor"]
    cos, sin = (emb.cos() * factor)[:, None, :], (emb.sin() * factor)[:, None, :]

    def rope(x):
        rot = x[..., :d].to(torch.float64)
        out = x.clone()
        out[..., :d] = (rot * cos + rotate_half(rot) * sin).to(x.dtype)
        return out

    if params["pairing"] != "half":
        raise ValueError("rotate_half pairs (j, j + d/2) only")
    return rope(q), rope(k)


def rope_model_dtype_cache(q, k, positions, params):
    """cos/sin cache in the model dtype, rotation in float32, one rounding (a fused kernel's way)."""
    d = params["rotary_dim"]
    inv_freq = params["inv_freq"].to(torch.float32)
    freqs = positions.to(torch.float32)[:, None] * inv_freq[None, :]
    if params["inverse"]:
        freqs = -freqs
    emb = torch.cat((freqs, freqs), dim=-1)
    factor = params["attention_factor"]
    cos = (emb.cos() * factor).to(q.dtype).float()[:, None, :]
    sin = (emb.sin() * factor).to(q.dtype).float()[:, None, :]

    def rope(x):
        rot = x[..., :d].float()
        out = x.clone()
        out[..., :d] = (rot * cos + rotate_half(rot) * sin).to(x.dtype)
        return out

    return rope(q), rope(k)
