// Elementwise form, the way Hugging Face writes it: cos/sin expanded to the rotary width
// (cat(freqs, freqs) for half-split, repeat_interleave for adjacent) and a rotate() that
// permutes and negates: rotate_half(x) = [−x₂, x₁]; rotate_every_two(x)[2j, 2j+1] = [−x_{2j+1}, x_{2j}].
#include "reference/real.h"
#include "reference/rope_forms.h"

namespace ropecheck::reference {
namespace {
template <class Real>
std::vector<Real> rotate_half_split(std::span<const Real> x) {
  const std::size_t half = x.size() / 2;
  std::vector<Real> r(x.size());
  for (std::size_t i = 0; i < half; ++i) {
    r[i] = -x[half + i];
    r[half + i] = x[i];
  }
  return r;
}

template <class Real>
std::vector<Real> rotate_adjacent(std::span<const Real> x) {
  std::vector<Real> r(x.size());
  for (std::size_t i = 0; i + 1 < x.size(); i += 2) {
    r[i] = -x[i + 1];
    r[i + 1] = x[i];
  }
  return r;
}
}  // namespace

template <class Real>
std::vector<Real> rope_elementwise(std::span<const Real> x, std::int64_t position,
                                   const rotary_params<Real>& params) {
  validate_input(params, x, "x");
  using std::cos;
  using std::pow;
  using std::sin;
  const int d = params.rotary_dim;
  std::vector<Real> cos_full(d), sin_full(d);
  for (int c = 0; c < d; ++c) {
    const int freq = params.pair == pairing::adjacent ? c / 2 : c % (d / 2);
    const Real angle = Real(position) * (params.explicit_inverse_frequencies.empty()
                                               ? pow(params.base, Real(-2 * freq) / d)
                                               : params.explicit_inverse_frequencies[freq]);
    cos_full[c] = params.attention_factor * cos(angle);  // A scales cos and sin alike
    sin_full[c] = params.attention_factor * sin(angle);
  }
  const auto rotary = x.first(d);
  const std::vector<Real> rotated = params.pair == pairing::adjacent ? rotate_adjacent(rotary)
                                                                     : rotate_half_split(rotary);
  std::vector<Real> y(x.begin(), x.end());
  for (int c = 0; c < d; ++c) y[c] = x[c] * cos_full[c] + rotated[c] * sin_full[c];
  return y;
}

template std::vector<mp_real> rope_elementwise(std::span<const mp_real>, std::int64_t,
                                               const rotary_params<mp_real>&);
template std::vector<double> rope_elementwise(std::span<const double>, std::int64_t,
                                              const rotary_params<double>&);

}  // namespace ropecheck::reference
