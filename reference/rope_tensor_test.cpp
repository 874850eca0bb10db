// rope_tensor against the forms called one vector at a time: sharing the per-position work over
// heads and splitting rows over threads must not change a single output bit, in any form, and a
// float32 output is rounded once from 266 bits (not through double).
#include <gtest/gtest.h>

#include <mpfr.h>

#include <cstdint>
#include <vector>

#include "reference/real.h"
#include "reference/rope_forms.h"
#include "reference/rope_tensor.h"

namespace ropecheck::reference {
namespace {

rope_spec small_spec(pairing pair) {
  rope_spec spec;
  spec.head_dim = 10;
  spec.rotary_dim = 8;  // two pass-through dims
  spec.base = 10000.0;
  spec.pair = pair;
  return spec;
}

TEST(rope_tensor, equals_the_forms_vector_by_vector) {
  constexpr std::int64_t rows = 7, heads = 3;
  const std::vector<std::int64_t> positions{0, 1, 5, 1000, -3, 123456789, 2147483647};
  std::vector<double> x(static_cast<std::size_t>(rows * heads * 10));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 13) * 0.37 - 2.1;
  for (const pairing pair : {pairing::half_split, pairing::adjacent}) {
    const rope_spec spec = small_spec(pair);
    const auto params = params_from_spec<mp_real>(spec);
    for (const auto& [form, by_vector] :
         {std::pair{reference_form::elementwise, &rope_elementwise<mp_real>},
          std::pair{reference_form::complex, &rope_complex<mp_real>},
          std::pair{reference_form::matrix, &rope_matrix<mp_real>}}) {
      for (const auto output : {reference_output::float64, reference_output::float32}) {
        const auto y = rope_tensor(x, {rows, heads}, positions, spec, form, output);
        for (std::int64_t v = 0; v < rows * heads; ++v) {
          std::vector<mp_real> in(10);
          for (int c = 0; c < 10; ++c) in[c] = x[static_cast<std::size_t>(v * 10 + c)];
          const auto expected = by_vector(in, positions[static_cast<std::size_t>(v / heads)], params);
          for (int c = 0; c < 10; ++c) {
            const double want = output == reference_output::float32
                                    ? mpfr_get_flt(expected[c].backend().data(), MPFR_RNDN)
                                    : mpfr_get_d(expected[c].backend().data(), MPFR_RNDN);
            ASSERT_EQ(y[static_cast<std::size_t>(v * 10 + c)], want)
                << "form " << static_cast<int>(form) << " vector " << v << " coordinate " << c;
          }
        }
      }
    }
  }
}

TEST(rope_tensor, refuses_inconsistent_shapes) {
  const rope_spec spec = small_spec(pairing::half_split);
  const std::vector<double> x(20);
  const std::vector<std::int64_t> positions{0, 1, 2};
  EXPECT_THROW(rope_tensor(x, {3, 1}, positions, spec, reference_form::elementwise,
                           reference_output::float64),
               std::logic_error);
}

}  // namespace
}  // namespace ropecheck::reference
