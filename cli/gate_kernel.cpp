// The gate on one kernel, in process (gate_kernel.h).
#include "cli/gate_kernel.h"

#include <fmt/format.h>

#include <iterator>

#include "bounds/error_bounds.h"

namespace ropecheck::cli {

fixtures::output_bound_fn fixture_output_bound() {
  return [scale = bounds::attention_scale_for(1)](dtype storage, double pair_norm,
                                                  std::int64_t position, double theta,
                                                  double stored, double attention_factor) mutable {
    if (attention_factor != scale.factor) scale = bounds::attention_scale_for(attention_factor);
    return bounds::output_bound(storage, pair_norm, position, theta, stored, scale);
  };
}

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
      result.outcome.properties.push_back({fmt::format("{}/{}", r.name, r.dtype), r.passed, r.cases,
                                           r.worst_over_bound, r.counterexample, r.replay});
    }
  }
  result.fixtures = fixtures::check_kernel_fixtures(kernel, fixture_output_bound());
  between();
  for (const auto& f : result.fixtures) result.outcome.passed = result.outcome.passed && f.passed;
  return result;
}

}  // namespace ropecheck::cli
