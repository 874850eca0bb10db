// saved_report: a saved report's schema and invariants checked before it is trusted (see
// saved_report.h).
#include "reports/saved_report.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "io/io_error.h"
#include "io/json_file.h"

namespace ropecheck::reports {
namespace {

// File names may be long; they are the user's, shown whole (io_error's limit).
constexpr std::size_t file_name_length = 4096;

// One invariant checked, refused as "<file>: field '<path>': <problem> '<value>'".
class checker {
 public:
  explicit checker(std::string_view file) : file_(file) {}

  [[noreturn]] void refuse(const std::string& path, std::string_view problem, std::string_view value) const {
    throw saved_report_error(fmt::format("{}: field '{}': {} '{}'", printable(file_, file_name_length),
                                         printable(path, file_name_length), problem, printable(value)));
  }

  void count(std::int64_t value, const std::string& path) const {
    if (value < 0) refuse(path, "is negative, not a count", std::to_string(value));
  }

  // A count and the count it is part of (failed_cases of cases, …).
  void part(std::int64_t value, const std::string& path, std::int64_t whole, const std::string& whole_path) const {
    count(value, path);
    if (value > whole) refuse(path, fmt::format("exceeds {} ({})", whole_path, whole), std::to_string(value));
  }

  // A ratio or an error: a number ≥ 0, infinite only where the row failed (a case whose error
  // has no bound fails; a pass has a finite measure).
  void magnitude(double value, const std::string& path, bool failed) const {
    if (std::isnan(value) || value < 0) refuse(path, "is not a number >= 0", fmt::format("{}", value));
    if (std::isinf(value) && !failed) refuse(path, "is infinite on a row that passed", fmt::format("{}", value));
  }

  void finite_positive(double value, const std::string& path) const {
    if (!(std::isfinite(value) && value > 0)) refuse(path, "is not a finite number > 0", fmt::format("{}", value));
  }

  void share(double value, const std::string& path) const {
    if (!(value >= 0 && value <= 1)) refuse(path, "is not a share in [0, 1]", fmt::format("{}", value));
  }

  void location(const reports::location& l, const std::string& path, bool failed) const {
    if (l.head_dim < 0) refuse(path + ".head_dim", "is negative", std::to_string(l.head_dim));
    if (l.rotary_dim < 0) refuse(path + ".rotary_dim", "is negative", std::to_string(l.rotary_dim));
    if (l.pair < -1) refuse(path + ".pair", "is not -1 (no pair) or a pair index >= 0", std::to_string(l.pair));
    if (l.units != -1) magnitude(l.units, path + ".units", failed);
  }

