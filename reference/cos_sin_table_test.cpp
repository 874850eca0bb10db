// The double tier's table, built from anchors by double-double angle addition
// (reference/cos_sin_table.h), holds exactly the doubles nearest A·cos(m·θ_j), A·sin(m·θ_j):
// every entry is compared bit for bit with the 256-bit complex form (MPC's complex exponential,
// an independent code path) rounded once to double, over dense and scattered positions
// spanning ±(2^31 − 1), unscaled and with a YaRN attention factor.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <random>

#include "reference/double_tier.h"
#include "reference/real.h"
#include "reference/rope_forms.h"

namespace ropecheck::reference {
namespace {

constexpr std::int64_t int32_limit = (std::int64_t{1} << 31) - 1;

// Dense runs (where anchors pay off) at both ends of the int32 range and around 0 and 2^20,
// plus scattered positions over the whole range.
std::vector<std::int64_t> wide_positions() {
  std::vector<std::int64_t> p;
  for (const std::int64_t start : {std::int64_t{0}, -int32_limit, int32_limit - 1999,
                                   (std::int64_t{1} << 20) - 1000, std::int64_t{-1000}})
    for (std::int64_t m = start; m < start + 2000; ++m) p.push_back(m);
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<std::int64_t> any(-int32_limit, int32_limit);
  for (int i = 0; i < 300; ++i) p.push_back(any(rng));
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  return p;
}

double round_to_double(const mp_real& v) { return mpfr_get_d(v.backend().data(), MPFR_RNDN); }

void expect_table_matches_complex_form(const rope_spec& spec, std::int64_t sequence_length) {
  const auto positions = wide_positions();
  const double_tier tier(spec, positions);
  const auto& stats = tier.table_stats();
  // The anchored path is what is under test: most entries must come from it, and exact zeros
  // (sin 0 at m = 0) take the direct fallback.
  EXPECT_GT(stats.split_bits, 0);
  EXPECT_GT(stats.combined, stats.entries * 9 / 10);
  EXPECT_GE(stats.fallbacks, 1);
  EXPECT_LT(stats.mpfr_sin_cos, stats.entries / 10);
  ::testing::Test::RecordProperty("split_bits", stats.split_bits);
  ::testing::Test::RecordProperty("mpfr_sin_cos", std::to_string(stats.mpfr_sin_cos));
  ::testing::Test::RecordProperty("fallbacks", std::to_string(stats.fallbacks));

  const auto params = params_from_spec<mp_real>(spec, sequence_length);
  // Unit pairs: the complex form then returns A·cos(m·θ_j), A·sin(m·θ_j) themselves.
  std::vector<mp_real> unit(static_cast<std::size_t>(spec.head_dim), mp_real(0));
  for (int j = 0; j < spec.rotary_dim / 2; ++j) unit[static_cast<std::size_t>(2 * j)] = 1;
  std::int64_t compared = 0, mismatched = 0;
  for (const std::int64_t m : positions) {
    const auto y = rope_complex<mp_real>(unit, m, params);
    for (int j = 0; j < spec.rotary_dim / 2; ++j) {
      const double c = round_to_double(y[static_cast<std::size_t>(2 * j)]);
      const double s = round_to_double(y[static_cast<std::size_t>(2 * j + 1)]);
      compared += 2;
      if (std::bit_cast<std::uint64_t>(c) != std::bit_cast<std::uint64_t>(tier.cos_at(m, j)) ||
          std::bit_cast<std::uint64_t>(s) != std::bit_cast<std::uint64_t>(tier.sin_at(m, j))) {
        if (++mismatched <= 5)
          ADD_FAILURE() << "m = " << m << ", j = " << j << ": table (" << tier.cos_at(m, j) << ", "
                        << tier.sin_at(m, j) << "), complex form (" << c << ", " << s << ")";
      }
    }
  }
  EXPECT_EQ(mismatched, 0) << "of " << compared;
  EXPECT_EQ(compared, 2 * stats.entries);
}

TEST(CosSinTable, AnchoredEntriesAreTheCorrectlyRoundedValues) {
  // Adjacent pairing: unit pair j is (2j, 2j+1), which the unit vector above sets up.
  expect_table_matches_complex_form(rope_spec{16, 16, 500000, pairing::adjacent, "test"}, 0);
}

TEST(CosSinTable, AnchoredEntriesCarryTheAttentionFactor) {
  rope_spec yarn{16, 16, 1e6, pairing::adjacent, "test"};
  yarn.scaling = yarn_scaling{.factor = {4, 1}, .original_max_position_embeddings = 32768};
  expect_table_matches_complex_form(yarn, 0);
}

TEST(CosSinTable, SparsePositionsAreComputedDirectly) {
  const std::vector<std::int64_t> positions = {-5, 3, 1 << 20, int32_limit};
  const double_tier tier(rope_spec{8, 8, 10000, pairing::half_split, "test"}, positions);
  EXPECT_EQ(tier.table_stats().split_bits, 0);
  EXPECT_EQ(tier.table_stats().mpfr_sin_cos, tier.table_stats().entries);
}

}  // namespace
}  // namespace ropecheck::reference
