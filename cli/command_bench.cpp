// ropecheck bench [--json] [--all] [--simd-target NAME] [--output-scale S]: the standard
// throughput table (Google Benchmark underneath): per kernel × dtype × pairing × threads, GB/s
// (bytes read + written) and the ratio to the faster copy of the same bytes measured in the same
// run; with an fp8 output scale S ≠ 1, the fp8 rows only.
#include <fmt/format.h>

#include <optional>

#include <nlohmann/json.hpp>

#include "bench/throughput.h"
#include "cli/commands.h"
#include "cli/decimal_options.h"
#include "cli/exit_codes.h"
#include "fast/simd_target.h"
#include "io/io_error.h"

namespace ropecheck::cli {

void add_bench_command(CLI::App& app, int& exit_status) {
  struct bench_options {
    bool json = false;
    bool all = false;
    int repetitions = 3;
    std::string simd_target = "best";
    std::optional<float> output_scale;
  };
  auto options = std::make_shared<bench_options>();
  CLI::App* cmd = app.add_subcommand("bench", "Throughput of every kernel against memcpy");
  cmd->add_flag("--json", options->json,
                "print a JSON array of {kernel, dtype, pairing, threads, bytes, gbps, "
                "memcpy_gbps, stream_copy_gbps, ratio, simd_target, output_scale}");
  cmd->add_flag("--all", options->all, "sizes up to 1 GiB (default: up to 64 MiB)");
  add_decimal_option(*cmd, "--repetitions", options->repetitions, 1, 100,
                     "repetitions, 1 ... 100 (default 3); the best is kept");
  cmd->add_option("--simd-target", options->simd_target,
                  "cap the SIMD kernels' instruction set (e.g. avx2; default: the best this CPU has)")
      ->capture_default_str();
  add_output_scale_option(*cmd, options->output_scale,
                          "fp8 output scale S: measure the fp8 rows storing round(y / S) (default 1)");
  cmd->callback([options, &exit_status] {
    // Errors are the one-line "ropecheck: <flag>: …" of every subcommand (cli/error_exit.h).
    if (const fast::status s = fast::use_simd_target(options->simd_target); !s.ok())
      throw bad_input("--simd-target", s.message, options->simd_target);
    bench::throughput_options run;
    run.all = options->all;
    run.repetitions = options->repetitions;
    run.console = !options->json;  // JSON on stdout stays parseable
    run.output_scale = options->output_scale.value_or(1.0f);
    const auto rows = bench::run_throughput_table(run);
    if (options->json) fmt::print("{}\n", bench::throughput_json(rows).dump(2));
    else fmt::print("\n{}", bench::throughput_text(rows));
    exit_status = exit_pass;
  });
}

}  // namespace ropecheck::cli
