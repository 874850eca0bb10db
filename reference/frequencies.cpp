// θ_i = base^(−2i/d) at reference precision (RoFormer eq. 15), written independently of
// fast/frequencies.cpp.
#include "reference/frequencies.h"

#include "reference/real.h"
#include "reference/rotary_params.h"

namespace ropecheck::reference {

template <class Real>
std::vector<Real> inverse_frequencies(int rotary_dim, const Real& base) {
  validate(rotary_params<Real>{rotary_dim, rotary_dim, base, pairing::half_split, {}});
  using std::pow;
  std::vector<Real> theta;
  theta.reserve(rotary_dim / 2);
  for (int i = 0; i < rotary_dim / 2; ++i) theta.push_back(pow(base, Real(-2 * i) / rotary_dim));
  return theta;
}

template std::vector<mp_real> inverse_frequencies(int, const mp_real&);
template std::vector<double> inverse_frequencies(int, const double&);

}  // namespace ropecheck::reference
