// The worst case a property hands out (judged_case.h) is the one its worst/bound came from, runs
// again to the same outputs bit for bit, and survives its case file exactly; every property
// states the largest call it sent. On a built-in kernel, in process (cli/cases_out_replay_test
// runs the same through `gate --cases-out` and `replay` on a failing kernel).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "fast/kernels.h"
#include "properties/judged_case.h"
#include "properties/kernel_properties.h"

namespace ropecheck::properties {
namespace {

const fast::kernel_info& kernel() {
  const fast::kernel_info* k = fast::find_kernel("on_the_fly_scalar");
  EXPECT_NE(k, nullptr);
  return *k;
}

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

TEST(JudgedCase, TheWorstCaseIsTheOneTheRatioCameFromAndRunsAgainBitForBit) {
  const property_result r =
      check_kernel_property(kernel(), "within_bound_of_reference", dtype::float32, profile::quick, default_seed);
  ASSERT_TRUE(r.passed) << r.message;
  ASSERT_NE(r.worst_data, nullptr);
  EXPECT_EQ(r.counterexample_data, nullptr);  // nothing failed
  const judged_case& c = *r.worst_data;
  EXPECT_EQ(c.property, "within_bound_of_reference");
  double worst = 0;
  for (const auto& o : c.outputs) worst = std::max(worst, o.over_bound());
  EXPECT_TRUE(same_bits(worst, r.worst_over_bound)) << worst << " vs " << r.worst_over_bound;
  EXPECT_EQ(std::ssize(c.theta), c.rotary_dim / 2);
  EXPECT_EQ(std::ssize(c.q), std::ssize(c.positions) * c.q_heads * c.head_dim);

  const std::vector<double> again = rerun_judged_case(kernel(), c);
  ASSERT_EQ(again.size(), c.outputs.size());
  for (std::size_t n = 0; n < again.size(); ++n)
    EXPECT_TRUE(same_bits(again[n], c.outputs[n].kernel)) << "output " << n;

  // Through the file's JSON: every number back to the same bits.
  std::string named;
  const judged_case back =
      read_judged_case(nlohmann::json::parse(judged_case_json(c, "on_the_fly_scalar", "worst")), "mem.json", named);
  EXPECT_EQ(named, "on_the_fly_scalar");
  ASSERT_EQ(back.theta.size(), c.theta.size());
  for (std::size_t j = 0; j < c.theta.size(); ++j) EXPECT_TRUE(same_bits(back.theta[j], c.theta[j]));
  EXPECT_TRUE(same_bits(back.attention_factor, c.attention_factor));
  EXPECT_EQ(back.positions, c.positions);
  ASSERT_EQ(back.outputs.size(), c.outputs.size());
  for (std::size_t n = 0; n < c.outputs.size(); ++n) {
    EXPECT_TRUE(same_bits(back.outputs[n].reference, c.outputs[n].reference));
    EXPECT_TRUE(same_bits(back.outputs[n].bound, c.outputs[n].bound));
    EXPECT_TRUE(same_bits(back.outputs[n].kernel, c.outputs[n].kernel));
  }
  EXPECT_GT(r.largest_call_token_heads, 0);
  // The plots' points against j and head_dim, one per case, within the case's shape.
  EXPECT_EQ(r.pair_points.size(), r.points.size());
  for (const auto& [head_dim, ratio] : r.head_dim_points) EXPECT_TRUE(head_dim >= 2 && head_dim <= 512) << head_dim;
}

// norm_preserved hands out its pairs' norms the same way: the worst one is the ratio's, and the
// call run again gives each norm's bits.
TEST(JudgedCase, NormPreservedKeepsItsPairsNorms) {
  const property_result r = check_kernel_property(kernel(), "norm_preserved", dtype::float32, profile::quick, default_seed);
  ASSERT_TRUE(r.passed) << r.message;
  ASSERT_NE(r.worst_data, nullptr);
  const judged_case& c = *r.worst_data;
  double worst = 0;
  for (const auto& o : c.outputs) {
    EXPECT_GE(o.partner, 0);
    worst = std::max(worst, o.over_bound());
  }
  EXPECT_TRUE(same_bits(worst, r.worst_over_bound)) << worst << " vs " << r.worst_over_bound;
  const std::vector<double> again = rerun_judged_case(kernel(), c);
  for (std::size_t n = 0; n < again.size(); ++n)
    EXPECT_TRUE(same_bits(again[n], c.outputs[n].kernel)) << "norm " << n;
}

// call_size_invariant's large calls reach past the dispatch thresholds kernels switch at.
TEST(JudgedCase, CallSizeInvariantStatesItsLargeCalls) {
  const property_result r =
      check_kernel_property(kernel(), "call_size_invariant", dtype::float32, profile::quick, default_seed);
  EXPECT_GE(r.largest_call_token_heads, 16384);
  EXPECT_EQ(r.worst_data, nullptr);  // a bit-exact property keeps no judged case
}

}  // namespace
}  // namespace ropecheck::properties
