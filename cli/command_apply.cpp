// ropecheck apply --kernel NAME [--kernel-lib PATH.so] --spec SPEC.json --x X.npy --pos POS.npy --out Y.npy
// Runs one registered fast kernel (or a kernel of a library built on ropecheck/kernel_abi.h) on a tensor, in the dtype of X (float32, float16, or
// bfloat16 given as raw bits with --dtype bfloat16, fp8 as uint8 bits with --dtype and its fp8 dtype). Same spec and shapes as `reference`.
// [--output-scale S]: fp8 only, Y stored as round(y / S) (fast/rope_call.h).
#include <fmt/format.h>

#include <algorithm>
#include <new>
#include <optional>
#include <string_view>

#include "cli/commands.h"
#include "cli/spec_options.h"
#include "cli/isolation_flags.h"
#include "cli/decimal_options.h"
#include "abi/kernel_library.h"
#include "cli/exit_codes.h"
#include "core/rope_inputs.h"
#include "fast/kernels.h"
#include "io/io_error.h"
#include "io/npy.h"

namespace ropecheck::cli {
namespace {

struct apply_options {
  rope_input_paths inputs;
  std::string kernel;
  abi::isolation isolation;  // --isolate, --kernel-timeout
  std::string out;
  std::string dtype_name;
  std::string kernel_library;  // --kernel-lib: the kernel is looked up there
  std::optional<float> output_scale;          // --output-scale: fp8 outputs stored as round(y / S)
};

int run_apply(apply_options options) {
  check_npy_output(options.out, options.inputs);
  if (!options.dtype_name.empty()) options.inputs.raw16 = parse_dtype(options.dtype_name);
  const float output_scale = options.output_scale.value_or(1.0f);
  std::optional<abi::kernel_library> library;
  const fast::kernel_info* kernel = nullptr;
  if (options.kernel_library.empty()) {
    kernel = fast::find_kernel(options.kernel);
  } else {
    library.emplace(abi::kernel_library::load(options.kernel_library, options.isolation));
    for (const auto& k : library->kernels())
      if (k.name == options.kernel) kernel = &k;
  }
  if (kernel == nullptr)
    throw bad_input("--kernel", "unknown kernel", options.kernel,
                    options.kernel_library.empty()
                        ? "see `ropecheck kernels`"
                        : "see `ropecheck kernels --kernel-lib " + options.kernel_library + "`");
  const rope_inputs in = read_rope_inputs(options.inputs);
  if (!is_storage(in.x.type))
    throw io_error(options.inputs.x, "dtype", "is not a kernel storage type", std::string(to_string(in.x.type)),
                   "kernels take " + dtype_list_text(storage_dtypes));
  if (output_scale != 1.0f && !is_float8(in.x.type))
    throw bad_input("--output-scale", fmt::format("applies to fp8 storage only, X is {}", to_string(in.x.type)),
                    fmt::format("{}", output_scale),
                    "pass --dtype " + dtype_list_text(storage_dtypes_of_width<1>, "|", "|") + " with fp8 bits");
  std::optional<fast::cache_rows> rows;  // a cache kernel's table (fast::cache_rows_for)
  // The table named by its largest position and its size, for a refusal.
  const auto table_error = [&](std::string_view problem) {
    const auto at = std::find(in.positions.begin(), in.positions.end(), rows->largest) - in.positions.begin();
    return io_error(options.inputs.positions, position_field(in, at),
                    fmt::format("kernel {}'s cos/sin cache for these positions needs {} rows of {} floats "
                                "({} bytes), {}",
                                kernel->name, rows->rows, in.spec.rotary_dim,
                                rows->rows * in.spec.rotary_dim * 4, problem),
                    std::to_string(rows->largest), "on_the_fly kernels need no table");
  };
  if (kernel->strategy == fast::angle_strategy::cache) {
    // The kernel's float32 table has a row per position the call uses (dense: one per position
    // up to the largest), and is refused past fast::max_cache_floats: name the position and
    // the size rather than the kernel's table, and never attempt a table the limit refuses.
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(in.positions.size()); ++i)
      if (const std::int64_t m = in.positions[static_cast<std::size_t>(i)]; m < 0)
        throw io_error(options.inputs.positions, position_field(in, i),
                       fmt::format("negative position: kernel {}'s cos/sin cache has rows for 0 ... 2^31 - 1", kernel->name),
                       std::to_string(m), "on_the_fly kernels take any |m| <= 2^31 - 1");
    rows = fast::cache_rows_for(in.positions);
    if (rows->rows > fast::max_cache_floats / in.spec.rotary_dim)  // 2·(rotary_dim/2) floats a row
      throw table_error(fmt::format("past the limit of {} floats", fast::max_cache_floats));
  }
  tensor y = in.x;  // same dtype and shape; rotated in place below
  // Batch folded into tokens: one position per row (per stream).
  fast::status s;
  try {
    s = fast::apply_packed(*kernel, in.spec, in.x.type, in.x.bytes().data(), y.mutable_bytes().data(),
                           in.heads, in.positions, fast::direction::forward, output_scale);
  } catch (const std::bad_alloc&) {
    // The table is in proportion to the input (cache_rows_for) but may still exceed what this
    // process may allocate (ulimit -v): the input needs that memory, which is no bug.
    if (!rows) throw;
    throw table_error("more than this process could allocate");
  }
  // A library kernel whose worker process ended failed (exit 1), it did not refuse the input.
  if (const auto death = library ? library->death_of(options.kernel) : std::nullopt) {
    fmt::print(stderr, "ropecheck: --kernel: {} {}: {} during the call {} (nothing written)\n", options.kernel,
               death->verdict, death->cause, death->call);
    return exit_failed;
  }
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
  add_isolation_options(*cmd, options->isolation);
  add_output_scale_option(*cmd, options->output_scale,
                          "fp8 only: store round(Y / S), Y's per-tensor scale as vLLM writes fp8 (S > 0, read as float32)");
  cmd->add_option("--dtype", options->dtype_name,
                  "read raw X as this dtype (16-bit: bfloat16; uint8: an 8-bit float, float8_*)")
      ->check(CLI::IsMember(dtype_names(raw_bits_dtypes)));  // numeric/dtype.h's catalog
  cmd->callback([options, &exit_status] { exit_status = run_apply(*options); });
}

}  // namespace ropecheck::cli
