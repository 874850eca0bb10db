#include "cli/rope_inputs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "io/io_error.h"
#include "io/npy.h"
#include "io/read_tensor.h"
#include "spec/spec_reader.h"

namespace ropecheck::cli {

rope_inputs read_rope_inputs(const rope_input_paths& paths) {
  rope_inputs in;
  in.spec = read_spec(paths.spec);
  in.x = read_tensor(paths.x, paths.x_name, paths.raw16);
  const auto& shape = in.x.shape;
  if (!is_floating(in.x.type))
    throw io_error(paths.x, "dtype", "is not a floating type", std::string(to_string(in.x.type)));
  if (shape.size() != 3 && shape.size() != 4)
    throw io_error(paths.x, "shape", "is not [tokens, heads, head_dim] or [batch, tokens, heads, head_dim]",
                   format_shape(shape));
  if (shape.back() != in.spec.head_dim)
    throw io_error(paths.x, "shape", "has a last dimension that is not the spec's head_dim",
                   format_shape(shape), fmt::format("head_dim {} from {}", in.spec.head_dim, paths.spec));
  in.heads = shape[shape.size() - 2];
  in.rows = shape.size() == 4 ? shape[0] * shape[1] : shape[0];

  const tensor pos = read_tensor(paths.positions, paths.positions_name, std::nullopt);
  if (pos.type != dtype::int32 && pos.type != dtype::int64)
    throw io_error(paths.positions, "dtype", "is not int32 or int64", std::string(to_string(pos.type)));
  const std::vector<std::int64_t> expected(shape.begin(), shape.end() - 2);
  const bool per_token = shape.size() == 4 && pos.shape.size() == 1 && pos.shape[0] == shape[1];
  if (pos.shape != expected && !per_token)
    throw io_error(paths.positions, "shape", "does not match the tokens of X", format_shape(pos.shape),
                   fmt::format("X {} has shape {}", paths.x, format_shape(shape)));
  std::vector<std::int64_t> values;
  if (pos.type == dtype::int32) {
    const auto v = pos.values<std::int32_t>();
    values.assign(v.begin(), v.end());
  } else {
    const auto v = pos.values<std::int64_t>();
    values.assign(v.begin(), v.end());
  }
  // Positions [tokens] with X [batch, tokens, ...]: every sequence of the batch uses them.
  in.positions.reserve(in.rows);
  for (std::int64_t r = 0; r < in.rows; ++r)
    in.positions.push_back(values[per_token ? r % shape[1] : r]);
  return in;
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

}  // namespace ropecheck::cli
