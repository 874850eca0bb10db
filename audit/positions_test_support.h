// Position sets the audit's in-process tests generate dumps at (dense, sampled and
// decode-block positions): a dense run, a spread 0, 1, 2^(k/3) … 2^20, and a 64-token decode
// block far from zero, where every position shares one |position| bucket.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace ropecheck::audit::test_positions {

inline std::vector<std::int64_t> dense(std::int64_t first, std::int64_t n) {
  std::vector<std::int64_t> p;
  for (std::int64_t m = first; m < first + n; ++m) p.push_back(m);
  return p;
}

inline std::vector<std::int64_t> spread() {
  std::vector<std::int64_t> p = {0, 1};
  for (int k = 3; k <= 60; ++k) {
    const auto m = static_cast<std::int64_t>(std::llround(std::exp2(k / 3.0)));
    if (m > p.back()) p.push_back(m);
  }
  return p;
}

inline std::vector<std::int64_t> decode_block() { return dense(100000, 64); }

}  // namespace ropecheck::audit::test_positions
