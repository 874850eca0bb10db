// The diagnosis sample (sample.h).
#include "audit/sample.h"

#include <algorithm>
#include <cmath>

namespace ropecheck::audit {

sample take_sample(const audit_input& in, const reference::double_tier& tier) {
  sample s;
  const auto rows = static_cast<std::int64_t>(in.positions.size());
  const std::int64_t row_count = std::min<std::int64_t>(rows, 64);
  const std::int64_t head_count = std::min<std::int64_t>(in.heads, 4);
  for (std::int64_t i = 0; i < row_count; ++i) s.positions.push_back(in.positions[i * rows / row_count]);
  const int d = in.spec.head_dim;
  for (std::int64_t i = 0; i < row_count; ++i) {
    const std::int64_t row = i * rows / row_count;
    for (std::int64_t k = 0; k < head_count; ++k) {
      const std::int64_t h = k * in.heads / head_count;
      sampled_vector v{row, in.positions[row], std::vector<double>(d), std::vector<double>(d), std::vector<double>(d)};
      const std::int64_t first = (row * in.heads + h) * d;
      to_float64(in.x, first, v.x, in.x_file);
      to_float64(in.y, first, v.y, in.y_file);
      if (std::any_of(v.x.begin(), v.x.end(), [](double e) { return !std::isfinite(e); })) continue;
      tier.rotate(v.x, v.position, v.ref);
      s.vectors.push_back(std::move(v));
    }
  }
  return s;
}

}  // namespace ropecheck::audit
