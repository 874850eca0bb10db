// gate: `ropecheck gate` as a library function — the properties and fixtures on a set of
// kernels, under an accuracy contract, compared with a baseline report — so that a caller
// other than the command line (a Python binding gating a Python kernel in-process) runs
// exactly what the CLI runs. command_gate.cpp is the flag parsing around it.
#pragma once

#include <cstdint>
#include <string>
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
  std::string contract = "exact";             // --contract NAME|FILE.json
  std::int64_t max_position = 0;              // --max-position (0: none)
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

// A contract by catalog name (bounds/accuracy_contracts.h), or read from a JSON file:
// {"name": …, "max_position": N (optional), "float32"|"float16"|"bfloat16":
// {"constant", "angle", "angle_per_pair", "absolute"}} — every dtype and term required, no
// other key.
// Throws bad_input / io_error / std::runtime_error naming the file, the field and the value.
bounds::accuracy_contract read_contract(const std::string& name_or_path);

// The bound every fixture output is held to: bounds::output_bound for the attention factor A
// that cos and sin carry, widened by `contract` (which must outlive the function).
fixtures::output_bound_fn fixture_output_bound(const bounds::accuracy_contract& contract);

// One property × dtype result as the report holds it ("name/dtype", status, locations).
reports::property_outcome property_outcome_of(const properties::property_result& r);

// Runs the gate and returns its report (report.passed is the verdict). Progress goes to
// stderr. Throws bad_input, io_error or std::runtime_error (exit 2) for bad input, before
// running anything.
reports::gate_report run_gate_report(const gate_options& options);

}  // namespace ropecheck::cli
