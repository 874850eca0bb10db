// gate: `ropecheck gate` as a library function — the properties and fixtures on a set of
// kernels, under an accuracy contract, compared with a baseline report — so that a caller
// other than the command line (a Python binding gating a Python kernel in-process) runs
// exactly what the CLI runs. command_gate.cpp is the flag parsing around it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "abi/kernel_library.h"
#include "bounds/accuracy_contracts.h"
#include "fast/kernels.h"
#include "properties/kernel_fixtures.h"
#include "properties/kernel_properties.h"
#include "reports/gate_report.h"

namespace ropecheck::cli {

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

}  // namespace ropecheck::cli
