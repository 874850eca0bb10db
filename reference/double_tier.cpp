#include "reference/double_tier.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "reference/frequencies.h"
#include "reference/real.h"
#include "reference/rotary_params.h"

namespace ropecheck::reference {

double_tier::double_tier(const rope_spec& spec, std::span<const std::int64_t> positions,
                         int threads)
    : head_dim_(spec.head_dim), rotary_dim_(spec.rotary_dim), pair_(spec.pair) {
  // Length-dependent scalings see max position + 1 unless the spec gives a sequence_length.
  std::int64_t length = 0;
  for (std::int64_t m : positions) length = std::max(length, m + 1);
  const auto params = params_from_spec<mp_real>(spec, length);
  const std::vector<mp_real> theta = params.explicit_inverse_frequencies.empty()
                                         ? inverse_frequencies(params.rotary_dim, params.base)
                                         : params.explicit_inverse_frequencies;
  const mp_real factor = params.attention_factor;
  attention_factor_ = factor.convert_to<double>();

  std::vector<std::int64_t> distinct(positions.begin(), positions.end());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  for (std::size_t r = 0; r < distinct.size(); ++r) row_of_position_.emplace(distinct[r], r);

  const std::size_t pairs = theta.size();
  cos_sin_.resize(distinct.size() * pairs * 2);
  auto fill_rows = [&](std::size_t first, std::size_t last) {
    mp_real angle, c, s;
    for (std::size_t r = first; r < last; ++r) {
      for (std::size_t j = 0; j < pairs; ++j) {
        angle = mp_real(distinct[r]) * theta[j];
        mpfr_sin_cos(s.backend().data(), c.backend().data(), angle.backend().data(), MPFR_RNDN);
        if (factor != 1) {  // A·cos and A·sin at 266 bits, then the one rounding to double
          c *= factor;
          s *= factor;
        }
        cos_sin_[(r * pairs + j) * 2] = c.convert_to<double>();  // mpfr_get_d, round to nearest
        cos_sin_[(r * pairs + j) * 2 + 1] = s.convert_to<double>();
      }
    }
  };
  const std::size_t workers =
      std::clamp<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), 1,
                              std::max<std::size_t>(distinct.size() / 256, 1));
  std::vector<std::thread> pool;
  const std::size_t chunk = (distinct.size() + workers - 1) / workers;
  for (std::size_t w = 1; w < workers; ++w)
    pool.emplace_back(fill_rows, std::min(w * chunk, distinct.size()),
                      std::min((w + 1) * chunk, distinct.size()));
  fill_rows(0, std::min(chunk, distinct.size()));
  for (auto& t : pool) t.join();
  mpfr_free_cache();  // MPFR keeps per-thread constant caches (π); release this thread's
}

const double* double_tier::row(std::int64_t position) const {
  const auto it = row_of_position_.find(position);
  if (it == row_of_position_.end())
    throw reference_error(fmt::format("position: {} is not in the double tier's table", position));
  return cos_sin_.data() + it->second * static_cast<std::size_t>(rotary_dim_);
}

void double_tier::rotate(std::span<const double> x, std::int64_t position, std::span<double> y,
                         rotation_direction direction) const {
  if (x.size() != static_cast<std::size_t>(head_dim_) || y.size() != x.size())
    throw reference_error(fmt::format("x: has {} elements (y {}), head_dim is {}", x.size(),
                                      y.size(), head_dim_));
  const double* cs = row(position);
  const double sign = direction == rotation_direction::forward ? 1.0 : -1.0;
  std::copy(x.begin() + rotary_dim_, x.end(), y.begin() + rotary_dim_);
  for (int j = 0; j < rotary_dim_ / 2; ++j) {
    const auto [a, b] = pair_of(pair_, rotary_dim_, j);
    const double c = cs[2 * j];
    const double s = sign * cs[2 * j + 1];
    const double xa = x[a];
    const double xb = x[b];
    y[a] = xa * c - xb * s;
    y[b] = xb * c + xa * s;
  }
}

}  // namespace ropecheck::reference
