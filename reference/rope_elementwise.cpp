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
elementwise_rotation<Real>::elementwise_rotation(const rotary_params<Real>& params)
    : params_(params) {
  validate(params);
  using std::pow;
  const int d = params.rotary_dim;
  for (int freq = 0; freq < d / 2; ++freq) {
    theta_.push_back(params.explicit_inverse_frequencies.empty()
                         ? pow(params.base, Real(-2 * freq) / d)
                         : params.explicit_inverse_frequencies[freq]);
  }
  cos_full_.resize(d);
  sin_full_.resize(d);
}

template <class Real>
void elementwise_rotation<Real>::at_position(std::int64_t position) {
  using std::cos;
  using std::sin;
  const int d = params_.rotary_dim;
  // One cos/sin per frequency, then expanded to the rotary width the way HF does:
  // cat(freqs, freqs) for half-split, repeat_interleave for adjacent.
  for (int freq = 0; freq < d / 2; ++freq) {
    const Real angle = Real(position) * theta_[freq];
    const Real c = params_.attention_factor * cos(angle);  // A scales cos and sin alike
    const Real s = params_.attention_factor * sin(angle);
    for (int k = 0; k < 2; ++k) {
      const int at = params_.pair == pairing::adjacent ? 2 * freq + k : freq + k * (d / 2);
      cos_full_[at] = c;
      sin_full_[at] = s;
    }
  }
}

template <class Real>
std::vector<Real> elementwise_rotation<Real>::operator()(std::span<const Real> x) const {
  validate_input(params_, x, "x");
  const int d = params_.rotary_dim;
  const auto rotary = x.first(d);
  const std::vector<Real> rotated = params_.pair == pairing::adjacent ? rotate_adjacent(rotary)
                                                                      : rotate_half_split(rotary);
  std::vector<Real> y(x.begin(), x.end());
  for (int c = 0; c < d; ++c) y[c] = x[c] * cos_full_[c] + rotated[c] * sin_full_[c];
  return y;
}

template <class Real>
std::vector<Real> rope_elementwise(std::span<const Real> x, std::int64_t position,
                                   const rotary_params<Real>& params) {
  elementwise_rotation<Real> rotation(params);  // validates params; operator() validates x
  rotation.at_position(position);
  return rotation(x);
}

template class elementwise_rotation<mp_real>;
template class elementwise_rotation<double>;
template std::vector<mp_real> rope_elementwise(std::span<const mp_real>, std::int64_t,
                                               const rotary_params<mp_real>&);
template std::vector<double> rope_elementwise(std::span<const double>, std::int64_t,
                                              const rotary_params<double>&);

}  // namespace ropecheck::reference