 private:
  std::string_view file_;
};

// A sum of counts that stops at the largest int64 (only "is it ≥ 1" is asked of it).
void add_saturating(std::int64_t& sum, std::int64_t n) {
  if (__builtin_add_overflow(sum, n, &sum)) sum = std::numeric_limits<std::int64_t>::max();
}

const char* bool_text(bool b) { return b ? "true" : "false"; }

}  // namespace

void validate_report(const gate_report& r, std::string_view file, report_use use) {
  const checker c(file);
  if (r.shard_count < 1 || r.shard_index < 0 || r.shard_index >= r.shard_count)
    c.refuse("shard", "is not shard I of N with 0 <= I < N", fmt::format("{}/{}", r.shard_index, r.shard_count));
  if (r.profile != "quick" && r.profile != "deep") c.refuse("profile", "is not quick or deep", r.profile);
  std::int64_t judged = 0;  // cases of properties that ran, fixture values, mutants
  std::string first_failure;  // what fails the report, for a "pass" that says otherwise
  const auto note_failure = [&](const std::string& what) {
    if (first_failure.empty()) first_failure = what;
  };
  // Fixtures first: the kernels' sums below take their checked counts.
  for (std::size_t f = 0; f < r.fixtures.size(); ++f) {
    const fixture_outcome& fixture = r.fixtures[f];
    const std::string at = fmt::format("fixtures[{}]", f);
    c.count(fixture.values, at + ".values");
    // A fixture that failed in the --baseline too passes as a known failure.
    const bool known_failure = fixture.detail.starts_with("known failure");
    c.magnitude(fixture.worst_over_bound, at + ".worst_over_bound", !fixture.passed || known_failure);
    add_saturating(judged, fixture.values);
    if (!fixture.passed) note_failure(at + " (" + printable(fixture.name) + ")");
  }
  for (std::size_t k = 0; k < r.kernels.size(); ++k) {
    const kernel_outcome& kernel = r.kernels[k];
    const std::string kernel_path = fmt::format("kernels[{}]", k);
    std::string failing;  // the kernel's first failing property or fixture
    std::int64_t kernel_judged = 0;  // its cases of properties that ran, its fixture values
    for (std::size_t i = 0; i < kernel.properties.size(); ++i) {
      const property_outcome& p = kernel.properties[i];
      const std::string at = fmt::format("{}.properties[{}]", kernel_path, i);
      const std::string verdict = verdict_of(p);
      const bool failed = !p.passed;
      c.count(p.cases, at + ".cases");
      c.part(p.failed_cases, at + ".failed_cases", p.cases, at + ".cases");
      if (p.passed && p.failed_cases > 0)
        c.refuse(at + ".verdict", fmt::format("is {}, but {} of its cases failed", verdict, p.failed_cases), verdict);
      if ((p.status == "skipped" || p.status == "not_run") && p.cases != 0)
        c.refuse(at + ".cases", fmt::format("is not 0 on a property that is {}", p.status), std::to_string(p.cases));
      c.magnitude(p.worst_over_bound, at + ".worst_over_bound", failed);
      c.location(p.worst, at + ".worst", failed);
      c.location(p.counterexample_location, at + ".counterexample_location", failed);
      if (p.points.size() > max_points_per_property)
        c.refuse(at + ".points", fmt::format("holds more than {} points", max_points_per_property),
                 std::to_string(p.points.size()));
      for (std::size_t n = 0; n < p.points.size(); ++n)
        c.magnitude(p.points[n].second, fmt::format("{}.points[{}][1]", at, n), failed);
      for (const auto& [list, name] : {std::pair{&p.pair_points, "points_by_pair"},
                                       std::pair{&p.head_dim_points, "points_by_head_dim"}}) {
        if (list->size() > max_points_per_property)
          c.refuse(at + "." + name, fmt::format("holds more than {} points", max_points_per_property),
                   std::to_string(list->size()));
        for (std::size_t n = 0; n < list->size(); ++n) {
          c.count((*list)[n].first, fmt::format("{}.{}[{}][0]", at, name, n));
          c.magnitude((*list)[n].second, fmt::format("{}.{}[{}][1]", at, name, n), failed);
        }
      }
      c.count(p.largest_call_token_heads, at + ".largest_call_token_heads");
      if (p.status.empty() || p.status == "known_failure") add_saturating(kernel_judged, p.cases);
      if (failed && p.status.empty() && failing.empty()) failing = at + " (" + printable(p.name) + ")";
    }
    // A kernel's fixtures are named "…/<kernel>/…"; a "baseline/<kernel>/…" regression row fails
    // the report but was judged after the kernel's verdict (cli/command_gate.cpp apply_baseline).
    const std::string segment = "/" + kernel.name + "/";
    bool regression = false;
    for (std::size_t f = 0; f < r.fixtures.size(); ++f) {
      const fixture_outcome& fixture = r.fixtures[f];
      if (fixture.name.find(segment) == std::string::npos) continue;
      if (!fixture.name.starts_with("baseline/")) add_saturating(kernel_judged, fixture.values);
      if (fixture.passed) continue;
      if (fixture.name.starts_with("baseline/")) regression = true;
      else if (failing.empty()) failing = fmt::format("fixtures[{}] ({})", f, printable(fixture.name));
    }
    if (kernel.passed && !failing.empty())
      c.refuse(kernel_path + ".verdict", fmt::format("is pass, but {} fails", failing), "pass");
    if (!kernel.passed && failing.empty() && !regression)
      c.refuse(kernel_path + ".verdict", "is fail, but none of its properties or fixtures fails", "fail");
    if (!kernel.passed) note_failure(kernel_path + " (" + printable(kernel.name) + ")");
    // A whole run's kernel that judged nothing has no verdict (the gate refuses to write one); a
    // shard's block may hold none of its cases.
    if (kernel.passed && kernel_judged == 0 && r.shard_count == 1 && use == report_use::whole)
      c.refuse(kernel_path + ".verdict", "is pass, but the kernel judged no case and no fixture value", "pass");
    for (const auto& p : kernel.properties)
      if (p.status.empty() || p.status == "known_failure") add_saturating(judged, p.cases);
  }
  for (std::size_t m = 0; m < r.mutants.size(); ++m) {
    const mutant_outcome& mutant = r.mutants[m];
    const std::string at = fmt::format("mutants[{}]", m);
    if (mutant.killed == mutant.killed_by.empty())
      c.refuse(at + ".killed",
               mutant.killed ? "is true, but killed_by is empty" : "is false, but killed_by names what killed it",
               bool_text(mutant.killed));
    add_saturating(judged, 1);
    if (!mutant.killed) note_failure(at + " (" + printable(mutant.name) + " survived)");
  }
  if (r.passed && !first_failure.empty())
    c.refuse("verdict", fmt::format("is pass, but {} fails", first_failure), "pass");
  if (!r.passed && first_failure.empty())
    c.refuse("verdict", "is fail, but no kernel, fixture or mutant fails", "fail");
  if (r.passed && judged == 0 && use == report_use::whole)
    c.refuse("verdict", "is pass, but no case, fixture value or mutant was judged (a pass needs one)", "pass");
}

void validate_report(const audit_report& r, std::string_view file) {
  const checker c(file);
  const bool failed = !r.passed;
  c.finite_positive(r.tolerance_units, "tolerance_units");
  c.finite_positive(r.output_scale, "output_scale");
  c.count(r.outputs, "outputs");
  c.part(r.outputs_beyond_tolerance, "outputs_beyond_tolerance", r.outputs, "outputs");
  c.part(r.ulp_outputs, "ulp.outputs", r.outputs, "outputs");
  c.count(r.passthrough_checked, "passthrough.checked");
  c.part(r.passthrough_modified, "passthrough.modified", r.passthrough_checked, "passthrough.checked");
  c.count(r.non_finite, "non_finite");
  for (const auto& [value, path] : {std::pair{r.max_abs_error, "max_abs_error"},
                                    std::pair{r.max_rel_pair_error, "max_rel_pair_error"},
                                    std::pair{r.max_rel_pair_error_units, "max_rel_pair_error_units"},
                                    std::pair{r.max_rel_pair_error_dtype_units, "max_rel_pair_error_dtype_units"},
                                    std::pair{r.ulp_max, "ulp.max"}, std::pair{r.ulp_mean, "ulp.mean"},
                                    std::pair{r.worst.error, "worst.error"},
                                    std::pair{r.worst.allowed, "worst.allowed"}})
    c.magnitude(value, path, failed);
  c.magnitude(r.tolerance.absolute, "tolerance_terms.absolute", false);
  c.magnitude(r.tolerance.oracle_units, "tolerance_terms.oracle_units", false);
  for (const auto& [value, path] : {std::pair{r.worst.batch, "worst.batch"}, std::pair{r.worst.token, "worst.token"},
                                    std::pair{r.worst.head, "worst.head"}, std::pair{r.worst.dim, "worst.dim"}})
    c.count(value, path);
  for (const auto* buckets : {&r.by_position, &r.by_frequency}) {
    const char* name = buckets == &r.by_position ? "by_position" : "by_frequency";
    for (std::size_t i = 0; i < buckets->size(); ++i) {
      const error_bucket& b = (*buckets)[i];
      const std::string at = fmt::format("{}[{}]", name, i);
      c.count(b.outputs, at + ".outputs");
      if (b.first > b.last)
        c.refuse(at + ".first", fmt::format("exceeds last ({})", b.last), std::to_string(b.first));
      c.magnitude(b.max_units, at + ".max_units", failed);
    }
  }
  // The heatmap is frequency × position bucket (audit/profiles.h): one row per by_frequency
  // entry, one cell per by_position bucket — 0 and [2^k, 2^(k+1)) of |position|, 65 at most.
  constexpr std::size_t position_buckets = 65;
  if (r.by_position.size() > position_buckets)
    c.refuse("by_position", fmt::format("holds more than {} buckets of |position|", position_buckets),
             std::to_string(r.by_position.size()));
  if (r.by_frequency_and_position.size() != r.by_frequency.size())
    c.refuse("by_frequency_and_position", fmt::format("has a row count other than by_frequency's {}", r.by_frequency.size()),
             std::to_string(r.by_frequency_and_position.size()));
  for (std::size_t f = 0; f < r.by_frequency_and_position.size(); ++f)
    if (r.by_frequency_and_position[f].size() != r.by_position.size())
      c.refuse(fmt::format("by_frequency_and_position[{}]", f),
               fmt::format("has a cell count other than by_position's {}", r.by_position.size()),
               std::to_string(r.by_frequency_and_position[f].size()));
  for (std::size_t f = 0; f < r.by_frequency_and_position.size(); ++f)
    for (std::size_t p = 0; p < r.by_frequency_and_position[f].size(); ++p)
      c.magnitude(r.by_frequency_and_position[f][p], fmt::format("by_frequency_and_position[{}][{}]", f, p), failed);
  for (std::size_t i = 0; i < r.diagnosis.size(); ++i)
    c.share(r.diagnosis[i].share, fmt::format("diagnosis[{}].share", i));
  for (std::size_t i = 0; i < r.attribution.size(); ++i) {
    c.share(r.attribution[i].share, fmt::format("attribution[{}].share", i));
    c.magnitude(r.attribution[i].units, fmt::format("attribution[{}].units", i), failed);
  }
  if (r.recipe.fitted) {
    c.share(r.recipe.bit_exact, "recipe.bit_exact");
    c.magnitude(r.recipe.residual_units, "recipe.residual_units", failed);
  }
  // The audit's verdict (audit/judging_loop.cpp): every output within tolerance, pass-through
  // dims unchanged, nothing non-finite — and at least one output judged.
  std::string failure;
  if (r.outputs_beyond_tolerance > 0) failure = fmt::format("outputs_beyond_tolerance is {}", r.outputs_beyond_tolerance);
  else if (r.passthrough_modified > 0) failure = fmt::format("passthrough.modified is {}", r.passthrough_modified);
  else if (r.non_finite > 0) failure = fmt::format("non_finite is {}", r.non_finite);
  if (r.passed && !failure.empty()) c.refuse("verdict", "is pass, but " + failure, "pass");
  if (!r.passed && failure.empty())
    c.refuse("verdict", "is fail, but no output is beyond tolerance, modified or non-finite", "fail");
  if (r.passed && r.outputs == 0 && r.passthrough_checked == 0)
    c.refuse("verdict", "is pass, but no output was judged (outputs and passthrough.checked are 0)", "pass");
}

saved_report saved_report_from_json(const nlohmann::json& j, std::string_view file, report_use use) {
  const std::string shown_file = printable(file, file_name_length);
  try {
    if (j.is_object() && j.contains("report") && j.at("report") == "audit") {
      audit_report r = audit_report_from_json(j);
      validate_report(r, file);
      return r;
    }
    gate_report r = gate_report_from_json(j);
    validate_report(r, file, use);
    return r;
  } catch (const std::invalid_argument& e) {
    // The schema readers name the field ("report: field 'seed': -1 has the wrong type").
    throw saved_report_error(fmt::format("{}: {}", shown_file, e.what()));
  }
}

saved_report read_saved_report(const std::filesystem::path& path, report_use use) {
  return saved_report_from_json(read_json_file(path), path.string(), use);
}

gate_report read_saved_gate_report(const std::filesystem::path& path, report_use use) {
  const nlohmann::json j = read_json_file(path);
  if (j.is_object() && j.contains("report") && j.at("report") == "audit")
    throw saved_report_error(fmt::format("{}: field 'report': is an audit report, not a gate report '\"audit\"'",
                                         printable(path.string(), file_name_length)));
  return std::get<gate_report>(saved_report_from_json(j, path.string(), use));
}

}  // namespace ropecheck::reports
