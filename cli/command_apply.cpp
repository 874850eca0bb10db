// ropecheck apply --kernel NAME [--kernel-lib PATH.so] --spec SPEC.json --x X.npy --pos POS.npy --out Y.npy
// Runs one registered fast kernel (or a kernel of a library built on ropecheck/kernel_abi.h) on a tensor, in the dtype of X (float32, float16, or
// bfloat16 given as raw bits with --dtype bfloat16, fp8 as uint8 bits with --dtype float8_e4m3fn|float8_e5m2). Same spec and shapes as `reference`.
// [--output-scale S]: fp8 only, Y stored as round(y / S) (fast/rope_call.h).
#include <fmt/format.h>

#include <optional>

#include "cli/commands.h"
#include "cli/flag_values.h"
#include "abi/kernel_library.h"
#include "cli/exit_codes.h"
#include "cli/rope_inputs.h"
#include "fast/kernels.h"
#include "io/io_error.h"
#include "io/npy.h"

namespace ropecheck::cli {
namespace {

struct apply_options {
  rope_input_paths inputs;
  std::string kernel;
  std::string out;
  std::string dtype_name;
  std::string kernel_library;  // --kernel-lib: the kernel is looked up there
  std::optional<std::string> output_scale;    // --output-scale: fp8 outputs stored as round(y / S)
};

int run_apply(apply_options options) {
  check_npy_output(options.out, options.inputs);
  if (!options.dtype_name.empty()) options.inputs.raw16 = parse_dtype(options.dtype_name);
  const float output_scale =
      !options.output_scale ? 1.0f : output_scale_flag("--output-scale", *options.output_scale);
  std::optional<abi::kernel_library> library;
  const fast::kernel_info* kernel = nullptr;
  if (options.kernel_library.empty()) {
    kernel = fast::find_kernel(options.kernel);
  } else {
    library.emplace(abi::kernel_library::load(options.kernel_library));
    for (const auto& k : library->kernels())
      if (k.name == options.kernel) kernel = &k;
  }
  if (kernel == nullptr)
    throw bad_input("--kernel", "unknown kernel", options.kernel,
                    options.kernel_library.empty()
                        ? "see `ropecheck kernels`"
                        : "see `ropecheck kernels --kernel-lib " + options.kernel_library + "`");
  const rope_inputs in = read_rope_inputs(options.inputs);
  if (in.x.type == dtype::float64)
    throw io_error(options.inputs.x, "dtype", "is not a kernel storage type", "float64",
                   "kernels take float32, float16, bfloat16, float8_e4m3fn or float8_e5m2");
  if (output_scale != 1.0f && !is_float8(in.x.type))
    throw bad_input("--output-scale", fmt::format("applies to fp8 storage only, X is {}", to_string(in.x.type)),
                    *options.output_scale, "pass --dtype float8_e4m3fn|float8_e5m2 with fp8 bits");
  if (kernel->strategy == fast::angle_strategy::cache) {
    // The kernel's float32 table covers positions 0 … max position, and is refused past
    // fast::max_cache_floats: name the position rather than the kernel's table size.
    const std::int64_t cached = fast::max_cache_floats / in.spec.rotary_dim;  // 2·(rotary_dim/2) floats each
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(in.positions.size()); ++i) {
      const std::int64_t m = in.positions[static_cast<std::size_t>(i)];
      if (m < 0 || m >= cached)
        throw io_error(options.inputs.positions, position_field(in, i),
                       fmt::format("position outside kernel {}'s cos/sin cache, 0 ... {}", kernel->name, cached - 1),
                       std::to_string(m), "on_the_fly kernels take any |m| <= 2^31 - 1");
    }
  }
  tensor y = in.x;  // same dtype and shape; rotated in place below
  // Batch folded into tokens: one position per row (per stream).
  const fast::status s = fast::apply_packed(*kernel, in.spec, in.x.type, in.x.bytes().data(),
                                            y.mutable_bytes().data(), in.heads, in.positions,
                                            fast::direction::forward, output_scale);
  if (!s.ok()) throw bad_input("--kernel", fmt::format("the kernel refused the call: {}", s.message), options.kernel);
  write_npy(options.out, y);
  return exit_pass;
}

}  // namespace

void add_apply_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<apply_options>();
  CLI::App* cmd = app.add_subcommand("apply", "Run one built-in kernel on a tensor");
  cmd->add_option("--kernel", options->kernel, "kernel name (see `ropecheck kernels`)")
      ->required();
  add_spec_options(*cmd, options->inputs);
  cmd->add_option("--x", options->inputs.x, "input X.npy (float32, float16, bfloat16 or fp8 bits)")
      ->required();
  cmd->add_option("--pos", options->inputs.positions, "positions POS.npy (int32/int64)")
      ->required();
  cmd->add_option("--out", options->out, "output Y.npy, in the dtype of X")->required();
  cmd->add_option("--kernel-lib", options->kernel_library,
                  "take --kernel from this shared library (ropecheck/kernel_abi.h)");
  cmd->add_option("--output-scale", options->output_scale,
                  "fp8 only: store round(Y / S), Y's per-tensor scale as vLLM writes fp8 (S > 0, read as float32)");
  cmd->add_option("--dtype", options->dtype_name,
                  "read raw X as this dtype (16-bit: bfloat16; uint8: float8_e4m3fn, float8_e5m2)")
      ->check(CLI::IsMember({"bfloat16", "float8_e4m3fn", "float8_e5m2"}));
  cmd->callback([options, &exit_status] { exit_status = run_apply(*options); });
}

}  // namespace ropecheck::cli
