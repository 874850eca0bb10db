// gate_report: the one model of what `ropecheck gate` found, from which every rendering
// (terminal, Markdown, JSON, JUnit XML) is made and into which a saved JSON report is read
// back by `ropecheck report`. The JSON schema is documented in docs/report-schema.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ropecheck::reports {

struct property_outcome {
  std::string name;              // stable snake_case id
  bool passed = true;
  std::int64_t cases = 0;
  double worst_over_bound = 0;   // observed worst error / derived bound; 0 for exact properties
  std::string counterexample;    // shrunk counterexample when failed
  std::string replay;            // one line that replays the failure
};

struct kernel_outcome {
  std::string name;
  bool passed = true;
  std::vector<property_outcome> properties;
};

struct fixture_outcome {
  std::string name;              // e.g. "seed000_worked_example/cache_simd/float32"
  bool passed = true;
  std::int64_t values = 0;       // how many printed or golden values were compared
  double worst_over_bound = 0;
  std::string detail;            // the worst value, or why it failed
};

// `ropecheck gate --mutants`: one deliberately wrong kernel and what caught it.
struct mutant_outcome {
  std::string name;                         // mutant name (mutants/mutant_registry.h)
  std::string imitates;                     // one line: the real-world failure it imitates
  bool killed = false;                      // some property or fixture failed on it
  std::vector<std::string> killed_by;       // "<property>/<dtype>" or "<fixture>" (kernel name dropped)
  std::vector<std::string> counterexamples; // parallel to killed_by: shrunk counterexample or fixture detail
};

struct gate_report {
  std::string tool_version;
  std::string profile;           // quick | deep
  std::uint64_t seed = 0;
  bool passed = true;
  std::vector<kernel_outcome> kernels;
  std::vector<fixture_outcome> fixtures;
  std::vector<mutant_outcome> mutants;  // only with --mutants (absent from the JSON otherwise)
};

nlohmann::json to_json(const gate_report& report);
// Throws std::invalid_argument naming the field when `j` is not a gate report.
gate_report gate_report_from_json(const nlohmann::json& j);

std::string render_terminal(const gate_report& report);
std::string render_markdown(const gate_report& report);
std::string render_junit(const gate_report& report);
std::string render_html(const gate_report& report);  // self-contained, no external assets

// Where REPORT FLAGS (--json, --markdown, --html, --junit) asked for files; empty = not wanted.
struct report_paths {
  std::string json;
  std::string markdown;
  std::string html;
  std::string junit;
};

// Writes every requested rendering atomically (temporary file, then rename).
void write_report_files(const gate_report& report, const report_paths& paths);

}  // namespace ropecheck::reports
