// The gate on one kernel, in process (gate_kernel.h).
#include "cli/gate_kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "bounds/accuracy_contracts.h"
#include "cli/contract_spelling.h"
#include "cli/gate.h"
#include "io/io_error.h"

namespace ropecheck::cli {

void check_kernel_name(std::string_view flag, std::string_view name) {
  if (!abi::is_valid_kernel_name(name))
    throw bad_input(flag, fmt::format("is not 1 to {} characters of [A-Za-z0-9_.-]", max_kernel_name_length), name,
                    "a kernel name is printed in replay lines, Markdown tables and file names");
}

properties::check_options run_checks(const bounds::accuracy_contract& contract, std::int64_t max_position,
                                     std::string_view positions, const std::vector<std::string>& properties) {
  properties::check_options checks;
  checks.contract = &contract;
  // The run's domain, as `ropecheck gate` narrows it (contract_spelling.h).
  const fast::kernel_domain run = run_domain(contract, max_position, positions, "max_position");
  checks.max_position = run.max_position;
  checks.domain.negative_positions = run.negative_positions;
  checks.properties = properties;
  return checks;
}

fast::kernel_domain domain_of_run(const fast::kernel_info& kernel, const properties::check_options& checks) {
  return kernel.domain.intersect(checks.domain).intersect(fast::kernel_domain{.max_position = checks.max_position});
}

gate_kernel_result gate_kernel(const fast::kernel_info& kernel, const gate_kernel_settings& settings) {
  check_kernel_name("name", kernel.name);
  // An empty list would run no property on any dtype: a pass over nothing.
  if (kernel.dtypes.empty()) throw bad_input("dtypes", "is empty: the gate would check nothing", "[]");
  if (kernel.pairings.empty()) throw bad_input("pairings", "is empty: the gate would check nothing", "[]");
  const auto between = [&settings] {
    if (settings.between_checks) settings.between_checks();
  };
  gate_kernel_result result;
  result.outcome.name = std::string(kernel.name);
  const auto& selected = settings.checks.properties;
  for (const std::string_view property : properties::kernel_property_names()) {
    // A property not selected is reported not run (check_kernel_property says so), not skipped.
    const bool chosen = selected.empty() || std::find(selected.begin(), selected.end(), property) != selected.end();
    for (const dtype storage : kernel.dtypes) {
      const auto skip = settings.skipped.find(std::string(property));
      if (chosen && skip != settings.skipped.end()) {
        properties::property_result r;
        r.name = std::string(property);
        r.dtype = std::string(to_string(storage));
        r.detail = "skipped: " + skip->second;
        result.skipped.push_back(std::move(r));
        continue;
      }
      if (settings.before_check) settings.before_check(fmt::format("{}/{}", property, to_string(storage)));
      const properties::property_result r = properties::check_kernel_property(
          kernel, property, storage, settings.level, settings.seed, settings.replay_command,
          static_cast<int>(std::ssize(kernel.dtypes)), settings.checks);
      between();
      if (r.detail.starts_with("skipped: ")) result.skipped.push_back(r);
      result.outcome.passed = result.outcome.passed && r.passed;
      result.outcome.properties.push_back(property_outcome_of(r));
    }
  }
  result.outcome.domain = reported_domain(domain_of_run(kernel, settings.checks));
  // The fixtures, under the run's contract (exact without one) and within the domain.
  if (selected.empty()) {
    if (settings.before_check) settings.before_check("fixtures");
    const bounds::accuracy_contract& contract =
        settings.checks.contract != nullptr ? *settings.checks.contract : bounds::exact_contract();
    result.fixtures = fixtures::check_kernel_fixtures(kernel, fixture_output_bound(contract), {},
                                                      settings.checks.max_position, settings.checks.domain);
    between();
  }
  for (const auto& f : result.fixtures) result.outcome.passed = result.outcome.passed && f.passed;
  // A pass needs something judged: a property case or a fixture value.
  std::int64_t checked = 0;
  for (const auto& p : result.outcome.properties) checked += p.cases;
  for (const auto& f : result.fixtures) checked += f.values;
  if (checked == 0)
    throw bad_input("gate", "judged no property case and compared no fixture value, so it cannot pass",
                    kernel.name, "every property was skipped for its dtypes and pairings");
  return result;
}

}  // namespace ropecheck::cli
