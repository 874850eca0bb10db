"""ropecheck.torch: gate kernels made from the RoPE code people actually have, called with its own
signatures, each declaring what it serves (gate(serves=…)) instead of emulating what it lacks.

    import ropecheck, ropecheck.torch as rt
    ropecheck.gate(rt.hf_pair(LlamaRotaryEmbedding(config), apply_rotary_pos_emb), contract=…)
    ropecheck.gate(rt.freqs_cis(apply_rotary_emb), contract=…)
    ropecheck.gate(rt.cached_module(lambda dim, max_seq_len, base: RotaryPositionalEmbeddings(dim, max_seq_len, base), 4096))
    ropecheck.gate(rt.mrope(apply_multimodal_rotary_pos_emb, Qwen2VLRotaryEmbedding(config)))

Each adapter is a kernel(q, k, positions, params) for ropecheck.gate carrying its declaration
(``ropecheck_declaration``: the calls it serves, its pairings, torch tensors), which gate() uses
where its own arguments are not given. The gate hands every call's θ_j (``params["inv_freq"]``,
float64, already scaled); an adapter puts them where the module keeps its frequencies (the
``inv_freq`` or ``theta`` buffer, rounded to the buffer's dtype: the contract's
``inverse_frequencies=rounded float32``), so that what is judged is the module's own angle,
cos/sin and rotation code. The signatures are those of:

- hf_pair: transformers' modeling_llama.py — ``rotary_emb(x, position_ids) -> (cos, sin)``
  (an ``inv_freq`` buffer, ``attention_scaling``) and ``apply_rotary_pos_emb(q, k, cos, sin)``
  with q ``[batch, heads, seq, head_dim]``; rotate_half pairing.
- freqs_cis: meta-llama/llama model.py — ``apply_rotary_emb(xq, xk, freqs_cis)`` with xq
  ``[batch, seq, heads, head_dim]`` and ``freqs_cis`` ``[seq, head_dim/2]`` complex64, made as
  ``precompute_freqs_cis`` makes it (float32 ``outer(t, freqs)``, ``polar``); adjacent pairing.
- cached_module: torchtune's ``RotaryPositionalEmbeddings(dim, max_seq_len, base)`` called as
  ``module(x, input_pos=…)`` with x ``[batch, seq, heads, head_dim]``: its cache covers
  positions [0, max_seq_len), so it declares positions >= 0 and < max_seq_len, no inverse, A = 1
  only, rotary_dim = head_dim only and no Q or K with 0 heads (its ``reshape(…, -1, 2)`` cannot
  infer a dimension of an empty tensor).
- mrope: Qwen2-VL's ``apply_multimodal_rotary_pos_emb(q, k, cos, sin, mrope_section)`` with cos/sin
  ``[3, batch, seq, head_dim]`` from ``rotary_emb(x, position_ids[3, batch, seq])``: it declares
  position streams; a call's pairs are reordered stream by stream (RoPE turns each pair on its
  own, so the order of pairs is free) to give its sections.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


def _torch():
    import torch

    return torch


@dataclass(frozen=True)
class Declaration:
    """What an adapter serves (gate's ``serves=``), its pairings and tensor type."""

    serves: dict = field(default_factory=dict)
    pairings: tuple = ("half", "adjacent")
    tensor_type: str = "torch"


class Adapter:
    """A gate kernel: ``adapter(q, k, positions, params) -> (q_out, k_out)`` over torch tensors
    ``[tokens, heads, head_dim]``, with its ``ropecheck_declaration``."""

    def __init__(self, call, name: str, doc: str, declaration: Declaration):
        self._call = call
        self.__name__ = name
        self.__doc__ = doc
        self.ropecheck_declaration = declaration

    def __call__(self, q, k, positions, params):
        return self._call(q, k, positions, params)

    def __repr__(self) -> str:
        return f"<ropecheck.torch adapter {self.__name__}: serves {self.ropecheck_declaration.serves}>"


def _heads_first(x):
    """[tokens, heads, d] → [1, heads, tokens, d] (transformers' layout)."""
    return x.permute(1, 0, 2).unsqueeze(0)


def _tokens_first(x):
    return x[0].permute(1, 0, 2).contiguous()


def _set_frequencies(module, name: str, inv_freq):
    """The call's θ_j in the module's own frequency buffer (its dtype and device)."""
    buffer = getattr(module, name)
    setattr(module, name, inv_freq.to(dtype=buffer.dtype, device=buffer.device))


def hf_pair(rotary_emb, apply_rotary_pos_emb, *, partial_rotary: bool = False, name: str = "hf_pair") -> Adapter:
    """A Hugging Face-style pair: ``rotary_emb(x, position_ids) -> (cos, sin)`` (a module with an
    ``inv_freq`` buffer; ``attention_scaling``, if it has one, is set to the call's A) and
    ``apply_rotary_pos_emb(q, k, cos, sin)``. ``partial_rotary=True`` when the function rotates
    the first ``cos.shape[-1]`` dims and passes the rest through (GPT-NeoX, Phi)."""
    scales = hasattr(rotary_emb, "attention_scaling")

    def call(q, k, positions, params):
        _set_frequencies(rotary_emb, "inv_freq", params["inv_freq"])
        if scales:
            rotary_emb.attention_scaling = params["attention_factor"]
        qh, kh = _heads_first(q), _heads_first(k)
        cos, sin = rotary_emb(qh, positions.unsqueeze(0))
        q_out, k_out = apply_rotary_pos_emb(qh, kh, cos, sin)
        return _tokens_first(q_out), _tokens_first(k_out)

    serves = dict(inverse=False, attention_factor=scales, partial_rotary=partial_rotary)
    return Adapter(call, name, "Hugging Face-style rotary module + apply_rotary_pos_emb",
                   Declaration(serves, ("half",)))


def _meta_freqs_cis(positions, inv_freq, attention_factor):
    """freqs_cis as meta-llama's precompute_freqs_cis makes it, at the call's positions: t and
    θ_j in float32, torch.outer in float32, polar of |A|."""
    torch = _torch()
    freqs = torch.outer(positions.to(torch.float32), inv_freq.to(torch.float32))
    return torch.polar(torch.full_like(freqs, attention_factor), freqs)


def freqs_cis(apply_rotary_emb, *, max_seq_len: int | None = None, name: str = "freqs_cis") -> Adapter:
    """Meta's complex form: ``apply_rotary_emb(xq, xk, freqs_cis)``. ``max_seq_len`` declares the
    positions its ``freqs_cis`` table holds (>= 0 and < max_seq_len); without it, any position."""

    def call(q, k, positions, params):
        cis = _meta_freqs_cis(positions, params["inv_freq"], params["attention_factor"])
        q_out, k_out = apply_rotary_emb(q.unsqueeze(0), k.unsqueeze(0), cis)
        return q_out[0].contiguous(), k_out[0].contiguous()

    serves = dict(inverse=False, partial_rotary=False, absent_tensor=False)
    if max_seq_len is not None:
        serves.update(negative_positions=False, max_position=max_seq_len - 1)
    return Adapter(call, name, "Meta-style apply_rotary_emb(xq, xk, freqs_cis)", Declaration(serves, ("adjacent",)))


def cached_module(make_module, max_seq_len: int, *, name: str = "cached_module") -> Adapter:
    """A cache-based module: ``make_module(dim, max_seq_len, base)`` builds it (torchtune's
    RotaryPositionalEmbeddings takes exactly these), and it is called as
    ``module(x, input_pos=positions)``. The call's θ_j go into its ``theta`` buffer and its own
    ``build_rope_cache(max_seq_len)`` rebuilds the cache. Declares positions [0, max_seq_len),
    no inverse, A = 1, rotary_dim = head_dim and no Q or K with 0 heads."""
    modules = {}

    def module_for(params):
        torch = _torch()
        inv_freq = params["inv_freq"]
        key = (str(inv_freq.device), int(inv_freq.numel()), inv_freq.detach().cpu().numpy().tobytes())
        module = modules.get(key)
        if module is None:
            d = 2 * int(inv_freq.numel())
            # The constructor's base, from θ_1 = base^(-2/d) where that is a number; the θ_j
            # themselves replace the module's own.
            exponent = -d / 2 * math.log(float(inv_freq[1])) if d >= 4 and float(inv_freq[1]) > 0 else math.inf
            base = math.exp(exponent) if exponent < 700 else 10000.0
            module = make_module(d, max_seq_len, base)
            if hasattr(module, "to"):  # gate(device=…): the module's buffers where the call's tensors are
                module = module.to(inv_freq.device)
            _set_frequencies(module, "theta", inv_freq.to(torch.float32))
            module.build_rope_cache(max_seq_len)
            if len(modules) >= 16:  # the gate's calls come with a few distinct θ at a time
                modules.clear()
            modules[key] = module
        return module

    def call(q, k, positions, params):
        if q.shape[0] == 0:  # no token: nothing to rotate (reshape(…, -1, 2) cannot infer a dim of 0)
            return q.clone(), k.clone()
        module = module_for(params)
        input_pos = positions.unsqueeze(0)
        return (module(q.unsqueeze(0), input_pos=input_pos)[0].contiguous(),
                module(k.unsqueeze(0), input_pos=input_pos)[0].contiguous())

    serves = dict(negative_positions=False, max_position=max_seq_len - 1, inverse=False, attention_factor=False,
                  partial_rotary=False, absent_tensor=False)
    return Adapter(call, name, f"cache-based rotary module over positions [0, {max_seq_len})",
                   Declaration(serves, ("adjacent",)))


def mrope(apply_multimodal_rotary_pos_emb, rotary_emb=None, *, name: str = "mrope") -> Adapter:
    """Qwen2-VL's M-RoPE: ``apply_multimodal_rotary_pos_emb(q, k, cos, sin, mrope_section)``, with
    cos/sin ``[3, 1, tokens, head_dim]`` from ``rotary_emb(x, position_ids)`` (position_ids
    ``[3, 1, tokens]``; an ``inv_freq`` buffer) or, without one, made as it makes them (float32
    angles, ``cat(freqs, freqs)``, cos/sin × A in the input's dtype). Up to three streams keep the
    function's own section split (the pairs reordered by stream); ggml's four-stream layout,
    which a 3-section split cannot express, gets one merged stream whose every column is the
    cos/sin its pair's stream gives (``rotary_emb``'s, or the made ones)."""

    def cos_sin(x, positions3, inv_freq, attention_factor):
        torch = _torch()
        if rotary_emb is not None:
            _set_frequencies(rotary_emb, "inv_freq", inv_freq)
            if hasattr(rotary_emb, "attention_scaling"):
                rotary_emb.attention_scaling = attention_factor
            return rotary_emb(x, positions3.unsqueeze(1))
        freqs = positions3.to(torch.float32)[..., None] * inv_freq.to(torch.float32)
        emb = torch.cat((freqs, freqs), dim=-1).unsqueeze(1)  # [3, 1, tokens, d]
        return (emb.cos() * attention_factor).to(x.dtype), (emb.sin() * attention_factor).to(x.dtype)

    def call(q, k, positions, params):
        torch = _torch()
        d = params["rotary_dim"]
        streams = params["pair_streams"].to(torch.int64)
        inv_freq, a = params["inv_freq"], params["attention_factor"]
        # cos/sin are made in the pairs' own order, stream by stream, each as the first row of a
        # [3, 1, tokens, d] call: torch's vectorised cos/sin give other bits to an element at
        # another offset, and equal streams must give a 1-D call's bits. Then the pairs are
        # reordered.
        if positions.shape[0] <= 3:
            order = torch.argsort(streams, stable=True)
            sections = torch.bincount(streams, minlength=3)[:3].tolist()
            rows = [cos_sin(_heads_first(q), positions[min(s, positions.shape[0] - 1)].expand(3, -1), inv_freq, a)
                    for s in range(3)]
            cos = torch.cat([c[:1] for c, _ in rows])
            sin = torch.cat([s[:1] for _, s in rows])
        else:  # one merged stream: each pair's cos/sin taken from its own stream's row
            order = torch.arange(d // 2)
            sections = [d // 2, 0, 0]
            rows = [cos_sin(_heads_first(q), positions[s].expand(3, -1), inv_freq, a)
                    for s in range(positions.shape[0])]
            column_stream = torch.cat((streams, streams))  # the stream of each of the d columns
            columns = torch.arange(d)

            def merged(tables):  # [streams, 1, tokens, d] → [3, 1, tokens, d], column i from its stream
                picked = torch.stack(tables).permute(3, 0, 1, 2)[columns, column_stream]  # [d, 1, tokens]
                return picked.permute(1, 2, 0).unsqueeze(0).expand(3, -1, -1, -1).contiguous()

            cos = merged([c[0] for c, _ in rows])
            sin = merged([s[0] for _, s in rows])
        dims = torch.cat((order, order + d // 2))
        cos, sin = cos[..., dims], sin[..., dims]
        q_rot, k_rot = apply_multimodal_rotary_pos_emb(_heads_first(q[..., dims]), _heads_first(k[..., dims]),
                                                       cos, sin, sections)
        q_out, k_out = q.clone(), k.clone()
        q_out[..., dims] = _tokens_first(q_rot)
        k_out[..., dims] = _tokens_first(k_rot)
        return q_out, k_out

    serves = dict(inverse=False, partial_rotary=False, position_streams=True,
                  attention_factor=rotary_emb is None or hasattr(rotary_emb, "attention_scaling"))
    return Adapter(call, name, "Qwen2-VL-style apply_multimodal_rotary_pos_emb", Declaration(serves, ("half",)))
