// The cos/sin rows every kernel rotates by (cos_sin.h): the AVX2 and portable paths agree bit
// for bit, and every value is the correctly rounded float of an independent long double
// cosl/sinl up to that oracle's own angle error — near quarter turns too, where sin or cos
// is tiny and only an accurate reduction keeps its relative error small.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <vector>

#include "fast/cos_sin.h"
#include "fast/frequencies.h"

namespace ropecheck::fast {
namespace {

// 0, ±1, 2^k ± 1 up to 2^24, and numerators of the continued-fraction convergents of π/2
// (m·1 rad lands 3e-5 .. 4e-8 rad from a quarter turn: 355, 52174, 573204, 5419351, ...).
std::vector<std::int64_t> test_positions() {
  std::set<std::int64_t> p{0, 1, -1, 11, 344, 355, 51819, 52174, 260515, 573204, 4846147, 5419351};
  for (int k = 1; k <= 24; ++k) {
    for (std::int64_t d : {-1, 0, 1}) p.insert((std::int64_t{1} << k) + d);
  }
  p.insert(-5419351);
  return {p.begin(), p.end()};
}

std::vector<double> test_theta(std::int64_t pairs) {
  rope_spec spec;
  spec.head_dim = static_cast<int>(2 * pairs);
  spec.rotary_dim = spec.head_dim;
  spec.base = 1e6;
  return inverse_frequencies(spec);
}

std::vector<float> rows_of(bool portable, const std::vector<std::int64_t>& positions,
                           const std::vector<double>& theta, double factor) {
  const auto count = static_cast<std::int64_t>(positions.size());
  const auto pairs = static_cast<std::int64_t>(theta.size());
  std::vector<float> rows(static_cast<std::size_t>(count * 2 * pairs));
  (portable ? fill_cos_sin_rows_portable : fill_cos_sin_rows)(positions.data(), count,
                                                               theta.data(), pairs, factor,
                                                               rows.data());
  return rows;
}

TEST(cos_sin, avx2_and_portable_paths_agree_bit_for_bit) {
  // 64 pairs take the row-wise vector loop, 3 pairs the flattened one (lanes span rows).
  for (std::int64_t pairs : {64, 3, 1}) {
    for (double factor : {1.0, 1.0986122886681098}) {
      const auto theta = test_theta(pairs);
      const auto a = rows_of(false, test_positions(), theta, factor);
      const auto b = rows_of(true, test_positions(), theta, factor);
      for (std::size_t i = 0; i < a.size(); ++i) {
        ASSERT_EQ(std::bit_cast<std::uint32_t>(a[i]), std::bit_cast<std::uint32_t>(b[i]))
            << "pairs " << pairs << " value " << i << ": " << a[i] << " vs " << b[i];
      }
    }
  }
}

// The oracle: m·θ in long double (|m| <= 2^24 and 53-bit θ: error <= 2^-64·|m·θ| <= 2^-40
// rad), cosl/sinl. A value passes when it is within half a float ulp of the oracle plus that
// angle error plus the double stages' few 2^-53 — i.e. correctly rounded up to the
// oracle's own uncertainty; the old float(m)·float(θ) recipe misses by up to ~1%.
TEST(cos_sin, values_are_correctly_rounded_up_to_the_oracle_error) {
  const std::int64_t pairs = 64;
  const auto theta = test_theta(pairs);
  const auto positions = test_positions();
  const auto rows = rows_of(false, positions, theta, 1.0);
  const long double slack = 0x1p-39L;
  long double worst_ulps = 0;
  for (std::size_t i = 0; i < positions.size(); ++i) {
    for (std::int64_t j = 0; j < pairs; ++j) {
      const long double angle = static_cast<long double>(positions[i]) * theta[j];
      const long double exact[2] = {cosl(angle), sinl(angle)};
      for (int which = 0; which < 2; ++which) {
        const float got = rows[i * 2 * pairs + which * pairs + j];
        const float nearest = static_cast<float>(exact[which]);
        const long double ulp =
            std::nextafter(std::fabs(nearest), std::numeric_limits<float>::infinity()) -
            std::fabs(nearest);
        const long double error = std::fabs(static_cast<long double>(got) - exact[which]);
        worst_ulps = std::max(worst_ulps, error / ulp);
        EXPECT_LE(error, ulp / 2 + slack)
            << (which == 0 ? "cos" : "sin") << " m = " << positions[i] << " j = " << j
            << ": " << got << " vs " << static_cast<double>(exact[which]);
      }
    }
  }
  EXPECT_LT(worst_ulps, 0.5001L);
}

// Attention factor A multiplies in double before the one rounding to float.
TEST(cos_sin, attention_factor_scales_before_the_rounding) {
  const auto theta = test_theta(8);
  const std::vector<std::int64_t> positions{7, 4096, 5419351};
  const double factor = 1.0986122886681098;
  const auto rows = rows_of(false, positions, theta, factor);
  for (std::size_t i = 0; i < positions.size(); ++i) {
    for (std::size_t j = 0; j < theta.size(); ++j) {
      const long double angle = static_cast<long double>(positions[i]) * theta[j];
      const long double expected = cosl(angle) * factor;
      const float got = rows[i * 16 + j];
      EXPECT_NEAR(static_cast<double>(got), static_cast<double>(expected),
                  std::ldexp(std::fabs(static_cast<double>(expected)), -24) + 0x1p-39);
    }
  }
}

}  // namespace
}  // namespace ropecheck::fast
