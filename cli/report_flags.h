// REPORT FLAGS shared by gate, audit, identify and report: --json, --markdown, --html, --junit
// PATH, and the check of every output path a command will write, made before the run
// (io/output_paths.h): a bad path is exit 2 up front, never after other outputs were written.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "io/output_paths.h"
#include "reports/gate_report.h"

namespace ropecheck::cli {

// An option naming a file to write. An empty value is refused (exit 2 naming the flag): an
// empty path means "not asked for", so `--json ''` would otherwise silently write nothing.
inline CLI::Option* add_output_option(CLI::App& cmd, const std::string& flag, std::string& path,
                                      const std::string& help) {
  return cmd.add_option(flag, path, help)
      ->check(CLI::Validator(
          [](std::string& value) { return value.empty() ? std::string("is empty: an output needs a file name") : std::string(); },
          ""));
}

inline void add_report_flags(CLI::App& cmd, reports::report_paths& paths) {
  add_output_option(cmd, "--json", paths.json, "write the JSON report (docs/report-schema.md)");
  add_output_option(cmd, "--markdown", paths.markdown, "write a Markdown summary for a pull request");
  add_output_option(cmd, "--html", paths.html, "write a self-contained HTML page");
  add_output_option(cmd, "--junit", paths.junit, "write JUnit XML for CI systems");
}

// The report paths, and the command's other outputs (`more`: identify's --spec-out, the gate's
// GTEST_SHARD_STATUS_FILE), as the outputs of a run that reads `inputs`.
inline void check_report_outputs(const reports::report_paths& paths, const std::vector<flagged_path>& inputs,
                                 const std::vector<flagged_path>& more = {}) {
  std::vector<flagged_path> outputs = {
      {"--json", paths.json}, {"--markdown", paths.markdown}, {"--html", paths.html}, {"--junit", paths.junit}};
  outputs.insert(outputs.end(), more.begin(), more.end());
  check_outputs(outputs, inputs);
}

}  // namespace ropecheck::cli
