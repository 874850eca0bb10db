// Assembles an audit's inputs (audit_input.h).
#include "core/audit_input.h"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>
#include <utility>

#include "audit/config_neighbours.h"
#include "audit/judgeable.h"
#include "core/flag_values.h"
#include "io/io_error.h"

namespace ropecheck::core {

audit::audit_input make_audit_input(rope_inputs in, tensor y, const rope_input_paths& paths,
                                    const std::string& y_name, std::optional<dtype> judged,
                                    std::optional<double> tolerance, float output_scale) {
  if (y.shape != in.x.shape)
    throw io_error(y_name, "shape", "does not match X", format_shape(y.shape),
                   fmt::format("X {} has shape {}", paths.x, format_shape(in.x.shape)));
  if (!is_floating(y.type))
    throw io_error(y_name, "dtype", "is not a floating type", std::string(to_string(y.type)));
  if (tolerance) positive_finite_flag("--tolerance", *tolerance);
  if (tolerance && *tolerance >= audit::max_tolerance_units)
    throw bad_input("--tolerance",
                    "is 2^24 units or more: an error as large as the rotated pair, so a zero output would pass",
                    fmt::format("{}", *tolerance));
  audit::audit_input input;
  input.spec = in.spec;
  input.x = std::move(in.x);
  input.y = std::move(y);
  input.heads = in.heads;
  input.tokens_per_sequence = input.x.shape.size() == 4 ? input.x.shape[1] : input.x.shape[0];
  if (in.streams > 1) {
    input.stream_positions = in.positions;
    in.positions.resize(static_cast<std::size_t>(in.rows));  // stream 0 (t, or row): what reports show
  }
  input.positions = std::move(in.positions);
  input.judged = judged.value_or(input.y.type);
  input.tolerance_units = tolerance;
  // An output scale applies to fp8 only (fast/rope_call.h): anything else is refused, exit 2.
  if (output_scale != 1.0f && !is_float8(input.judged))
    throw bad_input("--output-scale",
                    fmt::format("applies to fp8 outputs only, Y is judged as {}", to_string(input.judged)),
                    fmt::format("{}", output_scale),
                    "pass --dtype " + dtype_list_text(storage_dtypes_of_width<1>, "|", "|") + " for fp8 bits");
  input.output_scale = output_scale;
  input.spec_file = paths.spec;
  // A config with one RoPE setup per layer type: the others, which the diagnosis tries as a
  // config mistake (audit/config_neighbours.h). Python's specs in memory have no file to read.
  if (!input.spec.layer_type.empty() && std::filesystem::is_regular_file(paths.spec))
    input.other_layer_types = audit::other_layer_type_specs(paths.spec, input.spec.layer_type, paths.tower);
  input.x_file = paths.x;
  input.positions_file = paths.positions;
  input.y_file = y_name;
  return input;
}

}  // namespace ropecheck::core
