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
std::vector<Real> rope_complex(std::span<const Real> x, std::int64_t position,
                               const rotary_params<Real>& params) {
  validate_input(params, x, "x");
  using complex = typename complex_of<Real>::type;
  using std::exp;
  using std::log;
  const int d = params.rotary_dim;
  const Real log_base = log(params.base);
  std::vector<Real> y(x.begin(), x.end());
  for (int j = 0; j < d / 2; ++j) {
    const Real theta = params.explicit_inverse_frequencies.empty()
                           ? exp(Real(-2 * j) / d * log_base)
                           : params.explicit_inverse_frequencies[j];
    // A·e^{i·m·θ_j}: the attention factor scales the whole complex factor (cos and sin alike).
    const complex freqs_cis =
        exp(complex(Real(0), Real(position) * theta)) * complex(params.attention_factor, Real(0));
    const auto [a, b] = pair_of(params.pair, d, j);
    const complex z = complex(x[a], x[b]) * freqs_cis;
    y[a] = z.real();
    y[b] = z.imag();
  }
  return y;
}

template std::vector<mp_real> rope_complex(std::span<const mp_real>, std::int64_t,
                                           const rotary_params<mp_real>&);
template std::vector<double> rope_complex(std::span<const double>, std::int64_t,
                                          const rotary_params<double>&);

}  // namespace ropecheck::reference
