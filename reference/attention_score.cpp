// Attention-score form (RoFormer eq. 12; seed 002): with q_j = q_a + i·q_b, k_j likewise,
//   ⟨f(q, m), f(k, n)⟩ = Re Σ_j q_j·conj(k_j)·e^{i(m−n)θ_j} + Σ_{pass-through} q_c·k_c,
// expanded in reals: Re = (q_a k_a + q_b k_b)·cos Δθ − (q_b k_a − q_a k_b)·sin Δθ.
// Neither q nor k is rotated. With an attention factor A the rotary sum is multiplied by A².
#include "reference/real.h"
#include "reference/rope_forms.h"

namespace ropecheck::reference {

template <class Real>
Real attention_score(std::span<const Real> q, std::span<const Real> k, std::int64_t delta,
                     const rotary_params<Real>& params) {
  validate_input(params, q, "q");
  validate_input(params, k, "k");
  using std::cos;
  using std::pow;
  using std::sin;
  const int d = params.rotary_dim;
  Real score = 0;
  for (int j = 0; j < d / 2; ++j) {
    const Real phi = Real(delta) * (params.explicit_inverse_frequencies.empty()
                                        ? pow(params.base, Real(-2 * j) / d)
                                        : params.explicit_inverse_frequencies[j]);
    const auto [a, b] = pair_of(params.pair, d, j);
    const Real re = q[a] * k[a] + q[b] * k[b];
    const Real im = q[b] * k[a] - q[a] * k[b];
    score += re * cos(phi) - im * sin(phi);
  }
  // Both q and k carry A on the rotary dims (rotary_params.h); pass-through dims are unscaled.
  score *= params.attention_factor * params.attention_factor;
  for (int c = d; c < params.head_dim; ++c) score += q[c] * k[c];
  return score;
}

template mp_real attention_score(std::span<const mp_real>, std::span<const mp_real>, std::int64_t,
                                 const rotary_params<mp_real>&);
template double attention_score(std::span<const double>, std::span<const double>, std::int64_t,
                                const rotary_params<double>&);

}  // namespace ropecheck::reference
