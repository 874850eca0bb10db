// The M-RoPE reference form (issue 16 §3) on the real Qwen2.5-VL-7B and Qwen3-VL-8B configs
// (fixtures/model-configs/): its stream map against the modeling code's rule written out by hand,
// equal streams give 1-D RoPE (the complex form, an independent library), and each pair turns
// by its own stream's position only.
#include <gtest/gtest.h>

#include <random>

#include "reference/real.h"
#include "reference/rope_forms.h"
#include "reference/test_support.h"
#include "spec/spec_reader.h"

namespace ropecheck::reference {
namespace {

using testing::norm;
using testing::random_vector;
using testing::relative_distance;
using testing::tight_tolerance;

const std::string configs = ROPECHECK_SOURCE_DIR "/fixtures/model-configs/";

// Qwen2.5-VL: mrope_section [16, 24, 24], contiguous: pairs 0–15 temporal, 16–39 height, 40–63
// width. Qwen3-VL: [24, 20, 20] interleaved: T H W T H W … up to pair 59, then 60–63 temporal.
TEST(ReferenceMRope, StreamsFollowTheModelsSections) {
  const rope_spec qwen25 = read_spec(configs + "Qwen2.5-VL-7B-Instruct.json");
  ASSERT_EQ(qwen25.mrope.section, (std::vector<int>{16, 24, 24}));
  ASSERT_FALSE(qwen25.mrope.interleaved);
  for (int j = 0; j < 64; ++j)
    EXPECT_EQ(mrope_stream(qwen25.mrope, j), j < 16 ? 0 : j < 40 ? 1 : 2) << j;
  const rope_spec qwen3 = read_spec(configs + "Qwen3-VL-8B-Instruct.json");
  ASSERT_EQ(qwen3.mrope.section, (std::vector<int>{24, 20, 20}));
  ASSERT_TRUE(qwen3.mrope.interleaved);
  EXPECT_EQ(qwen3.base, 5000000.0);
  const int expected_first[] = {0, 1, 2, 0, 1, 2};
  for (int j = 0; j < 6; ++j) EXPECT_EQ(mrope_stream(qwen3.mrope, j), expected_first[j]) << j;
  EXPECT_EQ(mrope_stream(qwen3.mrope, 58), 1);
  EXPECT_EQ(mrope_stream(qwen3.mrope, 59), 2);
  for (int j = 60; j < 64; ++j) EXPECT_EQ(mrope_stream(qwen3.mrope, j), 0) << j;
}

TEST(ReferenceMRope, EqualStreamsAreOneDimensionalRopeAndEachPairFollowsItsStream) {
  std::mt19937_64 rng(16);
  for (const char* file : {"Qwen2.5-VL-7B-Instruct.json", "Qwen3-VL-8B-Instruct.json"}) {
    const rope_spec spec = read_spec(configs + file);
    const auto params = params_from_spec<mp_real>(spec);
    const auto x = random_vector(rng, spec.head_dim);
    const mp_real scale = norm(x);
    for (std::int64_t m : {0, 1, 7, 4096, 131071}) {
      const auto one_d = rope_complex<mp_real>(x, m, params);
      EXPECT_LE(relative_distance(rope_mrope<mp_real>(x, {m, m, m}, params, spec.mrope), one_d, scale),
                tight_tolerance)
          << file << " m = " << m;
    }
    // Image-grid positions (t, h, w) = (3, 17, 42): pair j equals the 1-D rotation at its own
    // stream's position.
    const std::array<std::int64_t, 3> p = {3, 17, 42};
    const auto y = rope_mrope<mp_real>(x, p, params, spec.mrope);
    std::array<std::vector<mp_real>, 3> by_stream;
    for (std::size_t s = 0; s < 3; ++s) by_stream[s] = rope_complex<mp_real>(x, p[s], params);
    for (int j = 0; j < spec.rotary_dim / 2; ++j) {
      const auto& want = by_stream[static_cast<std::size_t>(mrope_stream(spec.mrope, j))];
      const int a = j, b = j + spec.rotary_dim / 2;  // both configs pair half-split (qwen2_vl code)
      EXPECT_LE(mp_real(abs(y[a] - want[a]) + abs(y[b] - want[b])) / scale, tight_tolerance)
          << file << " pair " << j;
    }
  }
}

}  // namespace
}  // namespace ropecheck::reference
