// gate_kernel: the gate's checks on one kernel — every kernel property on every dtype it
// stores (properties/kernel_properties.h), then the fixtures (properties/kernel_fixtures.h) —
// as an in-process entry point: `ropecheck.gate` (python/) calls it on a Python callable
// wrapped as a fast::kernel_info. Properties whose contract a caller's kernel cannot express
// are reported as skipped with the reason, never dropped.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

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
};

struct gate_kernel_result {
  reports::kernel_outcome outcome;                 // properties (fixtures folded into passed)
  std::vector<reports::fixture_outcome> fixtures;
  std::vector<properties::property_result> skipped;  // name, dtype and reason in `detail`
};

gate_kernel_result gate_kernel(const fast::kernel_info& kernel, const gate_kernel_settings& settings);

}  // namespace ropecheck::cli
