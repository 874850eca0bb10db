// The one-rounding kernels (fast/precise_rotation.h): their store is ONE nearest-even rounding
// of the double result, checked against numeric/'s direct double→storage rounding
// (round_to_storage, an independent encoder) on values built to sit next to rounding
// midpoints, where a float32 intermediate would round twice; on every SIMD target. Accuracy
// against the reference is the property `rounded_once_within_half_ulp` (properties/).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <string>

#include "fast/kernel_test_support.h"
#include "fast/precise_rotation.h"
#include "fast/simd_target.h"

namespace ropecheck::fast {
namespace {

using namespace ropecheck::fast::testing;

// Doubles in [1, 2) next to a midpoint of the p-bit grid: the midpoint itself (a tie), and
// the midpoint moved by 1 ulp of double, by 2^-40 and by 2^-30 relative, either way, plus some
// random doubles. Rounding them to float32 first moves most off-tie values onto the tie.
std::vector<double> near_midpoints(int p, std::uint32_t seed, int count) {
  std::mt19937_64 rng(seed);
  std::vector<double> v;
  const std::uint64_t grid = std::uint64_t{1} << (p - 1);
  for (int i = 0; i < count; ++i) {
    const double k = static_cast<double>(rng() % grid);
    const double mid = 1 + std::ldexp(2 * k + 1, -p);
    for (double d : {0.0, 0x1p-52, -0x1p-52, 0x1p-40, -0x1p-40, 0x1p-30, -0x1p-30}) v.push_back(mid * (1 + d));
    v.push_back(1 + std::ldexp(static_cast<double>(rng() >> 12), -52));
  }
  return v;
}

TEST(round_to_odd_float, then_nearest_even_is_one_rounding) {
  for (dtype storage : storage_dtypes()) {
    const int p = precision_bits(storage);
    for (double base : near_midpoints(p, 7, 300)) {
      // Normal, subnormal and overflowing (fp8: saturating) binades of every storage dtype,
      // both signs.
      for (int e : {0, -3, 7, 8, 9, -6, -7, -9, -10, -14, -16, -17, -20, -24, -25, 15, 16, -126,
                    -130, -140, -149, -150, 127, 128}) {
        for (double sign : {1.0, -1.0}) {
          const double y = sign * std::ldexp(base, e);
          std::byte out[4];
          detail::store_rounded_once(storage, out, 0, y);
          const double stored = load_storage_element(storage, out);
          const double expected = round_to_storage(storage, y);
          EXPECT_EQ(std::bit_cast<std::uint64_t>(stored), std::bit_cast<std::uint64_t>(expected))
              << to_string(storage) << " y = " << std::hexfloat << y;
        }
      }
    }
    std::byte out[4];
    detail::store_rounded_once(storage, out, 0, std::nan(""));
    EXPECT_TRUE(std::isnan(load_storage_element(storage, out)));
  }
}

// End to end: at position 0 (cos = 1, sin = 0) with attention factor A, each output is the
// double fl(x·A) rounded once; x = ±2^e makes that exactly x·A, and A sits next to a midpoint.
// 64 rotated dims: whole vector steps on every target (the vector store path).
class precise_on_every_target : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { ASSERT_TRUE(use_simd_target(GetParam()).ok()); }
  void TearDown() override { ASSERT_TRUE(use_simd_target("best").ok()); }
};

TEST_P(precise_on_every_target, outputs_are_rounded_once) {
  constexpr std::int64_t d = 64, tokens = 3;
  const std::vector<std::int64_t> positions(tokens, 0);
  for (const char* name : {"precise_simd", "precise_scalar"}) {
    const kernel_info& k = *find_kernel(name);
    for (dtype storage : storage_dtypes()) {
      if (!k.supports(storage)) continue;
      const int p = precision_bits(storage);
      // From the dtype's smallest subnormal (no input is zero, whose sign is convention) to
      // its top binade: with A up to 2, outputs overflow — fp8 saturates at ±max, and its
      // store is checked against round_to_storage's saturating encoder.
      const float_format format = format_of(storage);
      const int min_exponent = format.min_normal_exponent - (format.precision_bits - 1);
      const int max_exponent = format.max_exponent();
      buffer x(storage, tokens * d);
      for (std::int64_t i = 0; i < x.count; ++i) {
        const int e = min_exponent + static_cast<int>((i * 37) % (max_exponent - min_exponent + 1));
        x.set(i, (i % 3 == 0 ? -1.0f : 1.0f) * std::ldexp(1.0f, e));
      }
      std::int64_t saturated = 0;
      for (double a : near_midpoints(p, 11, 12)) {
        rope_frequencies f = unscaled_frequencies(make_spec(d, d, 1e4, pairing::half_split));
        f.attention_factor = a;
        const rope_angles angles = prepare_or_die(k, f, 0);
        for (pairing pair : pairings()) {
          buffer y(storage, x.count);
          const rope_call c = make_call({storage, pair, d, d}, std::span(positions.data(), tokens),
                                        packed_tensor(x.data(), y.data(), 1, d));
          ASSERT_TRUE(k.apply(c, angles).ok());
          for (std::int64_t i = 0; i < x.count; ++i) {
            const double expected = round_to_storage(storage, static_cast<double>(x.get(i)) * a);
            const double got = y.get(i);
            saturated += is_float8(storage) &&
                         std::fabs(static_cast<double>(x.get(i)) * a) > format.max_finite();
            ASSERT_EQ(std::bit_cast<std::uint64_t>(got), std::bit_cast<std::uint64_t>(expected))
                << GetParam() << " " << name << " " << to_string(storage) << " "
                << to_string(pair) << " x = " << x.get(i) << " A = " << std::hexfloat << a;
          }
        }
      }
      if (is_float8(storage)) {
        EXPECT_GT(saturated, 0) << name << ": fp8 saturation not exercised";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(fast, precise_on_every_target,
                         ::testing::ValuesIn([] {
                           auto t = available_simd_targets();
                           t.push_back("best");
                           return t;
                         }()),
                         [](const auto& info) { return info.param; });

// |m·θ_j| ≥ 2^45 is beyond the reduction's exact range. prepare refuses θ_j > 2^13, so every
// int32 position with an accepted θ_j stays below it (2^31·2^13 = 2^44): accepted at the edge.
TEST(precise_kernels, accept_every_position_prepare_allows) {
  for (const char* name : {"precise_simd", "precise_scalar"}) {
    const kernel_info& k = *find_kernel(name);
    EXPECT_FALSE(k.prepare(rope_frequencies{{1.0, 0x1p14}, 1.0}, 0).ok()) << name;
    const rope_angles angles = prepare_or_die(k, rope_frequencies{{1.0, 0x1p13}, 1.0}, 0);
    buffer x = random_buffer(dtype::float32, 4, 3), y(dtype::float32, 4);
    const std::vector<std::int64_t> positions{std::int64_t{1} << 31};
    const rope_call c = make_call({dtype::float32, pairing::half_split, 4, 4}, std::span(positions.data(), 1),
                                  packed_tensor(x.data(), y.data(), 1, 4));
    const status s = k.apply(c, angles);
    EXPECT_TRUE(s.ok()) << name << ": " << s.message;
  }
}

}  // namespace
}  // namespace ropecheck::fast
