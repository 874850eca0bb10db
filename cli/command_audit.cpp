// ropecheck audit --spec SPEC.json --x X.npy --pos POS.npy --y Y.npy
//                 [--dtype STORAGE_DTYPE] [--tolerance UNITS | --contract C | --contract-from A.json]
//                 [--output-scale S]
//                 [--x-name N] [--y-name N] [--pos-name N] [REPORT FLAGS]
// Checks a third-party RoPE output against the reference. Exit 0 within tolerance, 1 not,
// 2 bad input.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <optional>

#include "audit/audit.h"
#include "core/audit_input.h"
#include "core/contract_spelling.h"

#include "cli/commands.h"
#include "cli/spec_options.h"
#include "cli/exit_codes.h"
#include "cli/decimal_options.h"
#include "core/flag_values.h"
#include "cli/report_flags.h"
#include "core/rope_inputs.h"
#include "io/read_tensor.h"

namespace ropecheck::cli {
namespace {

struct audit_options {
  rope_input_paths inputs;
  std::string y;
  std::optional<std::string> y_name;
  std::string dtype_name;
  std::optional<double> tolerance;
  std::string contract;                    // --contract NAME|'STAGE=CHOICE,…'|FILE.json
  std::vector<std::string> contract_from;  // --contract-from AUDIT.json (one per dtype)
  std::optional<float> output_scale;  // --output-scale S: Y holds fp8 round(y / S)
  int threads = 0;                     // --threads N: judging loop threads (0: every core)
  reports::report_paths paths;
};

// Progress on stderr once a run has taken a second: a bar on a terminal, plain lines otherwise.
class progress_meter {
 public:
  void operator()(std::int64_t done, std::int64_t total) {
    const double seconds = std::chrono::duration<double>(clock::now() - start_).count();
    if (seconds < 1.0 || total == 0) return;
    const int percent = static_cast<int>(100 * done / total);
    if (terminal_) {
      fmt::print(stderr, "\raudit [{:<40}] {:3d}%", std::string(static_cast<std::size_t>(percent * 40 / 100), '#'), percent);
      if (done == total) fmt::print(stderr, "\n");
    } else if (percent >= next_line_) {
      fmt::print(stderr, "audit: {}% of rows ({:.1f} s)\n", percent, seconds);
      next_line_ = percent + 10;
    }
  }

 private:
  using clock = std::chrono::steady_clock;
  clock::time_point start_ = clock::now();
  bool terminal_ = isatty(fileno(stderr)) != 0;
  int next_line_ = 0;
};

int run_audit_command(audit_options o) {
  std::vector<flagged_path> inputs = input_paths(o.inputs);
  inputs.push_back({"--y", o.y});
  for (const auto& audit : o.contract_from) inputs.push_back({"--contract-from", audit});
  check_report_outputs(o.paths, inputs);
  const bool contracted = !o.contract.empty() || !o.contract_from.empty();
  if (contracted && o.tolerance)
    throw bad_input("--tolerance", "is not allowed with --contract or --contract-from: the contract sets the tolerance",
                    fmt::format("{}", *o.tolerance));
  std::optional<bounds::accuracy_contract> contract;
  if (contracted) contract = read_contract(o.contract.empty() ? "exact" : o.contract, o.contract_from);
  std::optional<dtype> judged;
  if (!o.dtype_name.empty()) {
    judged = parse_dtype(o.dtype_name);
    if (*judged == dtype::bfloat16 || is_float8(*judged)) o.inputs.raw16 = *judged;
  }
  rope_inputs in = read_rope_inputs(o.inputs);
  tensor y = read_tensor(o.y, o.y_name, o.inputs.raw16);
  audit::audit_input input =
      make_audit_input(std::move(in), std::move(y), o.inputs, o.y, judged, o.tolerance,
                       o.output_scale.value_or(1.0f));
  input.threads = o.threads;
  input.contract = std::move(contract);
  progress_meter meter;
  reports::audit_report report = audit::run_audit(input, std::ref(meter));
  report.tool_version = ROPECHECK_VERSION;
  fmt::print("{}", reports::render_terminal(report));
  reports::write_report_files(report, o.paths);
  return report.passed ? exit_pass : exit_failed;
}

}  // namespace

void add_audit_command(CLI::App& app, int& exit_status) {
  auto o = std::make_shared<audit_options>();
  CLI::App* cmd = app.add_subcommand("audit", "Check a third-party RoPE output against the reference");
  add_spec_options(*cmd, o->inputs);
  cmd->add_option("--x", o->inputs.x, "input X (.npy or .safetensors)")->required();
  cmd->add_option("--pos", o->inputs.positions, "positions (.npy or .safetensors, int32/int64)")->required();
  cmd->add_option("--y", o->y, "the output to audit, same shape as X")->required();
  cmd->add_option("--dtype", o->dtype_name,
                  "judge Y as this dtype (default: Y's); bfloat16 also reads 16-bit raw data as "
                  "bfloat16, an 8-bit float (float8_*) reads uint8 data as its bits")
      ->check(CLI::IsMember(dtype_names(storage_dtypes)));  // numeric/dtype.h's catalog
  add_output_scale_option(*cmd, o->output_scale,
                  "fp8 Y written with a per-tensor scale S (Y = round(y / S), as vLLM stores fp8): "
                  "judged against y_exact / S; S > 0, read as float32");
  add_decimal_option(*cmd, "--threads", o->threads, 1, 1024,
                     "threads judging the rows (default: every core); the report is the same for any N");
  add_positive_number_option(*cmd, "--tolerance", o->tolerance,
                  "allowed error in units of 2^-24 × pair norm (default: the derived bound of a "
                  "correct kernel, 2.5 units plus the output dtype's half spacing)");
  cmd->add_option("--contract", o->contract,
                  "judge Y against a correct kernel's bound widened by this contract's recipe, as the gate "
                  "does: a name, 'STAGE=CHOICE,…' or a FILE.json (docs/cli.md, accuracy contracts)");
  cmd->add_option("--contract-from", o->contract_from,
                  "the recipe an audit of the kernel's own output found (its --json), one per dtype; "
                  "repeatable");
  cmd->add_option("--x-name", o->inputs.x_name, "tensor name of X in a .safetensors file");
  cmd->add_option("--y-name", o->y_name, "tensor name of Y in a .safetensors file");
  cmd->add_option("--pos-name", o->inputs.positions_name, "tensor name of the positions");
  add_report_flags(*cmd, o->paths);
  cmd->callback([o, &exit_status] { exit_status = run_audit_command(*o); });
}

}  // namespace ropecheck::cli
