// REPORT FLAGS shared by gate, audit and report: --json, --markdown, --html, --junit PATH,
// and the check of every output path a command will write, made before the run
// (io/output_paths.h): a bad path is exit 2 up front, never after other outputs were written.
#pragma once

#include <CLI/CLI.hpp>
#include <vector>

#include "io/output_paths.h"
#include "reports/gate_report.h"

namespace ropecheck::cli {

inline void add_report_flags(CLI::App& cmd, reports::report_paths& paths) {
  cmd.add_option("--json", paths.json, "write the JSON report (docs/report-schema.md)");
  cmd.add_option("--markdown", paths.markdown, "write a Markdown summary for a pull request");
  cmd.add_option("--html", paths.html, "write a self-contained HTML page");
  cmd.add_option("--junit", paths.junit, "write JUnit XML for CI systems");
}

// The report paths as the outputs of a run that reads `inputs`.
inline void check_report_outputs(const reports::report_paths& paths,
                                 const std::vector<flagged_path>& inputs) {
  check_outputs({{"--json", paths.json}, {"--markdown", paths.markdown}, {"--html", paths.html},
                 {"--junit", paths.junit}},
                inputs);
}

}  // namespace ropecheck::cli
