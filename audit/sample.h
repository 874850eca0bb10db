// sample: the head vectors the diagnosis recomputes — up to 64 position rows spread evenly over
// the dump and up to 4 heads of each, with X, Y and the double tier's output. Enough to test an
// explanation; cheap to recompute under dozens of recipes. Collected by the judging loop as it
// passes those rows (already converted to double), so the diagnosis never reads X or Y again:
// a memory-mapped dump whose pages the loop released stays released.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ropecheck::audit {

struct sampled_vector {
  std::int64_t row = 0, position = 0;
  std::vector<double> x, y, ref;  // head_dim values each; ref is the double tier's rotation
};

struct sample {
  std::vector<sampled_vector> vectors;       // x finite (y may not be)
  std::vector<std::int64_t> positions;       // one per sampled row
};

class sample_collector {
 public:
  sample_collector(std::int64_t rows, std::int64_t heads);
  bool wants_row(std::int64_t row) const { return next_ < row_count_ && row == row_of(next_); }
  bool wants_head(std::int64_t head) const;
  // One judged head vector of a wanted row (x finite).
  void take(std::int64_t row, std::int64_t position, std::span<const double> x, std::span<const double> y,
            std::span<const double> ref);
  void row_done(std::int64_t row, std::int64_t position);  // after every head of a wanted row
  sample result;

 private:
  std::int64_t row_of(std::int64_t i) const { return i * rows_ / row_count_; }
  std::int64_t rows_, heads_, row_count_, head_count_, next_ = 0;
};

}  // namespace ropecheck::audit
