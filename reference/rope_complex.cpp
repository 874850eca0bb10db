// Complex form, the way Meta's LLaMA code writes it: freqs_cis = polar(1, m·θ_j) and
// x viewed as complex pairs multiplied by it. At reference precision the complex arithmetic
// is MPC's (an independent library from MPFR's real trig used by the other forms).
#include <complex>

#include "reference/real.h"
#include "reference/rope_forms.h"

namespace ropecheck::reference {
namespace {
template <class Real>
struct complex_of {
  using type = std::complex<Real>;
};
template <>
struct complex_of<mp_real> {
  using type = mp_complex;
};
}  // namespace

template <class Real>
struct complex_rotation<Real>::factors {
  std::vector<Real> theta;
  std::vector<typename complex_of<Real>::type> freqs_cis;
};

template <class Real>
complex_rotation<Real>::complex_rotation(const rotary_params<Real>& params)
    : params_(params), factors_(std::make_unique<factors>()) {
  validate(params);
  using std::exp;
  using std::log;
  const int d = params.rotary_dim;
  const Real log_base = log(params.base);
  for (int j = 0; j < d / 2; ++j) {
    factors_->theta.push_back(params.explicit_inverse_frequencies.empty()
                                  ? exp(Real(-2 * j) / d * log_base)
                                  : params.explicit_inverse_frequencies[j]);
  }
  factors_->freqs_cis.resize(d / 2);
}

template <class Real>
complex_rotation<Real>::~complex_rotation() = default;
template <class Real>
complex_rotation<Real>::complex_rotation(complex_rotation&&) noexcept = default;

template <class Real>
void complex_rotation<Real>::at_position(std::int64_t position) {
  using complex = typename complex_of<Real>::type;
  using std::exp;
  for (std::size_t j = 0; j < factors_->theta.size(); ++j) {
    // A·e^{i·m·θ_j}: the attention factor scales the whole complex factor (cos and sin alike).
    factors_->freqs_cis[j] = exp(complex(Real(0), Real(position) * factors_->theta[j])) *
                             complex(params_.attention_factor, Real(0));
  }
}

template <class Real>
std::vector<Real> complex_rotation<Real>::operator()(std::span<const Real> x) const {
  validate_input(params_, x, "x");
  using complex = typename complex_of<Real>::type;
  const int d = params_.rotary_dim;
  std::vector<Real> y(x.begin(), x.end());
  for (int j = 0; j < d / 2; ++j) {
    const auto [a, b] = pair_of(params_.pair, d, j);
    const complex z = complex(x[a], x[b]) * factors_->freqs_cis[j];
    y[a] = z.real();
    y[b] = z.imag();
  }
  return y;
}

template <class Real>
std::vector<Real> rope_complex(std::span<const Real> x, std::int64_t position,
                               const rotary_params<Real>& params) {
  complex_rotation<Real> rotation(params);  // validates params; operator() validates x
  rotation.at_position(position);
  return rotation(x);
}

template class complex_rotation<mp_real>;
template class complex_rotation<double>;
template std::vector<mp_real> rope_complex(std::span<const mp_real>, std::int64_t,
                                           const rotary_params<mp_real>&);
template std::vector<double> rope_complex(std::span<const double>, std::int64_t,
                                          const rotary_params<double>&);

}  // namespace ropecheck::reference
