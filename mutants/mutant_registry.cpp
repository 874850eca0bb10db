// The mutants: one scalar kernel written from the RoPE definition (cos/sin of m·θ_j from the
// double angle with its FMA remainder; rotation as fast/rotation.h's FMA operation list), with
// one defect selected by the kernel's context. Every mutant validates calls exactly as
// fast/kernels.cpp does (but cache_position_unchecked, whose defect that is), so a kill is the
// defect's.
// No mutant reads or writes outside the call's tensors or the prepared angles, whatever the
// defect (wraparound by explicit modulo, pass-through reads within the row).
#include "mutants/mutant_registry.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "fast/call_checks.h"
#include "numeric/half.h"
#include "numeric/storage_element.h"
#include "spec/pair_index.h"

namespace ropecheck::mutants {
namespace {

enum class defect {
  none,
  float32_angles,
  bfloat16_inverse_frequencies,
  float16_positions,
  bfloat16_positions,
  bfloat16_cos_sin_cache,
  small_range_sincos,
  pairing_swapped,
  sin_sign_flipped,
  sin_cos_swapped,
  position_plus_one,
  position_offset_ignored,
  cache_wraps_at_4096,
  cache_wrong_past_65536,
  rotate_half_over_head_dim,
  pass_through_not_copied,
  base_ignored,
  exponent_over_d_minus_2,
  exponent_i_over_d,
  simd_tail_dropped,
  head_stride_ignored,
  truncating_output,
  fp8_truncating_output,
  fp8_scale_multiplied,
  fp8_scale_ignored,
  attention_factor_twice,
  attention_factor_dropped,
  key_not_rotated,
  backward_rotates_forward,
  mrope_sections_swapped,
  mrope_contiguous_for_interleaved,
  text_position_in_one_stream,
  vision_rows_columns_swapped,
  double_rounded_store,
  float32_inverse_frequencies,
  pass_through_zeroed,
  in_place_overwrite,
  large_call_float32_angles,
  large_call_partial_rotary,
  large_call_query_at_last_position,
  position_stream_stride_ignored,
  key_heads_from_query,
  cache_position_unchecked,
};

struct mutant_context {
  defect d;
  fast::angle_strategy strategy;
  std::span<const dtype> dtypes;
};

constexpr std::int64_t short_cache_rows = 4096;        // cache_wraps_at_4096
constexpr std::int64_t validated_cache_rows = 65536;   // cache_wrong_past_65536
constexpr double validated_sincos_range = 4096;        // small_range_sincos, radians
constexpr std::int64_t vector_pairs = 16;              // simd_tail_dropped: AVX-512 float lanes
// large_call_float32_angles: vLLM's fused QK-norm-RoPE selects its multi-token-head kernel once
// num_tokens · (num_heads + num_kv_heads) reaches this (csrc fused_qk_norm_rope, SM90).
constexpr std::int64_t large_call_token_heads = 10240;
constexpr double two_pi = 6.283185307179586476925286766559;

float round_to_bfloat16(float v) { return static_cast<float>(round_to_storage(dtype::bfloat16, v)); }

float load(dtype t, const std::byte* p) { return load_storage_element(t, p); }

// Round to nearest even, or (truncate) toward zero: one step back when rounding went up.
void store(dtype t, std::byte* p, float v, bool truncate) {
  if (t == dtype::float32 || !truncate) return store_storage_element(t, p, v);
  if (is_float8(t)) {  // sign-magnitude: one step back in the magnitude bits is toward zero
    auto bits = float_to_float8_bits(t, v);
    if (std::isfinite(v) && std::fabs(float8_bits_to_float(t, bits)) > std::fabs(v)) --bits;
    *p = static_cast<std::byte>(bits);
    return;
  }
  const bool half = t == dtype::float16;
  std::uint16_t bits = storage_bits16(t, v);
  if (std::isfinite(v)) {
    const float rounded = half ? float16_bits_to_float(bits) : bfloat16_bits_to_float(bits);
    if (std::fabs(rounded) > std::fabs(v)) bits = static_cast<std::uint16_t>(bits - 1);
  }
  std::memcpy(p, &bits, 2);
}

using fast::position_at;

// An output y as the store receives it with the call's output scale σ (fast/rope_call.h: y/σ
// in float32, σ = 1 leaving y bit for bit), or as the scale defects get it wrong.
float scaled_output(defect d, float y, float sigma) {
  if (d == defect::fp8_scale_multiplied) return y * sigma;  // dequantisation's direction
  if (d == defect::fp8_scale_ignored) return y;
  return y / sigma;
}

bool supports(const mutant_context& m, dtype t) {
  for (dtype d : m.dtypes)
    if (d == t) return true;
  return false;
}

fast::status invalid(std::string message) {
  return fast::status::error(fast::status_code::invalid_argument, std::move(message));
}

// The checks of fast/kernels.cpp, in the same order and with the same status codes.
fast::status validate(const mutant_context& m, const fast::rope_call& call,
                      const fast::rope_angles& angles) {
  if (!supports(m, call.storage))
    return fast::status::error(fast::status_code::unsupported, "mutant: unsupported dtype");
  if (angles.strategy() != m.strategy) return invalid("mutant: angles of the wrong strategy");
  if (fast::status s = fast::detail::check_call(call); !s.ok()) return s;
  if (call.rotary_dim / 2 != angles.pairs()) return invalid("mutant: rotary_dim/2 != pairs");
  if (m.d == defect::cache_position_unchecked) return fast::status::success();  // its defect
  const bool cached = angles.strategy() == fast::angle_strategy::cache;
  const std::int64_t lo = cached ? 0 : -fast::on_the_fly_position_limit;
  const std::int64_t hi = cached ? angles.max_position() - 1 : fast::on_the_fly_position_limit;
  for (std::int32_t stream = 0; stream < call.position_streams; ++stream)
    for (std::int64_t i = 0; i < call.tokens; ++i) {
      const std::int64_t p = position_at(call, i, stream);
      if (p < lo || p > hi)
        return fast::status::error(fast::status_code::out_of_range,
                                   "mutant: positions[" + std::to_string(i) + "] out of range");
    }
  return fast::status::success();
}

// cos and sin of hi + lo (the exact m·θ as a double plus its FMA remainder), scaled by a.
void exact_cos_sin(double hi, double lo, double a, float& c, float& s) {
  c = static_cast<float>(a * (std::cos(hi) - lo * std::sin(hi)));
  s = static_cast<float>(a * (std::sin(hi) + lo * std::cos(hi)));
}

// The float32 recipe: float(m)·float(θ), then float cos/sin.
void float32_cos_sin(double m, double theta, double a, float& c, float& s) {
  const float phi = static_cast<float>(m) * static_cast<float>(theta);
  c = static_cast<float>(a) * std::cos(phi);
  s = static_cast<float>(a) * std::sin(phi);
}

// The stream pair j takes (kernel_abi.h pair_streams), with the stream-layout defects:
//   mrope_sections_swapped: the height and width sections exchanged (streams 1 and 2);
//   mrope_contiguous_for_interleaved: the contiguous layout of the same section sizes,
//     whatever the map says (a Triton M-RoPE kernel that hard-coded Qwen2-VL's layout);
//   vision_rows_columns_swapped: (row, col) read as (col, row).
std::int32_t stream_of(defect d, const fast::rope_call& call, std::int64_t j) {
  if (call.position_streams == 1) return 0;
  std::int32_t s = call.pair_streams[j];
  if (d == defect::mrope_contiguous_for_interleaved && call.position_streams == 3) {
    std::int64_t count[3] = {};
    for (std::int64_t k = 0; k < call.rotary_dim / 2; ++k) ++count[call.pair_streams[k]];
    s = j < count[0] ? 0 : j < count[0] + count[1] ? 1 : 2;
  }
  if (d == defect::mrope_sections_swapped && call.position_streams == 3 && s > 0) s = 3 - s;
  if (d == defect::vision_rows_columns_swapped && call.position_streams == 2) s = 1 - s;
  return s;
}

// Token `token`'s position in the stream of pair j. text_position_in_one_stream: a text token
// (all streams equal) gets its position in stream 0 only, the others left at 0.
// position_stream_stride_ignored: the streams read as packed ([streams, tokens]) where the call
// says they are `position_stream_stride` apart (a stride below the token count is kept: reading
// past the streams is not the defect).
std::int64_t position_of(defect d, const fast::rope_call& call, std::int64_t token, std::int64_t j) {
  const std::int32_t s = stream_of(d, call, j);
  if (d == defect::position_stream_stride_ignored) {
    fast::rope_call packed = call;
    packed.position_stream_stride = std::min(call.position_stream_stride, call.tokens);
    return position_at(packed, token, s);
  }
  if (d == defect::text_position_in_one_stream && call.position_streams > 1 && s > 0) {
    bool text = true;
    for (std::int32_t k = 1; k < call.position_streams; ++k)
      text = text && position_at(call, token, k) == position_at(call, token, 0);
    if (text) return 0;
  }
  return position_at(call, token, s);
}

// One token's A·cos, A·sin per pair (cos in [0, pairs), sin in [pairs, 2·pairs)).
void cos_sin_row(defect d, const fast::rope_call& call, const fast::rope_angles& angles,
                 std::int64_t token, std::vector<float>& row) {
  const std::int64_t pairs = angles.pairs();
  if (call.position_streams > 1) {  // each pair at its own stream's position, then as below
    std::vector<float> one(row.size());
    fast::rope_call single = call;
    single.position_streams = 1;
    single.tokens = 1;
    for (std::int64_t j = 0; j < pairs; ++j) {
      const std::int64_t m = position_of(d, call, token, j);
      single.positions = &m;
      single.position_type = dtype::int64;
      cos_sin_row(d, single, angles, 0, one);
      row[static_cast<std::size_t>(j)] = one[static_cast<std::size_t>(j)];
      row[static_cast<std::size_t>(pairs + j)] = one[static_cast<std::size_t>(pairs + j)];
    }
    return;
  }
  const std::int64_t m = position_at(call, token);
  const auto& f = angles.frequencies();
  double a = f.attention_factor;
  if (d == defect::attention_factor_twice) a *= f.attention_factor;
  if (d == defect::attention_factor_dropped) a = 1;
  if (angles.strategy() == fast::angle_strategy::cache) {
    std::int64_t r = d == defect::cache_wraps_at_4096 ? m % short_cache_rows : m;
    if (d == defect::cache_position_unchecked)  // an unchecked index, wrapped to stay in the table
      r = (m % angles.max_position() + angles.max_position()) % angles.max_position();
    const float* cached = angles.cached_row(r);
    for (std::int64_t j = 0; j < pairs; ++j) {
      float c = cached[j], s = cached[pairs + j];
      if (d == defect::bfloat16_cos_sin_cache) {
        c = round_to_bfloat16(c);
        s = round_to_bfloat16(s);
      }
      if (d == defect::cache_wrong_past_65536 && m > validated_cache_rows)
        float32_cos_sin(static_cast<double>(m), f.inverse_frequencies[static_cast<std::size_t>(j)],
                        f.attention_factor, c, s);
      row[static_cast<std::size_t>(j)] = c;
      row[static_cast<std::size_t>(pairs + j)] = s;
    }
    return;
  }
  double position = static_cast<double>(m);
  if (d == defect::float16_positions)
    position = float16_bits_to_float(float_to_float16_bits(static_cast<float>(m)));  // inf past 65504
  if (d == defect::bfloat16_positions) position = round_to_bfloat16(static_cast<float>(m));
  if (d == defect::position_plus_one) position += 1;
  if (d == defect::position_offset_ignored) position = 0;  // as if first in the sequence
  for (std::int64_t j = 0; j < pairs; ++j) {
    double theta = f.inverse_frequencies[static_cast<std::size_t>(j)];
    if (d == defect::bfloat16_inverse_frequencies) theta = round_to_bfloat16(static_cast<float>(theta));
    if (d == defect::float32_inverse_frequencies) theta = static_cast<float>(theta);
    if (d == defect::base_ignored)
      theta = std::pow(1e4, -2.0 * static_cast<double>(j) / static_cast<double>(call.rotary_dim));
    if (d == defect::exponent_over_d_minus_2 && call.rotary_dim > 2)
      theta = std::pow(theta, static_cast<double>(call.rotary_dim) /
                                  static_cast<double>(call.rotary_dim - 2));
    if (d == defect::exponent_i_over_d) theta = std::sqrt(theta);
    float c = 0, s = 0;
    if (d == defect::float32_angles) {
      float32_cos_sin(position, theta, a, c, s);
    } else {
      double hi = position * theta;
      const double lo = std::isfinite(hi) ? std::fma(position, theta, -hi) : 0.0;
      if (d == defect::small_range_sincos && std::fabs(hi) > validated_sincos_range) {
        // The fast path reduces by 2π rounded to float: fine for small angles only.
        const double k = std::nearbyint(hi / two_pi);
        hi -= k * static_cast<double>(static_cast<float>(two_pi));
      }
      exact_cos_sin(hi, lo, a, c, s);
    }
    row[static_cast<std::size_t>(j)] = c;
    row[static_cast<std::size_t>(pairs + j)] = s;
  }
}

// double_rounded_store: a kernel that computes each output in double, as a one-rounding kernel
// does (cos/sin of hi + lo from libm to first order, the rotation with FMA), but stores a
// 16-bit output through float32 — two roundings. Read before write: in place stays correct.
fast::status apply_double_rounded(const fast::rope_call& call, const fast::rope_angles& angles) {
  const std::int64_t pairs = angles.pairs();
  const auto element = static_cast<std::int64_t>(size_of(call.storage));
  const auto& f = angles.frequencies();
  const double sign = call.dir == fast::direction::inverse ? -1 : 1;
  std::vector<double> c(static_cast<std::size_t>(pairs)), s(c.size()), xa(c.size()), xb(c.size());
  for (const fast::rope_tensor* t : {&call.q, &call.k}) {
    for (std::int64_t token = 0; t->heads > 0 && token < call.tokens; ++token) {
      const double m = static_cast<double>(position_at(call, token));
      for (std::int64_t j = 0; j < pairs; ++j) {
        const double theta = f.inverse_frequencies[static_cast<std::size_t>(j)];
        const double hi = m * theta, lo = std::fma(m, theta, -hi);
        c[static_cast<std::size_t>(j)] = f.attention_factor * (std::cos(hi) - lo * std::sin(hi));
        s[static_cast<std::size_t>(j)] = sign * f.attention_factor * (std::sin(hi) + lo * std::cos(hi));
      }
      for (std::int64_t h = 0; h < t->heads; ++h) {
        const auto* in = static_cast<const std::byte*>(t->input) +
                         (token * t->input_token_stride + h * t->input_head_stride) * element;
        auto* out = static_cast<std::byte*>(t->output) +
                    (token * t->output_token_stride + h * t->output_head_stride) * element;
        for (std::int64_t j = 0; j < pairs; ++j) {
          const auto [a, b] = pair_of(call.pair, 2 * pairs, j);
          xa[static_cast<std::size_t>(j)] = load(call.storage, in + a * element);
          xb[static_cast<std::size_t>(j)] = load(call.storage, in + b * element);
        }
        if (out != in) {
          for (std::int64_t i = call.rotary_dim; i < call.head_dim; ++i)
            std::memcpy(out + i * element, in + i * element, static_cast<std::size_t>(element));
        }
        for (std::int64_t j = 0; j < pairs; ++j) {
          const auto [a, b] = pair_of(call.pair, 2 * pairs, j);
          const double va = xa[static_cast<std::size_t>(j)], vb = xb[static_cast<std::size_t>(j)];
          const double cj = c[static_cast<std::size_t>(j)], sj = s[static_cast<std::size_t>(j)];
          const double ya = std::fma(va, cj, -(vb * sj)), yb = std::fma(vb, cj, va * sj);
          store(call.storage, out + a * element, static_cast<float>(ya), false);
          store(call.storage, out + b * element, static_cast<float>(yb), false);
        }
      }
    }
  }
  return fast::status::success();
}

fast::status apply_mutant(const void* context, const fast::rope_call& call,
                          const fast::rope_angles& angles) {
  const auto& config = *static_cast<const mutant_context*>(context);
  defect d = config.d;
  if (fast::status s = validate(config, call, angles); !s.ok()) return s;
  const bool large_call = call.tokens * (call.q.heads + call.k.heads) >= large_call_token_heads;
  if (d == defect::large_call_float32_angles)  // the large path's angles; the small path is exact
    d = large_call ? defect::float32_angles : defect::none;
  if (d == defect::large_call_partial_rotary)  // the large path's pass-through; the small path is exact
    d = large_call && call.rotary_dim < call.head_dim ? defect::pass_through_zeroed : defect::none;
  // The large path's Q rotated at the last token's position (a decode kernel's one-position
  // assumption on a prefill batch); K and the small path are exact.
  const bool query_at_last = d == defect::large_call_query_at_last_position && large_call;
  if (d == defect::large_call_query_at_last_position) d = defect::none;
  if (d == defect::double_rounded_store) return apply_double_rounded(call, angles);
  const std::int64_t pairs = angles.pairs();
  const auto element = static_cast<std::int64_t>(size_of(call.storage));
  const bool truncate = d == defect::truncating_output || d == defect::fp8_truncating_output;
  bool inverse = call.dir == fast::direction::inverse && d != defect::backward_rotates_forward;
  if (d == defect::sin_sign_flipped) inverse = !inverse;
  pairing pair = call.pair;
  if (d == defect::pairing_swapped)
    pair = pair == pairing::adjacent ? pairing::half_split : pairing::adjacent;
  const std::int64_t half_offset =
      d == defect::rotate_half_over_head_dim ? call.head_dim / 2 : pairs;
  const std::int64_t written_pairs =
      d == defect::simd_tail_dropped ? pairs - pairs % vector_pairs : pairs;

  std::vector<float> row(static_cast<std::size_t>(2 * pairs));
  std::vector<float> xa(static_cast<std::size_t>(pairs)), xb(static_cast<std::size_t>(pairs));
  for (const fast::rope_tensor* t : {&call.q, &call.k}) {
    const bool copy_only = d == defect::key_not_rotated && t == &call.k;
    // key_heads_from_query: with Q in the call, K's loop runs over Q's head count (bounded by
    // K's own: the heads past it are left as they were, never written out of bounds).
    std::int64_t heads = t->heads;
    if (d == defect::key_heads_from_query && t == &call.k && call.q.heads > 0)
      heads = std::min(t->heads, call.q.heads);
    for (std::int64_t token = 0; t->heads > 0 && token < call.tokens; ++token) {
      cos_sin_row(d, call, angles, query_at_last && t == &call.q ? call.tokens - 1 : token, row);
      for (std::int64_t h = 0; h < heads; ++h) {
        const std::int64_t in_head = d == defect::head_stride_ignored ? h * call.head_dim
                                                                      : h * t->input_head_stride;
        const std::int64_t out_head = d == defect::head_stride_ignored ? h * call.head_dim
                                                                       : h * t->output_head_stride;
        const auto* in = static_cast<const std::byte*>(t->input) +
                         (token * t->input_token_stride + in_head) * element;
        auto* out = static_cast<std::byte*>(t->output) +
                    (token * t->output_token_stride + out_head) * element;
        if (copy_only) {
          if (out != in) std::memmove(out, in, static_cast<std::size_t>(call.head_dim * element));
          continue;
        }
        auto index_a = [&](std::int64_t j) { return pair_of(pair, 2 * half_offset, j).a; };
        auto index_b = [&](std::int64_t j) { return pair_of(pair, 2 * half_offset, j).b; };
        // Read the pairs before writing anything: in place stays correct.
        for (std::int64_t j = 0; j < pairs; ++j) {
          xa[static_cast<std::size_t>(j)] = load(call.storage, in + index_a(j) * element);
          xb[static_cast<std::size_t>(j)] = load(call.storage, in + index_b(j) * element);
        }
        if (call.output_scale != 1.0f && d != defect::pass_through_not_copied) {
          // Scaled: pass-through dims stored as round(x / σ), in place too (fast/rotation.h).
          for (std::int64_t i = call.rotary_dim; i < call.head_dim; ++i)
            store(call.storage, out + i * element,
                  scaled_output(d, load(call.storage, in + i * element), call.output_scale), truncate);
        } else if (d == defect::pass_through_zeroed) {
          for (std::int64_t i = call.rotary_dim; i < call.head_dim; ++i)
            store(call.storage, out + i * element, 0.0f, false);
        } else if (out != in && d != defect::pass_through_not_copied) {
          for (std::int64_t i = call.rotary_dim; i < call.head_dim; ++i)
            std::memcpy(out + i * element, in + i * element, static_cast<std::size_t>(element));
        }
        for (std::int64_t j = 0; j < written_pairs; ++j) {
          float c = row[static_cast<std::size_t>(j)], s = row[static_cast<std::size_t>(pairs + j)];
          if (d == defect::sin_cos_swapped) std::swap(c, s);
          if (inverse) s = -s;
          const float a = xa[static_cast<std::size_t>(j)], b = xb[static_cast<std::size_t>(j)];
          float ya = std::fma(a, c, -(b * s));
          float yb = std::fma(b, c, a * s);
          if (d == defect::in_place_overwrite) {  // y_b from x_a as it is after y_a's store
            store(call.storage, out + index_a(j) * element, ya, truncate);
            yb = std::fma(b, c, load(call.storage, in + index_a(j) * element) * s);
          }
          if (d == defect::bfloat16_cos_sin_cache) {  // the rotation in bfloat16 as well
            ya = round_to_bfloat16(round_to_bfloat16(a * c) - round_to_bfloat16(b * s));
            yb = round_to_bfloat16(round_to_bfloat16(b * c) + round_to_bfloat16(a * s));
          }
          store(call.storage, out + index_a(j) * element, scaled_output(d, ya, call.output_scale), truncate);
          store(call.storage, out + index_b(j) * element, scaled_output(d, yb, call.output_scale), truncate);
        }
      }
    }
  }
  return fast::status::success();
}

constexpr std::array<dtype, 3> all_dtypes{dtype::float32, dtype::float16, dtype::bfloat16};
constexpr std::array<dtype, 2> float32_bfloat16{dtype::float32, dtype::bfloat16};
constexpr std::array<dtype, 1> float32_only{dtype::float32};
constexpr const auto& sixteen_bit = storage_dtypes_of_width<2>;  // numeric/dtype.h's catalog
constexpr const auto& eight_bit = storage_dtypes_of_width<1>;
constexpr std::array<pairing, 2> both_pairings{pairing::half_split, pairing::adjacent};

constexpr auto on_the_fly = fast::angle_strategy::on_the_fly;
constexpr auto cache = fast::angle_strategy::cache;

#define ROPECHECK_CONTEXT(name, strategy, dtypes) \
  constexpr mutant_context name##_context{defect::name, strategy, dtypes};
ROPECHECK_CONTEXT(none, on_the_fly, all_dtypes)
ROPECHECK_CONTEXT(float32_angles, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(bfloat16_inverse_frequencies, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(float16_positions, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(bfloat16_positions, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(bfloat16_cos_sin_cache, cache, float32_bfloat16)
ROPECHECK_CONTEXT(small_range_sincos, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(pairing_swapped, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(sin_sign_flipped, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(sin_cos_swapped, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(position_plus_one, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(position_offset_ignored, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(cache_wraps_at_4096, cache, float32_bfloat16)
ROPECHECK_CONTEXT(cache_wrong_past_65536, cache, float32_bfloat16)
ROPECHECK_CONTEXT(rotate_half_over_head_dim, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(pass_through_not_copied, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(base_ignored, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(exponent_over_d_minus_2, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(exponent_i_over_d, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(simd_tail_dropped, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(head_stride_ignored, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(truncating_output, on_the_fly, sixteen_bit)
ROPECHECK_CONTEXT(fp8_truncating_output, on_the_fly, eight_bit)
ROPECHECK_CONTEXT(fp8_scale_multiplied, on_the_fly, eight_bit)
ROPECHECK_CONTEXT(fp8_scale_ignored, cache, eight_bit)
ROPECHECK_CONTEXT(attention_factor_twice, on_the_fly, float32_only)
ROPECHECK_CONTEXT(attention_factor_dropped, on_the_fly, float32_only)
ROPECHECK_CONTEXT(key_not_rotated, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(backward_rotates_forward, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(mrope_sections_swapped, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(mrope_contiguous_for_interleaved, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(text_position_in_one_stream, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(vision_rows_columns_swapped, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(double_rounded_store, on_the_fly, sixteen_bit)
ROPECHECK_CONTEXT(float32_inverse_frequencies, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(pass_through_zeroed, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(in_place_overwrite, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(large_call_float32_angles, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(large_call_partial_rotary, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(large_call_query_at_last_position, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(position_stream_stride_ignored, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(key_heads_from_query, on_the_fly, float32_bfloat16)
ROPECHECK_CONTEXT(cache_position_unchecked, cache, float32_bfloat16)
#undef ROPECHECK_CONTEXT

// rounds_once: the mutant declares one rounding per output (fast::kernel_info::rounds_once).
fast::kernel_info kernel_of(std::string_view name, std::string_view description,
                            const mutant_context& context, bool rounds_once = false) {
  return {name, description, context.strategy, context.dtypes, both_pairings, apply_mutant,
          &context, rounds_once};
}

// Frequency-computation mutants (the kernel is the defect-free one).

fast::rope_frequencies llama3_factors_swapped(const rope_spec& spec, std::int64_t length) {
  rope_spec s = spec;
  if (auto* llama3 = std::get_if<llama3_scaling>(&s.scaling))
    std::swap(llama3->low_freq_factor, llama3->high_freq_factor);
  return fast::scaled_frequencies(s, length);
}

fast::rope_frequencies dynamic_ntk_static_base(const rope_spec& spec, std::int64_t length) {
  rope_spec s = spec;
  if (const auto* dynamic = std::get_if<dynamic_scaling>(&s.scaling);
      dynamic && dynamic->max_position_embeddings > 0) {
    // The base is computed once for the trained context and never grows with the sequence.
    s.sequence_length = dynamic->max_position_embeddings;
    length = s.sequence_length;
  }
  return fast::scaled_frequencies(s, length);
}

const std::vector<mutant>& registry() {
  static const std::vector<mutant> all = {
      {kernel_of("float32_angles", "angle float(m)·float(θ_j) in float32, then float cos/sin",
                 float32_angles_context),
       "fp32 angle recipe of HF/vLLM/flash-attn kernels: error grows with position (long-context drift)",
       {"within_bound_of_reference", "relative_offset_invariance"},
       "angle_precision"},
      {kernel_of("bfloat16_inverse_frequencies", "θ_j rounded to bfloat16 before m·θ_j",
                 bfloat16_inverse_frequencies_context),
       "inv_freq computed under bf16 autocast / model.to(bf16) (HF Llama/Gemma inv_freq dtype bugs)",
       {"within_bound_of_reference"},
       "low_precision_inverse_frequencies"},
      {kernel_of("float16_positions", "positions held in float16 (rounded above 2048, inf past 65504)",
                 float16_positions_context),
       "position_ids cast to the fp16 activation dtype before the angle",
       {"within_bound_of_reference", "inverse_round_trip"},
       "position_precision"},
      {kernel_of("bfloat16_positions", "positions held in bfloat16 (rounded above 256)",
                 bfloat16_positions_context),
       "arange positions created in bf16 (HF Gemma/Llama bf16 position bug: tokens past 256 collide)",
       {"within_bound_of_reference"},
       "position_precision"},
      {kernel_of("bfloat16_cos_sin_cache", "cos/sin table stored in bfloat16; rotation in bfloat16",
                 bfloat16_cos_sin_cache_context),
       "cos/sin cache cast to the bf16 model dtype (HF cos_cached.to(dtype), vLLM cache in model dtype)",
       {"norm_preserved", "strategies_agree"},
       "low_precision_arithmetic"},
      {kernel_of("small_range_sincos", "sin/cos reduce by 2π rounded to float past 4096 rad",
                 small_range_sincos_context),
       "fast GPU sin/cos intrinsics (__sinf/__cosf) without full range reduction at large angles",
       {"within_bound_of_reference"},
       "trig_range_reduction"},
      {kernel_of("pairing_swapped", "half-split pairs where adjacent is configured, and the reverse",
                 pairing_swapped_context),
       "GPT-J/Meta interleaved vs NeoX rotate_half mix-up when porting weights (e.g. llama.cpp NORM vs NEOX)",
       {"within_bound_of_reference", "norm_preserved"},
       "wrong_pairing"},
      {kernel_of("sin_sign_flipped", "sin negated: rotation by −m·θ_j", sin_sign_flipped_context),
       "rotate_half sign convention inverted (y = x·cos − rot(x)·sin with rot = [x2, −x1])",
       {"within_bound_of_reference"},
       "inverse_rotation"},
      {kernel_of("sin_cos_swapped", "cos and sin swapped", sin_cos_swapped_context),
       "cos/sin cache halves unpacked in the wrong order (cat(sin, cos) read as cat(cos, sin))",
       {"within_bound_of_reference"},
       "cos_sin_swapped"},
      {kernel_of("position_plus_one", "rotates by m + 1", position_plus_one_context),
       "1-based position_ids / off-by-one cache offset",
       {"within_bound_of_reference"},
       "position_offset"},
      {kernel_of("position_offset_ignored", "every token rotated at position 0 (the given offset ignored)",
                 position_offset_ignored_context),
       "KV-cache decode bug: the new token rotated as if first in the sequence (past length ignored)",
       {"within_bound_of_reference"},
       "position_offset"},
      {kernel_of("cache_wraps_at_4096", "cos/sin cache of 4096 rows read at m mod 4096",
                 cache_wraps_at_4096_context),
       "cos/sin cache sized to max_position_embeddings, indexed past it without a check",
       {"within_bound_of_reference", "strategies_agree"},
       "positions_wrapped"},
      {kernel_of("cache_wrong_past_65536", "cache rows past 65536 from float32 angles",
                 cache_wrong_past_65536_context),
       "cache extended past the validated length by a cheaper (fp32) path: correct to 64K, wrong beyond",
       {"within_bound_of_reference"},
       "angle_precision"},
      {kernel_of("rotate_half_over_head_dim",
                 "half-split partner j + head_dim/2 instead of j + rotary_dim/2 (partial rotary)",
                 rotate_half_over_head_dim_context),
       "partial_rotary_factor ignored: rotate_half over the whole head (GPT-NeoX/Phi/StableLM ports)",
       {"pass_through_bit_exact"},
       "wrong_pairing"},
      {kernel_of("pass_through_not_copied", "dims past rotary_dim never written out of place",
                 pass_through_not_copied_context),
       "out-of-place rotary kernel writes only the rotary dims (flash-attn apply_rotary fix)",
       {"pass_through_bit_exact", "in_place_equals_out_of_place"},
       "passthrough_modified"},
      {kernel_of("base_ignored", "θ_j from base 1e4 whatever the configured base",
                 base_ignored_context),
       "rope_theta not read from the config (Llama-3 5e5 / Qwen 1e6 run at the 1e4 default)",
       {"within_bound_of_reference"},
       "config_mismatch"},
      {kernel_of("exponent_over_d_minus_2", "θ_j = base^(−2j/(d−2))",
                 exponent_over_d_minus_2_context),
       "linspace-style exponent endpoint off by one in the inv_freq formula",
       {"within_bound_of_reference"},
       "frequency_mismatch"},
      {kernel_of("exponent_i_over_d", "θ_j = base^(−j/d)", exponent_i_over_d_context),
       "arange(0, d/2)/d instead of arange(0, d, 2)/d in the inv_freq formula",
       {"within_bound_of_reference"},
       "frequency_mismatch"},
      {kernel_of("simd_tail_dropped", "last pairs % 16 never written (vector remainder loop missing)",
                 simd_tail_dropped_context),
       "SIMD kernel correct for d = 64/128 but wrong tail at d = 80/96 (vector width remainder)",
       {"within_bound_of_reference"},
       "pair_tail_wrong"},
      {kernel_of("head_stride_ignored", "head offset h·head_dim instead of h·head_stride",
                 head_stride_ignored_context),
       "kernel assumes contiguous heads: wrong on strided / transposed (sbhd, fused qkv) views",
       {"layout_invariant"},
       ""},
      {kernel_of("truncating_output", "float16/bfloat16 output truncated, not rounded to nearest even",
                 truncating_output_context),
       "bf16 store by dropping the low 16 bits (early CPU / custom-kernel conversions)",
       {"within_bound_of_reference"},
       "output_store"},
      {kernel_of("fp8_truncating_output",
                 "float8_e4m3fn/float8_e5m2 output rounded toward zero, not to nearest even",
                 fp8_truncating_output_context),
       "fp8 quantize-on-store by truncating the float32 mantissa (round toward zero) instead of "
       "cvt.rn.satfinite",
       {"output_scale_within_bound"},
       "output_store"},
      {kernel_of("fp8_scale_multiplied", "fp8 output stored as round(y * scale), not round(y / scale)",
                 fp8_scale_multiplied_context),
       "quantize-on-store multiplying by the dequantisation scale (k_scale) where the kernel "
       "expects its reciprocal (vLLM divides: a / scale)",
       {"output_scale_within_bound"},
       "output_scale_misapplied"},
      {kernel_of("fp8_scale_ignored", "fp8 output stored as round(y): the per-call output scale ignored",
                 fp8_scale_ignored_context),
       "RoPE kernel writing the fp8 KV cache without the k_scale/v_scale the attention backend applies",
       {"output_scale_within_bound"},
       "output_scale_misapplied"},
      {kernel_of("attention_factor_twice", "cos and sin multiplied by A²",
                 attention_factor_twice_context),
       "YaRN mscale applied in the cos/sin cache and again on q·k (vLLM/HF YaRN double-scaling)",
       {"norm_preserved", "streams_norm_preserved"},
       "magnitude_scale"},
      {kernel_of("attention_factor_dropped", "attention factor A ignored",
                 attention_factor_dropped_context),
       "YaRN / LongRoPE attention factor (mscale) dropped",
       {"within_bound_of_reference", "norm_preserved"},
       "magnitude_scale"},
      {kernel_of("llama3_factors_swapped", "correct kernel; llama3 scaling with low/high factors swapped",
                 none_context),
       "Llama 3.1 smoothing with low_freq_factor and high_freq_factor swapped",
       {"scaled_frequencies_within_4_ulps"},
       "config_mismatch",
       llama3_factors_swapped},
      {kernel_of("dynamic_ntk_static_base",
                 "correct kernel; dynamic NTK base computed once at max_position_embeddings",
                 none_context),
       "dynamic NTK scaling whose base ignores the current sequence length (never grows)",
       {"scaled_frequencies_within_4_ulps"},
       "config_mismatch",
       dynamic_ntk_static_base},
      {kernel_of("key_not_rotated", "in a Q+K call, K passed through unrotated",
                 key_not_rotated_context),
       "apply_rotary_pos_emb returning the unrotated key (q_embed, k) typo",
       {"within_bound_of_reference"},
       ""},
      {kernel_of("backward_rotates_forward", "inverse direction rotates by +m (backward = forward)",
                 backward_rotates_forward_context),
       "custom autograd backward of RoPE without the transposed rotation",
       {"inverse_round_trip"},
       ""},
      {kernel_of("mrope_sections_swapped", "M-RoPE height and width sections exchanged",
                 mrope_sections_swapped_context),
       "M-RoPE cos/sin chunks taken in the wrong stream order (mrope_section order swapped)",
       {"streams_within_bound_of_reference"},
       "stream_layout"},
      {kernel_of("mrope_contiguous_for_interleaved",
                 "M-RoPE contiguous sections where the layout is interleaved",
                 mrope_contiguous_for_interleaved_context),
       "a serving engine's M-RoPE Triton kernel hard-coded the contiguous Qwen2-VL layout (Qwen3-VL interleaves)",
       {"streams_within_bound_of_reference"},
       "stream_layout"},
      {kernel_of("text_position_in_one_stream",
                 "a text token's position put in the temporal stream only (height, width left 0)",
                 text_position_in_one_stream_context),
       "M-RoPE position ids for text tokens broadcast to one stream instead of all three",
       {"streams_equal_one_d"},
       "stream_layout"},
      {kernel_of("vision_rows_columns_swapped", "2-D vision RoPE with rows and columns exchanged",
                 vision_rows_columns_swapped_context),
       "vision tower patch grid read as (x, y) where (row, col) was meant (hpos/wpos order)",
       {"streams_within_bound_of_reference"},
       "stream_layout"},
      {kernel_of("double_rounded_store",
                 "declares one rounding per output, computes in double, but stores float16/bfloat16 "
                 "through float32 (two roundings)",
                 double_rounded_store_context, true),
       "fp64 or fp32-accumulate kernel whose low-precision store goes through an fp32 cast "
       "(y.float().to(fp16)): double rounding",
       {"rounded_once_within_half_ulp"},
       ""},
      // The defects of kernels the suite's own tests once carried privately, and those aimed
      // at the properties no other mutant fails.
      {kernel_of("float32_inverse_frequencies",
                 "θ_j rounded to float32, the angle m·θ_j then taken exactly",
                 float32_inverse_frequencies_context),
       "inv_freq held in a float32 buffer (HF register_buffer, Meta precompute_freqs_cis) under an "
       "otherwise exact angle: error m·θ_j·2^-24 grows with position",
       {"within_bound_of_reference"},
       "low_precision_inverse_frequencies"},
      {kernel_of("pass_through_zeroed", "dims past rotary_dim written as 0, in place too",
                 pass_through_zeroed_context),
       "partial rotary output assembled in a zero-filled buffer (torch.zeros_like) with only the "
       "rotary slice written back: the pass-through dims lost",
       {"pass_through_bit_exact"},
       "passthrough_modified"},
      {kernel_of("in_place_overwrite", "y_b computed from x_a as re-read after y_a was stored",
                 in_place_overwrite_context),
       "in-place rotary kernel that stores y_a before its partner's lane loads x_a (a load/store "
       "ordering hazard, FlagGems' in-place rotary kernel): right out of place, wrong in place",
       {"in_place_equals_out_of_place"},
       ""},
      {kernel_of("large_call_float32_angles",
                 "calls of >= 10 240 token-heads (Q and K) take a second path with float32 angles",
                 large_call_float32_angles_context),
       "a second kernel path selected by call size (vLLM's fused QK-norm-RoPE switches to its "
       "multi-token-head kernel at 10 240 token-heads, whose partial-rotary branch returned "
       "garbage): a token's output depends on the batch it is in",
       {"call_size_invariant"},
       ""},
      {kernel_of("large_call_partial_rotary",
                 "calls of >= 10 240 token-heads with rotary_dim < head_dim zero the pass-through dims",
                 large_call_partial_rotary_context),
       "the partial-rotary branch of a kernel path selected by call size (vLLM's fused QK-norm-RoPE "
       "multi-token-head kernel, from 10 240 token-heads) returning garbage in the dims it should copy",
       {"call_size_invariant"},
       ""},
      {kernel_of("large_call_query_at_last_position",
                 "calls of >= 10 240 token-heads (Q and K) rotate every Q token at the last token's position",
                 large_call_query_at_last_position_context),
       "a kernel path selected by call size that rotates the query at one position, the last "
       "token's, as a decode step would: right for one token or a small batch, wrong for a prefill "
       "batch past the threshold",
       {"call_size_invariant"},
       ""},
      {kernel_of("position_stream_stride_ignored",
                 "M-RoPE / vision position streams read as packed [streams, tokens], whatever the stride",
                 position_stream_stride_ignored_context),
       "M-RoPE positions passed as a [:, :num_tokens] slice of the persistent [3, max_tokens] "
       "buffer (CUDA-graph padding) to a kernel that assumes them contiguous",
       {"streams_layout_invariance"},
       ""},
      {kernel_of("key_heads_from_query",
                 "in a Q+K call, K's head loop bounded by Q's head count (the K heads past it not rotated)",
                 key_heads_from_query_context),
       "fused Q+K RoPE launched over num_heads and reusing it for the key loop: with GQA/MQA "
       "(num_kv_heads != num_heads) the key is rotated differently with the query than alone",
       {"q_and_k_together_equal_separate"},
       ""},
      {kernel_of("cache_position_unchecked",
                 "cos/sin cache indexed by the position without a range check (wrapped to the table)",
                 cache_position_unchecked_context),
       "cos_sin_cache[positions[i]] read with no check against max_position_embeddings (vLLM's "
       "rotary_embedding kernel): a position past the cache is rotated by another row, no error",
       {"rejects_invalid_calls"},
       ""},
  };
  return all;
}

}  // namespace

std::span<const mutant> mutant_registry() { return registry(); }

const mutant* find_mutant(std::string_view name) {
  for (const auto& m : registry())
    if (m.kernel.name == name) return &m;
  return nullptr;
}

fast::rope_frequencies mutant_frequencies(const mutant& m, const rope_spec& spec,
                                          std::int64_t sequence_length) {
  return m.frequencies != nullptr ? m.frequencies(spec, sequence_length)
                                  : fast::scaled_frequencies(spec, sequence_length);
}

const fast::kernel_info& defect_free_kernel() {
  static const fast::kernel_info kernel =
      kernel_of("defect_free_scalar", "the mutants' scalar kernel without a defect", none_context);
  return kernel;
}

std::string catalog_row(const mutant& m) {
  std::string killers;
  for (std::string_view p : m.must_fail) killers += (killers.empty() ? "`" : ", `") + std::string(p) + "`";
  const std::string code = m.diagnosis.empty() ? std::string("— (not visible in one dump)")
                                               : "`" + std::string(m.diagnosis) + "`";
  return "| `" + std::string(m.kernel.name) + "` | " + std::string(m.imitates) + " | " + killers + " | " + code + " |";
}

}  // namespace ropecheck::mutants
