// ropecheck gate [--kernel NAME]... [--profile quick|deep] [--seed N] [--baseline OLD.json]
//                [--kernel-lib PATH.so] [--mutants] [--mutant NAME]... [REPORT FLAGS]
// Runs the property suite (properties/kernel_properties.h, the code the ctest suite runs) and
// the fixtures (seed 000, golden vectors) on the named built-in kernels, default all of them.
// --mutants also runs the same checks (plus the dynamic-NTK fixture) on every deliberately
// wrong kernel of mutants/ and passes only if every correct kernel passes and every mutant is
// killed; --mutant NAME picks mutants (and gates built-ins only if --kernel names them).
// Exit 0 pass, 1 gate failed, 2 bad input or usage.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>

#include "abi/kernel_library.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/gate_kernel.h"
#include "cli/flag_values.h"
#include "cli/report_flags.h"
#include "cli/shell_words.h"
#include "fast/kernels.h"
#include "io/io_error.h"
#include "io/json_file.h"
#include "properties/kernel_fixtures.h"
#include "mutants/mutant_registry.h"
#include "properties/frequency_properties.h"
#include "properties/kernel_properties.h"
#include "reports/audit_report.h"

#ifndef ROPECHECK_VERSION
#define ROPECHECK_VERSION "unknown"
#endif

