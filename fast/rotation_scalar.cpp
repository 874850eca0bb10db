// The portable rotation loop (rotation.h lists its operations).
#include "fast/rotation.h"

namespace ropecheck::fast::detail {

void rotate_chunk_scalar(const rotation_chunk& chunk) {
  const std::int64_t element = static_cast<std::int64_t>(size_of(chunk.storage));
  for (std::int64_t t = 0; t < chunk.tokens; ++t) {
    for (std::int64_t h = 0; h < chunk.heads; ++h) {
      const std::byte* in =
          chunk.input + (t * chunk.input_token_stride + h * chunk.input_head_stride) * element;
      std::byte* out =
          chunk.output + (t * chunk.output_token_stride + h * chunk.output_head_stride) * element;
      rotate_row_scalar(chunk, chunk.cos_sin_rows[t], in, out, 0);
      copy_pass_through(chunk, in, out);
    }
  }
}

}  // namespace ropecheck::fast::detail
