// gate_kernel: the gate's checks on one kernel — every kernel property on every dtype it
// stores (properties/kernel_properties.h), then the fixtures (properties/kernel_fixtures.h),
// under the run's contract, within the kernel's declared domain (fast::kernel_domain) —
// as an in-process entry point: `ropecheck.gate` (python/) calls it on a Python callable
// wrapped as a fast::kernel_info. Properties whose contract a caller's kernel cannot express
// are reported as skipped with the reason, never dropped. A gate that would check nothing is
// refused (bad_input), never a pass: a kernel with no dtype or no pairing, and a run that judged
// no property case and compared no fixture value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "abi/kernel_library.h"
#include "bounds/accuracy_contracts.h"
#include "fast/kernels.h"
#include "properties/kernel_fixtures.h"
#include "properties/kernel_properties.h"
#include "reports/gate_report.h"

namespace ropecheck::cli {

struct gate_kernel_settings {
  properties::profile level = properties::profile::quick;
  std::uint64_t seed = properties::default_seed;
  std::string replay_command;                   // what a failure's replay line runs
  std::map<std::string, std::string> skipped;   // property name → why it is not run
  // Called after each property × dtype and before the fixtures; may throw to end the gate
  // (the Python module rethrows an exception the kernel raised).
  std::function<void()> between_checks;
  // Called before each property × dtype ("property/dtype") and before the fixtures
  // ("fixtures"): the Python module names the running check in a kernel timeout's message.
  std::function<void(std::string_view check)> before_check;
  // The run's contract, positions and properties, as `ropecheck gate`'s flags give them
  // (run_checks): the properties get them, and the fixtures the contract's bound and the
  // domain; the kernel's own domain is its kernel_info's. With properties selected the others
  // are not run, and neither are the fixtures (as --property).
  properties::check_options checks;
};

// The checks of a run under `contract` (which must outlive them): `max_position` (0: none) and
// `positions` ("all" | "nonnegative") narrowed by the contract's own position domain, as
// --max-position and --positions are; `properties` selects (names checked by the caller).
properties::check_options run_checks(const bounds::accuracy_contract& contract, std::int64_t max_position,
                                     std::string_view positions, const std::vector<std::string>& properties);

struct gate_kernel_result {
  reports::kernel_outcome outcome;                 // properties (fixtures folded into passed)
  std::vector<reports::fixture_outcome> fixtures;
  std::vector<properties::property_result> skipped;  // name, dtype and reason in `detail`
};

// The calls a run sends `kernel`: its declared domain narrowed by the run's (checks.domain and
// checks.max_position), what the report states as the kernel's domain.
fast::kernel_domain domain_of_run(const fast::kernel_info& kernel, const properties::check_options& checks);

// Throws bad_input: a kernel without dtypes or pairings, a name check_kernel_name refuses, or
// a run that checked nothing.
gate_kernel_result gate_kernel(const fast::kernel_info& kernel, const gate_kernel_settings& settings);

// A kernel name as the C ABI allows one (abi::is_valid_kernel_name), else bad_input naming
// `flag`: Python kernels are held to the rule library kernels are.
using abi::max_kernel_name_length;
void check_kernel_name(std::string_view flag, std::string_view name);

}  // namespace ropecheck::cli
