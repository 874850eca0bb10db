// gate_run: `ropecheck gate`'s run as a library function (core/gate_run.h) — the properties
// and fixtures on every candidate kernel under the run's contract and domain, the mutants, and
// the ratchet against a baseline — which the CLI (cli/command_gate.cpp) and the Python module
// (python/module.cpp) both call, so that a feature of the gate reaches both front ends.
#include "core/gate_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <variant>
#include <nlohmann/json.hpp>

#include "abi/kernel_library.h"
#include "core/contract_spelling.h"
#include "core/shell_words.h"
#include "fast/kernels.h"
#include "io/io_error.h"
#include "io/json_file.h"
#include "properties/kernel_fixtures.h"
#include "mutants/mutant_registry.h"
#include "numeric/dtype.h"
#include "bounds/error_bounds.h"
#include "properties/frequency_properties.h"
#include "properties/case_files.h"
#include "properties/kernel_properties.h"
#include "properties/property_runner.h"
#include "reports/audit_report.h"
#include "reports/gate_merge.h"
#include "reports/saved_report.h"

namespace ropecheck::core {
namespace {

// The command that gates `kernel` again with the same cases: complete (a kernel of a
// --kernel-lib library names its library as an absolute path; the contract and the maximum
// position are repeated) and shell-quoted word by word.
std::string replay_command(const fast::kernel_info& kernel, const gate_options& o, bool mutant,
                           const std::string& library) {
  std::vector<std::string> words = {"ropecheck", "gate"};
  if (library == abi::builtin_library) {
    words.push_back("--isolate");
    words.push_back("always");
  } else if (!library.empty()) {
    words.push_back("--kernel-lib");
    words.push_back(std::filesystem::absolute(library).lexically_normal().string());
  }
  if (o.contract != "exact") {
    words.push_back("--contract");
    words.push_back(o.contract);
  }
  for (const auto& audit : o.contract_from) {
    words.push_back("--contract-from");
    words.push_back(std::filesystem::absolute(audit).lexically_normal().string());
  }
  if (o.max_position > 0) {
    words.push_back("--max-position");
    words.push_back(std::to_string(o.max_position));
  }
  if (o.positions != "all") {  // the cases are drawn from the domain: the same domain, the same cases
    words.push_back("--positions");
    words.push_back(o.positions);
  }
  for (const auto& word : {std::string(mutant ? "--mutant" : "--kernel"), std::string(kernel.name),
                           std::string("--profile"), o.profile, std::string("--seed"),
                           std::to_string(o.seed)})
    words.push_back(word);
  return shell_command(words);
}

// Every property on every dtype, as properties::check_kernel runs them (the kernel's dtypes
// first, then the others, shown skipped), but those in `skipped` (property → why), which an
// in-process kernel is not held to: reported skipped with the reason, never called.
reports::kernel_outcome run_properties(const fast::kernel_info& kernel, const gate_options& o,
                                       const properties::check_options& checks, const std::string& replay,
                                       const std::map<std::string, std::string>& skipped = {}) {
  const auto p = o.profile == "deep" ? properties::profile::deep : properties::profile::quick;
  std::vector<dtype> dtypes(kernel.dtypes.begin(), kernel.dtypes.end());
  for (dtype t : storage_dtypes)
    if (std::find(dtypes.begin(), dtypes.end(), t) == dtypes.end()) dtypes.push_back(t);
  const auto chosen = [&checks](std::string_view property) {
    return checks.properties.empty() ||
           std::find(checks.properties.begin(), checks.properties.end(), property) != checks.properties.end();
  };
  reports::kernel_outcome outcome{std::string(kernel.name), true, {}, std::nullopt, std::nullopt};
  for (const std::string_view property : properties::kernel_property_names()) {
    for (const dtype storage : dtypes) {
      properties::property_result r;
      const auto skip = skipped.find(std::string(property));
      if (skip != skipped.end() && chosen(property) && kernel.supports(storage)) {
        r.name = std::string(property);
        r.dtype = std::string(to_string(storage));
        r.state = properties::run_state::skipped;
        r.detail = "skipped: " + skip->second;
      } else {
        r = properties::check_kernel_property(kernel, property, storage, p, o.seed, replay,
                                              static_cast<int>(std::ssize(kernel.dtypes)), checks);
      }
      outcome.passed = outcome.passed && r.passed;
      if (!o.cases_out.empty()) {  // --cases-out: the failure's worst case and counterexample
        const auto written = properties::write_case_files(o.cases_out, kernel.name, r);
        for (const auto& file : written.files) fmt::print(stderr, "gate: case file {}\n", file.string());
        for (const auto& none : written.without_case)
          fmt::print(stderr, "gate: {} — {} keeps no case file (it does not judge outputs against the reference)\n",
                     kernel.name, none);
      }
      outcome.properties.push_back(property_outcome_of(r));
    }
  }
  return outcome;
}

// A library kernel whose worker process ended (crashed, timed out) while `running` (a
// "<property>/<dtype>", or "fixtures"): that property keeps its failure, told as the call that
// ended the process (the later ones were not run); the kernel's verdict is the ending, with the
// command that replays the call in process.
void record_ending(reports::kernel_outcome& outcome, const abi::kernel_death& death, const std::string& running,
                   const gate_options& o, const std::string& library) {
  reports::kernel_ending ending{death.verdict, death.cause, running, death.call, death.case_json, ""};
  // A built-in's ending is replayed by gating it in process, where a debugger sees the fault.
  ending.replay = library == abi::builtin_library
                      ? shell_command({"ropecheck", "gate", "--isolate", "never", "--kernel", outcome.name, "--profile",
                                       o.profile, "--seed", std::to_string(o.seed)})
                      : shell_command({"ropecheck", "replay", o.json_path.empty() ? "REPORT.json" : o.json_path,
                                       "--kernel", outcome.name, "--kernel-lib",
                                       std::filesystem::absolute(library).lexically_normal().string(), "--isolate",
                                       "never"});
  for (auto& p : outcome.properties) {
    if (p.name != running) continue;
    p.passed = false;
    p.status.clear();
    p.message = fmt::format("the kernel's process ended: {} ({}) during the call {}", death.verdict, death.cause,
                            death.call);
    p.replay = ending.replay;
  }
  outcome.ended = std::move(ending);
}

// `baseline` names a saved gate report of a whole run (see apply_baseline), trusted once its
// schema and invariants are checked (reports/saved_report.h: exit 2 naming file, field, value).
// A shard report's ratios and cases are its block's only, not the run's: refused.
reports::gate_report read_baseline(const std::string& baseline_path) {
  reports::gate_report baseline = reports::read_saved_gate_report(baseline_path);
  if (baseline.shard_count > 1)
    throw io_error(baseline_path, "field 'shard'",
                   "is a shard report: a baseline compares whole runs (merge the shards with "
                   "`ropecheck report merge` and give the merged report)",
                   fmt::format("{}/{}", baseline.shard_index, baseline.shard_count));
  return baseline;
}

// The ratchet (--baseline): a property or fixture that failed in the baseline too, and whose
// worst/bound did not grow by more than 10%, is a known failure (it does not fail the run);
// one that newly fails, or whose worst/bound grew by more than 10% (failing or not), is a
// regression, listed as a "baseline/<kernel>/<name>" row that fails the run.
constexpr double ratchet_growth = 1.1;

bool grew(double now, double before) { return now > before * ratchet_growth && now > 0; }

// A baseline row's ratio, now / before: 0 without a before, 1 when both are infinite (an output
// with no bound then and now), never NaN (a saved report holds no NaN ratio).
double now_over_before(double now, double before) {
  if (std::isinf(now) && std::isinf(before)) return 1;
  return before > 0 ? now / before : 0;
}

// For each property of `kernel` that ran in the baseline: the worst/bound past which it is a
// regression (the baseline's × ratchet_growth), where that is past the bound, so that a
// regressed property is shrunk to a case past it (properties::check_options::shrink_above).
std::map<std::string, double> regression_limits(const reports::gate_report& old, std::string_view kernel) {
  std::map<std::string, double> limits;
  for (const auto& k : old.kernels)
    for (const auto& p : k.properties)
      if (k.name == kernel && p.status != "skipped" && p.status != "not_run" &&
          p.worst_over_bound * ratchet_growth > 1)
        limits[k.name + "/" + p.name] = p.worst_over_bound * ratchet_growth;
  return limits;
}

std::vector<reports::fixture_outcome> apply_baseline(reports::gate_report& now,
                                                     const reports::gate_report& old,
                                                     const std::string& baseline_path) {
  struct was {
    bool failed;
    double worst;
  };
  std::map<std::string, was> before;
  for (const auto& k : old.kernels)
    for (const auto& p : k.properties)
      if (p.status != "skipped" && p.status != "not_run")
        before[k.name + "/" + p.name] = {!p.passed, p.worst_over_bound};
  for (const auto& f : old.fixtures)
    if (f.name.rfind("baseline/", 0) != 0) before["fixture/" + f.name] = {!f.passed, f.worst_over_bound};
  std::vector<reports::fixture_outcome> rows;
  auto judge = [&](const std::string& key, const std::string& label, bool failed, double worst,
                   std::string& status) {
    const auto it = before.find(key);
    if (it == before.end()) return;
    const bool regression = grew(worst, it->second.worst) || (failed && !it->second.failed);
    if (failed && it->second.failed && !regression) status = "known_failure";
    std::string detail = fmt::format("worst/bound {:.4g} now, {:.4g} in {}", worst, it->second.worst,
                                     baseline_path);
    if (failed && !it->second.failed) detail = "newly fails; " + detail;
    else if (regression) detail = "worst/bound grew by more than 10%; " + detail;
    else if (status == "known_failure") detail = "known failure; " + detail;
    rows.push_back({"baseline/" + label, !regression, 1,
                    now_over_before(worst, it->second.worst), detail});
  };
  for (auto& k : now.kernels)
    for (auto& p : k.properties)
      if (p.status.empty()) judge(k.name + "/" + p.name, k.name + "/" + p.name, !p.passed, p.worst_over_bound, p.status);
  for (auto& f : now.fixtures) {
    std::string status = f.passed ? "" : "fail";
    judge("fixture/" + f.name, f.name, !f.passed, f.worst_over_bound, status);
    if (status == "known_failure") {
      f.passed = true;
      f.detail = "known failure (failed in the baseline too): " + f.detail;
    }
  }
  return rows;
}

// A fixture name without its "/<kernel>" segment, e.g. "golden/llama31-8b-llama3/float32 (…)".
std::string without_kernel(const std::string& fixture, std::string_view kernel) {
  const std::string segment = "/" + std::string(kernel);
  const auto at = fixture.find(segment + "/");
  return at == std::string::npos ? fixture : fixture.substr(0, at) + fixture.substr(at + segment.size());
}

// `kernel` is the mutant's kernel, or it restricted to what an in-process kernel faced
// (run_mutant_like), whose fixtures then keep to the run's domain too. A property in
// `not_counted` does not kill it (`*killed_by_not_counted` says one would have).
reports::mutant_outcome run_mutant(const mutants::mutant& m, const gate_options& o,
                                   const properties::check_options& checks,
                                   const fixtures::output_bound_fn& bound,
                                   const fast::kernel_info* restricted = nullptr,
                                   const std::map<std::string, std::string>& not_counted = {},
                                   bool* killed_by_not_counted = nullptr) {
  const fast::kernel_info& kernel = restricted != nullptr ? *restricted : m.kernel;
  reports::mutant_outcome outcome{std::string(m.kernel.name), std::string(m.imitates), false, {}, {}};
  fmt::print(stderr, "gate: mutant {} — properties ({} profile)\n", m.kernel.name, o.profile);
  if (o.before_check) o.before_check("mutant " + std::string(m.kernel.name));
  const auto properties = run_properties(kernel, o, checks, replay_command(m.kernel, o, true, {}));
  for (const auto& p : properties.properties) {
    if (p.passed) continue;
    if (not_counted.count(p.name.substr(0, p.name.find('/'))) != 0) {
      if (killed_by_not_counted != nullptr) *killed_by_not_counted = true;
      continue;
    }
    outcome.killed_by.push_back(p.name);
    outcome.counterexamples.push_back(p.counterexample);
  }
  if (m.frequencies != nullptr) {
    // The defect is in the scaling code, which kernels never see: the frequency property is
    // the one aimed at it (properties/frequency_properties.h).
    const auto p = o.profile == "deep" ? properties::profile::deep : properties::profile::quick;
    const auto r = properties::check_scaled_frequencies(
        [&m](const rope_spec& spec, std::int64_t length) {
          return mutants::mutant_frequencies(m, spec, length);
        },
        p, o.seed,
        replay_command(m.kernel, o, true, {}));
    if (!r.passed) {
      outcome.killed_by.push_back(r.name);
      outcome.counterexamples.push_back(r.counterexample);
    }
  }
  fmt::print(stderr, "gate: mutant {} — fixtures\n", m.kernel.name);
  const fixtures::frequencies_fn frequencies = [&m](const rope_spec& spec, std::int64_t length) {
    return mutants::mutant_frequencies(m, spec, length);
  };
  const std::int64_t max_position = restricted != nullptr ? checks.max_position : 0;
  const fast::kernel_domain domain = restricted != nullptr ? checks.domain : fast::kernel_domain{};
  auto fixtures = fixtures::check_kernel_fixtures(kernel, bound, frequencies, max_position, domain);
  fixtures.push_back(fixtures::check_dynamic_scaling_fixture(kernel, bound, frequencies, max_position, domain));
  for (const auto& f : fixtures) {
    if (f.passed) continue;
    outcome.killed_by.push_back(without_kernel(f.name, m.kernel.name));
    outcome.counterexamples.push_back(f.detail);
  }
  outcome.killed = !outcome.killed_by.empty();
  return outcome;
}

// A mutant facing the checks the in-process kernel `like` faced (its dtypes, pairings, declared
// domain; the properties it is not held to run but do not count): its outcome, or why it is not
// applicable — its defect in the frequency code (an in-process kernel is handed θ_j), only
// uncounted properties kill it, or its defect lies outside the declared domain. Found by
// running it, never assumed.
std::variant<reports::mutant_outcome, std::string> run_mutant_like(const mutants::mutant& m,
                                                                   const fast::kernel_info& like,
                                                                   const gate_options& o,
                                                                   const properties::check_options& checks,
                                                                   const fixtures::output_bound_fn& bound) {
  if (m.frequencies != nullptr)
    return std::string("its defect is in the frequency code; an in-process kernel is handed θ_j by the gate");
  std::vector<dtype> dtypes;
  for (dtype t : like.dtypes)
    if (m.kernel.supports(t)) dtypes.push_back(t);
  std::vector<pairing> pairings;
  for (pairing p : like.pairings)
    if (m.kernel.supports(p)) pairings.push_back(p);
  if (dtypes.empty() || pairings.empty()) return std::string("no dtype or pairing in common with the kernel");
  fast::kernel_info restricted = m.kernel;
  restricted.dtypes = dtypes;
  restricted.pairings = pairings;
  restricted.domain = like.domain;
  bool killed_by_skipped = false;
  reports::mutant_outcome outcome =
      run_mutant(m, o, checks, bound, &restricted, o.in_process_skipped, &killed_by_skipped);
  if (!outcome.killed && killed_by_skipped)
    return std::string("only properties an in-process kernel is not held to kill it (its bridge does what it gets wrong)");
  // A survivor within the declared domain that the same checks kill over every call has its
  // defect in calls the kernel does not serve: no evidence against the checks.
  if (!outcome.killed && !(restricted.domain == fast::kernel_domain{})) {
    fast::kernel_info unrestricted = restricted;
    unrestricted.domain = {};
    gate_options evidence_only = o;  // its case files stay the declared domain's (--cases-out)
    evidence_only.cases_out.clear();
    // Only the first counted kill is told (the properties run in the report's order): the run
    // stops after it instead of running the other properties to the end.
    properties::check_options until_killed = checks;
    bool killed = false;
    until_killed.first_failure = [&](std::string_view id, std::int64_t index) {
      if (checks.first_failure) checks.first_failure(id, index);
      killed = killed || o.in_process_skipped.count(std::string(id.substr(0, id.find('/')))) == 0;
    };
    until_killed.stopped = [&] {
      if (std::string why = checks.stopped ? checks.stopped() : std::string(); !why.empty()) return why;
      return killed ? std::string("the mutant is killed over every call (evidence only)") : std::string();
    };
    const reports::mutant_outcome wide =
        run_mutant(m, evidence_only, until_killed, bound, &unrestricted, o.in_process_skipped);
    if (wide.killed)
      return "its defect is outside the kernel's declared domain (killed by " + wide.killed_by.front() +
             " over every call)";
  }
  return outcome;
}

}  // namespace

reports::gate_report read_gate_baseline(const std::string& path) { return read_baseline(path); }

void check_baseline_comparable(const reports::gate_report& baseline, const std::string& baseline_name,
                               const std::string& contract_name,
                               const std::vector<std::pair<std::string, reports::served_domain>>& domains) {
  if (baseline.contract != contract_name)
    throw std::runtime_error(fmt::format(
        "{}: field 'contract': \"{}\" is not the contract of this run, \"{}\" (ratios under "
        "different bounds do not compare)", baseline_name, baseline.contract, contract_name));
  // Nor do worst/bound ratios over other cases: a kernel's domain must be the baseline's (one
  // stated by neither is every call).
  for (std::size_t i = 0; i < baseline.kernels.size(); ++i) {
    const auto& before = baseline.kernels[i];
    for (const auto& [name, now] : domains) {
      if (name != before.name) continue;
      const reports::served_domain then = before.domain.value_or(reports::served_domain{});
      if (!(now == then))
        throw std::runtime_error(fmt::format(
            "{}: field 'kernels[{}].domain': \"{}\" is not the domain of this run, \"{}\" (ratios over "
            "different cases do not compare)", baseline_name, i, reports::describe(then), reports::describe(now)));
    }
  }
}

void judge_against_baseline(reports::gate_report& report, const reports::gate_report* baseline,
                            const std::string& baseline_name) {
  std::vector<reports::fixture_outcome> regressions;
  if (baseline != nullptr) regressions = apply_baseline(report, *baseline, baseline_name);
  // The verdicts, after the ratchet has marked known failures.
  reports::judge(report);
  for (auto& r : regressions) {
    report.passed = report.passed && r.passed;
    report.fixtures.push_back(std::move(r));
  }
}

reports::served_domain reported_domain(const fast::kernel_domain& d) {
  return {.nonnegative_positions = !d.negative_positions,
          .max_position = d.max_position,
          .inverse = d.inverse,
          .attention_factor = d.attention_factor,
          .partial_rotary = d.partial_rotary,
          .absent_tensor = d.absent_tensor};
}

reports::property_outcome property_outcome_of(const properties::property_result& r) {
  const auto location_of = [](const properties::case_location& l) {
    return reports::location{l.dtype, l.pairing, l.head_dim, l.rotary_dim, l.position, l.pair, l.units, l.text};
  };
  reports::property_outcome out;
  out.name = fmt::format("{}/{}", r.name, r.dtype);
  out.passed = r.passed;
  out.cases = r.cases;
  out.worst_over_bound = r.worst_over_bound;
  out.counterexample = r.counterexample;
  out.replay = r.replay;
  out.status = r.state == properties::run_state::skipped   ? "skipped"
               : r.state == properties::run_state::not_run ? "not_run"
                                                            : "";
  out.message = r.message;
  out.failed_cases = r.failed_cases;
  out.worst = location_of(r.worst);
  out.counterexample_location = location_of(r.counterexample_location);
  out.detail = r.detail;
  out.points = r.points;
  out.pair_points = r.pair_points;
  out.head_dim_points = r.head_dim_points;
  out.largest_call_token_heads = r.largest_call_token_heads;
  return out;
}

fixtures::output_bound_fn fixture_output_bound(const bounds::accuracy_contract& contract) {
  // A fixture has one attention factor: its scale (§16 coefficients) is computed once. The
  // contract widens the bound as it widens the properties' bounds.
  return [scale = bounds::attention_scale_for(1), &contract](
             dtype storage, double pair_norm, std::int64_t position, double theta, int pair,
             double stored, double attention_factor) mutable {
    if (attention_factor != scale.factor) scale = bounds::attention_scale_for(attention_factor);
    return bounds::output_bound(storage, pair_norm, position, theta, stored, scale) +
           bounds::contract_output_extra(contract, storage, pair_norm, position, theta, pair,
                                         attention_factor);
  };
}

// Nothing passes vacuously: a kernel that judged no property case and no fixture value (every
// property it was given skipped or not selected) has no verdict, and neither has a shard that
// judged nothing at all. Refused (exit 2) rather than reported as a pass.
static void refuse_unjudged(const reports::gate_report& report, bool sharded) {
  std::int64_t run_total = 0;
  for (const auto& k : report.kernels) {
    std::int64_t judged = 0;
    bool failed = false;
    for (const auto& p : k.properties) {
      if (p.status.empty()) judged += p.cases;
      failed = failed || !p.passed;
    }
    for (const auto& f : report.fixtures)
      if (f.name.find("/" + k.name + "/") != std::string::npos) judged += f.values;
    run_total += judged;
    // Whether a property is skipped does not depend on the shard: a kernel none of whose
    // properties ran has no verdict in any shard.
    const bool none_ran = std::all_of(k.properties.begin(), k.properties.end(),
                                      [](const reports::property_outcome& p) { return !p.status.empty(); });
    if (judged == 0 && !failed && (!sharded || none_ran))
      throw bad_input("--kernel",
                      "judged no case and no fixture value: every property given to it was skipped or not "
                      "selected (see `ropecheck gate --help`), so there is no verdict",
                      k.name);
  }
  if (!report.kernels.empty() && run_total == 0)
    throw bad_input("--shard", "judged no case and no fixture value in this shard: there is no verdict",
                    fmt::format("{}/{}", report.shard_index, report.shard_count));
}

reports::gate_report run_gate_report(const gate_options& o) { return run_gate_outcome(o).report; }

gate_run_outcome run_gate_outcome(const gate_options& o) {
  // RC_PARAMS is read (strictly) before a line is printed: a bad key or value is exit 2 alone.
  const properties::rc_params_values rc_params = properties::read_rc_params();
  if (rc_params.seed && *rc_params.seed != o.seed)
    throw bad_input("RC_PARAMS", fmt::format("seed disagrees with the run's seed {} (--seed)", o.seed),
                    fmt::format("seed={}", *rc_params.seed), "give the same seed to both, as replay lines do");
  const bounds::accuracy_contract contract =
      o.contract_value != nullptr ? *o.contract_value : read_contract(o.contract, o.contract_from);
  for (const auto& name : o.properties) {
    const auto all = properties::kernel_property_names();
    if (std::find(all.begin(), all.end(), name) == all.end())
      throw bad_input("--property", "unknown kernel property", name);
  }
  if (o.max_position < 0)  // the flag is 1 ... 2^63 - 1 (add_decimal_option); 0 is "none"
    throw bad_input("--max-position", "is negative", std::to_string(o.max_position));
  if (o.positions != "all" && o.positions != "nonnegative")
    throw bad_input("--positions", "is not all or nonnegative", o.positions);
  // --max-position and --positions with the contract's own domain.
  const fast::kernel_domain run = run_domain(contract, o.max_position, o.positions);
  const std::int64_t max_position = run.max_position;
  if (o.shard_count < 1 || o.shard_index < 0 || o.shard_index >= o.shard_count)
    throw bad_input("--shard", "is not I/N with 0 <= I < N",
                    fmt::format("{}/{}", o.shard_index, o.shard_count));
  const bool sharded = o.shard_count > 1;
  const bool has_baseline = !o.baseline.empty() || o.baseline_report != nullptr;
  const std::string& baseline_name = o.baseline_report != nullptr ? o.baseline_name : o.baseline;
  if (sharded && has_baseline)
    throw bad_input("--baseline", "compares whole runs, not one shard: merge the shards "
                    "(ropecheck report merge) and gate unsharded against it, or drop --shard",
                    baseline_name);
  if (sharded && !rc_params.reproduce.empty())
    throw bad_input("--shard", "RC_PARAMS reproduce=... replays one case: run it without sharding",
                    fmt::format("{}/{}", o.shard_index, o.shard_count));
  properties::check_options checks;
  checks.contract = &contract;
  checks.max_position = max_position;
  // The run narrows every kernel's domain (fast::kernel_domain).
  checks.domain.negative_positions = run.negative_positions;
  const auto domain_of_run = [&](const fast::kernel_info& kernel) {
    return kernel.domain.intersect(checks.domain).intersect(fast::kernel_domain{.max_position = max_position});
  };
  checks.properties = o.properties;
  checks.shard_index = o.shard_index;
  checks.shard_count = o.shard_count;
  // The moment a failure is found, on stderr: what its report's latency is measured from
  // (scripts/report-latency.sh).
  checks.first_failure = [](std::string_view id, std::int64_t index) {
    fmt::print(stderr, "gate: {} failed its first case (case {}); its other cases, shrinking and the report follow\n",
               id, index);
  };
  // The mutants run whole, in shard 0 (their verdict is a kill, not a sum of cases).
  properties::check_options mutant_checks = checks;
  mutant_checks.shard_index = 0;
  mutant_checks.shard_count = 1;

  // Candidates: in-process kernels, else the kernels of --kernel-lib libraries, else the built-ins.
  std::vector<abi::kernel_library> libraries;
  for (const auto& path : o.kernel_libraries)
    libraries.push_back(abi::kernel_library::load(path, o.isolation));
  std::vector<std::pair<const fast::kernel_info*, std::string>> candidates;  // kernel, library
  for (const auto* k : o.in_process_kernels) {
    // Held to the rules a library's kernels are held to (abi/), and never a pass over nothing.
    check_kernel_name("name", k->name);
    if (k->dtypes.empty()) throw bad_input("dtypes", "is empty: the gate would check nothing", "[]");
    if (k->pairings.empty()) throw bad_input("pairings", "is empty: the gate would check nothing", "[]");
    candidates.emplace_back(k, "");
  }
  for (std::size_t i = 0; i < libraries.size(); ++i) {
    for (const auto& k : libraries[i].kernels()) {
      // Two libraries with a kernel of one name would make --kernel NAME ambiguous.
      for (const auto& [other, other_library] : candidates)
        if (other->name == k.name)
          throw bad_input("--kernel-lib", fmt::format("{}: a kernel of this name is also in {}",
                                                      o.kernel_libraries[i], other_library),
                          k.name);
      candidates.emplace_back(&k, o.kernel_libraries[i]);
    }
  }
  // --isolate always: the built-ins through the C ABI, in a worker process, as a library's are.
  std::optional<abi::kernel_library> isolated_builtins;
  if (candidates.empty() && o.isolation.builtins) {
    isolated_builtins = abi::kernel_library::load(abi::builtin_library, o.isolation);
    for (const auto& k : isolated_builtins->kernels()) candidates.emplace_back(&k, abi::builtin_library);
  }
  if (candidates.empty())
    for (const auto& k : fast::kernel_registry()) candidates.emplace_back(&k, "");
  // A name given twice would gate it twice, with two report entries of one name.
  for (const auto* names : {&o.kernels, &o.mutant_names})
    for (auto it = names->begin(); it != names->end(); ++it)
      if (std::find(names->begin(), it, *it) != it)
        throw bad_input(names == &o.kernels ? "--kernel" : "--mutant", "is given twice", *it);
  std::vector<std::pair<const fast::kernel_info*, std::string>> kernels;
  for (const auto& name : o.kernels) {
    const auto it = std::find_if(candidates.begin(), candidates.end(),
                                 [&](const auto& k) { return k.first->name == name; });
    if (it == candidates.end())
      throw bad_input("--kernel", "unknown kernel", name,
                      "see `ropecheck kernels`, or the --kernel-lib library");
    kernels.push_back(*it);
  }
  // --mutant NAME alone gates just those mutants (the replay of one kill).
  if (o.kernels.empty() && o.mutant_names.empty()) kernels = candidates;
  std::vector<const mutants::mutant*> mutant_list;
  for (const auto& name : o.mutant_names) {
    const auto* m = mutants::find_mutant(name);
    if (m == nullptr)
      throw bad_input("--mutant", "unknown mutant", name);
    mutant_list.push_back(m);
  }
  if (o.mutants && o.mutant_names.empty())
    for (const auto& m : mutants::mutant_registry()) mutant_list.push_back(&m);
  // Read the baseline first: a bad one is exit 2 before minutes of work.
  const auto baseline = o.baseline_report != nullptr ? std::optional<reports::gate_report>(*o.baseline_report)
                        : o.baseline.empty()           ? std::optional<reports::gate_report>()
                                                       : read_baseline(o.baseline);
  if (baseline) {
    std::vector<std::pair<std::string, reports::served_domain>> domains;
    for (const auto& [kernel, library] : kernels)
      domains.emplace_back(std::string(kernel->name), reported_domain(domain_of_run(*kernel)));
    check_baseline_comparable(*baseline, baseline_name, contract.name, domains);
  }
  reports::gate_report report;
  report.tool_version = ROPECHECK_VERSION;
  report.profile = o.profile;
  report.seed = o.seed;
  report.contract = contract.name;
  report.contract_statement = contract.statement;
  report.contract_derivation = bounds::contract_derivation(contract);
  report.max_position = max_position;
  report.selected_properties = o.properties;
  report.baseline = baseline_name;
  report.shard_index = o.shard_index;
  report.shard_count = o.shard_count;
  const fixtures::output_bound_fn bound = fixture_output_bound(contract);
  // --property runs those properties only: the fixtures are not run either. The fixtures are
  // not random: shard 0 runs them all, the other shards none.
  const bool run_fixtures = o.properties.empty() && o.shard_index == 0;
  if (o.shard_index != 0) mutant_list.clear();
  for (const auto& [kernel, library] : kernels) {
    fmt::print(stderr, "gate: {} — properties ({} profile, contract {}{})\n", kernel->name, o.profile,
               contract.name,
               sharded ? fmt::format(", shard {}/{}", o.shard_index, o.shard_count) : std::string());
    // A library kernel whose worker process ended runs no further property; the one running
    // then is named in the report.
    properties::check_options kernel_checks = checks;
    const abi::kernel_library* own_library = nullptr;
    for (std::size_t i = 0; i < libraries.size() && !library.empty(); ++i)
      if (o.kernel_libraries[i] == library) own_library = &libraries[i];
    if (isolated_builtins && library == abi::builtin_library) own_library = &*isolated_builtins;
    const auto death_of = [&] { return own_library ? own_library->death_of(kernel->name) : std::nullopt; };
    std::string running;
    kernel_checks.stopped = [&] {
      const auto death = death_of();
      return death ? fmt::format("the kernel's process ended ({}: {})", death->verdict, death->cause) : std::string();
    };
    kernel_checks.starting = [&running, &o](std::string_view id) {
      running = id;
      if (o.before_check) o.before_check(id);
    };
    if (baseline) kernel_checks.shrink_above = regression_limits(*baseline, kernel->name);
    const bool in_process =
        std::find(o.in_process_kernels.begin(), o.in_process_kernels.end(), kernel) != o.in_process_kernels.end();
    const std::string replay = in_process && !o.in_process_replay.empty()
                                   ? o.in_process_replay
                                   : replay_command(*kernel, o, false, library);
    auto outcome = run_properties(*kernel, o, kernel_checks, replay,
                                  in_process ? o.in_process_skipped : std::map<std::string, std::string>{});
    outcome.domain = reported_domain(domain_of_run(*kernel));
    if (death_of()) running = running.empty() ? "properties" : running;
    else running = "fixtures";
    if (run_fixtures) {
      fmt::print(stderr, "gate: {} — fixtures\n", kernel->name);
      if (o.before_check) o.before_check("fixtures");
      auto kernel_fixtures = fixtures::check_kernel_fixtures(*kernel, bound, {}, max_position, checks.domain);
      // With mutants, the correct kernels also face the mutants' extra fixture.
      if (!mutant_list.empty())
        kernel_fixtures.push_back(
            fixtures::check_dynamic_scaling_fixture(*kernel, bound, {}, max_position, checks.domain));
      for (auto& f : kernel_fixtures) report.fixtures.push_back(std::move(f));
    }
    if (const auto death = death_of()) record_ending(outcome, *death, running, o, library);
    report.kernels.push_back(std::move(outcome));
  }
  refuse_unjudged(report, sharded);
  gate_run_outcome out;
  if (o.before_check) mutant_checks.starting = o.before_check;
  for (const auto* m : mutant_list) {
    if (o.in_process_kernels.empty()) {
      report.mutants.push_back(run_mutant(*m, o, mutant_checks, bound));
      continue;
    }
    auto outcome = run_mutant_like(*m, *o.in_process_kernels.front(), o, mutant_checks, bound);
    if (auto* why = std::get_if<std::string>(&outcome)) out.mutants_not_applicable.emplace_back(m->kernel.name, *why);
    else report.mutants.push_back(std::move(std::get<reports::mutant_outcome>(outcome)));
  }
  judge_against_baseline(report, baseline ? &*baseline : nullptr, baseline_name);
  out.report = std::move(report);
  return out;
}

void check_kernel_name(std::string_view flag, std::string_view name) {
  if (!abi::is_valid_kernel_name(name))
    throw bad_input(flag, fmt::format("is not 1 to {} characters of [A-Za-z0-9_.-]", max_kernel_name_length), name,
                    "a kernel name is printed in replay lines, Markdown tables and file names");
}

}  // namespace ropecheck::core
