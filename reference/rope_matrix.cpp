// Matrix form (RoFormer eq. 13): R^d_{Θ,m} built in full — blocks [[cos mθ_j, −sin mθ_j],
// [sin mθ_j, cos mθ_j]] placed at the pair's rows and columns, identity on pass-through
// dims — then applied as a full matrix–vector product.
#include "reference/real.h"
#include "reference/rope_forms.h"

namespace ropecheck::reference {

template <class Real>
square_matrix<Real> rotation_matrix(std::int64_t position, const rotary_params<Real>& params) {
  validate(params);
  using std::cos;
  using std::pow;
  using std::sin;
  const int d = params.rotary_dim;
  auto r = square_matrix<Real>::identity(params.head_dim);
  for (int j = 0; j < d / 2; ++j) {
    const Real angle = params.explicit_inverse_frequencies.empty()
                           ? Real(position) / pow(params.base, Real(2 * j) / d)
                           : Real(position) * params.explicit_inverse_frequencies[j];
    const auto [a, b] = pair_of(params.pair, d, j);
    const Real c = params.attention_factor * cos(angle);  // A·R on the rotated block
    const Real s = params.attention_factor * sin(angle);
    r(a, a) = c;
    r(a, b) = -s;
    r(b, a) = s;
    r(b, b) = c;
  }
  return r;
}

template <class Real>
std::vector<Real> rope_matrix(std::span<const Real> x, std::int64_t position,
                              const rotary_params<Real>& params) {
  validate_input(params, x, "x");
  return rotation_matrix(position, params).apply(x);
}

template square_matrix<mp_real> rotation_matrix(std::int64_t, const rotary_params<mp_real>&);
template square_matrix<double> rotation_matrix(std::int64_t, const rotary_params<double>&);
template std::vector<mp_real> rope_matrix(std::span<const mp_real>, std::int64_t,
                                          const rotary_params<mp_real>&);
template std::vector<double> rope_matrix(std::span<const double>, std::int64_t,
                                         const rotary_params<double>&);

}  // namespace ropecheck::reference
