// Reads and validates the spec, X and the positions of reference/apply/audit together
// (rope_inputs.h): shapes, dtypes and the positions the spec allows.
#include "core/rope_inputs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <span>

#include "io/io_error.h"
#include "io/npy.h"
#include "io/read_tensor.h"
#include "reference/rotary_params.h"
#include "spec/spec_reader.h"

namespace ropecheck::core {


namespace {

// "element [b, t]", "element [t]" (or "[s, b, t]", "[s, t]" with position streams) of a
// positions file of that shape.
std::string element_field(std::span<const std::int64_t> shape, std::int64_t flat) {
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    const std::int64_t extent = std::max<std::int64_t>(shape[k], 1);
    index[k] = k == 0 ? flat : flat % extent;
    flat /= extent;
  }
  return fmt::format("element [{}]", fmt::join(index, ", "));
}

// The positions the spec allows (rope_inputs.h); the first one it does not is an io_error
// naming the positions file, the element and the value.
void check_positions(std::span<const std::int64_t> values, const rope_inputs& in,
                     const rope_input_paths& paths) {
  const rope_spec& spec = in.spec;
  const bool length_dependent = depends_on_sequence_length(spec);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::int64_t m = values[i];
    const auto fail = [&](const std::string& problem, const std::string& note = {}) {
      throw io_error(paths.positions, element_field(in.positions_shape, static_cast<std::int64_t>(i)),
                     problem, std::to_string(m), note);
    };
    if (spec.sequence_length > 0 && m >= spec.sequence_length)
      fail(fmt::format("position at or past the spec's sequence_length {}", spec.sequence_length),
           fmt::format("{}: the sequence has positions 0 ... {}", paths.spec, spec.sequence_length - 1));
    if (length_dependent && m < 0)
      fail(fmt::format("negative position, but rope_scaling \"{}\" depends on the sequence length",
                       to_string(type_of(spec.scaling))),
           "its regime is defined by positions 0 ... L - 1");
  }
}

}  // namespace

rope_inputs read_rope_inputs(const rope_input_paths& paths) {
  spec_options options{paths.layer_type, paths.tower};
  options.layer = paths.layer;
  rope_spec spec = read_spec(paths.spec, options);
  tensor x = read_tensor(paths.x, paths.x_name, paths.raw16);
  const tensor pos = read_tensor(paths.positions, paths.positions_name, std::nullopt);
  return make_rope_inputs(std::move(spec), std::move(x), pos, paths);
}

row_positions positions_of_rows(const tensor& pos, const std::vector<std::int64_t>& shape,
                                const std::string& positions_file, const std::string& x_file,
                                int streams) {
  if (pos.type != dtype::int32 && pos.type != dtype::int64)
    throw io_error(positions_file, "dtype", "is not int32 or int64", std::string(to_string(pos.type)));
  const std::vector<std::int64_t> expected(shape.begin(), shape.end() - 2);
  // With position streams the first dimension is the stream: [3, tokens], [3, batch, tokens].
  if (streams > 1 && (pos.shape.empty() || pos.shape[0] != streams))
    throw io_error(positions_file, "shape",
                   fmt::format("is not [{0}, tokens] or [{0}, batch, tokens]: the spec's stream layout "
                               "has {0} position streams per token", streams),
                   format_shape(pos.shape), fmt::format("X {} has shape {}", x_file, format_shape(shape)));
  const std::vector<std::int64_t> inner(pos.shape.begin() + (streams > 1 ? 1 : 0), pos.shape.end());
  const bool per_token = shape.size() == 4 && inner.size() == 1 && inner[0] == shape[1];
  if (inner != expected && !per_token)
    throw io_error(positions_file, "shape",
                   streams > 1 ? "does not match the tokens of X (after the stream dimension)"
                               : "does not match the tokens of X",
                   format_shape(pos.shape), fmt::format("X {} has shape {}", x_file, format_shape(shape)));
  row_positions p;
  if (pos.type == dtype::int32) {
    const auto v = pos.values<std::int32_t>();
    p.raw.assign(v.begin(), v.end());
  } else {
    const auto v = pos.values<std::int64_t>();
    p.raw.assign(v.begin(), v.end());
  }
  // The reference and its double tier are derived for |m| <= 2^31 - 1.
  for (std::size_t i = 0; i < p.raw.size(); ++i)
    if (p.raw[i] > reference::max_abs_position || p.raw[i] < -reference::max_abs_position)
      throw io_error(positions_file, element_field(pos.shape, static_cast<std::int64_t>(i)),
                     "position outside |m| <= 2^31 - 1, the range the reference is derived for",
                     std::to_string(p.raw[i]));
  const std::int64_t rows = shape.size() == 4 ? shape[0] * shape[1] : shape[0];
  const std::int64_t per_stream = static_cast<std::int64_t>(p.raw.size()) / streams;
  p.per_row.reserve(static_cast<std::size_t>(rows * streams));
  for (int s = 0; s < streams; ++s)
    for (std::int64_t r = 0; r < rows; ++r)
      p.per_row.push_back(p.raw[static_cast<std::size_t>(s * per_stream + (per_token ? r % shape[1] : r))]);
  return p;
}

