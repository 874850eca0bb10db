// rope_inputs: the spec, the tensor X and the positions every tensor-taking subcommand reads
// (reference, apply, audit), validated together: X is [tokens, heads, head_dim] or
// [batch, tokens, heads, head_dim]; POS is int32/int64 [tokens] or [batch, tokens], or with a
// spec's stream layout (M-RoPE, 2-D vision) [streams, tokens] or [streams, batch, tokens].
// Positions must be ones the spec allows (docs/spec.md, "Positions"): |m| <= 2^31 − 1 (the range the
// reference is derived for), below the spec's sequence_length when it gives one, and not
// negative when the scaling depends on the sequence length (dynamic NTK, LongRoPE), whose
// regime is defined by positions 0 … L − 1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/output_paths.h"
#include "io/tensor.h"
#include "numeric/dtype.h"
#include "spec/rope_spec.h"

namespace ropecheck::core {

struct rope_input_paths {
  std::string spec;
  std::string x;
  std::string positions;
  std::optional<std::string> x_name;          // tensor name inside a .safetensors file
  std::optional<std::string> positions_name;
  std::optional<dtype> raw16;                 // --dtype bfloat16/float8_*: raw bits are that dtype
  std::string layer_type;                     // --layer-type: which per-layer-type RoPE setup
  std::optional<std::int64_t> layer;          // --layer INDEX
  std::string tower = {};                     // --tower: text (default) or vision
};

// --spec, --x and --pos, as the inputs no output may overwrite (io/output_paths.h).
inline std::vector<flagged_path> input_paths(const rope_input_paths& paths) {
  return {{"--spec", paths.spec}, {"--x", paths.x}, {"--pos", paths.positions}};
}

// --out of reference and apply, checked before the run: a .npy path (the only format they
// write; a .safetensors name holding .npy bytes would fail later, far from the cause), and a
// usable output that is none of the inputs (io/output_paths.h).
void check_npy_output(const std::string& out, const rope_input_paths& inputs);

// A positions tensor checked against X's shape ([tokens] or [batch, tokens], int32/int64):
// `raw` as stored, `per_row` one per row of X ([tokens] positions repeat over the batch).
// Throws io_error naming the positions file (or X's) and the field.
struct row_positions {
  std::vector<std::int64_t> raw;
  std::vector<std::int64_t> per_row;
};
// With `streams` > 1 (M-RoPE 3, 2-D vision 2) the file is [streams, tokens] or
// [streams, batch, tokens], and per_row holds streams × rows values, stream-major.
row_positions positions_of_rows(const tensor& positions, const std::vector<std::int64_t>& x_shape,
                                const std::string& positions_file, const std::string& x_file,
                                int streams = 1);

struct rope_inputs {
  rope_spec spec;
  tensor x;
  std::int64_t rows = 0;    // batch × tokens: one position per row
  std::int64_t heads = 0;
  int streams = 1;           // position streams per token (the spec's stream layout)
  std::vector<std::int64_t> positions;  // one per row, per stream: streams × rows, stream-major
  std::vector<std::int64_t> positions_shape;  // as in the positions file
};

// "element [b, t]" (or "element [t]", "[s, t]", "[s, b, t]"): the positions file's element
// that positions[index] came from, for a one-line error about that position.
std::string position_field(const rope_inputs& in, std::int64_t index);

// Throws spec_error or io_error with a one-line message naming file, field and value.
rope_inputs read_rope_inputs(const rope_input_paths& paths);

// The same checks on a spec and tensors already in memory (the Python module's arrays);
// `paths` only names them in messages (e.g. "x", "positions").
rope_inputs make_rope_inputs(rope_spec spec, tensor x, const tensor& positions,
                             const rope_input_paths& paths);

// Throws io_error naming the first non-finite element as [b, t, h, d] (or [t, h, d]).
void require_finite(const tensor& t, const std::string& file);

}  // namespace ropecheck::core
