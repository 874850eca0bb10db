// Properties across tiers and of RoPE's frequency construction:
//  * the double tier (the bulk oracle) within its documented 3·2^-53·‖pair‖ of the 266-bit
//    complex form, forward and inverse, positions over all of int32 (docs/double-tier.md);
//  * the sinusoidal encoding's shift: p_{k+Δ} = T(Δ)·p_k with one T(Δ) for two different k;
//  * RoFormer's long-term decay (§3.4.3), stated precisely in docs/error-bounds.md §12;
//  * fast::inverse_frequencies within 0.5 + 2^-6 ulp of the exact θ_j (error-bounds.md §4).
#include <gtest/gtest.h>

#include <complex>

#include "fast/frequencies.h"
#include "numeric/ulp.h"
#include "properties/gtest_support.h"
#include "properties/reference_cases.h"
#include "reference/double_tier.h"
#include "reference/frequencies.h"
#include "reference/rope_forms.h"
#include "reference/sinusoidal.h"

namespace ropecheck::properties {
namespace {

using namespace reference_support;

const std::vector<pairing> both_pairings{pairing::half_split, pairing::adjacent};

rope_spec spec_of(const rope_shape& s) {
  return rope_spec{s.head_dim, s.rotary_dim, s.base, s.pair, "generated"};
}

TEST(tier_properties, double_tier_within_documented_bound) {
  observation seen;
  testing::check_property(
      [&] {
        const auto s = *gen::shape(both_pairings, 512, true);
        const auto theta = gen::approximate_inverse_frequencies(s.rotary_dim, s.base);
        const auto positions =
            *gen::positions(*gen::uniform_int(1, 4), int32_position_limit + 1, theta, true);
        const auto rows =
            *gen::tensor_rows(dtype::float64, reference_value_range(), s, 1, positions, theta);
        const reference::double_tier tier(spec_of(s), positions, 1);
        const auto params = params_of(s);
        std::vector<double> y(static_cast<std::size_t>(s.head_dim));
        for (std::size_t t = 0; t < positions.size(); ++t) {
          const std::span<const double> x(rows.values.data() + t * static_cast<std::size_t>(s.head_dim),
                                          static_cast<std::size_t>(s.head_dim));
          const auto x_mp = to_mp(x);
          for (auto direction : {reference::rotation_direction::forward,
                                 reference::rotation_direction::inverse}) {
            tier.rotate(x, positions[t], y, direction);
            const auto exact = direction == reference::rotation_direction::forward
                                   ? reference::rope_complex<mp_real>(x_mp, positions[t], params)
                                   : reference::rope_inverse<mp_real>(x_mp, positions[t], params);
            for (int j = 0; j < s.rotary_dim / 2; ++j) {
              const auto [a, b] = pair_of(s.pair, s.rotary_dim, j);
              const mp_real r = sqrt(x_mp[a] * x_mp[a] + x_mp[b] * x_mp[b]);
              if (r == 0) continue;
              for (int k : {a, b}) {
                const double error = mp_real(abs(mp_real(y[k]) - exact[k]) / r).convert_to<double>();
                const double ratio = error / bounds::double_tier_pair_error_bound;
                seen.record(ratio, [&] {
                  return "m=" + std::to_string(positions[t]) + " j=" + std::to_string(j);
                });
                if (!(ratio <= 1))
                  RC_FAIL("double tier: |y - y_exact|/‖pair‖ = " + std::to_string(error) +
                          " > 3·2^-53 at m=" + std::to_string(positions[t]) + " j=" + std::to_string(j));
              }
            }
            for (int k = s.rotary_dim; k < s.head_dim; ++k) RC_ASSERT(y[k] == x[k]);
          }
        }
      },
      80, seen);
}

TEST(tier_properties, sinusoidal_shift_is_one_matrix_for_every_position) {
  observation seen;
  const int cap = profile_from_environment() == profile::deep ? 512 : 128;
  testing::check_property(
      [&] {
        const auto s = *gen::shape(std::vector<pairing>{pairing::adjacent}, cap);
        const int d_model = s.head_dim;
        const mp_real base(s.base);
        const auto delta = pick_position(s);
        const auto k1 = pick_position(s);
        const auto k2 = pick_position(s);
        const auto shift = reference::sinusoidal_shift_matrix<mp_real>(delta, d_model, base);
        for (std::int64_t k : {k1, k2}) {
          const auto p = reference::sinusoidal_encoding<mp_real>(k, d_model, base);
          const auto shifted = reference::sinusoidal_encoding<mp_real>(k + delta, d_model, base);
          require_close(distance(shift.apply(p), shifted, norm(p)), seen, "T(Δ)·p_k vs p_{k+Δ}");
        }
      },
      60, seen);
}

// A(r) = (2/d)·Σ_{j=1}^{d/2} |S_j(r)|, S_j(r) = Σ_{i<j} e^{i·r·θ_i}: RoFormer's relative upper
// bound on |Σ_j h_j e^{i r θ_j}| in units of max_j |h_{j+1} − h_j|.
double relative_upper_bound(std::int64_t r, const std::vector<double>& theta) {
  std::complex<double> partial = 0;
  double total = 0;
  for (double t : theta) {
    const double angle = static_cast<double>(r) * t;
    partial += std::complex<double>(std::cos(angle), std::sin(angle));
    total += std::abs(partial);
  }
  return total / static_cast<double>(theta.size());
}

TEST(tier_properties, long_term_decay) {
  observation seen;
  testing::check_property(
      [&] {
        // d >= 32: below that there are too few frequencies to average (error-bounds.md §12).
        const int d = 2 * static_cast<int>(*gen::uniform_int(16, 256));
        const double base = *gen::weighted_one_of<double>(
            {{1, gen::element_of(std::vector<double>{1e4, 5e5, 1e6})},
             {2, gen::log_uniform(10.0, 1e9)}});
        const std::int64_t far_start = static_cast<std::int64_t>(*gen::log_uniform(64.0, 0x1p30));
        std::vector<double> theta;
        for (const auto& t : reference::inverse_frequencies(d, mp_real(base)))
          theta.push_back(t.convert_to<double>());
        const double at_zero = (d / 2 + 1) / 2.0;  // |S_j(0)| = j
        double near = 0, far = 0;
        constexpr int near_count = 16, far_count = 64, far_step = 7;
        for (int r = 0; r < near_count; ++r) near += relative_upper_bound(r, theta) / near_count;
        for (int i = 0; i < far_count; ++i) {
          const double a = relative_upper_bound(far_start + far_step * i, theta);
          // |S_j(r)| <= j for every r (triangle inequality): A(r) <= A(0).
          if (!(a <= at_zero * (1 + 1e-12)))
            RC_FAIL("A(" + std::to_string(far_start + far_step * i) + ") = " + std::to_string(a) +
                    " exceeds A(0) = " + std::to_string(at_zero));
          far += a / far_count;
        }
        seen.record(far / near, [&] {
          return "d=" + std::to_string(d) + " base=" + std::to_string(base) +
                 " R=" + std::to_string(far_start);
        });
        if (!(far < near))
          RC_FAIL("no decay: mean A over r in [0, 16) = " + std::to_string(near) +
                  " <= mean over r = R + 7i, i < 64 = " + std::to_string(far) +
                  " (d=" + std::to_string(d) + ", base=" + std::to_string(base) +
                  ", R=" + std::to_string(far_start) + ")");
      },
      200, seen);
}

TEST(tier_properties, fast_inverse_frequencies_nearly_correctly_rounded) {
  // θ_j in long double (powl ≤ 1 ulp there, exponent −2j/d rounded in long double) then one
  // rounding to double: ≤ 0.5 ulp + (2 + ln(1e9) + 1)·2^-11 ulp < 0.5 + 2^-6 (error-bounds.md §4).
  constexpr double bound_ulps = 0.5 + 0x1p-6;
  observation seen;
  testing::check_property(
      [&] {
        const auto s = *gen::shape(both_pairings);
        const auto fast_theta = fast::inverse_frequencies(spec_of(s));
        const auto exact = reference::inverse_frequencies(s.rotary_dim, mp_real(s.base));
        RC_ASSERT(fast_theta.size() == exact.size());
        for (std::size_t j = 0; j < exact.size(); ++j) {
          const double ulps = ulp_distance(static_cast<long double>(fast_theta[j]),
                                           exact[j].convert_to<long double>(), dtype::float64);
          seen.record(ulps / bound_ulps, [&] { return "j=" + std::to_string(j); });
          if (!(ulps <= bound_ulps))
            RC_FAIL("θ_" + std::to_string(j) + " off by " + std::to_string(ulps) + " ulp");
        }
      },
      200, seen);
}

}  // namespace
}  // namespace ropecheck::properties
