"""ropecheck.torch adapters on modules written here in the spirit of the real ones (not their
code): transformers' LlamaRotaryEmbedding + apply_rotary_pos_emb, meta-llama's apply_rotary_emb
with freqs_cis, torchtune's RotaryPositionalEmbeddings (a cache over [0, max_seq_len)) and
Qwen2-VL's apply_multimodal_rotary_pos_emb. Each is called through its own signature and gated
under the contract of the recipe its code follows (float32 θ_j, angles, cos/sin and arithmetic),
spelled in the audit's stage names from reading that code, not from the gate's output.
"""

import pytest

import ropecheck
import ropecheck.torch as rt

torch = pytest.importorskip("torch")

# θ_j rounded once to float32 (the adapters put the gate's θ_j in the module's float32 buffer),
# the angle m·θ_j, cos/sin and the rotation in float32.
FLOAT32_RECIPE = "inverse_frequencies=rounded float32,angle=float32,trig=float32,arithmetic=float32"


# --- Hugging Face-style pair ----------------------------------------------------------------


class LlamaStyleRotaryEmbedding(torch.nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.attention_scaling = 1.0

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos() * self.attention_scaling
        sin = emb.sin() * self.attention_scaling
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def test_hf_pair_is_green_under_its_recipe():
    adapter = rt.hf_pair(LlamaStyleRotaryEmbedding(64), apply_rotary_pos_emb)
    report = ropecheck.gate(adapter, contract=FLOAT32_RECIPE)
    assert report.passed, "\n".join(str(f) for f in report.failures)
    domain = report.to_dict()["kernels"][0]["domain"]
    assert domain["inverse"] is False and domain["partial_rotary"] is False
    assert domain["attention_factor"] is True  # it has attention_scaling
    assert all(p["name"].split("/")[0] != "within_bound_of_reference" or p["verdict"] == "pass"
               for p in report.properties if p["name"].endswith("/float32"))


def test_hf_pair_fails_exact_as_float32_angles_do():
    report = ropecheck.gate(rt.hf_pair(LlamaStyleRotaryEmbedding(64), apply_rotary_pos_emb),
                            properties=["within_bound_of_reference"])
    assert not report.passed


# --- Meta's complex freqs_cis ---------------------------------------------------------------


def reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    assert 0 <= 1 < ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def test_freqs_cis_is_green_under_its_recipe():
    report = ropecheck.gate(rt.freqs_cis(apply_rotary_emb), contract=FLOAT32_RECIPE, dtypes=["float32", "float16"])
    assert report.passed, "\n".join(str(f) for f in report.failures)
    assert "refused a valid call" not in report.to_json()
    assert report.to_dict()["kernels"][0]["domain"]["absent_tensor"] is False


# --- a cache-based module with a maximum length ---------------------------------------------


class TorchtuneStyleRotaryPositionalEmbeddings(torch.nn.Module):
    def __init__(self, dim, max_seq_len=4096, base=10_000):
        super().__init__()
        self.dim, self.base, self.max_seq_len = dim, base, max_seq_len
        theta = 1.0 / (self.base ** (torch.arange(0, self.dim, 2)[: (self.dim // 2)].float() / self.dim))
        self.register_buffer("theta", theta, persistent=False)
        self.build_rope_cache(self.max_seq_len)

    def build_rope_cache(self, max_seq_len=4096):
        seq_idx = torch.arange(max_seq_len, dtype=self.theta.dtype, device=self.theta.device)
        idx_theta = torch.einsum("i, j -> ij", seq_idx, self.theta).float()
        cache = torch.stack([torch.cos(idx_theta), torch.sin(idx_theta)], dim=-1)
        self.register_buffer("cache", cache, persistent=False)

    def forward(self, x, *, input_pos=None):
        seq_len = x.size(1)
        rope_cache = self.cache[:seq_len] if input_pos is None else self.cache[input_pos]
        xshaped = x.float().reshape(*x.shape[:-1], -1, 2)
        rope_cache = rope_cache.view(-1, xshaped.size(1), 1, xshaped.size(3), 2)
        x_out = torch.stack([
            xshaped[..., 0] * rope_cache[..., 0] - xshaped[..., 1] * rope_cache[..., 1],
            xshaped[..., 1] * rope_cache[..., 0] + xshaped[..., 0] * rope_cache[..., 1],
        ], -1)
        return x_out.flatten(3).type_as(x)


def test_a_cache_module_of_4096_positions_is_gated_within_its_domain():
    adapter = rt.cached_module(TorchtuneStyleRotaryPositionalEmbeddings, 4096)
    report = ropecheck.gate(adapter, contract=FLOAT32_RECIPE)
    assert report.passed, "\n".join(str(f) for f in report.failures)
    assert "refused a valid call" not in report.to_json()
    domain = report.to_dict()["kernels"][0]["domain"]
    assert domain == {"positions": "nonnegative", "max_position": 4095, "inverse": False,
                      "attention_factor": False, "partial_rotary": False, "absent_tensor": False}
    assert sum(p["cases"] for p in report.properties) > 0


def test_the_cache_module_with_its_cache_in_float16_fails_its_recipe():
    class Float16Cache(TorchtuneStyleRotaryPositionalEmbeddings):
        def build_rope_cache(self, max_seq_len=4096):
            super().build_rope_cache(max_seq_len)
            self.cache = self.cache.half().float()

    report = ropecheck.gate(rt.cached_module(Float16Cache, 4096), contract=FLOAT32_RECIPE,
                            properties=["within_bound_of_reference"])
    assert not report.passed


# --- M-RoPE -----------------------------------------------------------------------------------


def apply_multimodal_rotary_pos_emb(q, k, cos, sin, mrope_section, unsqueeze_dim=1):
    mrope_section = mrope_section * 2
    cos = torch.cat([m[i % 3] for i, m in enumerate(cos.split(mrope_section, dim=-1))], dim=-1).unsqueeze(unsqueeze_dim)
    sin = torch.cat([m[i % 3] for i, m in enumerate(sin.split(mrope_section, dim=-1))], dim=-1).unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


STREAMS = ("streams_equal_one_d", "streams_within_bound_of_reference", "streams_norm_preserved",
           "streams_layout_invariance")


def test_mrope_runs_the_stream_properties():
    report = ropecheck.gate(rt.mrope(apply_multimodal_rotary_pos_emb), contract=FLOAT32_RECIPE)
    assert report.passed, "\n".join(str(f) for f in report.failures)
    ran = {p["name"]: p for p in report.properties}
    for name in STREAMS:
        assert ran[f"{name}/float32"]["verdict"] == "pass" and ran[f"{name}/float32"]["cases"] > 0


def test_mrope_with_the_sections_of_one_stream_fails_the_stream_properties():
    def one_section(q, k, cos, sin, mrope_section):
        return apply_multimodal_rotary_pos_emb(q, k, cos, sin, [sum(mrope_section), 0, 0])

    report = ropecheck.gate(rt.mrope(one_section), contract=FLOAT32_RECIPE, properties=list(STREAMS))
    assert not report.passed
    assert "streams_within_bound_of_reference/float32" in {f.check for f in report.failures}


def test_an_adapters_declaration_is_only_a_default():
    adapter = rt.hf_pair(LlamaStyleRotaryEmbedding(64), apply_rotary_pos_emb)
    report = ropecheck.gate(adapter, contract=FLOAT32_RECIPE, serves={"inverse": False, "attention_factor": False, "partial_rotary": False},
                            properties=["norm_preserved"])
    assert report.to_dict()["kernels"][0]["domain"]["attention_factor"] is False
