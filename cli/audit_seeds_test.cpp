// No false alarm from the audit's forensics: the built-in kernels' outputs, over 20
// seeds of X in float32, float16 and bfloat16, in both pairings, pass their audit and get no
// cause (the recipe found is a correct kernel's at every stage but the last rounding). In
// process: audit::run_audit on fast::apply_packed's output.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "audit/audit.h"
#include "fast/kernels.h"
#include "io/tensor.h"

namespace ropecheck {
namespace {

std::vector<std::int64_t> positions_for(int seed) {
  // Dense from 0, a block far out, and a spread to 2^20: every shape the audit meets.
  std::vector<std::int64_t> p;
  if (seed % 3 == 0)
    for (std::int64_t m = 0; m < 96; ++m) p.push_back(m);
  else if (seed % 3 == 1)
    for (std::int64_t m = 100000; m < 100064; ++m) p.push_back(m);
  else
    for (int k = 0; k <= 60; ++k) p.push_back(static_cast<std::int64_t>(std::llround(std::exp2(k / 3.0))));
  return p;
}

TEST(AuditSeeds, CorrectKernelsGetNoCauseOverTwentySeeds) {
  constexpr std::int64_t heads = 4, head_dim = 64;
  for (int seed = 0; seed < 20; ++seed)
    for (const dtype t : {dtype::float32, dtype::float16, dtype::bfloat16}) {
      const pairing pair = seed % 2 == 0 ? pairing::half_split : pairing::adjacent;
      const char* kernel = seed % 4 < 2 ? "cache_simd" : "on_the_fly_simd";
      audit::audit_input in;
      in.spec = rope_spec{static_cast<int>(head_dim), static_cast<int>(head_dim), 10000.0 * (1 + seed), pair, "seed"};
      in.positions = positions_for(seed);
      const auto rows = static_cast<std::int64_t>(in.positions.size());
      std::vector<double> x(static_cast<std::size_t>(rows * heads * head_dim));
      std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
      std::normal_distribution<double> normal;
      for (double& v : x) v = normal(rng);
      in.x = from_float64(x, {rows, heads, head_dim}, t);
      in.y = tensor(t, in.x.shape);
      const fast::status s = fast::apply_packed(*fast::find_kernel(kernel), in.spec, t, in.x.bytes().data(),
                                                in.y.mutable_bytes().data(), heads, in.positions);
      ASSERT_TRUE(s.ok()) << s.message;
      in.heads = heads;
      in.tokens_per_sequence = rows;
      in.judged = t;
      const reports::audit_report r = audit::run_audit(in);
      const std::string what = "seed " + std::to_string(seed) + " " + kernel + " " + std::string(to_string(t));
      EXPECT_TRUE(r.passed) << what;
      std::string causes;
      for (const auto& f : r.diagnosis) causes += f.code + " ";
      EXPECT_TRUE(r.diagnosis.empty()) << what << ": " << causes;
      EXPECT_EQ(r.recipe.positions, "exact") << what;
      EXPECT_EQ(r.recipe.angle, "float64") << what;
    }
}

}  // namespace
}  // namespace ropecheck
