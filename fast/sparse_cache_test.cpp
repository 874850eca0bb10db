// The cache kernels' table for one call (rope_angles::prepare_for, kernels.h apply_packed): a row
// per position up to the largest when the positions are dense, a row per distinct position when
// they are sparse — so one large position costs one row, not gigabytes — and the same bits as
// the on-the-fly kernels either way.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "fast/kernels.h"

namespace ropecheck::fast {
namespace {

rope_spec spec_of(int head_dim) {
  rope_spec spec;
  spec.head_dim = head_dim;
  spec.rotary_dim = head_dim;
  return spec;
}

std::vector<float> random_values(std::size_t count) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(count);
  for (auto& x : v) x = u(rng);
  return v;
}

TEST(cache_rows_for, dense_positions_take_the_range_and_sparse_ones_their_distinct_values) {
  std::vector<std::int64_t> dense(4096);
  for (std::size_t i = 0; i < dense.size(); ++i) dense[i] = static_cast<std::int64_t>(i);
  EXPECT_EQ(cache_rows_for(dense).rows, 4096);
  EXPECT_TRUE(cache_rows_for(dense).dense);
  // A short call below the slack, and a decode step at position 9000 of a 4096-token window.
  EXPECT_TRUE(cache_rows_for(std::vector<std::int64_t>{5, 4000}).dense);
  const std::vector<std::int64_t> sparse = {0, 16777215, 3, 3, 0};
  const cache_rows c = cache_rows_for(sparse);
  EXPECT_FALSE(c.dense);
  EXPECT_EQ(c.rows, 3);
  EXPECT_EQ(c.largest, 16777215);
  EXPECT_EQ(cache_rows_for({}).rows, 0);
  // At the edge: largest + 1 = 2·count + slack is dense, one more is not; any int64 is counted
  // without overflow.
  EXPECT_TRUE(cache_rows_for(std::vector<std::int64_t>{0, dense_cache_slack + 3}).dense);
  EXPECT_FALSE(cache_rows_for(std::vector<std::int64_t>{0, dense_cache_slack + 4}).dense);
  const cache_rows huge = cache_rows_for(std::vector<std::int64_t>{0, std::numeric_limits<std::int64_t>::max()});
  EXPECT_FALSE(huge.dense);
  EXPECT_EQ(huge.rows, 2);
}

TEST(prepare_for, a_sparse_table_has_one_row_per_distinct_position_and_covers_only_those) {
  const std::vector<std::int64_t> positions = {0, 16777215, 3, 3};
  const auto angles = rope_angles::prepare_for(angle_strategy::cache, unscaled_frequencies(spec_of(64)), positions);
  ASSERT_TRUE(angles.ok()) << angles.state.message;
  EXPECT_EQ(angles.value->cached_rows(), 3);
  EXPECT_EQ(angles.value->max_position(), 16777216);
  for (const std::int64_t m : positions) EXPECT_TRUE(angles.value->covers(m)) << m;
  for (const std::int64_t m : {-1, 1, 4, 16777214, 16777216}) EXPECT_FALSE(angles.value->covers(m)) << m;
  // Each row is the one a dense table (or the on-the-fly kernels) would hold for its position.
  const auto dense = rope_angles::prepare(angle_strategy::cache, unscaled_frequencies(spec_of(64)), 4);
  ASSERT_TRUE(dense.ok());
  for (const std::int64_t m : {0, 3})
    EXPECT_EQ(std::memcmp(angles.value->cached_row(m), dense.value->cached_row(m), 64 * sizeof(float)), 0) << m;
}

TEST(prepare_for, refuses_positions_past_the_reduction_range_rather_than_building_them) {
  for (const std::int64_t past : {(std::int64_t{1} << 31) + 1, std::numeric_limits<std::int64_t>::max()}) {
    const std::vector<std::int64_t> positions = {0, past};
    const auto angles = rope_angles::prepare_for(angle_strategy::cache, unscaled_frequencies(spec_of(8)), positions);
    EXPECT_FALSE(angles.ok()) << past;
  }
}

// 32 tokens, one of them at 16 777 215: each cache kernel gives the on-the-fly kernel's bits
// (the strategies compute the same floats, rope_angles.h) with a three-row table.
TEST(apply_packed, a_cache_kernel_on_sparse_positions_equals_on_the_fly) {
  constexpr int head_dim = 64, heads = 2, tokens = 32;
  std::vector<std::int64_t> positions(tokens, 0);
  positions[5] = 16777215;
  positions[7] = 3;
  const auto x = random_values(static_cast<std::size_t>(tokens * heads * head_dim));
  const rope_spec spec = spec_of(head_dim);
  std::vector<float> expected(x.size());
  ASSERT_TRUE(apply_packed(*find_kernel("on_the_fly_scalar"), spec, dtype::float32, x.data(), expected.data(),
                           heads, positions)
                  .ok());
  for (const char* name : {"cache_simd", "cache_scalar"}) {
    std::vector<float> y(x.size());
    const status s = apply_packed(*find_kernel(name), spec, dtype::float32, x.data(), y.data(), heads, positions);
    ASSERT_TRUE(s.ok()) << name << ": " << s.message;
    EXPECT_EQ(std::memcmp(y.data(), expected.data(), y.size() * sizeof(float)), 0) << name;
  }
}

// A call with a position the sparse table was not built for is refused, not read from a
// neighbouring row.
TEST(sparse_table, a_position_it_lacks_is_out_of_range) {
  constexpr int head_dim = 8;
  const std::vector<std::int64_t> built = {0, 100000};
  const auto angles = rope_angles::prepare_for(angle_strategy::cache, unscaled_frequencies(spec_of(head_dim)), built);
  ASSERT_TRUE(angles.ok());
  const std::vector<std::int64_t> asked = {0, 99999};
  const auto x = random_values(2 * head_dim);
  std::vector<float> y(x.size());
  const rope_call call = make_call({dtype::float32, pairing::half_split, head_dim, head_dim}, asked,
                                   packed_tensor(x.data(), y.data(), 1, head_dim));
  const status s = find_kernel("cache_simd")->apply(call, *angles.value);
  EXPECT_EQ(s.code, status_code::out_of_range) << s.message;
  EXPECT_NE(s.message.find("99999"), std::string::npos) << s.message;
}

}  // namespace
}  // namespace ropecheck::fast
