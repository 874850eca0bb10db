// The reference forms of RoPE (Su et al., RoFormer, §3.4; seeds 000, 001, 003, 004). Each form
// is written on its own — its own frequency expression, its own pairing logic — so that their
// agreement checks every one of them:
//   elementwise  y = x ⊙ cos(mθ) + rotate(x) ⊙ sin(mθ)               (HF rotate_half, GPT-J
//                                                                    rotate_every_two)
//   complex      pair (x_a, x_b) ↦ (x_a + i·x_b)·e^{i·m·θ_j}         (Meta LLaMA freqs_cis)
//   matrix       y = R^d_{Θ,m} x, the full d×d block rotation          (RoFormer eq. 13)
//   inverse      x = R^d_{Θ,m}ᵀ y, rotation by −m                      (the backward pass)
//   score        g(q, k, m−n) = Re Σ_j q_j·conj(k_j)·e^{i(m−n)θ_j}     (RoFormer eq. 12; seed 002)
//   streams      pair j rotated by p_{s(j)}·θ_{f(j)}: M-RoPE (t, h, w), 2-D vision (row, col)
//                (M-RoPE: Qwen2-VL / Qwen2.5-VL contiguous sections, Qwen3-VL interleaved)
// Rotated coordinates are the first rotary_dim; the rest pass through unchanged.
// Every function validates its parameters and inputs and throws reference_error.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "reference/rotary_params.h"
#include "reference/square_matrix.h"

namespace ropecheck::reference {

template <class Real>
std::vector<Real> rope_elementwise(std::span<const Real> x, std::int64_t position,
                                   const rotary_params<Real>& params);

template <class Real>
std::vector<Real> rope_complex(std::span<const Real> x, std::int64_t position,
                               const rotary_params<Real>& params);

// The same two forms split in three steps for a whole tensor: each form's own θ_j once (at
// construction), its cos/sin or freqs_cis once per position (at_position), then the rotation of
// every head vector at that position (operator()). rope_elementwise / rope_complex are exactly
// these steps done once; rope_tensor.h shares them over heads and rows. The forms stay
// independent of each other.
template <class Real>
class elementwise_rotation {
 public:
  explicit elementwise_rotation(const rotary_params<Real>& params);
  void at_position(std::int64_t position);
  std::vector<Real> operator()(std::span<const Real> x) const;

 private:
  const rotary_params<Real>& params_;
  std::vector<Real> theta_;                // θ_j, the form's own pow expression
  std::vector<Real> cos_full_, sin_full_;  // expanded to the rotary width, A included
};

template <class Real>
class complex_rotation {
 public:
  explicit complex_rotation(const rotary_params<Real>& params);
  ~complex_rotation();
  complex_rotation(complex_rotation&&) noexcept;
  void at_position(std::int64_t position);
  std::vector<Real> operator()(std::span<const Real> x) const;

 private:
  struct factors;  // θ_j, and A·e^{i·m·θ_j} per pair in the form's complex type (MPC at 266 bits)
  const rotary_params<Real>& params_;
  std::unique_ptr<factors> factors_;
};

// R^d_{Θ,m} as a dense head_dim × head_dim matrix (identity on the pass-through dims).
template <class Real>
square_matrix<Real> rotation_matrix(std::int64_t position, const rotary_params<Real>& params);

template <class Real>
std::vector<Real> rope_matrix(std::span<const Real> x, std::int64_t position,
                              const rotary_params<Real>& params);

template <class Real>
std::vector<Real> rope_inverse(std::span<const Real> y, std::int64_t position,
                               const rotary_params<Real>& params);

// ⟨f(q, m), f(k, n)⟩ computed from q, k and m − n alone, without rotating either.
template <class Real>
Real attention_score(std::span<const Real> q, std::span<const Real> k, std::int64_t delta,
                     const rotary_params<Real>& params);

// The position stream s(j) and frequency index f(j) of pair j under a stream layout
// (rope_spec.h stream_layout); reference/'s own statement of the rules (rope_streams.cpp).
int position_stream(const stream_layout& layout, int rotary_dim, int j);
int stream_frequency_index(const stream_layout& layout, int rotary_dim, int j);
// Positions per token under the layout: 1, 2 (vision), 3 (M-RoPE) or 4 (ggml's IMROPE).
int position_stream_count(const stream_layout& layout);

// M-RoPE and 2-D vision RoPE: pair j rotated by positions[s(j)]·θ_{f(j)}, θ_i the params' i-th
// inverse frequency; cos and sin each from MPFR's real trig of the angle, times A. `positions`
// holds one position per stream (3 for M-RoPE: t, h, w; 4 for ggml's IMROPE: t, h, w, e; 2 for
// vision: row, column).
template <class Real>
std::vector<Real> rope_streams(std::span<const Real> x, std::span<const std::int64_t> positions,
                               const rotary_params<Real>& params, const stream_layout& layout);

}  // namespace ropecheck::reference
