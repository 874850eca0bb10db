// The cos/sin rows every kernel rotates by (cos_sin.h): the AVX2 and portable paths agree bit
// for bit, and every value is the correctly rounded float of an independent long double
// cosl/sinl up to that oracle's own angle error — near quarter turns too, where sin or cos
// is tiny and only an accurate reduction keeps its relative error small.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "fast/cos_sin.h"
#include "fast/cos_sin_polynomial.h"
#include "fast/frequencies.h"
#include "fast/kernels.h"
#include "fast/rope_angles.h"
#include "fast/simd_target.h"

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

// Each SIMD target this CPU runs (AVX2 with 4 double lanes, AVX-512 with 8), capped by
// use_simd_target as the benchmarks and `--simd-target` do, gives the portable path's bits:
// 64 pairs take the row-wise loop, 7 the flattened one on AVX-512 and the overlapped last
// group on AVX2, 3 and 1 the flattened one everywhere.
TEST(cos_sin, every_simd_target_agrees_with_the_portable_path) {
  for (const std::string& target : available_simd_targets()) {
    ASSERT_TRUE(use_simd_target(target).ok()) << target;
    for (std::int64_t pairs : {64, 9, 7, 3, 1}) {
      const auto theta = test_theta(pairs);
      const auto a = rows_of(false, test_positions(), theta, 1.0986122886681098);
      const auto b = rows_of(true, test_positions(), theta, 1.0986122886681098);
      for (std::size_t i = 0; i < a.size(); ++i) {
        ASSERT_EQ(std::bit_cast<std::uint32_t>(a[i]), std::bit_cast<std::uint32_t>(b[i]))
            << target << " pairs " << pairs << " value " << i;
      }
    }
  }
  ASSERT_TRUE(use_simd_target("best").ok());
}

// The largest angle a kernel can compute (cos_sin.h): |m| <= 2^31 (kernels.cpp; the call
// checks refuse 2^31 + 1, call_checks_test.cpp) times |θ_j| <= 2^13 (rope_angles::prepare
// refuses more, below) is 2^44, inside the reduction's exact range.
TEST(cos_sin, the_largest_kernel_angle_is_below_the_reduction_limit) {
  const double largest = static_cast<double>(on_the_fly_position_limit) * max_inverse_frequency;
  EXPECT_EQ(largest, 0x1p44);
  EXPECT_LT(largest, detail::cos_sin_constants::reduction_limit);
}

// Up to that largest angle the values are still correctly rounded up to the oracle's error.
// θ with few significant bits, so m·θ is exact in long double and the oracle has no angle
// error; glibc's cosl/sinl reduce 2^44-sized arguments exactly.
TEST(cos_sin, values_at_the_largest_kernel_angles_are_correctly_rounded) {
  const std::vector<std::int64_t> positions{std::int64_t{1} << 31, -(std::int64_t{1} << 31),
                                            (std::int64_t{1} << 31) - 1, 2147480000, 1 << 24};
  const std::vector<double> theta{0x1p13, 8191.875, 5741.25, 1.0, 0.75};
  const auto pairs = static_cast<std::int64_t>(theta.size());
  for (bool portable : {false, true}) {
    const auto rows = rows_of(portable, positions, theta, 1.0);
    for (std::size_t i = 0; i < positions.size(); ++i) {
      for (std::int64_t j = 0; j < pairs; ++j) {
        const long double angle = static_cast<long double>(positions[i]) * theta[static_cast<std::size_t>(j)];
        const long double exact[2] = {cosl(angle), sinl(angle)};
        for (int which = 0; which < 2; ++which) {
          const float got = rows[i * 2 * static_cast<std::size_t>(pairs) + static_cast<std::size_t>(which * pairs + j)];
          const float nearest = static_cast<float>(exact[which]);
          const long double ulp =
              std::nextafter(std::fabs(nearest), std::numeric_limits<float>::infinity()) -
              std::fabs(nearest);
          EXPECT_LE(std::fabs(static_cast<long double>(got) - exact[which]), ulp / 2 + 0x1p-39L)
              << (portable ? "portable " : "simd ") << (which == 0 ? "cos" : "sin")
              << " m = " << positions[i] << " θ = " << theta[static_cast<std::size_t>(j)];
        }
      }
    }
  }
}

// At and beyond the limit (and for a non-finite m·θ) both paths give NaN rather than a value
// from an inexact reduction; no kernel call gets there.
TEST(cos_sin, angles_at_or_beyond_the_limit_give_nan) {
  const std::vector<std::int64_t> positions{std::int64_t{1} << 31, 1};
  const std::vector<double> theta{0x1p14, std::numeric_limits<double>::infinity(), 1e300, 0.5};
  for (bool portable : {false, true}) {
    const auto rows = rows_of(portable, positions, theta, 1.0);
    for (std::size_t j = 0; j < 3; ++j) {
      EXPECT_TRUE(std::isnan(rows[j])) << "cos, θ = " << theta[j];
      EXPECT_TRUE(std::isnan(rows[4 + j])) << "sin, θ = " << theta[j];
    }
    EXPECT_FALSE(std::isnan(rows[3]));  // m = 2^31, θ = 0.5: 2^30, in range
    EXPECT_FALSE(std::isnan(rows[8]));  // m = 1, θ = 2^14: in range
  }
}

// rope_angles::prepare refuses an inverse frequency above 2^13 for every kernel, and a kernel
// given the largest frequency rotates the largest position it accepts without NaN.
TEST(cos_sin, prepare_refuses_inverse_frequencies_above_the_limit) {
  for (const kernel_info& kernel : kernel_registry()) {
    rope_frequencies f{{0.5, std::nextafter(max_inverse_frequency, 1e300)}, 1.0};
    const auto refused = kernel.prepare(f, 4);
    ASSERT_FALSE(refused.ok()) << kernel.name;
    EXPECT_EQ(refused.state.code, status_code::invalid_argument) << kernel.name;
    EXPECT_NE(refused.state.message.find("inverse_frequencies[1]"), std::string::npos)
        << refused.state.message;
    f.inverse_frequencies[1] = -std::nextafter(max_inverse_frequency, 1e300);
    EXPECT_FALSE(kernel.prepare(f, 4).ok()) << kernel.name;
    f.inverse_frequencies[1] = max_inverse_frequency;
    ASSERT_TRUE(kernel.prepare(f, 4).ok()) << kernel.name;
  }
  const kernel_info* kernel = find_kernel("on_the_fly_simd");
  ASSERT_NE(kernel, nullptr);
  const std::vector<float> x{1.0f, 0.5f, -0.25f, 2.0f};
  std::vector<float> y(4);
  const std::vector<std::int64_t> positions{std::int64_t{1} << 31};
  rope_frequencies f{{max_inverse_frequency, 1.0}, 1.0};
  auto angles = kernel->prepare(f, 0);
  ASSERT_TRUE(angles.ok());
  rope_call call = make_call(call_shape{dtype::float32, pairing::half_split, 4, 4}, positions,
                                   packed_tensor(x.data(), y.data(), 1, 4));
  ASSERT_TRUE(kernel->apply(call, *angles.value).ok());
  for (float v : y) EXPECT_TRUE(std::isfinite(v)) << v;
}

}  // namespace
}  // namespace ropecheck::fast
