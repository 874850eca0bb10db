// ropecheck gate [--kernel NAME]... [--profile quick|deep] [--seed N] [--baseline OLD.json]
//                [--kernel-lib PATH.so] [--mutants] [--mutant NAME]... [--shard I/N] [--cases-out DIR]
//                [REPORT FLAGS]
// ropecheck report IN.json [REPORT FLAGS] | report merge A.json B.json ... [REPORT FLAGS]
// Runs the property suite (properties/kernel_properties.h, the code the ctest suite runs) and
// the fixtures (seed 000, golden vectors) on the named built-in kernels, default all of them.
// --mutants also runs the same checks (plus the dynamic-NTK fixture) on every deliberately
// wrong kernel of mutants/ and passes only if every correct kernel passes and every mutant is
// killed; --mutant NAME picks mutants (and gates built-ins only if --kernel names them).
// --shard I/N (or GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS) runs block I of N of every
// property's cases, and in shard 0 the fixtures and mutants; `report merge` (reports/gate_merge.h)
// joins the N reports into the unsharded run's.
// Exit 0 pass, 1 gate failed, 2 bad input or usage.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <variant>
#include <nlohmann/json.hpp>

#include "abi/kernel_library.h"
#include "cli/commands.h"
#include "core/gate_run.h"
#include "cli/isolation_flags.h"
#include "cli/exit_codes.h"
#include "cli/decimal_options.h"
#include "cli/report_flags.h"
#include "fast/kernels.h"
#include "io/io_error.h"
#include "io/json_file.h"
#include "properties/kernel_fixtures.h"
#include "mutants/mutant_registry.h"
#include "bounds/error_bounds.h"
#include "properties/frequency_properties.h"
#include "properties/kernel_properties.h"
#include "properties/property_runner.h"
#include "reports/audit_report.h"
#include "reports/gate_merge.h"
#include "reports/saved_report.h"

#ifndef ROPECHECK_VERSION
#define ROPECHECK_VERSION "unknown"
#endif