namespace ropecheck::cli {
namespace {

struct gate_options {
  std::vector<std::string> kernels;
  std::vector<std::string> kernel_libraries;
  std::string profile = "quick";
  std::string seed_text = std::to_string(properties::default_seed);  // --seed, parsed strictly
  std::uint64_t seed = properties::default_seed;
  std::string baseline;
  bool mutants = false;
  std::vector<std::string> mutant_names;
  reports::report_paths paths;
};

// The command that gates `kernel` again with the same cases: complete (a kernel of a
// --kernel-lib library names its library, as an absolute path) and shell-quoted word by word.
std::string replay_command(const fast::kernel_info& kernel, const gate_options& o, bool mutant,
                           const std::string& library) {
  std::vector<std::string> words = {"ropecheck", "gate"};
  if (!library.empty()) {
    words.push_back("--kernel-lib");
    words.push_back(std::filesystem::absolute(library).lexically_normal().string());
  }
  for (const auto& word : {std::string(mutant ? "--mutant" : "--kernel"), std::string(kernel.name),
                           std::string("--profile"), o.profile, std::string("--seed"),
                           std::to_string(o.seed)})
    words.push_back(word);
  return shell_command(words);
}

reports::kernel_outcome run_properties(const fast::kernel_info& kernel, const gate_options& o,
                                       bool mutant = false, const std::string& library = {}) {
  const auto p = o.profile == "deep" ? properties::profile::deep : properties::profile::quick;
  const std::string replay = replay_command(kernel, o, mutant, library);
  const properties::kernel_result result = properties::check_kernel(kernel, p, o.seed, replay);
  reports::kernel_outcome outcome{std::string(kernel.name), result.passed, {}};
  for (const auto& r : result.properties) {
    outcome.properties.push_back({fmt::format("{}/{}", r.name, r.dtype), r.passed, r.cases,
                                  r.worst_over_bound, r.counterexample, r.replay});
  }
  return outcome;
}

// A saved report read back by `from_json`, whose std::invalid_argument names the field
// ("report: field 'seed': "x" has the wrong type"): bad input, exit 2, naming the file too.
template <class FromJson>
auto saved_report(const nlohmann::json& j, const std::string& path, FromJson from_json) {
  try {
    return from_json(j);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(fmt::format("{}: {}", path, e.what()));
  }
}

// `baseline` names a saved gate report: any property whose worst/bound grew by more than 10%
// over it is a regression, even if still within bound.
reports::gate_report read_baseline(const std::string& baseline_path) {
  // read_json_file: io_error naming the file and field for a FIFO, a duplicate key, 1e999.
  return saved_report(read_json_file(baseline_path), baseline_path, reports::gate_report_from_json);
}

std::vector<reports::fixture_outcome> baseline_regressions(const reports::gate_report& now,
                                                           const reports::gate_report& old,
                                                           const std::string& baseline_path) {
  std::map<std::string, double> before;
  for (const auto& k : old.kernels)
    for (const auto& p : k.properties) before[k.name + "/" + p.name] = p.worst_over_bound;
  std::vector<reports::fixture_outcome> out;
  for (const auto& k : now.kernels) {
    for (const auto& p : k.properties) {
      const auto it = before.find(k.name + "/" + p.name);
      if (it == before.end()) continue;
      const bool grew = p.worst_over_bound > it->second * 1.1 && p.worst_over_bound > 0;
      out.push_back({fmt::format("baseline/{}/{}", k.name, p.name), !grew, 1,
                     it->second > 0 ? p.worst_over_bound / it->second : 0,
                     fmt::format("worst/bound {:.4f} now, {:.4f} in {}", p.worst_over_bound,
                                 it->second, baseline_path)});
    }
  }
  return out;
}

// A fixture name without its "/<kernel>" segment, e.g. "golden/llama31-8b-llama3/float32 (…)".
std::string without_kernel(const std::string& fixture, std::string_view kernel) {
  const std::string segment = "/" + std::string(kernel);
  const auto at = fixture.find(segment + "/");
  return at == std::string::npos ? fixture : fixture.substr(0, at) + fixture.substr(at + segment.size());
}

reports::mutant_outcome run_mutant(const mutants::mutant& m, const gate_options& o,
                                   const fixtures::output_bound_fn& bound) {
  reports::mutant_outcome outcome{std::string(m.kernel.name), std::string(m.imitates), false, {}, {}};
  fmt::print(stderr, "gate: mutant {} — properties ({} profile)\n", m.kernel.name, o.profile);
  const auto properties = run_properties(m.kernel, o, true);
  for (const auto& p : properties.properties) {
    if (p.passed) continue;
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
  auto fixtures = fixtures::check_kernel_fixtures(m.kernel, bound, frequencies);
  fixtures.push_back(fixtures::check_dynamic_scaling_fixture(m.kernel, bound, frequencies));
  for (const auto& f : fixtures) {
    if (f.passed) continue;
    outcome.killed_by.push_back(without_kernel(f.name, m.kernel.name));
    outcome.counterexamples.push_back(f.detail);
  }
  outcome.killed = !outcome.killed_by.empty();
  return outcome;
}

int run_gate(gate_options o) {
  o.seed = parse_uint64_flag("--seed", o.seed_text);
  // Every output path is checked before minutes of work (io/output_paths.h).
  std::vector<flagged_path> inputs = {{"--baseline", o.baseline}};
  for (const auto& path : o.kernel_libraries) inputs.push_back({"--kernel-lib", path});
  check_report_outputs(o.paths, inputs);
  // Candidates: the kernels of --kernel-lib libraries if any are given, else the built-ins.
  std::vector<abi::kernel_library> libraries;
  for (const auto& path : o.kernel_libraries) libraries.push_back(abi::kernel_library::load(path));
  std::vector<const fast::kernel_info*> candidates;
  std::map<const fast::kernel_info*, std::string> library_of;  // for complete replay lines
  for (std::size_t i = 0; i < libraries.size(); ++i) {
    for (const auto& k : libraries[i].kernels()) {
      // Two libraries with a kernel of one name would make --kernel NAME ambiguous.
      for (const auto* other : candidates)
        if (other->name == k.name)
          throw bad_input("--kernel-lib", fmt::format("{}: a kernel of this name is also in {}",
                                                      o.kernel_libraries[i], library_of[other]),
                          k.name);
      candidates.push_back(&k);
      library_of[&k] = o.kernel_libraries[i];
    }
  }
  if (libraries.empty())
    for (const auto& k : fast::kernel_registry()) candidates.push_back(&k);
  // A name given twice would gate it twice, with two report entries of one name.
  for (const auto* names : {&o.kernels, &o.mutant_names})
    for (auto it = names->begin(); it != names->end(); ++it)
      if (std::find(names->begin(), it, *it) != it)
        throw bad_input(names == &o.kernels ? "--kernel" : "--mutant", "is given twice", *it);
  std::vector<const fast::kernel_info*> kernels;
  for (const auto& name : o.kernels) {
    const auto it = std::find_if(candidates.begin(), candidates.end(),
                                 [&](const fast::kernel_info* k) { return k->name == name; });
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
  const auto baseline =
      o.baseline.empty() ? std::optional<reports::gate_report>() : read_baseline(o.baseline);
  reports::gate_report report;
  report.tool_version = ROPECHECK_VERSION;
  report.profile = o.profile;
  report.seed = o.seed;
  const fixtures::output_bound_fn bound = fixture_output_bound();
  for (const auto* kernel : kernels) {
    fmt::print(stderr, "gate: {} — properties ({} profile)\n", kernel->name, o.profile);
    const auto library = library_of.find(kernel);
    auto outcome = run_properties(*kernel, o, false, library == library_of.end() ? std::string() : library->second);
    fmt::print(stderr, "gate: {} — fixtures\n", kernel->name);
    auto kernel_fixtures = fixtures::check_kernel_fixtures(*kernel, bound);
    // With mutants, the correct kernels also face the mutants' extra fixture.
    if (!mutant_list.empty())
      kernel_fixtures.push_back(fixtures::check_dynamic_scaling_fixture(*kernel, bound));
    for (auto& f : kernel_fixtures) {
      outcome.passed = outcome.passed && f.passed;
      report.fixtures.push_back(std::move(f));
    }
    report.passed = report.passed && outcome.passed;
    report.kernels.push_back(std::move(outcome));
  }
  for (const auto* m : mutant_list) {
    auto outcome = run_mutant(*m, o, bound);
    report.passed = report.passed && outcome.killed;
    report.mutants.push_back(std::move(outcome));
  }
  if (baseline) {
    for (auto& r : baseline_regressions(report, *baseline, o.baseline)) {
      report.passed = report.passed && r.passed;
      report.fixtures.push_back(std::move(r));
    }
  }
  fmt::print("{}", reports::render_terminal(report));
  reports::write_report_files(report, o.paths);
  return report.passed ? exit_pass : exit_failed;
}

}  // namespace

void add_gate_command(CLI::App& app, int& exit_status) {
  auto o = std::make_shared<gate_options>();
  CLI::App* cmd = app.add_subcommand(
      "gate", "Run the property suite and fixtures on kernels; exit 1 if any fails");
  cmd->add_option("--kernel", o->kernels,
                  "kernel to gate (repeatable; default: all built-in, or all of --kernel-lib)");
  cmd->add_option("--kernel-lib", o->kernel_libraries,
                  "gate the kernels of a shared library built on ropecheck/kernel_abi.h");
  cmd->add_option("--profile", o->profile, "quick (CI) or deep (10^6 cases per property)")
      ->check(CLI::IsMember({"quick", "deep"}))
      ->capture_default_str();
  cmd->add_option("--seed", o->seed_text, "RapidCheck seed, an integer 0 ... 2^64 - 1")
      ->capture_default_str();
  cmd->add_option("--baseline", o->baseline,
                  "saved gate JSON; fail if any worst/bound grew by more than 10%");
  cmd->add_flag("--mutants", o->mutants,
                "also gate every deliberately wrong kernel (mutants/); pass only if all are killed");
  cmd->add_option("--mutant", o->mutant_names,
                  "gate this mutant (repeatable; built-ins only if --kernel names them)");
  add_report_flags(*cmd, o->paths);
  cmd->callback([o, &exit_status] { exit_status = run_gate(*o); });
}

void add_report_command(CLI::App& app, int& exit_status) {
  struct report_options {
    std::string input;
    reports::report_paths paths;
  };
  auto o = std::make_shared<report_options>();
  CLI::App* cmd = app.add_subcommand("report", "Render a saved JSON report again");
  cmd->add_option("IN.json", o->input, "a report written with --json")->required();
  add_report_flags(*cmd, o->paths);
  cmd->callback([o, &exit_status] {
    check_report_outputs(o->paths, {{"IN.json", o->input}});
    const nlohmann::json j = read_json_file(o->input);  // io_error names file and field
    // The saved verdict is the exit code, as for the run that wrote it: a CI step that
    // re-renders a failed report must not turn green.
    const auto render = [&](const auto& report) {
      fmt::print("{}", reports::render_terminal(report));
      reports::write_report_files(report, o->paths);
      return report.passed ? exit_pass : exit_failed;
    };
    if (j.is_object() && j.value("report", "") == "audit")
      exit_status = render(saved_report(j, o->input, reports::audit_report_from_json));
    else
      exit_status = render(saved_report(j, o->input, reports::gate_report_from_json));
  });
}

}  // namespace ropecheck::cli
