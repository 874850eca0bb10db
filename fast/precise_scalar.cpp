// The portable precise kernel (`precise_scalar`) and the portable double cos/sin rows: the
// operation list of precise_rotation.h written with scalars.
#include <cmath>

#include "fast/cos_sin.h"
#include "fast/precise_rotation.h"

namespace ropecheck::fast::detail {

void fill_precise_cos_sin_rows_portable(const std::int64_t* positions, std::int64_t count,
                                        const double* theta, std::int64_t pairs,
                                        double attention_factor, double* rows) {
  for (std::int64_t i = 0; i < count; ++i) {
    const double m = static_cast<double>(positions[i]);
    double* row = rows + i * 2 * pairs;
    for (std::int64_t j = 0; j < pairs; ++j) {
      const double hi = m * theta[j];
      const double lo = std::fma(m, theta[j], -hi);
      const sin_cos x = sin_cos_of(hi, lo);  // the float32 rows' values, kept in double
      row[j] = x.cos * attention_factor;
      row[pairs + j] = x.sin * attention_factor;
    }
  }
}

void rotate_chunk_precise_scalar(const rotation_chunk& chunk) {
  const std::int64_t element = static_cast<std::int64_t>(size_of(chunk.storage));
  for (std::int64_t t = 0; t < chunk.tokens; ++t) {
    for (std::int64_t h = 0; h < chunk.heads; ++h) {
      const std::byte* in =
          chunk.input + (t * chunk.input_token_stride + h * chunk.input_head_stride) * element;
      std::byte* out =
          chunk.output + (t * chunk.output_token_stride + h * chunk.output_head_stride) * element;
      rotate_row_precise(chunk, chunk.precise_rows[t], in, out, 0);
      copy_pass_through(chunk, in, out);
    }
  }
}

}  // namespace ropecheck::fast::detail