namespace ropecheck::cli {
namespace {

struct command_gate_options {
  gate_options gate;
  std::optional<std::string> shard_text;  // --shard I/N (given empty: refused)
  std::optional<std::string> cases_out;   // --cases-out DIR (given empty: refused)
  reports::report_paths paths;
};

// A shard index or count: a plain decimal (core/flag_values.h) of 1 to 9 digits.
int shard_number(std::string_view name, std::string_view text, std::string_view whole) {
  if (text.size() > 9 || !plain_decimal_digits(text))
    throw bad_input(name, "is not I/N with 0 <= I < N (plain decimal integers)", whole);
  return std::stoi(std::string(text));
}

// The shard from --shard I/N and from the GoogleTest/Bazel sharding protocol
// (GTEST_SHARD_INDEX, GTEST_TOTAL_SHARDS: both or neither); both given must agree.
std::pair<int, int> resolve_shard(const std::optional<std::string>& given) {
  const std::string flag = given.value_or("");
  std::optional<std::pair<int, int>> from_flag, from_env;
  if (given) {
    const auto slash = flag.find('/');
    if (slash == std::string::npos) throw bad_input("--shard", "is not I/N", flag);
    from_flag = {shard_number("--shard", flag.substr(0, slash), flag),
                 shard_number("--shard", flag.substr(slash + 1), flag)};
    if (from_flag->second < 1 || from_flag->first >= from_flag->second)
      throw bad_input("--shard", "is not I/N with 0 <= I < N", flag);
  }
  const char* index = std::getenv("GTEST_SHARD_INDEX");
  const char* total = std::getenv("GTEST_TOTAL_SHARDS");
  if ((index != nullptr) != (total != nullptr))
    throw bad_input(index != nullptr ? "GTEST_SHARD_INDEX" : "GTEST_TOTAL_SHARDS",
                    fmt::format("is set without {}", index != nullptr ? "GTEST_TOTAL_SHARDS" : "GTEST_SHARD_INDEX"),
                    index != nullptr ? index : total);
  if (index != nullptr) {
    from_env = {shard_number("GTEST_SHARD_INDEX", index, index),
                shard_number("GTEST_TOTAL_SHARDS", total, total)};
    if (from_env->second < 1 || from_env->first >= from_env->second)
      throw bad_input("GTEST_SHARD_INDEX", fmt::format("is not below GTEST_TOTAL_SHARDS ({})", total), index);
  }
  if (from_flag && from_env && *from_flag != *from_env)
    throw bad_input("--shard", fmt::format("disagrees with GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS = {}/{}",
                                           from_env->first, from_env->second),
                    flag);
  if (from_flag) return *from_flag;
  if (from_env) return *from_env;
  return {0, 1};
}

// The protocol's GTEST_SHARD_STATUS_FILE: created (or touched) to tell the runner that this
// program shards. An output like the report files: checked with them before the run
// (io/output_paths.h), and made with them after it, so bad input (exit 2) leaves none behind;
// set but empty is refused, as an empty output flag is. Unset: no path.
flagged_path shard_status_output() {
  const char* path = std::getenv("GTEST_SHARD_STATUS_FILE");
  if (path != nullptr && *path == '\0')
    throw bad_input("GTEST_SHARD_STATUS_FILE", "is empty: an output needs a file name", "");
  return {"GTEST_SHARD_STATUS_FILE", path == nullptr ? "" : path};
}

void touch_shard_status_file(const flagged_path& status) {
  if (status.path.empty()) return;
  std::FILE* f = std::fopen(status.path.c_str(), "a");
  if (f == nullptr || std::fclose(f) != 0)
    throw io_error(status.path.string(), status.flag, "cannot be created", status.path.string());
}

int run_gate(command_gate_options o) {
  properties::read_rc_params();  // a bad RC_PARAMS is exit 2 before any file is touched
  std::tie(o.gate.shard_index, o.gate.shard_count) = resolve_shard(o.shard_text);
  // Every output path is checked before minutes of work (io/output_paths.h).
  std::vector<flagged_path> inputs = {{"--baseline", o.gate.baseline}};
  for (const auto& path : o.gate.kernel_libraries) inputs.push_back({"--kernel-lib", path});
  if (o.gate.contract.find('=') == std::string::npos &&
      (o.gate.contract.find('/') != std::string::npos || o.gate.contract.ends_with(".json")))
    inputs.push_back({"--contract", o.gate.contract});
  for (const auto& audit : o.gate.contract_from) inputs.push_back({"--contract-from", audit});
  const flagged_path status = shard_status_output();
  check_report_outputs(o.paths, inputs, {status});
  // --cases-out DIR: a folder, made when the first case file is written.
  if (o.cases_out && o.cases_out->empty()) throw bad_input("--cases-out", "is empty: it needs a folder", "");
  if (o.cases_out && std::filesystem::exists(*o.cases_out) && !std::filesystem::is_directory(*o.cases_out))
    throw bad_input("--cases-out", "exists and is not a directory", *o.cases_out);
  o.gate.cases_out = o.cases_out.value_or("");
  o.gate.json_path = o.paths.json;
  const reports::gate_report report = run_gate_report(o.gate);
  fmt::print("{}", reports::render_terminal(report));
  reports::write_report_files(report, o.paths);
  touch_shard_status_file(status);
  return report.passed ? exit_pass : exit_failed;
}

}  // namespace

void add_gate_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<command_gate_options>();
  gate_options* o = &options->gate;
  CLI::App* cmd = app.add_subcommand(
      "gate", "Run the property suite and fixtures on kernels; exit 1 if any fails");
  cmd->add_option("--kernel", o->kernels,
                  "kernel to gate (repeatable; default: all built-in, or all of --kernel-lib)");
  cmd->add_option("--kernel-lib", o->kernel_libraries,
                  "gate the kernels of a shared library built on ropecheck/kernel_abi.h");
  cmd->add_option("--profile", o->profile, "quick (CI) or deep (10^6 cases per property)")
      ->check(CLI::IsMember({"quick", "deep"}))
      ->capture_default_str();
  add_decimal_option(*cmd, "--seed", o->seed, std::uint64_t{0}, std::numeric_limits<std::uint64_t>::max(),
                     fmt::format("RapidCheck seed, an integer 0 ... 2^64 - 1 (default {})", o->seed));
  cmd->add_option("--baseline", o->baseline,
                  "saved gate JSON: fail only on regressions (a property that newly fails, or whose "
                  "worst/bound grew by more than 10%); failures it had too are known failures");
  cmd->add_option("--contract", o->contract,
                  "accuracy contract: a recipe the kernel is held to — exact (default), float32_angles, "
                  "float32_repeated_product_frequencies, float16_cos_sin_cache, bfloat16_cos_sin_cache, "
                  "float16_arithmetic, bfloat16_arithmetic; 'STAGE=CHOICE,...' in the stage and choice names "
                  "the audit prints (e.g. 'angle=float32,trig_cache=float16'); or a JSON file "
                  "({\"recipe\": {...}} or {\"recipes\": {\"float16\": {...}}}, docs/error-bounds.md §17)")
      ->capture_default_str();
  cmd->add_option("--contract-from", o->contract_from,
                  "hold each dtype to the recipe an audit found in a dump of the kernel's own output "
                  "(ropecheck audit --json; repeatable, one audit per dtype; a dtype with no audit is exact)");
  cmd->add_option("--property", o->properties,
                  "run only this property (repeatable; the others show as not run, fixtures are skipped)");
  add_decimal_option(*cmd, "--max-position", o->max_position, std::int64_t{1},
                     std::numeric_limits<std::int64_t>::max(),
                     "no case with |position| beyond N (the kernel's documented range)");
  cmd->add_option("--positions", o->positions,
                  "all (default) or nonnegative: no case with a position m < 0 (a kernel's cos/sin "
                  "cache of rows [0, N)); narrows every kernel's declared domain");
  cmd->add_flag("--mutants", o->mutants,
                "also gate every deliberately wrong kernel (mutants/); pass only if all are killed");
  cmd->add_option("--mutant", o->mutant_names,
                  "gate this mutant (repeatable; built-ins only if --kernel names them)");
  cmd->add_option("--shard", options->shard_text,
                  "run block I of N of every property's cases (I/N, 0 <= I < N; shard 0 also runs "
                  "the fixtures and mutants); `report merge` joins the N reports. Default: "
                  "GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS if set");
  cmd->add_option("--cases-out", options->cases_out,
                  "write each failure's worst case and shrunk counterexample as judged case files in DIR, "
                  "for `ropecheck replay` (created if absent)")
      ->type_name("DIR");
  add_isolation_options(*cmd, o->isolation, /*builtins_too=*/true);
  add_report_flags(*cmd, options->paths);
  cmd->callback([options, &exit_status] { exit_status = run_gate(*options); });
}

