// The diagnosis sample (sample.h).
#include "audit/sample.h"

#include <algorithm>
#include <bit>

namespace ropecheck::audit {
namespace {

sampled_vector copy_of(std::int64_t row, std::int64_t position, std::int64_t head, bool failing,
                       std::span<const double> x, std::span<const double> y, std::span<const double> ref) {
  return {row, position, head, failing, {x.begin(), x.end()}, {y.begin(), y.end()}, {ref.begin(), ref.end()}};
}

// The power-of-two bucket of |m|: its bit width (0 for m = 0).
std::size_t bucket_of(std::int64_t m) {
  const auto bits = static_cast<std::uint64_t>(m);
  return static_cast<std::size_t>(std::bit_width(m < 0 ? std::uint64_t{0} - bits : bits));
}

}  // namespace

sample_collector::sample_collector(std::int64_t rows, std::int64_t heads)
    : rows_(rows), heads_(heads), row_count_(std::min<std::int64_t>(rows, 64)),
      head_count_(std::min<std::int64_t>(heads, 4)), bucket_first_(65) {}

bool sample_collector::wants_head(std::int64_t head) const {
  // Heads k·heads/head_count: the one whose index that formula gives for some k.
  const std::int64_t k = (head * head_count_ + heads_ - 1) / heads_;
  return k < head_count_ && k * heads_ / head_count_ == head;
}

bool sample_collector::in_spread(std::int64_t row, std::int64_t head) const {
  if (!wants_head(head) || row_count_ == 0) return false;
  // Is `row` one of row_of(0 … row_count − 1)? The slot just at or above it tells.
  const std::int64_t slot = (row * row_count_ + rows_ - 1) / rows_;
  return slot < row_count_ && row_of(slot) == row;
}

void sample_collector::take(std::int64_t row, std::int64_t position, std::int64_t head, bool failing,
                            std::span<const double> x, std::span<const double> y, std::span<const double> ref) {
  result.vectors.push_back(copy_of(row, position, head, failing, x, y, ref));
}

void sample_collector::row_done(std::int64_t row, std::int64_t position) {
  // Several sample slots can fall on one row of a short dump: the row counts once per slot.
  while (next_ < row_count_ && row_of(next_) == row) {
    result.positions.push_back(position);
    ++next_;
  }
}

void sample_collector::offer_failing(std::int64_t row, std::int64_t position, std::int64_t head,
                                     std::span<const double> x, std::span<const double> y,
                                     std::span<const double> ref) {
  if (in_spread(row, head)) return;
  auto& first = bucket_first_[bucket_of(position)];
  if (!first) {
    first = copy_of(row, position, head, true, x, y, ref);
    return;
  }
  // Reservoir sampling (Vitter's algorithm R) over the failing vectors past each bucket's first.
  ++failing_seen_;
  if (reservoir_.size() < reservoir_size) {
    reservoir_.push_back(copy_of(row, position, head, true, x, y, ref));
    return;
  }
  random_state_ ^= random_state_ << 13, random_state_ ^= random_state_ >> 7, random_state_ ^= random_state_ << 17;
  const auto slot = static_cast<std::int64_t>(random_state_ % static_cast<std::uint64_t>(failing_seen_));
  if (slot < static_cast<std::int64_t>(reservoir_size))
    reservoir_[static_cast<std::size_t>(slot)] = copy_of(row, position, head, true, x, y, ref);
}

void sample_collector::offer_worst(std::int64_t row, std::int64_t position, std::int64_t head, bool failing,
                                   std::span<const double> x, std::span<const double> y,
                                   std::span<const double> ref) {
  worst_ = copy_of(row, position, head, failing, x, y, ref);
}

void sample_collector::finish() {
  const auto held = [&](const sampled_vector& v) {
    return std::find_if(result.vectors.begin(), result.vectors.end(), [&](const sampled_vector& w) {
      return w.row == v.row && w.head == v.head;
    });
  };
  for (auto& first : bucket_first_)
    if (first) result.vectors.push_back(std::move(*first));
  for (auto& v : reservoir_)
    if (held(v) == result.vectors.end()) result.vectors.push_back(std::move(v));
  if (worst_) {
    auto at = held(*worst_);
    if (at == result.vectors.end()) {
      result.vectors.push_back(std::move(*worst_));
      at = result.vectors.end() - 1;
    }
    result.worst = static_cast<std::size_t>(at - result.vectors.begin());
  }
  bucket_first_.clear();
  reservoir_.clear();
  worst_.reset();
}

}  // namespace ropecheck::audit
