// sample: the head vectors the diagnosis recomputes — up to 64 position rows spread evenly over
// the dump and up to 4 heads of each; and, wherever they lie, the vectors that fail: the first
// failing vector of every power-of-two position bucket, up to 64 more failing vectors drawn
// uniformly (reservoir sampling), and the vector holding the worst output. Each with X, Y and
// the double tier's output. Enough to test an explanation where the audit fails, not only on
// average; cheap to recompute under dozens of recipes. Collected by the judging loop as it
// passes the rows (already converted to double), so the diagnosis never reads X or Y again: a
// memory-mapped dump whose pages the loop released stays released.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace ropecheck::audit {

struct sampled_vector {
  std::int64_t row = 0, position = 0, head = 0;
  bool failing = false;  // holds an output beyond tolerance
  std::vector<double> x, y, ref;  // head_dim values each; ref is the double tier's rotation
};

struct sample {
  std::vector<sampled_vector> vectors;       // x finite (y may not be); the spread first
  std::vector<std::int64_t> positions;       // one per row of the spread
  std::optional<std::size_t> worst;          // the vector holding the worst output
};

class sample_collector {
 public:
  sample_collector(std::int64_t rows, std::int64_t heads);
  bool wants_row(std::int64_t row) const { return next_ < row_count_ && row == row_of(next_); }
  bool wants_head(std::int64_t head) const;
  // One judged head vector of a wanted row (x finite).
  void take(std::int64_t row, std::int64_t position, std::int64_t head, bool failing, std::span<const double> x,
            std::span<const double> y, std::span<const double> ref);
  void row_done(std::int64_t row, std::int64_t position);  // after every head of a wanted row
  // A judged vector with an output beyond tolerance (any row, any head): kept if it is its
  // position bucket's first, or drawn into the reservoir.
  void offer_failing(std::int64_t row, std::int64_t position, std::int64_t head, std::span<const double> x,
                     std::span<const double> y, std::span<const double> ref);
  // The vector that now holds the worst output.
  void offer_worst(std::int64_t row, std::int64_t position, std::int64_t head, bool failing,
                   std::span<const double> x, std::span<const double> y, std::span<const double> ref);
  // Appends the failing and worst vectors the spread does not hold; call once, after the loop.
  void finish();
  sample result;

 private:
  static constexpr std::size_t reservoir_size = 64;
  std::int64_t row_of(std::int64_t i) const { return i * rows_ / row_count_; }
  bool in_spread(std::int64_t row, std::int64_t head) const;
  std::int64_t rows_, heads_, row_count_, head_count_, next_ = 0;
  std::vector<std::optional<sampled_vector>> bucket_first_;  // per bit width of |position|
  std::vector<sampled_vector> reservoir_;
  std::int64_t failing_seen_ = 0;
  std::uint64_t random_state_ = 0x9e3779b97f4a7c15u;  // fixed: the same dump gives the same sample
  std::optional<sampled_vector> worst_;
};

}  // namespace ropecheck::audit
