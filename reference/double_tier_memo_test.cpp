// double_tier_memo: a memoized tier is the tier double_tier's own constructor builds — every
// table entry bit for bit (the fresh tier computes θ_j with one pow per j and its own table;
// the memo θ_j by repeated product and rows built in other calls, over other position sets) —
// whatever the memo held before, after it was dropped to stay within its bounds, and when two
// threads fill it at once.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "reference/double_tier.h"
#include "reference/double_tier_memo.h"

namespace ropecheck::reference {
namespace {

rope_spec plain(int head_dim, int rotary_dim, double base, pairing pair) {
  return rope_spec{head_dim, rotary_dim, base, pair, "test"};
}

rope_spec yarn_with_factor() {
  rope_spec s = plain(64, 64, 5e5, pairing::half_split);
  s.scaling = yarn_scaling{.factor = {8, 1}, .original_max_position_embeddings = 8192};
  s.max_position_embeddings = 65536;
  s.sequence_length = 65536;
  return s;
}

rope_spec dynamic_without_length() {  // θ_j depend on max position + 1
  rope_spec s = plain(32, 32, 1e4, pairing::adjacent);
  s.scaling = dynamic_scaling{.factor = 4, .max_position_embeddings = 4096};
  s.max_position_embeddings = 4096;
  return s;
}

std::vector<std::int64_t> some_positions(std::mt19937_64& rng, int count) {
  std::vector<std::int64_t> p = {0, 1, 2, 1024, (std::int64_t{1} << 24), (std::int64_t{1} << 31) - 1, -5};
  std::uniform_int_distribution<std::int64_t> any(0, 70000);
  for (int i = 0; i < count; ++i) p.push_back(any(rng));
  return p;
}

// Every entry of the two tiers at `positions`, and A and θ_j, equal bit for bit.
void expect_same_tier(const double_tier& memoized, const double_tier& fresh,
                      const std::vector<std::int64_t>& positions) {
  ASSERT_EQ(memoized.rotary_dim(), fresh.rotary_dim());
  EXPECT_EQ(memoized.attention_factor(), fresh.attention_factor());
  ASSERT_EQ(memoized.inverse_frequencies().size(), fresh.inverse_frequencies().size());
  for (std::size_t j = 0; j < fresh.inverse_frequencies().size(); ++j)
    EXPECT_EQ(memoized.inverse_frequencies()[j], fresh.inverse_frequencies()[j]) << "j=" << j;
  for (std::int64_t m : positions)
    for (int j = 0; j < fresh.rotary_dim() / 2; ++j) {
      ASSERT_EQ(memoized.cos_at(m, j), fresh.cos_at(m, j)) << "m=" << m << " j=" << j;
      ASSERT_EQ(memoized.sin_at(m, j), fresh.sin_at(m, j)) << "m=" << m << " j=" << j;
    }
}

TEST(DoubleTierMemo, GivesTheConstructorsTablesAndReusesRows) {
  std::mt19937_64 rng(17);
  double_tier_memo memo;
  const std::vector<rope_spec> specs = {plain(128, 128, 1e4, pairing::half_split),
                                        plain(96, 64, 5e5, pairing::adjacent), yarn_with_factor(),
                                        dynamic_without_length()};
  for (int round = 0; round < 3; ++round) {
    for (rope_spec spec : specs) {
      if (round == 2) spec.attention_factor = 1.25;  // a new key: A enters every entry
      const auto positions = some_positions(rng, 12);
      expect_same_tier(memo.tier(spec, positions), double_tier(spec, positions, 1), positions);
    }
  }
  const auto stats = memo.stats();
  EXPECT_EQ(stats.specs_computed, 8);  // the four specs, and the four again with A = 1.25
  EXPECT_GT(stats.rows_reused, 0);     // 0, 1, 2, 1024, ... recur in every round
  EXPECT_GT(stats.rows_computed, 0);
  EXPECT_EQ(stats.resets, 0);
}

TEST(DoubleTierMemo, StaysWithinItsBoundsAndStillAgrees) {
  std::mt19937_64 rng(5);
  double_tier_memo memo(/*max_table_doubles=*/4 * 128, /*max_specs=*/2);
  for (int i = 0; i < 6; ++i) {
    const rope_spec spec = plain(128, 128, i % 3 == 0 ? 1e4 : 1e6 + i, pairing::half_split);
    const auto positions = some_positions(rng, 3);
    expect_same_tier(memo.tier(spec, positions), double_tier(spec, positions, 1), positions);
    EXPECT_LE(memo.stats().table_doubles, 4u * 128u);
    EXPECT_LE(memo.stats().specs, 2u);
  }
  EXPECT_GT(memo.stats().resets, 0);
}

TEST(DoubleTierMemo, TwoThreadsFillingOneMemo) {
  double_tier_memo memo;
  const rope_spec spec = plain(64, 64, 1e4, pairing::half_split);
  std::vector<std::vector<std::int64_t>> sets(2);
  for (int t = 0; t < 2; ++t)
    for (int i = 0; i < 40; ++i) sets[t].push_back(i * 37 + t * (i % 2));  // half shared
  std::vector<std::thread> threads;
  std::vector<std::vector<double>> got(2);
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      for (int repeat = 0; repeat < 3; ++repeat) {
        const double_tier tier = memo.tier(spec, sets[t]);
        got[t].clear();
        for (std::int64_t m : sets[t])
          for (int j = 0; j < 32; ++j) got[t].push_back(tier.cos_at(m, j)), got[t].push_back(tier.sin_at(m, j));
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 2; ++t) {
    const double_tier fresh(spec, sets[t], 1);
    std::vector<double> want;
    for (std::int64_t m : sets[t])
      for (int j = 0; j < 32; ++j) want.push_back(fresh.cos_at(m, j)), want.push_back(fresh.sin_at(m, j));
    EXPECT_EQ(got[t], want);
  }
}

TEST(DoubleTierMemo, KeyTellsEveryFrequencyFieldApart) {
  const rope_spec base = yarn_with_factor();
  const double_tier_memo::frequency_spec key = double_tier_memo::frequency_key(base, 100);
  std::vector<rope_spec> changed(16, base);
  const auto yarn = [&](std::size_t i) -> yarn_scaling& { return std::get<yarn_scaling>(changed[i].scaling); };
  changed[0].rotary_dim = 62;
  changed[1].base = std::nextafter(base.base, 1e9);
  yarn(2).factor.numerator = 8.000000000000002;
  changed[3].scaling = linear_scaling{8};
  yarn(4).convention = scaling_convention::deepseek;
  yarn(5).beta_fast = 16;
  yarn(6).mscale = 1.0;
  changed[7].attention_factor = 1.0;
  changed[8].sequence_length = 65537;
  yarn(9).original_max_position_embeddings = 4096;
  yarn(10).truncate = false;
  yarn(11).attn_factor = 1.1;
  changed[12].scaling = ntk_scaling{8};  // another type with the same factor
  changed[13].scaling = proportional_scaling{8, 16};
  changed[14].streams = {stream_rule::mrope_sections, {16, 8, 8}};
  yarn(15).mscale_all_dim = 0.5;
  for (std::size_t i = 0; i < changed.size(); ++i)
    EXPECT_FALSE(double_tier_memo::frequency_key(changed[i], 100) == key) << "change " << i;
  // Fields of the same type's struct that the hand-written key once had to list one by one.
  rope_spec proportional = base, proportional_other = base;
  proportional.scaling = proportional_scaling{8, 16};
  proportional_other.scaling = proportional_scaling{8, 15};
  EXPECT_FALSE(double_tier_memo::frequency_key(proportional, 100) ==
               double_tier_memo::frequency_key(proportional_other, 100));
  rope_spec longrope = base, longrope_other = base;
  longrope.scaling = longrope_scaling{{4, 1}, 4096, std::vector<double>(32, 1.0), std::vector<double>(32, 1.0)};
  longrope_other.scaling = longrope.scaling;
  std::get<longrope_scaling>(longrope_other.scaling).short_factor[31] = 1.5;
  EXPECT_FALSE(double_tier_memo::frequency_key(longrope, 100) == double_tier_memo::frequency_key(longrope_other, 100));
  // Pairing and the labels do not change θ_j or A, nor does the length when the spec gives one.
  rope_spec same = base;
  same.pair = pairing::adjacent;
  same.source = "elsewhere";
  same.layer_type = "sliding_attention";
  same.layer = 3;
  EXPECT_TRUE(double_tier_memo::frequency_key(same, 5) == key);
  // A length-dependent scaling without a sequence_length keys on the length.
  EXPECT_FALSE(double_tier_memo::frequency_key(dynamic_without_length(), 100) ==
               double_tier_memo::frequency_key(dynamic_without_length(), 101));
}

}  // namespace
}  // namespace ropecheck::reference