rope_inputs make_rope_inputs(rope_spec spec, tensor x, const tensor& pos,
                             const rope_input_paths& paths) {
  rope_inputs in;
  in.spec = std::move(spec);
  in.x = std::move(x);
  const auto& shape = in.x.shape;
  if (!is_floating(in.x.type))
    throw io_error(paths.x, "dtype", "is not a floating type", std::string(to_string(in.x.type)));
  if (shape.size() != 3 && shape.size() != 4)
    throw io_error(paths.x, "shape", "is not [tokens, heads, head_dim] or [batch, tokens, heads, head_dim]",
                   format_shape(shape));
  if (shape.back() != in.spec.head_dim)
    throw io_error(paths.x, "shape", "has a last dimension that is not the spec's head_dim",
                   format_shape(shape), fmt::format("head_dim {} from {}", in.spec.head_dim, paths.spec));
  // Nothing to compute or judge: refused here, never a pass over 0 outputs.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end())
    throw io_error(paths.x, "shape", "has a dimension of 0 (no tokens, no heads or a batch of 0): nothing to check",
                   format_shape(shape));
  in.heads = shape[shape.size() - 2];
  in.rows = shape.size() == 4 ? shape[0] * shape[1] : shape[0];

  in.streams = in.spec.streams.streams();
  row_positions p = positions_of_rows(pos, shape, paths.positions, paths.x, in.streams);
  in.positions_shape = pos.shape;
  check_positions(p.raw, in, paths);
  in.positions = std::move(p.per_row);
  return in;
}

void check_npy_output(const std::string& out, const rope_input_paths& inputs) {
  if (std::filesystem::path(out).extension() != ".npy")
    throw bad_input("--out", "is not a .npy path (reference and apply write .npy)", out);
  check_outputs({{"--out", out}}, input_paths(inputs));
}

std::string position_field(const rope_inputs& in, std::int64_t index) {
  const auto& shape = in.positions_shape;
  const std::int64_t stream = index / std::max<std::int64_t>(in.rows, 1);
  const std::int64_t row = index % std::max<std::int64_t>(in.rows, 1);
  const std::size_t token_dims = shape.size() - (in.streams > 1 ? 1 : 0);
  const std::int64_t per_stream = token_dims == 1 ? shape.back() : in.rows;
  // A [tokens] file broadcast over a batched X: row r reads element r mod tokens.
  const std::int64_t within = token_dims == 1 ? row % std::max<std::int64_t>(shape.back(), 1) : row;
  return element_field(shape, stream * per_stream + within);
}

void require_finite(const tensor& t, const std::string& file) {
  const std::vector<double> v = to_float64(t, file);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (std::isfinite(v[i])) continue;
    std::vector<std::int64_t> index(t.shape.size());
    std::size_t rest = i;
    for (std::size_t k = t.shape.size(); k-- > 0;) {
      index[k] = static_cast<std::int64_t>(rest % t.shape[k]);
      rest /= t.shape[k];
    }
    throw io_error(file, fmt::format("element [{}]", fmt::join(index, ", ")), "is not finite",
                   fmt::format("{}", v[i]));
  }
}

}  // namespace ropecheck::core
