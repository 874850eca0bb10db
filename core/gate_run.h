// gate_run: `ropecheck gate` as a library function — the properties and fixtures on a set of
// kernels, under an accuracy contract, compared with a baseline report — so that a caller
// other than the command line (the Python module gating a Python kernel in-process) runs
// exactly what the CLI runs. cli/command_gate.cpp is the flag parsing around it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "abi/kernel_library.h"
#include "bounds/accuracy_contracts.h"
#include "fast/kernels.h"
#include "properties/kernel_fixtures.h"
#include "properties/kernel_properties.h"
#include "reports/gate_report.h"

namespace ropecheck::core {

struct gate_options {
  std::vector<std::string> kernels;           // --kernel (default: every candidate)
  std::vector<std::string> kernel_libraries;  // --kernel-lib
  // Kernels supplied in-process by the caller: candidates instead of the built-ins (the
  // pointers must outlive the call).
  std::vector<const fast::kernel_info*> in_process_kernels;
  std::string profile = "quick";
  std::uint64_t seed = properties::default_seed;
  std::string baseline;                       // --baseline OLD.json
  std::string contract = "exact";             // --contract NAME|'STAGE=CHOICE,…'|FILE.json
  std::vector<std::string> contract_from;     // --contract-from AUDIT.json (one per dtype)
  std::int64_t max_position = 0;              // --max-position (0: none)
  std::string positions = "all";              // --positions all|nonnegative (every kernel's domain)
  std::vector<std::string> properties;        // --property (empty: all)
  bool mutants = false;
  std::vector<std::string> mutant_names;
  // --shard I/N (or GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS): block I of N of every property's
  // cases; shard 0 also runs the fixtures and the mutants. 0/1: everything.
  int shard_index = 0;
  int shard_count = 1;
  // --isolate / --kernel-timeout: library kernels run in a worker process (abi/kernel_worker.h),
  // each call bounded in time; `never` runs them in process.
  abi::isolation isolation;
  std::string json_path;  // --json, named in the replay line of a kernel whose process ended
  std::string cases_out;  // --cases-out DIR: each failure's judged cases (properties/case_files.h)

  // What a caller gating in-process kernels (python/) gives instead of flags:
  // - a contract or baseline it has already read (an AuditReport's recipe, a GateReport),
  //   used instead of `contract` / `baseline` and named `contract_value->name` / `baseline_name`;
  const bounds::accuracy_contract* contract_value = nullptr;
  const reports::gate_report* baseline_report = nullptr;
  std::string baseline_name;
  // - the properties its kernels are not held to (property → why: its bridge does what the
  //   property checks), reported skipped with the reason;
  std::map<std::string, std::string> in_process_skipped;
  // - the replay line of its kernels' failures (empty: a `ropecheck gate` line);
  std::string in_process_replay;
  // - a hook called before each property × dtype ("property/dtype"), each kernel's fixtures
  //   ("fixtures") and each mutant; it may throw to end the run (Ctrl-C, a kernel that raised).
  // With mutants, each mutant faces the checks the first in-process kernel faced (its dtypes,
  // pairings, declared domain, skipped properties): one those checks cannot see is reported
  // not applicable, with the reason, rather than as a survivor.
  std::function<void(std::string_view check)> before_check;
};

// A run's report, and the mutants that were not applicable to the in-process kernel (name, why).
struct gate_run_outcome {
  reports::gate_report report;
  std::vector<std::pair<std::string, std::string>> mutants_not_applicable;
};

// The bound every fixture output is held to: bounds::output_bound for the attention factor A
// that cos and sin carry, widened by `contract` (which must outlive the function).
fixtures::output_bound_fn fixture_output_bound(const bounds::accuracy_contract& contract);

// --baseline, for every caller of the gate: the saved report of a whole run (a shard report is
// refused), checked against its schema (exit 2 naming file, field and value).
reports::gate_report read_gate_baseline(const std::string& path);
// Refuses (std::runtime_error, exit 2) a baseline whose contract, or whose domain for a kernel of
// `domains` (name, domain in this run), is not this run's: ratios under other bounds or over
// other cases do not compare. `baseline_name` names it in the message.
void check_baseline_comparable(const reports::gate_report& baseline, const std::string& baseline_name,
                               const std::string& contract_name,
                               const std::vector<std::pair<std::string, reports::served_domain>>& domains);
// The verdicts (reports::judge) after the ratchet against `baseline` (nullptr: none): a failure
// it had too, by no more than 10%, is a known failure; a regression is a failing
// "baseline/<kernel>/<name>" fixture row.
void judge_against_baseline(reports::gate_report& report, const reports::gate_report* baseline,
                            const std::string& baseline_name);

// A kernel's domain for a run (fast::kernel_domain), as the report states it.
reports::served_domain reported_domain(const fast::kernel_domain& d);

// One property × dtype result as the report holds it ("name/dtype", status, locations).
reports::property_outcome property_outcome_of(const properties::property_result& r);

// Runs the gate and returns its report (report.passed is the verdict). Progress goes to
// stderr. Throws bad_input, io_error or std::runtime_error (exit 2) for bad input, before
// running anything.
reports::gate_report run_gate_report(const gate_options& options);
// The same run, with what an in-process caller also reports.
gate_run_outcome run_gate_outcome(const gate_options& options);

// A kernel name as the C ABI allows one (abi::is_valid_kernel_name), else bad_input naming
// `flag`: in-process (Python) kernels are held to the rule library kernels are.
using abi::max_kernel_name_length;
void check_kernel_name(std::string_view flag, std::string_view name);

}  // namespace ropecheck::core
