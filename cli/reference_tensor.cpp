// The reference over a whole tensor (reference_tensor.h); rounding straight from 256 bits.
#include "cli/reference_tensor.h"

#include <fmt/format.h>
#include <mpfr.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/real.h"
#include "reference/rope_forms.h"

namespace ropecheck::cli {

tensor reference_tensor(const rope_inputs& in, std::string_view x_name, std::string_view form,
                        dtype out) {
  using reference::mp_real;
  if (form != "elementwise" && form != "complex" && form != "matrix")
    throw std::invalid_argument(fmt::format(
        "form: unknown reference form '{}' (elementwise, complex or matrix)", form));
  if (out != dtype::float64 && out != dtype::float32)
    throw std::invalid_argument(fmt::format("out_dtype: '{}' is not float64 or float32", to_string(out)));
  require_finite(in.x, std::string(x_name));
  // Length-dependent scalings (dynamic NTK, LongRoPE) see max position + 1 unless the spec
  // gives a sequence_length, as the double tier and the kernels do.
  std::int64_t length = 0;
  for (std::int64_t m : in.positions) length = std::max(length, m + 1);
  const auto params = reference::params_from_spec<mp_real>(in.spec, length);
  const auto apply = form == "complex"  ? &reference::rope_complex<mp_real>
                     : form == "matrix" ? &reference::rope_matrix<mp_real>
                                        : &reference::rope_elementwise<mp_real>;
  const int d = in.spec.head_dim;
  const std::vector<double> x = to_float64(in.x, x_name);
  std::vector<double> y(x.size());
  std::vector<mp_real> vector_in(d);
  for (std::int64_t row = 0; row < in.rows; ++row) {
    for (std::int64_t h = 0; h < in.heads; ++h) {
      const std::size_t offset = static_cast<std::size_t>((row * in.heads + h) * d);
      for (int c = 0; c < d; ++c) vector_in[c] = x[offset + c];
      const auto result = apply(vector_in, in.positions[row], params);
      for (int c = 0; c < d; ++c) {
        // Round once from 256 bits to the output type (never via double for float32).
        y[offset + c] = out == dtype::float32 ? mpfr_get_flt(result[c].backend().data(), MPFR_RNDN)
                                              : mpfr_get_d(result[c].backend().data(), MPFR_RNDN);
      }
    }
  }
  return from_float64(y, in.x.shape, out);
}

}  // namespace ropecheck::cli
