// The reference forms of RoPE (Su et al., RoFormer, §3.4; seeds 000, 001, 003, 004). Each form
// is written on its own — its own frequency expression, its own pairing logic — so that their
// agreement checks every one of them:
//   elementwise  y = x ⊙ cos(mθ) + rotate(x) ⊙ sin(mθ)               (HF rotate_half, GPT-J
//                                                                    rotate_every_two)
//   complex      pair (x_a, x_b) ↦ (x_a + i·x_b)·e^{i·m·θ_j}         (Meta LLaMA freqs_cis)
//   matrix       y = R^d_{Θ,m} x, the full d×d block rotation          (RoFormer eq. 13)
//   inverse      x = R^d_{Θ,m}ᵀ y, rotation by −m                      (the backward pass)
//   score        g(q, k, m−n) = Re Σ_j q_j·conj(k_j)·e^{i(m−n)θ_j}     (RoFormer eq. 12; seed 002)
//   mrope        pair j rotated by p_{s(j)}·θ_j, p = (temporal, height, width) positions
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

// M-RoPE's stream (0 temporal, 1 height, 2 width) of frequency index j (rope_spec.h
// mrope_layout); this is reference/'s own statement of the rule.
int mrope_stream(const mrope_layout& layout, int j);

// M-RoPE: pair j rotated by positions[mrope_stream(layout, j)]·θ_j, cos and sin each from
// MPFR's real trig of the angle (as the elementwise form), times A.
template <class Real>
std::vector<Real> rope_mrope(std::span<const Real> x, const std::array<std::int64_t, 3>& positions,
                             const rotary_params<Real>& params, const mrope_layout& layout);

}  // namespace ropecheck::reference
