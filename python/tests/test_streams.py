"""Position streams (M-RoPE, 2-D vision) in the Python gate: a kernel that declares them
(serves={"position_streams": True}) gets positions [streams, tokens] and params["pair_streams"],
and the four stream properties run on it.

The kernel is written here in the style of Qwen2-VL's apply_multimodal_rotary_pos_emb
(transformers' modeling_qwen2_vl.py): the rotary module gives cos/sin per stream,
[streams, tokens, rotary_dim], and each dim takes its pair's stream — Qwen2-VL's
`cat([m[i % 3] for i, m in enumerate(cos.split(mrope_section * 2, dim=-1))])`, written as a
gather over the per-pair stream map so that interleaved and vision layouts work too. Angles and
rotation in float64, rounded once: the exact contract holds. Its seeded regression turns every
pair by stream 0 (what a 1-D kernel does to an M-RoPE call).
"""

import pytest

import ropecheck

torch = pytest.importorskip("torch")

STREAMS = ("streams_equal_one_d", "streams_within_bound_of_reference", "streams_norm_preserved",
           "streams_layout_invariance")


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def _interleave(x):
    """Adjacent pairs (2j, 2j + 1) as the halves rotate_half works on, and back."""
    return torch.cat((x[..., 0::2], x[..., 1::2]), dim=-1)


def _deinterleave(x, d):
    out = torch.empty_like(x)
    out[..., 0::2], out[..., 1::2] = x[..., : d // 2], x[..., d // 2:]
    return out


def mrope_cos_sin(positions, inv_freq, attention_factor, inverse):
    """The rotary module: cos, sin [streams, tokens, rotary_dim/2] in float64."""
    freqs = positions.to(torch.float64)[:, :, None] * inv_freq.to(torch.float64)[None, None, :]
    if inverse:
        freqs = -freqs
    return freqs.cos() * attention_factor, freqs.sin() * attention_factor


def apply_multimodal_rotary_pos_emb(q, k, cos, sin, pair_streams, pairing, d):
    """Qwen2-VL's selection of each pair's stream, then q·cos + rotate_half(q)·sin."""
    index = pair_streams.to(torch.int64)
    cos = torch.cat([cos[index, :, torch.arange(d // 2)].T] * 2, dim=-1)[:, None, :]  # [tokens, 1, d]
    sin = torch.cat([sin[index, :, torch.arange(d // 2)].T] * 2, dim=-1)[:, None, :]

    def rope(x):
        rot = x[..., :d].to(torch.float64)
        if pairing == "adjacent":
            rot = _interleave(rot)
        out = rot * cos + rotate_half(rot) * sin
        if pairing == "adjacent":
            out = _deinterleave(out, d)
        result = x.clone()
        result[..., :d] = out.to(x.dtype)
        return result

    return rope(q), rope(k)


def mrope_kernel(q, k, positions, params):
    """M-RoPE (Qwen2-VL style) over positions [streams, tokens]."""
    cos, sin = mrope_cos_sin(positions, params["inv_freq"], params["attention_factor"], params["inverse"])
    return apply_multimodal_rotary_pos_emb(q, k, cos, sin, params["pair_streams"], params["pairing"],
                                           params["rotary_dim"])


def mrope_kernel_first_stream_only(q, k, positions, params):
    """The regression: every pair turned by stream 0's position (the temporal one)."""
    return mrope_kernel(q, k, positions[:1].expand_as(positions), params)


def test_a_kernel_declaring_streams_gets_them_and_the_stream_properties_run():
    seen = set()

    def recording(q, k, positions, params):
        seen.add((positions.dim(), positions.shape[0], tuple(params["pair_streams"].shape) == (params["rotary_dim"] // 2,)))
        return mrope_kernel(q, k, positions, params)

    report = ropecheck.gate(recording, name="mrope", tensor_type="torch", serves={"position_streams": True})
    assert report.passed, "\n".join(str(f) for f in report.failures)
    ran = {p["name"].split("/")[0]: p for p in report.properties if p["name"].endswith("/float32")}
    for name in STREAMS:
        assert ran[name]["verdict"] == "pass" and ran[name]["cases"] > 0, ran[name]
    assert not any(s["property"] in STREAMS for s in report.skipped)
    # Always 2-D; M-RoPE's 3 streams and 1-D calls' single stream both arrive.
    assert {streams for dim, streams, _ in seen} >= {1, 3}
    assert all(dim == 2 and shaped for dim, _, shaped in seen)


def test_a_kernel_that_turns_every_pair_by_one_stream_fails_the_stream_properties():
    report = ropecheck.gate(mrope_kernel_first_stream_only, name="mrope_t_only", tensor_type="torch",
                            serves={"position_streams": True}, properties=list(STREAMS))
    assert not report.passed
    failed = {f.check for f in report.failures}
    assert "streams_within_bound_of_reference/float32" in failed, failed
    # 1-D calls (equal streams) cannot tell it apart: that property holds.
    assert "streams_equal_one_d/float32" not in failed


def test_without_the_declaration_positions_are_one_stream_and_the_stream_properties_are_skipped():
    shapes = set()

    def one_d(q, k, positions, params):
        shapes.add(tuple(positions.shape[:-1]))
        assert "pair_streams" not in params
        return mrope_kernel(q, k, positions[None, :], dict(params, pair_streams=torch.zeros(params["rotary_dim"] // 2)))

    report = ropecheck.gate(one_d, tensor_type="torch", properties=["within_bound_of_reference", *STREAMS])
    assert report.passed
    assert shapes == {()}
    reasons = {s["property"]: s["reason"] for s in report.skipped}
    assert all("position streams" in reasons[name] for name in STREAMS), reasons


def test_position_streams_must_be_a_bool():
    with pytest.raises(ropecheck.FlagError, match=r"serves\['position_streams'\]"):
        ropecheck.gate(mrope_kernel, serves={"position_streams": 3})
