// ropecheck reference --spec SPEC.json --x X.npy --pos POS.npy --out Y.npy
//                     [--form elementwise|complex|matrix] [--out-dtype float64|float32]
//                     [--output-scale S]
// Applies the 256-bit reference to every head vector of X at its token's position and writes
// the result rounded once to the output dtype.
#include <optional>

#include "cli/commands.h"
#include "cli/spec_options.h"
#include "cli/exit_codes.h"
#include "cli/decimal_options.h"
#include "core/reference_tensor.h"
#include "core/rope_inputs.h"
#include "io/npy.h"

namespace ropecheck::cli {
namespace {

struct reference_options {
  rope_input_paths inputs;
  std::string out;
  std::string form = "elementwise";
  std::string out_dtype = "float64";
  std::optional<float> output_scale;  // --output-scale S: write y / S
};

int run_reference(const reference_options& options) {
  check_npy_output(options.out, options.inputs);
  const float output_scale = options.output_scale.value_or(1.0f);
  const rope_inputs in = read_rope_inputs(options.inputs);
  write_npy(options.out, reference_tensor(in, options.inputs.x, options.form,
                                          *parse_dtype(options.out_dtype), output_scale));
  return exit_pass;
}

}  // namespace

void add_reference_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<reference_options>();
  CLI::App* cmd = app.add_subcommand(
      "reference", "Apply the 256-bit reference RoPE to a tensor and write the result");
  add_spec_options(*cmd, options->inputs);
  cmd->add_option("--x", options->inputs.x, "input X.npy: [tokens, heads, head_dim] or "
                                            "[batch, tokens, heads, head_dim]")
      ->required();
  cmd->add_option("--pos", options->inputs.positions, "positions POS.npy: int32/int64 [tokens] "
                                                      "or [batch, tokens]")
      ->required();
  cmd->add_option("--out", options->out, "output Y.npy (written atomically)")->required();
  cmd->add_option("--form", options->form, "reference form")
      ->check(CLI::IsMember({"elementwise", "complex", "matrix"}))
      ->capture_default_str();
  cmd->add_option("--out-dtype", options->out_dtype, "output dtype")
      ->check(CLI::IsMember({"float64", "float32"}))
      ->capture_default_str();
  add_output_scale_option(*cmd, options->output_scale,
                  "write y / S: the exact values an fp8 output stored with scale S approximates "
                  "(S > 0, read as float32)");
  cmd->callback([options, &exit_status] { exit_status = run_reference(*options); });
}

}  // namespace ropecheck::cli
