// ropecheck bench [--json] [--all] [--simd-target NAME] [--output-scale S]: the standard
// throughput table (Google Benchmark underneath): per kernel × dtype × pairing × threads, GB/s
// (bytes read + written) and the ratio to the fastest copy of the same bytes measured in the same
// run; with an fp8 output scale S ≠ 1, the fp8 rows only.
// ropecheck bench --kernel-lib L [--kernel K]... [--tokens T] [--heads H] [--head-dim D]: a
// library's kernels beside the built-in ones and the copies at that workload, in rounds of random
// order (bench/kernel_comparison.h); the library runs in its worker unless --isolate never.
// Either form with --baseline OLD.json [--tolerance F]: the throughput ratchet
// (bench/throughput_ratchet.h), exit 1 when a row's ratio fell by more than F.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "abi/kernel_library.h"
#include "bench/kernel_comparison.h"
#include "bench/throughput.h"
#include "bench/throughput_ratchet.h"
#include "cli/commands.h"
#include "cli/decimal_options.h"
#include "cli/exit_codes.h"
#include "cli/isolation_flags.h"
#include "fast/simd_target.h"
#include "io/io_error.h"

namespace ropecheck::cli {

namespace {

// The largest X a workload may ask for: 1 GiB of float32, as `--all`'s largest size.
constexpr std::int64_t max_workload_elements = std::int64_t{1} << 28;

struct bench_options {
  bool json = false;
  bool all = false;
  int repetitions = 3;
  std::string simd_target = "best";
  std::optional<float> output_scale;
  std::string kernel_library;
  std::vector<std::string> kernels;
  std::optional<std::int64_t> tokens, heads, head_dim;
  abi::isolation isolation;
  std::string baseline;
  std::optional<double> tolerance;
};

// --tolerance F: the fraction a ratio may fall, a finite number in (0, 1).
double tolerance_flag(const std::string& text) {
  constexpr std::string_view problem = "is not a finite number in (0, 1)";
  const double value = decimal_number_flag("--tolerance", text, problem);
  if (!(value > 0 && value < 1)) throw bad_input("--tolerance", problem, text);
  return value;
}

// The library's kernels to measure: --kernel's (each must be the library's and measurable at
// the workload), else every measurable one (at least one).
std::vector<fast::kernel_info> library_kernels(const abi::kernel_library& library, const bench_options& o,
                                               const bench::comparison_options& workload) {
  std::vector<fast::kernel_info> chosen;
  for (const std::string& name : o.kernels) {
    const auto& all = library.kernels();
    const auto it =
        std::find_if(all.begin(), all.end(), [&](const fast::kernel_info& k) { return k.name == name; });
    if (it == all.end())
      throw bad_input("--kernel", "is not a kernel of the --kernel-lib library", name,
                      "see `ropecheck kernels --kernel-lib " + o.kernel_library + "`");
    if (std::find_if(chosen.begin(), chosen.end(),
                     [&](const fast::kernel_info& k) { return k.name == name; }) != chosen.end())
      throw bad_input("--kernel", "is given twice", name);
    if (const auto why = bench::why_not_measurable(*it, workload))
      throw bad_input(why->flag, fmt::format("kernel '{}' cannot be measured at it: {}", name, why->reason),
                      why->flag == "--tokens"  ? std::to_string(workload.tokens)
                      : why->flag == "--heads" ? std::to_string(workload.heads)
                                               : fmt::format("{}", workload.output_scale));
    chosen.push_back(*it);
  }
  if (!o.kernels.empty()) return chosen;
  std::string reasons;
  for (const fast::kernel_info& k : library.kernels()) {
    if (const auto why = bench::why_not_measurable(k, workload); !why)
      chosen.push_back(k);
    else
      reasons += fmt::format("{}{}: {}", reasons.empty() ? "" : "; ", k.name, why->reason);
  }
  if (chosen.empty())
    throw bad_input("--kernel-lib", "has no kernel measurable at this workload (" + reasons + ")",
                    o.kernel_library);
  if (!reasons.empty()) fmt::print(stderr, "bench: not measured: {}\n", reasons);
  return chosen;
}

std::vector<bench::throughput_row> run(const bench_options& o, bool& failed) {
  const bool workload_form = !o.kernel_library.empty() || o.tokens || o.heads || o.head_dim;
  if (!workload_form) {
    bench::throughput_options run;
    run.all = o.all;
    run.repetitions = o.repetitions;
    run.console = !o.json;  // JSON on stdout stays parseable
    run.output_scale = o.output_scale.value_or(1.0f);
    run.random_interleaving = true;
    return bench::run_throughput_table(run);
  }
  if (o.all)
    throw bad_input("--all", "sets the standard table's sizes; the workload is --tokens, --heads, --head-dim",
                    "--all");
  bench::comparison_options workload;
  workload.tokens = o.tokens.value_or(workload.tokens);
  workload.heads = o.heads.value_or(workload.heads);
  workload.head_dim = o.head_dim.value_or(workload.head_dim);
  if (workload.head_dim % 2 != 0)
    throw bad_input("--head-dim", "is odd (RoPE rotates pairs)", std::to_string(workload.head_dim));
  if (workload.tokens * workload.heads > max_workload_elements / workload.head_dim)
    throw bad_input("--tokens",
                    fmt::format("× --heads × --head-dim is more than 2^28 values (1 GiB of float32): "
                                "{} × {} × {}",
                                workload.tokens, workload.heads, workload.head_dim),
                    std::to_string(workload.tokens));
  workload.rounds = o.repetitions;
  workload.output_scale = o.output_scale.value_or(1.0f);
  std::optional<abi::kernel_library> library;
  std::vector<fast::kernel_info> kernels;
  if (!o.kernel_library.empty()) {
    library = abi::kernel_library::load(o.kernel_library, o.isolation);
    workload.library_source = o.isolation.isolate ? "library" : "library, in process";
    kernels = library_kernels(*library, o, workload);
  }
  auto result = bench::run_kernel_comparison(kernels, workload);
  for (const std::string& failure : result.failures) fmt::print(stderr, "bench: not measured: {}\n", failure);
  failed = !result.failures.empty();
  return result.rows;
}

}  // namespace

void add_bench_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<bench_options>();
  CLI::App* cmd = app.add_subcommand("bench", "Throughput of every kernel against the fastest copy");
  cmd->add_flag("--json", options->json,
                "print a JSON array of {kernel, dtype, pairing, threads, bytes, gbps, memcpy_gbps, "
                "stream_copy_gbps, ratio, simd_target, output_scale, source, tokens, heads, head_dim, "
                "stream_copy, cpu}");
  cmd->add_flag("--all", options->all, "sizes up to 1 GiB (default: up to 64 MiB)");
  add_decimal_option(*cmd, "--repetitions", options->repetitions, 1, 100,
                     "repetitions (rounds with --kernel-lib), 1 ... 100 (default 3); the best is kept");
  cmd->add_option("--simd-target", options->simd_target,
                  "cap the SIMD kernels' instruction set (e.g. avx2; default: the best this CPU has)")
      ->capture_default_str();
  add_output_scale_option(*cmd, options->output_scale,
                          "fp8 output scale S: measure the fp8 rows storing round(y / S) (default 1)");
  cmd->add_option("--kernel-lib", options->kernel_library,
                  "measure this kernel library's kernels beside the built-in ones, at one workload");
  cmd->add_option("--kernel", options->kernels,
                  "a --kernel-lib kernel to measure (repeatable; default: all)");
  add_decimal_option(*cmd, "--tokens", options->tokens, std::int64_t{1}, max_workload_elements,
                     "the workload's tokens, positions 0 ... T-1 (default 4096)");
  add_decimal_option(*cmd, "--heads", options->heads, std::int64_t{1}, std::int64_t{4096},
                     "the workload's heads (default 32)");
  add_decimal_option(*cmd, "--head-dim", options->head_dim, std::int64_t{2}, std::int64_t{8192},
                     "the workload's head_dim, even (default 128)");
  add_isolation_options(*cmd, options->isolation);
  cmd->add_option(
      "--baseline", options->baseline,
      "a saved `bench --json` run: exit 1 if a row's ratio to the copy fell by more than --tolerance");
  cmd->add_option_function<std::string>(
         "--tolerance", [options](const std::string& text) { options->tolerance = tolerance_flag(text); },
         "the fraction a ratio may fall against --baseline, in (0, 1) (default 0.10)")
      ->type_name("F");
  cmd->callback([options, &exit_status] {
    const bench_options& o = *options;
    // Errors are the one-line "ropecheck: <flag>: …" of every subcommand (cli/error_exit.h).
    if (const fast::status s = fast::use_simd_target(o.simd_target); !s.ok())
      throw bad_input("--simd-target", s.message, o.simd_target);
    if (!o.kernels.empty() && o.kernel_library.empty())
      throw bad_input("--kernel", "needs --kernel-lib (the built-in kernels are all measured)",
                      o.kernels.front());
    if (o.tolerance && o.baseline.empty())
      throw bad_input("--tolerance", "needs --baseline", fmt::format("{}", *o.tolerance));
    // The baseline is read before the run, so a bad file costs no measurement.
    std::map<std::string, bench::saved_ratio> saved;
    if (!o.baseline.empty()) saved = bench::read_throughput_baseline(o.baseline);
    bool failed = false;
    const auto rows = run(o, failed);
    const double tolerance = o.tolerance.value_or(0.10);
    std::optional<bench::ratchet_verdict> verdict;  // exit 2 before anything is printed
    if (!o.baseline.empty()) verdict = bench::compare_to_baseline(rows, saved, o.baseline, tolerance);
    if (o.json)
      fmt::print("{}\n", bench::throughput_json(rows).dump(2));
    else
      fmt::print("\n{}", bench::throughput_text(rows));
    exit_status = failed ? exit_failed : exit_pass;
    if (!verdict) return;
    // With --json, stdout is the rows (a run to save as the next baseline); the verdict goes to stderr.
    fmt::print(o.json ? stderr : stdout, "\n{}", bench::ratchet_text(*verdict, o.baseline, tolerance));
    if (verdict->regressed > 0) exit_status = exit_failed;
  });
}

}  // namespace ropecheck::cli