void add_report_command(CLI::App& app, int& exit_status) {
  struct report_options {
    std::vector<std::string> inputs;
    reports::report_paths paths;
  };
  auto o = std::make_shared<report_options>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Render a saved JSON report again; `report merge A.json B.json …` joins the shard "
                "reports of one sharded gate run (gate --shard I/N) into one report");
  cmd->add_option("IN.json", o->inputs,
                  "a report written with --json; or `merge` and the shards' gate reports")
      ->required();
  add_report_flags(*cmd, o->paths);
  cmd->callback([o, &exit_status] {
    // The saved verdict is the exit code, as for the run that wrote it: a CI step that
    // re-renders a failed report must not turn green.
    const auto render = [&](const auto& report) {
      fmt::print("{}", reports::render_terminal(report));
      reports::write_report_files(report, o->paths);
      return report.passed ? exit_pass : exit_failed;
    };
    const bool merge = o->inputs.front() == "merge";
    std::vector<flagged_path> inputs;
    for (std::size_t i = merge ? 1 : 0; i < o->inputs.size(); ++i) inputs.push_back({"IN.json", o->inputs[i]});
    if (merge && inputs.empty()) throw bad_input("report merge", "needs the shards' reports", "");
    if (!merge && inputs.size() > 1)
      throw bad_input("report", "renders one report (merge shards with `report merge A.json B.json …`)",
                      o->inputs[1]);
    check_report_outputs(o->paths, inputs);
    // Every report read is checked against its schema and invariants before it is trusted
    // (reports/saved_report.h): exit 2 naming the file, the field and the value.
    if (merge) {
      std::vector<std::pair<std::string, reports::gate_report>> shards;
      for (std::size_t i = 1; i < o->inputs.size(); ++i)
        shards.emplace_back(o->inputs[i],
                            reports::read_saved_gate_report(o->inputs[i], reports::report_use::merge_input));
      exit_status = render(reports::merge_gate_reports(shards));
      return;
    }
    exit_status = std::visit(render, reports::read_saved_report(o->inputs.front()));
  });
}

}  // namespace ropecheck::cli
