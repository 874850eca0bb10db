// The double tier (double_tier.h, docs/double-tier.md): correctly rounded cos/sin tables and
// the rotation in double.
#include "reference/double_tier.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "reference/cos_sin_table.h"
#include "reference/frequencies.h"
#include "reference/real.h"
#include "reference/rope_forms.h"
#include "reference/rotary_params.h"

namespace ropecheck::reference {

double_tier::double_tier(const rope_spec& spec, std::span<const std::int64_t> positions,
                         int threads)
    : head_dim_(spec.head_dim), rotary_dim_(spec.rotary_dim), pair_(spec.pair) {
  // Length-dependent scalings see max position + 1 unless the spec gives a sequence_length.
  std::int64_t length = 0;
  for (std::int64_t m : positions) length = std::max(length, m + 1);
  const auto params = params_from_spec<mp_real>(spec, length);
  const std::vector<mp_real> plain_theta =
      params.explicit_inverse_frequencies.empty()
          ? reference::inverse_frequencies(params.rotary_dim, params.base)
          : params.explicit_inverse_frequencies;
  // A stream layout: pair j turns by its stream's position at θ_{f(j)} (rope_streams.cpp).
  std::vector<mp_real> theta = plain_theta;
  if (spec.streams.multi()) {
    streams_ = position_stream_count(spec.streams);
    for (int j = 0; j < rotary_dim_ / 2; ++j) {
      pair_stream_.push_back(position_stream(spec.streams, rotary_dim_, j));
      theta[static_cast<std::size_t>(j)] =
          plain_theta[static_cast<std::size_t>(stream_frequency_index(spec.streams, rotary_dim_, j))];
    }
  }
  const mp_real factor = params.attention_factor;
  attention_factor_ = factor.convert_to<double>();
  inverse_frequencies_.reserve(theta.size());
  for (const mp_real& t : theta) inverse_frequencies_.push_back(t.convert_to<double>());

  std::vector<std::int64_t> distinct(positions.begin(), positions.end());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  row_of_position_.reserve(distinct.size());
  for (std::size_t r = 0; r < distinct.size(); ++r) row_of_position_.emplace(distinct[r], r);
  cos_sin_.resize(distinct.size() * theta.size() * 2);
  table_stats_ = fill_cos_sin_table(distinct, theta, factor, cos_sin_, threads);
}

double_tier::double_tier(const rope_spec& spec, double attention_factor,
                         std::vector<double> inverse_frequencies,
                         std::span<const std::int64_t> distinct_positions,
                         std::vector<double> cos_sin, const cos_sin_table_stats& stats)
    : head_dim_(spec.head_dim),
      rotary_dim_(spec.rotary_dim),
      pair_(spec.pair),
      attention_factor_(attention_factor),
      inverse_frequencies_(std::move(inverse_frequencies)),
      cos_sin_(std::move(cos_sin)),
      table_stats_(stats) {
  row_of_position_.reserve(distinct_positions.size());
  for (std::size_t r = 0; r < distinct_positions.size(); ++r)
    row_of_position_.emplace(distinct_positions[r], r);
}

const double* double_tier::row(std::int64_t position) const {
  const auto it = row_of_position_.find(position);
  if (it == row_of_position_.end())
    throw reference_error(fmt::format("position: {} is not in the double tier's table", position));
  return cos_sin_.data() + it->second * static_cast<std::size_t>(rotary_dim_);
}

void double_tier::stream_cos_sin(std::span<const std::int64_t> positions, std::span<double> out) const {
  if (static_cast<int>(positions.size()) != streams_ || out.size() != static_cast<std::size_t>(rotary_dim_))
    throw reference_error(fmt::format("stream_cos_sin: {} positions for {} streams, a row of {} for "
                                      "rotary_dim {}", positions.size(), streams_, out.size(), rotary_dim_));
  if (streams_ == 1) {
    const double* r = row(positions[0]);
    std::copy(r, r + rotary_dim_, out.begin());
    return;
  }
  const double* rows[4] = {};  // at most 4 streams (ggml's IMROPE: t, h, w, e)
  for (int s = 0; s < streams_; ++s) rows[s] = row(positions[static_cast<std::size_t>(s)]);
  for (int j = 0; j < rotary_dim_ / 2; ++j) {
    const double* r = rows[pair_stream_[static_cast<std::size_t>(j)]];
    out[static_cast<std::size_t>(2 * j)] = r[2 * j];
    out[static_cast<std::size_t>(2 * j + 1)] = r[2 * j + 1];
  }
}

void double_tier::rotate(std::span<const double> x, std::int64_t position, std::span<double> y,
                         rotation_direction direction) const {
  rotate_by(x, row(position), direction == rotation_direction::forward ? 1.0 : -1.0, y);
}

void double_tier::rotate(std::span<const double> x, std::span<const double> cos_sin_row,
                         std::span<double> y) const {
  if (cos_sin_row.size() != static_cast<std::size_t>(rotary_dim_))
    throw reference_error(fmt::format("cos_sin_row: has {} elements, rotary_dim is {}",
                                      cos_sin_row.size(), rotary_dim_));
  rotate_by(x, cos_sin_row.data(), 1.0, y);
}

void double_tier::rotate_by(std::span<const double> x, const double* cs, double sign,
                            std::span<double> y) const {
  if (x.size() != static_cast<std::size_t>(head_dim_) || y.size() != x.size())
    throw reference_error(fmt::format("x: has {} elements (y {}), head_dim is {}", x.size(),
                                      y.size(), head_dim_));
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
