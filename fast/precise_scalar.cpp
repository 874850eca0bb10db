// The portable precise kernel (`precise_scalar`) and the portable double cos/sin rows: the
// operation list of precise_rotation.h written with scalars.
#include <cmath>
#include <cstring>

#include "fast/cos_sin_polynomial.h"
#include "fast/precise_rotation.h"

namespace ropecheck::fast::detail {

namespace {

namespace k = cos_sin_constants;

// 1.5·2^52: adding it rounds |x| < 2^51 to an integer (nearest, ties to even) held in the low
// bits of the sum's significand.
constexpr double round_shift = 0x1.8p52;

template <std::size_t n>
double horner(double z, const double (&c)[n]) {
  double acc = c[0];
  for (std::size_t i = 1; i < n; ++i) acc = std::fma(z, acc, c[i]);
  return acc;
}

}  // namespace

void fill_precise_cos_sin_rows_portable(const std::int64_t* positions, std::int64_t count,
                                        const double* theta, std::int64_t pairs,
                                        double attention_factor, double* rows) {
  for (std::int64_t i = 0; i < count; ++i) {
    const double m = static_cast<double>(positions[i]);
    double* row = rows + i * 2 * pairs;
    for (std::int64_t j = 0; j < pairs; ++j) {
      const double hi = m * theta[j];
      const double lo = std::fma(m, theta[j], -hi);
      const double shifted = hi * k::two_over_pi + round_shift;
      const double quarter_turns = shifted - round_shift;
      std::uint64_t shifted_bits;
      std::memcpy(&shifted_bits, &shifted, sizeof shifted_bits);
      const std::uint64_t q = shifted_bits & 3;
      double r = std::fma(-quarter_turns, k::half_pi_hi, hi);
      r = std::fma(-quarter_turns, k::half_pi_lo, r);
      r = r + lo;
      const double z = r * r;
      const double sin_r = std::fma(r * z, horner(z, k::sin_horner), r);
      const double cos_r = std::fma(z, horner(z, k::cos_horner), 1.0);
      const double sin_q = (q & 1) != 0 ? cos_r : sin_r;
      const double cos_q = (q & 1) != 0 ? sin_r : cos_r;
      const double sin_v = (q & 2) != 0 ? -sin_q : sin_q;
      const double cos_v = ((q + 1) & 2) != 0 ? -cos_q : cos_q;
      row[j] = cos_v * attention_factor;
      row[pairs + j] = sin_v * attention_factor;
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
