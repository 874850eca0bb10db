// ropecheck reference --spec SPEC.json --x X.npy --pos POS.npy --out Y.npy
//                     [--form elementwise|complex|matrix] [--out-dtype float64|float32]
// Applies the 256-bit reference to every head vector of X at its token's position and writes
// the result rounded once to the output dtype.
#include <mpfr.h>

#include <algorithm>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/rope_inputs.h"
#include "io/npy.h"
#include "io/read_tensor.h"
#include "reference/real.h"
#include "reference/rope_forms.h"

namespace ropecheck::cli {
namespace {

struct reference_options {
  rope_input_paths inputs;
  std::string out;
  std::string form = "elementwise";
  std::string out_dtype = "float64";
};

int run_reference(const reference_options& options) {
  using reference::mp_real;
  check_npy_output(options.out, options.inputs);
  const rope_inputs in = read_rope_inputs(options.inputs);
  require_finite(in.x, options.inputs.x);
  // Length-dependent scalings (dynamic NTK, LongRoPE) see max position + 1 unless the spec
  // gives a sequence_length, as the double tier and the kernels do.
  std::int64_t length = 0;
  for (std::int64_t m : in.positions) length = std::max(length, m + 1);
  const auto params = reference::params_from_spec<mp_real>(in.spec, length);
  const auto form = options.form == "complex"  ? &reference::rope_complex<mp_real>
                    : options.form == "matrix" ? &reference::rope_matrix<mp_real>
                                               : &reference::rope_elementwise<mp_real>;
  const int d = in.spec.head_dim;
  const std::vector<double> x = to_float64(in.x, options.inputs.x);
  std::vector<double> y(x.size());
  std::vector<mp_real> vector_in(d);
  for (std::int64_t row = 0; row < in.rows; ++row) {
    for (std::int64_t h = 0; h < in.heads; ++h) {
      const std::size_t offset = static_cast<std::size_t>((row * in.heads + h) * d);
      for (int c = 0; c < d; ++c) vector_in[c] = x[offset + c];
      const auto out = form(vector_in, in.positions[row], params);
      for (int c = 0; c < d; ++c) {
        // Round once from 256 bits to the output type (never via double for float32).
        y[offset + c] = options.out_dtype == "float32"
                            ? mpfr_get_flt(out[c].backend().data(), MPFR_RNDN)
                            : mpfr_get_d(out[c].backend().data(), MPFR_RNDN);
      }
    }
  }
  write_npy(options.out, from_float64(y, in.x.shape, *parse_dtype(options.out_dtype)));
  return exit_pass;
}

}  // namespace

void add_reference_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<reference_options>();
  CLI::App* cmd = app.add_subcommand(
      "reference", "Apply the 256-bit reference RoPE to a tensor and write the result");
  cmd->add_option("--spec", options->inputs.spec, "RoPE spec (a Hugging Face config.json works)")
      ->required();
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
  cmd->callback([options, &exit_status] { exit_status = run_reference(*options); });
}

}  // namespace ropecheck::cli
