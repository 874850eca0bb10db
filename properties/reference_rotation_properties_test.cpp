// Algebraic properties of the 266-bit reference rotation (RoFormer §3.4), each to 2^-200
// relative: norm preservation, f(x, 0) = x exactly, composition f(f(x, a), b) = f(x, a + b),
// the inverse, linearity, and relative-offset invariance of the attention score
// ⟨f(q, m), f(k, n)⟩ = ⟨f(q, m + s), f(k, n + s)⟩ = g(q, k, m − n).
// Positions cover all of int32 (negative ones included); vectors span 2^±200 with pairs set to
// cancel at their angle.
#include <gtest/gtest.h>

#include "properties/gtest_support.h"
#include "properties/reference_cases.h"
#include "reference/rope_forms.h"

namespace ropecheck::properties {
namespace {

using namespace reference_support;
using reference::rope_complex;
using reference::rope_elementwise;
using reference::rope_inverse;

const std::vector<pairing> both_pairings{pairing::half_split, pairing::adjacent};

TEST(reference_properties, norm_preserved) {
  observation seen;
  testing::check_property(
      [&] {
        const auto s = *gen::shape(both_pairings);
        const auto m = pick_position(s);
        const auto x = pick_vector(s, m);
        const auto y = rope_complex<mp_real>(x, m, params_of(s));
        const mp_real n = norm(x);
        require_close(abs(norm(y) - n) / n, seen, "‖f(x, m)‖ vs ‖x‖");
        // And pair by pair: a rotation preserves each pair's norm.
        for (int j = 0; j < s.rotary_dim / 2; ++j) {
          const auto [a, b] = pair_of(s.pair, s.rotary_dim, j);
          const mp_real before = sqrt(x[a] * x[a] + x[b] * x[b]);
          const mp_real after = sqrt(y[a] * y[a] + y[b] * y[b]);
          if (before > 0) require_close(abs(after - before) / before, seen, "pair norm");
        }
      },
      100, seen);
}

TEST(reference_properties, position_zero_is_identity) {
  observation seen;
  testing::check_property(
      [&] {
        const auto s = *gen::shape(both_pairings, 128);
        const auto x = pick_vector(s, 0);
        for (const auto& y : {rope_elementwise<mp_real>(x, 0, params_of(s)),
                              rope_complex<mp_real>(x, 0, params_of(s)),
                              reference::rope_matrix<mp_real>(x, 0, params_of(s)),
                              rope_inverse<mp_real>(x, 0, params_of(s))}) {
          // cos 0 = 1 and sin 0 = 0 exactly, so every form returns x exactly.
          for (std::size_t i = 0; i < x.size(); ++i) {
            if (y[i] != x[i])
              RC_FAIL("f(x, 0)[" + std::to_string(i) + "] = " + y[i].str(20) + " != x = " + x[i].str(20));
          }
        }
      },
      60, seen);
}

TEST(reference_properties, composition_adds_positions) {
  observation seen;
  testing::check_property(
      [&] {
        const auto s = *gen::shape(both_pairings);
        const auto a = pick_position(s);
        const auto b = pick_position(s);
        const auto x = pick_vector(s, a);
        const auto params = params_of(s);
        const auto twice = rope_elementwise<mp_real>(rope_elementwise<mp_real>(x, a, params), b, params);
        const auto once = rope_complex<mp_real>(x, a + b, params);
        require_close(distance(twice, once, norm(x)), seen, "f(f(x, a), b) vs f(x, a + b)");
      },
      80, seen);
}

TEST(reference_properties, inverse_undoes_rotation) {
  observation seen;
  testing::check_property(
      [&] {
        const auto s = *gen::shape(both_pairings);
        const auto m = pick_position(s);
        const auto x = pick_vector(s, m);
        const auto params = params_of(s);
        const auto back = rope_inverse<mp_real>(rope_elementwise<mp_real>(x, m, params), m, params);
        require_close(distance(back, x, norm(x)), seen, "f⁻¹(f(x, m), m) vs x");
        // The inverse is the rotation by −m.
        require_close(distance(rope_inverse<mp_real>(x, m, params),
                               rope_complex<mp_real>(x, -m, params), norm(x)),
                      seen, "f⁻¹(x, m) vs f(x, −m)");
      },
      80, seen);
}

TEST(reference_properties, linear_in_x) {
  observation seen;
  testing::check_property(
      [&] {
        const auto s = *gen::shape(both_pairings);
        const auto m = pick_position(s);
        const auto x = pick_vector(s, m);
        const auto y = pick_vector(s, m);
        const auto range = reference_value_range();
        const mp_real alpha = *gen::any_value(range);
        const mp_real beta = *gen::any_value(range);
        const auto params = params_of(s);
        std::vector<mp_real> combined(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) combined[i] = alpha * x[i] + beta * y[i];
        const auto fx = rope_elementwise<mp_real>(x, m, params);
        const auto fy = rope_elementwise<mp_real>(y, m, params);
        std::vector<mp_real> expected(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) expected[i] = alpha * fx[i] + beta * fy[i];
        const mp_real scale = abs(alpha) * norm(x) + abs(beta) * norm(y);
        require_close(distance(rope_elementwise<mp_real>(combined, m, params), expected, scale),
                      seen, "f(αx + βy) vs αf(x) + βf(y)");
      },
      80, seen);
}

mp_real dot(std::span<const mp_real> a, std::span<const mp_real> b) {
  mp_real sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

TEST(reference_properties, attention_score_depends_only_on_offset) {
  observation seen;
  testing::check_property(
      [&] {
        const auto s = *gen::shape(both_pairings);
        const auto m = pick_position(s);
        const auto n = pick_position(s);
        const auto shift = pick_position(s);
        const auto q = pick_vector(s, m);
        const auto k = pick_vector(s, n);
        const auto params = params_of(s);
        const mp_real scale = norm(q) * norm(k);
        const mp_real score = dot(rope_elementwise<mp_real>(q, m, params),
                                  rope_complex<mp_real>(k, n, params));
        const mp_real shifted = dot(rope_complex<mp_real>(q, m + shift, params),
                                    rope_elementwise<mp_real>(k, n + shift, params));
        const mp_real g = reference::attention_score<mp_real>(q, k, m - n, params);
        require_close(abs(score - shifted) / scale, seen, "⟨f(q,m), f(k,n)⟩ vs ⟨f(q,m+s), f(k,n+s)⟩");
        require_close(abs(score - g) / scale, seen, "⟨f(q,m), f(k,n)⟩ vs g(q, k, m − n)");
      },
      80, seen);
}

}  // namespace
}  // namespace ropecheck::properties
