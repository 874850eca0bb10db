// The reference over a whole tensor (reference_tensor.h): the CLI's and Python's checks of the
// request, then reference::rope_tensor.
#include "core/reference_tensor.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/io_error.h"
#include "reference/rope_tensor.h"

namespace ropecheck::core {

tensor reference_tensor(const rope_inputs& in, std::string_view x_name, std::string_view form,
                        dtype out, double output_scale) {
  if (form != "elementwise" && form != "complex" && form != "matrix")
    throw std::invalid_argument(fmt::format(
        "form: unknown reference form '{}' (elementwise, complex or matrix)", form));
  if (out != dtype::float64 && out != dtype::float32)
    throw std::invalid_argument(fmt::format("out_dtype: '{}' is not float64 or float32", to_string(out)));
  require_finite(in.x, std::string(x_name));
  using reference::reference_form;
  const reference_form which = form == "complex"  ? reference_form::complex
                               : form == "matrix" ? reference_form::matrix
                                                  : reference_form::elementwise;
  const auto output = out == dtype::float32 ? reference::reference_output::float32
                                            : reference::reference_output::float64;
  const std::vector<double> y = reference::rope_tensor(to_float64(in.x, x_name), {in.rows, in.heads},
                                                       in.positions, in.spec, which, output,
                                                       output_scale);
  // y / S past the output dtype's range would be written as inf: no reference value at all.
  const double largest = out == dtype::float32 ? static_cast<double>(std::numeric_limits<float>::max())
                                               : std::numeric_limits<double>::max();
  for (std::size_t i = 0; i < y.size(); ++i)
    if (!(std::fabs(y[i]) <= largest))
      throw bad_input("output_scale",
                      fmt::format("makes y / S overflow {} (output {} of {}): no finite reference to write",
                                  to_string(out), i, y.size()),
                      fmt::format("{}", output_scale));
  return from_float64(y, in.x.shape, out);
}

}  // namespace ropecheck::core
