// The reference forms agree with one another to 2^-200 relative on random inputs, positions up
// to ±(2^31 − 1) included; they reject invalid parameters with a message naming the parameter.
#include <gtest/gtest.h>

#include "reference/frequencies.h"
#include "reference/rope_forms.h"
#include "reference/test_support.h"

namespace ropecheck::reference {
namespace {

using testing::norm;
using testing::random_vector;
using testing::relative_distance;
using testing::tight_tolerance;

struct form_case {
  int head_dim;
  int rotary_dim;
  double base;
  pairing pair;
};

std::vector<std::int64_t> interesting_positions(std::mt19937_64& rng) {
  std::vector<std::int64_t> p = {0, 1, -1, 2, 4095, 65537, (1LL << 31) - 1, -((1LL << 31) - 1),
                                 (1LL << 30) + 1};
  std::uniform_int_distribution<std::int64_t> any(-(1LL << 31) + 1, (1LL << 31) - 1);
  for (int i = 0; i < 4; ++i) p.push_back(any(rng));
  return p;
}

class ReferenceForms : public ::testing::TestWithParam<form_case> {};

TEST_P(ReferenceForms, ElementwiseComplexAndMatrixAgree) {
  const auto c = GetParam();
  const rotary_params<mp_real> params{c.head_dim, c.rotary_dim, mp_real(c.base), c.pair, {}};
  std::mt19937_64 rng(c.head_dim * 7919 + c.rotary_dim);
  for (std::int64_t m : interesting_positions(rng)) {
    const auto x = random_vector(rng, c.head_dim);
    const auto e = rope_elementwise<mp_real>(x, m, params);
    const auto z = rope_complex<mp_real>(x, m, params);
    const auto r = rope_matrix<mp_real>(x, m, params);
    const mp_real scale = norm(x);
    EXPECT_LT(relative_distance(e, z, scale), tight_tolerance) << "position " << m;
    EXPECT_LT(relative_distance(e, r, scale), tight_tolerance) << "position " << m;
    EXPECT_LT(abs(norm(e) - scale) / scale, tight_tolerance) << "norm, position " << m;
    for (int k = c.rotary_dim; k < c.head_dim; ++k) {
      EXPECT_EQ(e[k], x[k]);  // pass-through dims are untouched
      EXPECT_EQ(z[k], x[k]);
    }
  }
}

TEST_P(ReferenceForms, InverseUndoesTheRotation) {
  const auto c = GetParam();
  const rotary_params<mp_real> params{c.head_dim, c.rotary_dim, mp_real(c.base), c.pair, {}};
  std::mt19937_64 rng(c.head_dim * 31 + c.rotary_dim);
  for (std::int64_t m : interesting_positions(rng)) {
    const auto x = random_vector(rng, c.head_dim);
    const auto back = rope_inverse<mp_real>(rope_complex<mp_real>(x, m, params), m, params);
    EXPECT_LT(relative_distance(back, x, norm(x)), tight_tolerance) << "position " << m;
    // Rotation by −m is the inverse too.
    const auto minus = rope_elementwise<mp_real>(x, -m, params);
    EXPECT_LT(relative_distance(rope_inverse<mp_real>(x, m, params), minus, norm(x)),
              tight_tolerance);
  }
}

TEST_P(ReferenceForms, ScoreDependsOnlyOnTheOffset) {
  const auto c = GetParam();
  const rotary_params<mp_real> params{c.head_dim, c.rotary_dim, mp_real(c.base), c.pair, {}};
  std::mt19937_64 rng(c.head_dim * 131 + c.rotary_dim);
  for (std::int64_t m : interesting_positions(rng)) {
    const std::int64_t n = m / 3 + 17;
    const auto q = random_vector(rng, c.head_dim);
    const auto k = random_vector(rng, c.head_dim);
    const auto fq = rope_elementwise<mp_real>(q, m, params);
    const auto fk = rope_matrix<mp_real>(k, n, params);
    mp_real dot = 0;
    for (int i = 0; i < c.head_dim; ++i) dot += fq[i] * fk[i];
    const mp_real g = attention_score<mp_real>(q, k, m - n, params);
    EXPECT_LT(abs(dot - g) / (norm(q) * norm(k)), tight_tolerance) << m << " " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configurations, ReferenceForms,
    ::testing::Values(form_case{2, 2, 10000, pairing::half_split},
                      form_case{8, 8, 10000, pairing::adjacent},
                      form_case{128, 128, 500000, pairing::half_split},
                      form_case{128, 128, 1e6, pairing::adjacent},
                      form_case{96, 24, 10000, pairing::half_split},   // GPT-NeoX-20B
                      form_case{256, 64, 10000, pairing::adjacent},    // GPT-J-6B
                      form_case{80, 80, 2, pairing::half_split},
                      form_case{64, 62, 1e9, pairing::adjacent}),
    [](const auto& info) {
      const auto& c = info.param;
      return "d" + std::to_string(c.head_dim) + "_r" + std::to_string(c.rotary_dim) + "_" +
             std::string(c.pair == pairing::adjacent ? "adjacent" : "half");
    });

TEST(ReferenceFrequencies, MatchTheSeedWorkedExample) {
  // Seed 000: 1 / 10000^(2(i−1)/8), i = 1…4 → [1, 0.1, 0.01, 0.001].
  const auto theta = inverse_frequencies<mp_real>(8, mp_real(10000));
  ASSERT_EQ(theta.size(), 4u);
  const char* expected[] = {"1", "0.1", "0.01", "0.001"};
  for (int i = 0; i < 4; ++i)
    EXPECT_LT(abs(theta[i] - mp_real(expected[i])) / mp_real(expected[i]), tight_tolerance);
}

TEST(ReferenceForms, RejectInvalidParametersNamingThem) {
  const std::vector<mp_real> x(8, mp_real(1));
  auto message = [&](rotary_params<mp_real> p, std::span<const mp_real> v) {
    try {
      rope_elementwise<mp_real>(v, 3, p);
    } catch (const reference_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({8, 7, 10000, pairing::half_split, {}}, x),
            "rotary_dim: 7 is not an even number >= 2");
  EXPECT_EQ(message({8, 10, 10000, pairing::half_split, {}}, x), "rotary_dim: 10 exceeds head_dim 8");
  EXPECT_EQ(message({8, 8, 1, pairing::half_split, {}}, x).rfind("base: 1", 0), 0u);
  EXPECT_EQ(message({8, 8, 10000, pairing::half_split, {}}, std::span(x).first(6)),
            "x: has 6 elements, head_dim is 8");
  auto bad = x;
  bad[5] = std::numeric_limits<mp_real>::quiet_NaN();
  EXPECT_EQ(message({8, 8, 10000, pairing::half_split, {}}, bad).rfind("x[5]: ", 0), 0u);
  EXPECT_THROW(inverse_frequencies<mp_real>(5, mp_real(10000)), reference_error);
}

}  // namespace
}  // namespace ropecheck::reference
