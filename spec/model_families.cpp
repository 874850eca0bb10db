// The model-family table (model_families.h). Half-split: `rotate_half` pairs (j, j + d/2) —
// x1 = x[..., :d/2], x2 = x[..., d/2:]. Adjacent: (2j, 2j + 1) — `rotate_every_two`, an
// interleaved `rotate_half` (x[..., ::2], x[..., 1::2] with repeat_interleave'd cos/sin), or the
// complex form over reshape(..., -1, 2). Paths are in huggingface/transformers unless noted.
#include "spec/model_families.h"

#include <array>

namespace ropecheck::spec_families {
namespace {

constexpr pairing half = pairing::half_split;
constexpr pairing adjacent = pairing::adjacent;

const std::array<family, 33> families = {{
    {"llama", half, {}, false, "models/llama/modeling_llama.py rotate_half"},
    {"mistral", half, {}, false, "models/mistral/modeling_mistral.py rotate_half"},
    {"mixtral", half, {}, false, "models/mixtral/modeling_mixtral.py rotate_half"},
    {"qwen2", half, {}, false, "models/qwen2/modeling_qwen2.py rotate_half"},
    {"qwen2_moe", half, {}, false, "models/qwen2_moe/modeling_qwen2_moe.py rotate_half"},
    {"qwen3", half, {}, false, "models/qwen3/modeling_qwen3.py rotate_half"},
    {"qwen3_moe", half, {}, false, "models/qwen3_moe/modeling_qwen3_moe.py rotate_half"},
    {"qwen3_next", half, {}, false,
     "models/qwen3_next/modeling_qwen3_next.py apply_rotary_pos_emb (partial: q[..., :rotary_dim])"},
    {"gemma", half, {}, false, "models/gemma/modeling_gemma.py rotate_half"},
    {"gemma2", half, {}, false, "models/gemma2/modeling_gemma2.py rotate_half"},
    {"gemma3_text", half, {}, false, "models/gemma3/modeling_gemma3.py rotate_half"},
    {"gemma4_text", half, {}, false,
     "models/gemma4/modeling_gemma4.py rotate_half over the layer's whole head (global_head_dim on "
     "full-attention layers, whose proportional init leaves the pairs past its share at angle 0)"},
    {"phi3", half, {}, false, "models/phi3/modeling_phi3.py rotate_half (partial rotary)"},
    {"gpt_neox", half, {}, false, "models/gpt_neox/modeling_gpt_neox.py rotate_half (rotary_pct)"},
    {"gptj", adjacent, {}, false, "models/gptj/modeling_gptj.py rotate_every_two (rotary_dim)"},
    {"codegen", adjacent, {}, false, "models/codegen/modeling_codegen.py rotate_every_two (rotary_dim)"},
    {"deepseek_v2", adjacent, {}, false,
     "DeepSeek-V2 modeling_deepseek.py apply_rotary_pos_emb (q viewed as d/2 pairs, then rotate_half)"},
    {"deepseek_v3", adjacent, {}, false,
     "models/deepseek_v3/modeling_deepseek_v3.py apply_rotary_pos_emb_interleave (rope_interleave)"},
    {"cohere", adjacent, {}, false,
     "models/cohere/modeling_cohere.py rotate_half (x[..., ::2], x[..., 1::2]; repeat_interleave'd cos/sin)"},
    {"cohere2", adjacent, {}, false, "models/cohere2/modeling_cohere2.py (Cohere's rotate_half)"},
    {"llama4_text", adjacent, {}, false,
     "models/llama4/modeling_llama4.py apply_rotary_emb (view_as_complex over reshape(..., -1, 2))"},
    {"llama4", adjacent, {}, false, "models/llama4/modeling_llama4.py (text model: llama4_text)"},
    {"glm", adjacent, 0.5, false,
     "models/glm/modular_glm.py rotate_half (x[..., 0::2], x[..., 1::2]) on q[..., :rotary_dim]; "
     "GlmConfig partial_rotary_factor=0.5"},
    {"chatglm", adjacent, {}, true,
     "THUDM chatglm3-6b / glm-4-9b-chat modeling_chatglm.py: RotaryEmbedding(rotary_dim // 2, "
     "rope_ratio), base = 10000·rope_ratio, apply_rotary_pos_emb on x.reshape(..., rot_dim // 2, 2)"},
    {"glm4v_text", adjacent, {}, false,
     "models/glm4v/modeling_glm4v.py apply_multimodal_rotary_pos_emb: cos/sin split by mrope_section "
     "(chunk i from stream i % 3), first half repeat_interleave(2), rotate_half_llm (x[..., 0::2], "
     "x[..., 1::2]) on q[..., :rotary_dim] (partial_rotary_factor from the config)"},
    {"glm4v", adjacent, {}, false, "models/glm4v/modeling_glm4v.py (text model: glm4v_text)"},
    // GLM-4.5V keeps GLM-4.1V's M-RoPE sections but pairs half-split: its modeling file has no
    // rotate_half_llm and no repeat_interleave of the first half.
    {"glm4v_moe_text", half, {}, false,
     "models/glm4v_moe/modeling_glm4v_moe.py apply_multimodal_rotary_pos_emb: cos/sin split by "
     "mrope_section (chunk i from stream i % 3), rotate_half (x[..., :d/2], x[..., d/2:]) on "
     "q[..., :rotary_dim] (partial_rotary_factor from the config)"},
    {"glm4v_moe", half, {}, false, "models/glm4v_moe/modeling_glm4v_moe.py (text model: glm4v_moe_text)"},
    {"phi", half, {}, false, "models/phi/modeling_phi.py rotate_half (partial_rotary_factor)"},
    {"qwen2_vl", half, {}, false,
     "models/qwen2_vl/modeling_qwen2_vl.py apply_multimodal_rotary_pos_emb (rotate_half; M-RoPE)"},
    {"qwen2_5_vl", half, {}, false,
     "models/qwen2_5_vl/modeling_qwen2_5_vl.py apply_multimodal_rotary_pos_emb (rotate_half; M-RoPE)"},
    {"qwen3_vl_text", half, {}, false,
     "models/qwen3_vl/modeling_qwen3_vl.py apply_rotary_pos_emb (rotate_half; interleaved M-RoPE)"},
    {"qwen3_vl", half, {}, false, "models/qwen3_vl/modeling_qwen3_vl.py (text model: qwen3_vl_text)"},
}};

}  // namespace

std::span<const family> catalog() { return families; }

const family* find(std::string_view model_type) {
  for (const family& f : families)
    if (f.model_type == model_type) return &f;
  return nullptr;
}

}  // namespace ropecheck::spec_families
