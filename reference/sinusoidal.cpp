// Sinusoidal position encoding (Vaswani et al. 2017, §3.5) and its shift matrix T(Δ), at
// reference precision.
#include "reference/sinusoidal.h"

#include "reference/real.h"
#include "reference/rotary_params.h"

namespace ropecheck::reference {
namespace {
// Written as in the paper, k / base^(2i/d), not through inverse_frequencies().
template <class Real>
Real angle(std::int64_t k, int i, int d_model, const Real& base) {
  using std::pow;
  return Real(k) / pow(base, Real(2 * i) / d_model);
}
}  // namespace

template <class Real>
std::vector<Real> sinusoidal_encoding(std::int64_t position, int d_model, const Real& base) {
  validate(rotary_params<Real>{d_model, d_model, base, pairing::adjacent, {}});
  using std::cos;
  using std::sin;
  std::vector<Real> p(d_model);
  for (int i = 0; i < d_model / 2; ++i) {
    const Real phi = angle(position, i, d_model, base);
    p[2 * i] = sin(phi);
    p[2 * i + 1] = cos(phi);
  }
  return p;
}

template <class Real>
square_matrix<Real> sinusoidal_shift_matrix(std::int64_t delta, int d_model, const Real& base) {
  validate(rotary_params<Real>{d_model, d_model, base, pairing::adjacent, {}});
  using std::cos;
  using std::sin;
  square_matrix<Real> t(d_model);
  for (int i = 0; i < d_model / 2; ++i) {
    const Real phi = angle(delta, i, d_model, base);
    t(2 * i, 2 * i) = cos(phi);
    t(2 * i, 2 * i + 1) = sin(phi);
    t(2 * i + 1, 2 * i) = -sin(phi);
    t(2 * i + 1, 2 * i + 1) = cos(phi);
  }
  return t;
}

template std::vector<mp_real> sinusoidal_encoding(std::int64_t, int, const mp_real&);
template std::vector<double> sinusoidal_encoding(std::int64_t, int, const double&);
template square_matrix<mp_real> sinusoidal_shift_matrix(std::int64_t, int, const mp_real&);
template square_matrix<double> sinusoidal_shift_matrix(std::int64_t, int, const double&);

}  // namespace ropecheck::reference
