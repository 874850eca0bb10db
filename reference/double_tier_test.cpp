// The double tier stays within its documented bound, 3·2^-53 × pair norm, of the 256-bit forms.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "reference/double_tier.h"
#include "reference/rope_forms.h"
#include "reference/test_support.h"

namespace ropecheck::reference {
namespace {

struct tier_case {
  int head_dim;
  int rotary_dim;
  double base;
  pairing pair;
};

class DoubleTier : public ::testing::TestWithParam<tier_case> {};

TEST_P(DoubleTier, WithinItsBoundOfTheFullPrecisionForms) {
  const auto c = GetParam();
  const rope_spec spec{c.head_dim, c.rotary_dim, c.base, c.pair, "test"};
  std::vector<std::int64_t> positions = {0, 1, 2, 3, 1023, 1025, (1 << 20) + 1, (1 << 24) - 1,
                                         (1LL << 31) - 1, -7};
  std::mt19937_64 rng(c.head_dim + c.rotary_dim);
  std::uniform_int_distribution<std::int64_t> any(0, (1LL << 31) - 1);
  for (int i = 0; i < 20; ++i) positions.push_back(any(rng));
  const double_tier tier(spec, positions);
  const auto params = params_from_spec<mp_real>(spec);

  double worst_over_bound = 0;
  for (std::int64_t m : positions) {
    const auto x_mp = testing::random_vector(rng, c.head_dim);
    std::vector<double> x(c.head_dim), y(c.head_dim);
    for (int i = 0; i < c.head_dim; ++i) x[i] = x_mp[i].convert_to<double>();  // exact
    tier.rotate(x, m, y);
    const auto exact = rope_complex<mp_real>(x_mp, m, params);
    for (int j = 0; j < c.rotary_dim / 2; ++j) {
      const auto [a, b] = pair_of(c.pair, c.rotary_dim, j);
      const mp_real pair_norm = sqrt(x_mp[a] * x_mp[a] + x_mp[b] * x_mp[b]);
      for (int k : {a, b}) {
        const double err = mp_real(abs(mp_real(y[k]) - exact[k]) / pair_norm).convert_to<double>();
        worst_over_bound = std::max(worst_over_bound, err / double_tier_pair_error_bound);
      }
    }
    for (int k = c.rotary_dim; k < c.head_dim; ++k) EXPECT_EQ(y[k], x[k]);
  }
  EXPECT_LE(worst_over_bound, 1.0);
  // A bound far above what is reached would catch nothing: the tier must come near it.
  EXPECT_GE(worst_over_bound, 0.1);
  RecordProperty("worst_over_bound", std::to_string(worst_over_bound));
}

TEST_P(DoubleTier, InverseDirectionUndoesForward) {
  const auto c = GetParam();
  const rope_spec spec{c.head_dim, c.rotary_dim, c.base, c.pair, "test"};
  const std::vector<std::int64_t> positions = {5, 100000, (1LL << 31) - 1};
  const double_tier tier(spec, positions);
  std::mt19937_64 rng(3);
  for (std::int64_t m : positions) {
    const auto x_mp = testing::random_vector(rng, c.head_dim);
    std::vector<double> x(c.head_dim), y(c.head_dim), back(c.head_dim);
    for (int i = 0; i < c.head_dim; ++i) x[i] = x_mp[i].convert_to<double>();
    tier.rotate(x, m, y);
    tier.rotate(y, m, back, rotation_direction::inverse);
    for (int j = 0; j < c.rotary_dim / 2; ++j) {
      const auto [a, b] = pair_of(c.pair, c.rotary_dim, j);
      const double pair_norm = std::hypot(x[a], x[b]);
      // Two rotations, each within the bound of a norm-preserving exact rotation.
      EXPECT_LE(std::abs(back[a] - x[a]), 2.01 * double_tier_pair_error_bound * pair_norm);
      EXPECT_LE(std::abs(back[b] - x[b]), 2.01 * double_tier_pair_error_bound * pair_norm);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Configurations, DoubleTier,
                         ::testing::Values(tier_case{128, 128, 10000, pairing::half_split},
                                           tier_case{128, 128, 500000, pairing::adjacent},
                                           tier_case{96, 24, 10000, pairing::half_split},
                                           tier_case{256, 64, 1e6, pairing::adjacent}));

// Scaled specs: θ'_j and A come from reference/scaling.h, and the bound scales with A
// (double_tier.h): |y − exact| <= 3·2^-53·A·‖(x_a, x_b)‖.
TEST(DoubleTier, ScaledSpecsStayWithinTheBoundTimesA) {
  rope_spec yarn{128, 128, 1e6, pairing::half_split, "test"};
  yarn.scaling = yarn_scaling{.factor = {4, 1}, .original_max_position_embeddings = 32768};
  rope_spec longrope{8, 8, 10000, pairing::adjacent, "test"};
  // Phi-3's form: L0 at the top level, s = max_position_embeddings / L0.
  longrope.scaling = longrope_scaling{.factor = {131072, 4096},
                                      .original_max_position_embeddings = 4096,
                                      .long_factor = {1.5, 2, 8, 60},
                                      .short_factor = {1, 1.02, 1.1, 1.3}};
  longrope.max_position_embeddings = 131072;
  for (const rope_spec& spec : {yarn, longrope}) {
    const std::vector<std::int64_t> positions = {0, 1, 4095, 4096, 40000, (1LL << 31) - 1};
    const double_tier tier(spec, positions);  // longrope: length 2^31 → long factors
    const auto params = params_from_spec<mp_real>(spec, (1LL << 31));
    EXPECT_GT(tier.attention_factor(), 1.1);
    EXPECT_EQ(tier.attention_factor(), params.attention_factor.convert_to<double>());
    std::mt19937_64 rng(11);
    for (std::int64_t m : positions) {
      const auto x_mp = testing::random_vector(rng, spec.head_dim);
      std::vector<double> x(spec.head_dim), y(spec.head_dim);
      for (int i = 0; i < spec.head_dim; ++i) x[i] = x_mp[i].convert_to<double>();
      tier.rotate(x, m, y);
      const auto exact = rope_complex<mp_real>(x_mp, m, params);
      for (int j = 0; j < spec.rotary_dim / 2; ++j) {
        const auto [a, b] = pair_of(spec.pair, spec.rotary_dim, j);
        const mp_real bound = double_tier_pair_error_bound * params.attention_factor *
                              sqrt(x_mp[a] * x_mp[a] + x_mp[b] * x_mp[b]);
        for (int k : {a, b}) EXPECT_LE(abs(mp_real(y[k]) - exact[k]), bound) << m << " " << k;
      }
    }
  }
}

// The θ_j a tier reports are those it rotates by: base^(-2j/d), divided by the factor under
// linear scaling (checked against long double pow, within one ulp of double).
TEST(DoubleTier, ReportsTheFrequenciesItRotatesBy) {
  rope_spec plain{16, 16, 10000, pairing::half_split, "test"};
  rope_spec linear = plain;
  linear.scaling = linear_scaling{8};
  for (const auto& [spec, divisor] : {std::pair{plain, 1.0L}, std::pair{linear, 8.0L}}) {
    const double_tier tier(spec, std::vector<std::int64_t>{0, 5});
    ASSERT_EQ(tier.inverse_frequencies().size(), 8u);
    for (int j = 0; j < 8; ++j) {
      const auto expected =
          static_cast<double>(std::pow(10000.0L, -2.0L * j / 16) / divisor);
      const double got = tier.inverse_frequencies()[static_cast<std::size_t>(j)];
      EXPECT_LE(std::fabs(got - expected), std::nextafter(expected, 1.0) - expected)
          << "j=" << j << " divisor " << static_cast<double>(divisor);
      // And the table holds cos(m·θ_j) for that θ_j.
      EXPECT_NEAR(tier.cos_at(5, j), std::cos(5.0 * got), 1e-15);
    }
  }
}

TEST(DoubleTier, RejectsAPositionItWasNotBuiltFor) {
  const rope_spec spec{8, 8, 10000, pairing::half_split, "test"};
  const std::vector<std::int64_t> positions = {1, 2};
  const double_tier tier(spec, positions);
  std::vector<double> x(8, 1.0), y(8);
  EXPECT_THROW(tier.rotate(x, 3, y), reference_error);
}

}  // namespace
}  // namespace ropecheck::reference
