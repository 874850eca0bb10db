// check_kernel: runs the catalog (kernel_property_catalog.h) on one kernel, dtype by dtype.
#include "properties/kernel_properties.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "numeric/pair_error.h"
#include "properties/call_size_meter.h"
#include "properties/kernel_property_catalog.h"
#include "properties/property_runner.h"

namespace ropecheck::properties {

namespace {

const std::vector<kernel_property_definition>& catalog() {
  static const std::vector<kernel_property_definition> all = [] {
    std::vector<kernel_property_definition> v;
    for (const auto& p : accuracy_properties()) v.push_back(p);
    for (const auto& p : exactness_properties()) v.push_back(p);
    for (const auto& p : stream_properties()) v.push_back(p);
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

// The properties have bounds for every storage dtype (fast/rope_call.h: math is float32).
bool checkable(dtype t) { return is_storage(t); }

bool has_other_strategy(const fast::kernel_info& kernel, dtype storage) {
  for (const fast::kernel_info& k : fast::kernel_registry()) {
    if (k.strategy != kernel.strategy && k.name != kernel.name && k.supports(storage)) return true;
  }
  return false;
}

// Each need's test against a run's domain and the reason a property is skipped without it.
struct need_row {
  kernel_need need;
  bool (*served)(const fast::kernel_domain& d);
  std::string_view missing;
};
constexpr need_row kernel_needs[] = {
    {kernel_need::nothing, [](const fast::kernel_domain&) { return true; }, ""},
    {kernel_need::inverse, [](const fast::kernel_domain& d) { return d.inverse; },
     "the kernel's declared domain has no inverse direction"},
    {kernel_need::partial_rotary, [](const fast::kernel_domain& d) { return d.partial_rotary; },
     "the kernel's declared domain has no partial rotary (rotary_dim < head_dim)"},
    {kernel_need::absent_tensor, [](const fast::kernel_domain& d) { return d.absent_tensor; },
     "the kernel's declared domain has no call with Q or K absent"},
};

const need_row& need_of(kernel_need need) {
  for (const need_row& row : kernel_needs)
    if (row.need == need) return row;
  throw std::logic_error("kernel_needs: a kernel_need without its row");
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

namespace {

bool selected(const check_options& options, std::string_view property) {
  if (options.properties.empty()) return true;
  return std::find(options.properties.begin(), options.properties.end(), property) !=
         options.properties.end();
}

// The shrunk counterexample as a person reads it: RapidCheck's first line (tests and shrinks),
// the case's inputs labelled (when the property recorded them for this message), the message.
std::string labelled_counterexample(const std::string& rapidcheck, const failed_case& f,
                                    const std::string& message) {
  const std::string header = rapidcheck.substr(0, rapidcheck.find('\n'));
  return header + "\n\n" + f.inputs + "\n\n" + message;
}

}  // namespace

property_result check_kernel_property(const fast::kernel_info& kernel_in, std::string_view property,
                                      dtype storage, profile p, std::uint64_t seed,
                                      std::string_view replay_command, int deep_runs,
                                      const check_options& options) {
  const kernel_property_definition* definition = nullptr;
  for (const auto& d : catalog())
    if (d.name == property) definition = &d;
  if (definition == nullptr)
    throw std::invalid_argument("unknown kernel property '" + std::string(property) + "'");

  const std::string id =
      std::string(kernel_in.name) + "/" + std::string(property) + "/" + std::string(to_string(storage));
  run_settings settings = settings_from_rc_params(
      p, seed,
      replay_command.empty() ? default_replay_command(kernel_in, property, storage)
                             : std::string(replay_command));
  settings.deep_cases = deep_share(definition->deep_cases, deep_runs);
  if (options.contract != nullptr) settings.contract = options.contract;
  // The kernel's declared domain, narrowed by the run's (--positions, --max-position).
  fast::kernel_domain run_domain = options.domain;
  run_domain.max_position = fast::kernel_domain{.max_position = options.max_position}
                                .intersect(options.domain)
                                .max_position;
  settings.domain = kernel_in.domain.intersect(run_domain);
  settings.max_position = settings.domain.max_position;
  settings.shard_index = options.shard_index;
  settings.shard_count = options.shard_count;

  property_result skipped;
  skipped.name = std::string(property);
  skipped.dtype = std::string(to_string(storage));
  skipped.state = run_state::skipped;
  if (!selected(options, property)) {
    skipped.state = run_state::not_run;
    skipped.detail = "not run: not among the selected properties (--property)";
    return skipped;
  }
  if (!checkable(storage)) {
    skipped.detail = "skipped: no bound for dtype " + skipped.dtype;
    return skipped;
  }
  if (!kernel_in.supports(storage)) {
    skipped.detail = "skipped: the kernel does not support dtype " + skipped.dtype;
    return skipped;
  }
  if (definition->applies_to != nullptr && !definition->applies_to(kernel_in)) {
    skipped.detail = "skipped: " + std::string(definition->skipped_because);
    return skipped;
  }
  if (const need_row& need = need_of(definition->needs); !need.served(settings.domain)) {
    skipped.detail = "skipped: " + std::string(need.missing);
    return skipped;
  }
  if (property == "strategies_agree" && !has_other_strategy(kernel_in, storage)) {
    skipped.detail = "skipped: no registered kernel of the other angle strategy";
    return skipped;
  }
  if (skipped_by_reproduce(settings, id)) {
    skipped.state = run_state::not_run;
    skipped.detail = "not run: RC_PARAMS reproduces other properties";
    return skipped;
  }
  if (const std::string why = options.stopped ? options.stopped() : std::string(); !why.empty()) {
    skipped.state = run_state::not_run;
    skipped.detail = "not run: " + why;
    return skipped;
  }
  if (options.starting) options.starting(skipped.name + "/" + skipped.dtype);
  // Every call below goes through the meter (the report's largest_call_token_heads).
  const call_size_meter meter(kernel_in);
  const fast::kernel_info& kernel = meter.kernel();

  // First every case of the budget, a failing case counted instead of stopping the run, so
  // that worst/bound is the worst over the same cases whether or not the property holds (what
  // --baseline compares); then, if any failed, RapidCheck again from the same seed, stopping
  // at the first failure and shrinking it. A reproduce=… run is the second kind only.
  observation seen;
  std::int64_t failed_cases = 0;
  failed_case first_failure;
  std::string first_message;
  std::int64_t measured = 0;  // cases run so far, this one included
  auto measure = [&] {
    ++measured;
    seen.case_worst = -1;
    seen.case_pair = seen.case_head_dim = -1;
    try {
      definition->run_case(kernel, storage, settings, seen);
    } catch (const rc::detail::CaseResult& r) {
      if (r.type != rc::detail::CaseResult::Type::Failure) throw;
      if (failed_cases++ == 0) {
        if (options.first_failure) options.first_failure(skipped.name + "/" + skipped.dtype, measured);
        first_message = case_message(r.description);
        const auto it = seen.failures.find(first_message);
        if (it != seen.failures.end()) first_failure = it->second;
      }
    }
    if (seen.case_worst >= 0 && seen.points.size() < max_plot_points)
      seen.points.emplace_back(seen.case_position, seen.case_worst);
    if (seen.case_worst >= 0 && seen.case_pair >= 0 && seen.pair_points.size() < max_plot_points) {
      seen.pair_points.emplace_back(seen.case_pair, seen.case_worst);
      seen.head_dim_points.emplace_back(seen.case_head_dim, seen.case_worst);
    }
    if (seen.failures.size() > 256) seen.failures.clear();
  };
  auto shrink = [&kernel, storage, &settings, definition](observation& into) {
    return [&kernel, storage, &settings, definition, &into] {
      definition->run_case(kernel, storage, settings, into);
    };
  };
  // fp8 runs a quarter of the quick budget: its float32 arithmetic is float32 storage's,
  // bit for bit (fast/kernels_test.cpp, kernel_fp8: fp8 output = the float32 output stored once),
  // so its cases only add the store and its saturation, whose error dwarfs the arithmetic's by
  // ~2^20 — a quarter of the cases per fp8 dtype keeps the gate's and ctest's growth small.
  const int quick_cases = is_float8(storage) ? std::max(definition->quick_cases / 4, 1) : definition->quick_cases;
  property_result result;
  observation shrinking;
  if (settings.reproduce.count(id) > 0) {
    result = run_testable(id, std::string(property), shrink(seen), quick_cases, settings, seen);
  } else {
    result = run_testable(id, std::string(property), measure, quick_cases, settings, seen);
    if (result.passed && failed_cases > 0) {
      const std::int64_t all_cases = result.cases;
      const auto limit = options.shrink_above.find(id);  // a regression: shrunk past the baseline
      const bool regressed = limit != options.shrink_above.end() && seen.worst_over_bound > limit->second;
      const auto run_case = [&kernel, storage, &settings, definition](observation& into) {
        definition->run_case(kernel, storage, settings, into);
      };
      result = run_testable(id, std::string(property),
                            regressed ? failing_above(std::string(property), limit->second, shrinking, run_case) : shrink(shrinking),
                            quick_cases, settings, shrinking);
      result.cases = all_cases;
      if (result.passed) {  // the same seed failed before: report the first failure as seen
        result.passed = false;
        result.message = first_message;
        result.counterexample = "first failure (not reproduced while shrinking)\n\n" +
                                first_failure.inputs + "\n\n" + first_message;
        result.counterexample_location = first_failure.location;
        result.counterexample_data = first_failure.data;
      }
    }
  }
  result.dtype = std::string(to_string(storage));
  result.failed_cases = result.passed ? 0 : std::max<std::int64_t>(failed_cases, 1);
  if (!result.passed) {
    for (const observation* o : {&shrinking, &seen}) {
      const auto it = o->failures.find(result.message);
      if (it == o->failures.end()) continue;
      result.counterexample = labelled_counterexample(result.counterexample, it->second, result.message);
      result.counterexample_location = it->second.location;
      result.counterexample_data = it->second.data;
      break;
    }
    result.counterexample = "Property: " + std::string(definition->statement) + "\n" + result.counterexample;
  }
  result.worst_over_bound = definition->measures_error ? seen.worst_over_bound : 0.0;
  if (definition->measures_error) result.worst = seen.worst_location;
  result.points = std::move(seen.points);
  result.pair_points = std::move(seen.pair_points);
  result.head_dim_points = std::move(seen.head_dim_points);
  result.largest_call_token_heads = meter.largest_token_heads();
  if (definition->measures_error) result.worst_data = seen.worst_data;
  result.detail = describe(*definition, storage, seen);
  if (!settings.contract->is_exact() && definition->measures_error)
    result.detail += (result.detail.empty() ? "" : "; ") + std::string("bounds widened by contract ") +
                     settings.contract->name;
  return result;
}

kernel_result check_kernel(const fast::kernel_info& kernel, profile p, std::uint64_t seed,
                           std::string_view replay_command, const check_options& options) {
  for (const auto& name : options.properties) {
    if (std::find(names().begin(), names().end(), name) == names().end())
      throw std::invalid_argument("--property: unknown kernel property '" + name + "'");
  }
  kernel_result result;
  result.kernel = std::string(kernel.name);
  // Every dtype the properties have a bound for, so that one the kernel lacks shows as skipped.
  std::vector<dtype> dtypes(kernel.dtypes.begin(), kernel.dtypes.end());
  for (dtype t : storage_dtypes)
    if (std::find(dtypes.begin(), dtypes.end(), t) == dtypes.end()) dtypes.push_back(t);
  for (const auto& definition : catalog()) {
    for (dtype storage : dtypes) {
      property_result r = check_kernel_property(kernel, definition.name, storage, p, seed,
                                                replay_command, std::ssize(kernel.dtypes), options);
      result.passed = result.passed && r.passed;
      result.properties.push_back(std::move(r));
    }
  }
  return result;
}

}  // namespace ropecheck::properties
