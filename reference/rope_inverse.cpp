// Inverse rotation, rotation by −m (the backward pass of RoPE): per pair,
//   x_a = y_a·cos φ + y_b·sin φ,  x_b = −y_a·sin φ + y_b·cos φ,  φ = m·θ_j,
// i.e. Rᵀ of each 2×2 block; θ_j written here as 2^(−(2j/d)·log₂ base).
#include "reference/real.h"
#include "reference/rope_forms.h"

namespace ropecheck::reference {

template <class Real>
std::vector<Real> rope_inverse(std::span<const Real> y, std::int64_t position,
                               const rotary_params<Real>& params) {
  validate_input(params, y, "y");
  using std::cos;
  using std::exp2;
  using std::log2;
  using std::sin;
  const int d = params.rotary_dim;
  std::vector<Real> x(y.begin(), y.end());
  for (int j = 0; j < d / 2; ++j) {
    const Real phi = Real(position) * (params.explicit_inverse_frequencies.empty()
                                           ? exp2(-(Real(2 * j) / d) * log2(params.base))
                                           : params.explicit_inverse_frequencies[j]);
    // The backward pass of A·R is A·Rᵀ (rotary_params.h): A scales cos and sin here as well.
    const Real c = params.attention_factor * cos(phi);
    const Real s = params.attention_factor * sin(phi);
    const auto [a, b] = pair_of(params.pair, d, j);
    x[a] = y[a] * c + y[b] * s;
    x[b] = y[b] * c - y[a] * s;
  }
  return x;
}

template std::vector<mp_real> rope_inverse(std::span<const mp_real>, std::int64_t,
                                           const rotary_params<mp_real>&);
template std::vector<double> rope_inverse(std::span<const double>, std::int64_t,
                                          const rotary_params<double>&);

}  // namespace ropecheck::reference
