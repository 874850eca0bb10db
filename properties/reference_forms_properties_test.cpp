// The reference forms against one another, to 2^-200 relative: elementwise (HF rotate_half /
// GPT-J rotate_every_two) = complex (Meta freqs_cis, MPC) = matrix (RoFormer eq. 13); the two
// pairings are the same rotation under their fixed permutation; R is orthogonal (RᵀR = I);
// explicit inverse frequencies equal to base^(−2j/d) change nothing; invalid shapes are refused.
// The matrix forms cost O(d²) (apply) and O(d³) (RᵀR) MPFR operations, so their dims are
// capped in the quick profile (96 and 32) and not in the deep one.
#include <gtest/gtest.h>

#include "properties/gtest_support.h"
#include "properties/reference_cases.h"
#include "reference/frequencies.h"
#include "reference/rope_forms.h"

namespace ropecheck::properties {
namespace {

using namespace reference_support;

const std::vector<pairing> both_pairings{pairing::half_split, pairing::adjacent};

int matrix_dim_cap(int quick_cap) {
  return profile_from_environment() == profile::deep ? 512 : quick_cap;
}

// RᵀR at dims up to 512 is ~0.7 s a case at 266 bits (O(d³)): 500 deep cases, ~6 CPU-minutes.
constexpr int orthogonality_deep_cases = 500;

TEST(reference_properties, elementwise_and_complex_forms_agree) {
  observation seen;
  testing::check_property(
      [&] {
        const auto s = *gen::shape(both_pairings);
        const auto m = pick_position(s);
        const auto x = pick_vector(s, m);
        const auto params = params_of(s);
        require_close(distance(reference::rope_elementwise<mp_real>(x, m, params),
                               reference::rope_complex<mp_real>(x, m, params), norm(x)),
                      seen, "elementwise vs complex");
      },
      100, seen);
}

TEST(reference_properties, matrix_form_agrees) {
  observation seen;
  const int cap = matrix_dim_cap(96);
  testing::check_property(
      [&] {
        const auto s = *gen::shape(both_pairings, cap, true);
        const auto m = pick_position(s);
        const auto x = pick_vector(s, m);
        const auto params = params_of(s);
        require_close(distance(reference::rope_matrix<mp_real>(x, m, params),
                               reference::rope_elementwise<mp_real>(x, m, params), norm(x)),
                      seen, "matrix vs elementwise");
      },
      60, seen);
}

// half_split pairs (j, j + d/2); adjacent pairs (2j, 2j + 1). With P the permutation that moves
// coordinate j to 2j and j + d/2 to 2j + 1 (pass-through dims fixed):
//   rope_half(x) = P⁻¹ rope_adjacent(P x).
std::vector<mp_real> half_to_adjacent(std::span<const mp_real> x, int rotary_dim) {
  std::vector<mp_real> y(x.begin(), x.end());
  for (int j = 0; j < rotary_dim / 2; ++j) {
    y[2 * j] = x[j];
    y[2 * j + 1] = x[j + rotary_dim / 2];
  }
  return y;
}

std::vector<mp_real> adjacent_to_half(std::span<const mp_real> x, int rotary_dim) {
  std::vector<mp_real> y(x.begin(), x.end());
  for (int j = 0; j < rotary_dim / 2; ++j) {
    y[j] = x[2 * j];
    y[j + rotary_dim / 2] = x[2 * j + 1];
  }
  return y;
}

TEST(reference_properties, pairings_related_by_permutation) {
  observation seen;
  testing::check_property(
      [&] {
        auto s = *gen::shape(std::vector<pairing>{pairing::half_split}, 512, true);
        const auto m = pick_position(s);
        const auto x = pick_vector(s, m);
        const auto half = reference::rope_complex<mp_real>(x, m, params_of(s));
        s.pair = pairing::adjacent;
        const auto adjacent = reference::rope_elementwise<mp_real>(
            half_to_adjacent(x, s.rotary_dim), m, params_of(s));
        require_close(distance(half, adjacent_to_half(adjacent, s.rotary_dim), norm(x)), seen,
                      "rope_half(x) vs P⁻¹ rope_adjacent(P x)");
      },
      100, seen);
}

TEST(reference_properties, rotation_matrix_orthogonal) {
  observation seen;
  const int cap = matrix_dim_cap(32);
  testing::check_property(
      [&] {
        const auto s = *gen::shape(both_pairings, cap, true);
        const auto m = pick_position(s);
        const auto r = reference::rotation_matrix<mp_real>(m, params_of(s));
        const auto product = r.transpose() * r;
        mp_real worst = 0;
        for (int i = 0; i < r.n; ++i)
          for (int j = 0; j < r.n; ++j)
            worst = std::max(worst, mp_real(abs(product(i, j) - (i == j ? 1 : 0))));
        require_close(worst, seen, "max |RᵀR − I|");
      },
      40, seen, orthogonality_deep_cases);
}

TEST(reference_properties, explicit_frequencies_equal_base_frequencies) {
  observation seen;
  testing::check_property(
      [&] {
        const auto s = *gen::shape(both_pairings, 128);
        const auto m = pick_position(s);
        const auto x = pick_vector(s, m);
        auto explicit_params = params_of(s);
        explicit_params.explicit_inverse_frequencies =
            reference::inverse_frequencies(s.rotary_dim, mp_real(s.base));
        const auto params = params_of(s);
        require_close(distance(reference::rope_elementwise<mp_real>(x, m, explicit_params),
                               reference::rope_complex<mp_real>(x, m, params), norm(x)),
                      seen, "elementwise(explicit θ) vs complex(base)");
        require_close(distance(reference::rope_matrix<mp_real>(x, m, explicit_params),
                               reference::rope_inverse<mp_real>(x, -m, params), norm(x)),
                      seen, "matrix(explicit θ) vs inverse(base, −m)");
      },
      60, seen);
}

TEST(reference_properties, invalid_shapes_are_refused) {
  observation seen;
  testing::check_property(
      [&] {
        const auto dims = *gen::invalid_dims_for(64);
        const double base = *gen::log_uniform(2.0, 1e9);
        const reference::rotary_params<mp_real> params{dims.head_dim, dims.rotary_dim,
                                                       mp_real(base), pairing::half_split, {}};
        const std::vector<mp_real> x(static_cast<std::size_t>(dims.head_dim), mp_real(1));
        auto refused = [&](auto&& call, const char* form) {
          try {
            call();
          } catch (const reference::reference_error& e) {
            const std::string message = e.what();
            // The message names the offending parameter (head_dim 1 is invalid by itself).
            if (message.find("rotary_dim") == std::string::npos &&
                message.find("head_dim") == std::string::npos)
              RC_FAIL(std::string(form) + " refused with a message naming no dim: " + message);
            return;
          }
          RC_FAIL(std::string(form) + " accepted an invalid shape");
        };
        refused([&] { (void)reference::rope_elementwise<mp_real>(x, 3, params); }, "elementwise");
        refused([&] { (void)reference::rope_complex<mp_real>(x, 3, params); }, "complex");
        refused([&] { (void)reference::rope_matrix<mp_real>(x, 3, params); }, "matrix");
        refused([&] { (void)reference::rope_inverse<mp_real>(x, 3, params); }, "inverse");
        refused([&] { (void)reference::attention_score<mp_real>(x, x, 3, params); }, "score");
      },
      100, seen);
}

}  // namespace
}  // namespace ropecheck::properties
