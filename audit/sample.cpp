// The diagnosis sample (sample.h).
#include "audit/sample.h"

#include <algorithm>

namespace ropecheck::audit {

sample_collector::sample_collector(std::int64_t rows, std::int64_t heads)
    : rows_(rows), heads_(heads), row_count_(std::min<std::int64_t>(rows, 64)),
      head_count_(std::min<std::int64_t>(heads, 4)) {}

bool sample_collector::wants_head(std::int64_t head) const {
  // Heads k·heads/head_count: the one whose index that formula gives for some k.
  const std::int64_t k = (head * head_count_ + heads_ - 1) / heads_;
  return k < head_count_ && k * heads_ / head_count_ == head;
}

void sample_collector::take(std::int64_t row, std::int64_t position, std::span<const double> x,
                            std::span<const double> y, std::span<const double> ref) {
  result.vectors.push_back({row, position, {x.begin(), x.end()}, {y.begin(), y.end()}, {ref.begin(), ref.end()}});
}

void sample_collector::row_done(std::int64_t row, std::int64_t position) {
  // Several sample slots can fall on one row of a short dump: the row counts once per slot.
  while (next_ < row_count_ && row_of(next_) == row) {
    result.positions.push_back(position);
    ++next_;
  }
}

}  // namespace ropecheck::audit
