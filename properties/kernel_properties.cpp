// check_kernel: runs the catalog (kernel_property_catalog.h) on one kernel, dtype by dtype.
#include "properties/kernel_properties.h"

#include <sstream>
#include <stdexcept>
#include <vector>

#include "numeric/pair_error.h"
#include "properties/kernel_property_catalog.h"

namespace ropecheck::properties {

namespace {

const std::vector<kernel_property_definition>& catalog() {
  static const std::vector<kernel_property_definition> all = [] {
    std::vector<kernel_property_definition> v;
    for (const auto& p : accuracy_properties()) v.push_back(p);
    for (const auto& p : exactness_properties()) v.push_back(p);
    return v;
  }();
  return all;
}

const std::vector<std::string_view>& names() {
  static const std::vector<std::string_view> all = [] {
    std::vector<std::string_view> v;
    for (const auto& p : catalog()) v.push_back(p.name);
    return v;
  }();
  return all;
}

// The dtypes the properties have bounds for (fast/rope_call.h: math is float32).
bool checkable(dtype t) {
  return t == dtype::float32 || t == dtype::float16 || t == dtype::bfloat16;
}

bool has_other_strategy(const fast::kernel_info& kernel, dtype storage) {
  for (const fast::kernel_info& k : fast::kernel_registry()) {
    if (k.strategy != kernel.strategy && k.name != kernel.name && k.supports(storage)) return true;
  }
  return false;
}

std::string default_replay_command(const fast::kernel_info& kernel, std::string_view property,
                                   dtype storage) {
  // The test name kernels_properties_test.cpp gives this (kernel, property, dtype).
  return "./build/properties/properties_kernels_test --gtest_filter='kernels/kernel_property.holds/" +
         std::string(kernel.name) + "__" + std::string(property) + "__" +
         std::string(to_string(storage)) + "'";
}

std::string describe(const kernel_property_definition& p, dtype storage, const observation& seen) {
  std::ostringstream os;
  if (!p.measures_error) return {};
  os << "worst at " << (seen.worst_case.empty() ? "-" : seen.worst_case);
  if (p.name == "within_bound_of_reference") {
    os << "; worst error / documented target, A = 1 (2.5·2^-24·‖pair‖";
    if (storage != dtype::float32) os << " + half ulp of the output";
    os << ") = " << seen.worst_over_target << "; max pair error = "
       << in_units_of_2_pow_minus_24(seen.worst_pair_error) << "·2^-24";
    if (storage == dtype::float32)
      os << "; max ulps on non-cancelling outputs = " << seen.worst_noncancelling_ulps;
  }
  if (p.name != "strategies_agree") {
    if (p.name == "within_bound_of_reference")
      os << "; K outputs (one call with Q) worst/bound = " << seen.worst_key_over_bound;
    os << "; with rope_scaling or A != 1 worst/bound = " << seen.worst_scaled_over_bound
       << " (pairs of norm >= 2^-100)";
  }
  if (p.name == "strategies_agree")
    os << (seen.all_bit_identical ? "; all outputs bit-identical" : "; outputs differ in bits");
  return os.str();
}

}  // namespace

std::span<const std::string_view> kernel_property_names() { return names(); }

property_result check_kernel_property(const fast::kernel_info& kernel, std::string_view property,
                                      dtype storage, profile p, std::uint64_t seed,
                                      std::string_view replay_command, int deep_runs) {
  const kernel_property_definition* definition = nullptr;
  for (const auto& d : catalog())
    if (d.name == property) definition = &d;
  if (definition == nullptr)
    throw std::invalid_argument("unknown kernel property '" + std::string(property) + "'");

  const std::string id =
      std::string(kernel.name) + "/" + std::string(property) + "/" + std::string(to_string(storage));
  run_settings settings = settings_from_rc_params(
      p, seed,
      replay_command.empty() ? default_replay_command(kernel, property, storage)
                             : std::string(replay_command));
  settings.deep_cases = deep_share(definition->deep_cases, deep_runs);

  property_result skipped;
  skipped.name = std::string(property);
  skipped.dtype = std::string(to_string(storage));
  if (!checkable(storage) || !kernel.supports(storage)) {
    skipped.detail = "skipped: no bound for dtype " + skipped.dtype;
    return skipped;
  }
  if (property == "strategies_agree" && !has_other_strategy(kernel, storage)) {
    skipped.detail = "skipped: no registered kernel of the other angle strategy";
    return skipped;
  }
  if (skipped_by_reproduce(settings, id)) {
    skipped.detail = "skipped: RC_PARAMS reproduces other properties";
    return skipped;
  }

  observation seen;
  auto body = [&kernel, storage, &settings, &seen, definition] {
    definition->run_case(kernel, storage, settings, seen);
  };
  property_result result =
      run_testable(id, std::string(property), body, definition->quick_cases, settings, seen);
  result.dtype = std::string(to_string(storage));
  if (!result.passed)
    result.counterexample = "Property: " + std::string(definition->statement) + "\n" + result.counterexample;
  result.worst_over_bound = definition->measures_error ? seen.worst_over_bound : 0.0;
  result.detail = describe(*definition, storage, seen);
  return result;
}

kernel_result check_kernel(const fast::kernel_info& kernel, profile p, std::uint64_t seed,
                           std::string_view replay_command) {
  kernel_result result;
  result.kernel = std::string(kernel.name);
  for (const auto& definition : catalog()) {
    for (dtype storage : kernel.dtypes) {
      property_result r = check_kernel_property(kernel, definition.name, storage, p, seed,
                                                replay_command, std::ssize(kernel.dtypes));
      result.passed = result.passed && r.passed;
      result.properties.push_back(std::move(r));
    }
  }
  return result;
}

}  // namespace ropecheck::properties
