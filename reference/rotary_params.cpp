// Validation of rotary_params (rotary_params.h): every reference form checks its inputs here once.
#include "reference/rotary_params.h"

#include <fmt/format.h>

#include "reference/real.h"

namespace ropecheck::reference {
namespace {
template <class Real>
bool is_finite(const Real& v) {
  using std::isfinite;
  using boost::multiprecision::isfinite;
  return isfinite(v);
}
template <class Real>
std::string show(const Real& v) {
  if constexpr (std::is_floating_point_v<Real>) return fmt::format("{}", v);
  else return v.str(20);
}
}  // namespace

template <class Real>
void validate(const rotary_params<Real>& p) {
  if (p.head_dim < 2)
    throw reference_error(fmt::format("head_dim: {} is not >= 2", p.head_dim));
  if (p.rotary_dim < 2 || p.rotary_dim % 2 != 0)
    throw reference_error(fmt::format("rotary_dim: {} is not an even number >= 2", p.rotary_dim));
  if (p.rotary_dim > p.head_dim)
    throw reference_error(
        fmt::format("rotary_dim: {} exceeds head_dim {}", p.rotary_dim, p.head_dim));
  if (!is_finite(p.base) || !(p.base > 1))
    throw reference_error(fmt::format("base: {} is not a finite number > 1", show(p.base)));
  if (!is_finite(p.attention_factor) || !(p.attention_factor > 0))
    throw reference_error(
        fmt::format("attention_factor: {} is not a finite number > 0", show(p.attention_factor)));
  const auto& theta = p.explicit_inverse_frequencies;
  if (!theta.empty() && theta.size() != static_cast<std::size_t>(p.rotary_dim / 2))
    throw reference_error(fmt::format("explicit_inverse_frequencies: {} entries, rotary_dim/2 is {}",
                                      theta.size(), p.rotary_dim / 2));
  for (std::size_t j = 0; j < theta.size(); ++j) {
    if (!is_finite(theta[j]))
      throw reference_error(
          fmt::format("explicit_inverse_frequencies[{}]: {} is not finite", j, show(theta[j])));
  }
}

template <class Real>
void validate_input(const rotary_params<Real>& p, std::span<const Real> x, const char* name) {
  validate(p);
  if (x.size() != static_cast<std::size_t>(p.head_dim))
    throw reference_error(
        fmt::format("{}: has {} elements, head_dim is {}", name, x.size(), p.head_dim));
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!is_finite(x[i]))
      throw reference_error(fmt::format("{}[{}]: {} is not finite", name, i, show(x[i])));
  }
}

template void validate(const rotary_params<mp_real>&);
template void validate(const rotary_params<double>&);
template void validate_input(const rotary_params<mp_real>&, std::span<const mp_real>, const char*);
template void validate_input(const rotary_params<double>&, std::span<const double>, const char*);

}  // namespace ropecheck::reference
