// The gate on one kernel, in process (gate_kernel.h).
#include "cli/gate_kernel.h"

#include <fmt/format.h>

#include <iterator>

#include "bounds/accuracy_contracts.h"
#include "cli/gate.h"

namespace ropecheck::cli {

gate_kernel_result gate_kernel(const fast::kernel_info& kernel, const gate_kernel_settings& settings) {
  const auto between = [&settings] {
    if (settings.between_checks) settings.between_checks();
  };
  gate_kernel_result result;
  result.outcome.name = std::string(kernel.name);
  for (const std::string_view property : properties::kernel_property_names()) {
    for (const dtype storage : kernel.dtypes) {
      const auto skip = settings.skipped.find(std::string(property));
      if (skip != settings.skipped.end()) {
        properties::property_result r;
        r.name = std::string(property);
        r.dtype = std::string(to_string(storage));
        r.detail = "skipped: " + skip->second;
        result.skipped.push_back(std::move(r));
        continue;
      }
      const properties::property_result r = properties::check_kernel_property(
          kernel, property, storage, settings.level, settings.seed, settings.replay_command,
          static_cast<int>(std::ssize(kernel.dtypes)));
      between();
      if (r.detail.starts_with("skipped: ")) result.skipped.push_back(r);
      result.outcome.passed = result.outcome.passed && r.passed;
      result.outcome.properties.push_back(property_outcome_of(r));
    }
  }
  // The Python kernel is held to the exact contract (the derived bound).
  result.fixtures = fixtures::check_kernel_fixtures(kernel, fixture_output_bound(bounds::exact_contract()));
  between();
  for (const auto& f : result.fixtures) result.outcome.passed = result.outcome.passed && f.passed;
  return result;
}

}  // namespace ropecheck::cli
