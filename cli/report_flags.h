// REPORT FLAGS shared by gate, audit and report: --json, --markdown, --html, --junit PATH.
#pragma once

#include <CLI/CLI.hpp>

#include "reports/gate_report.h"

namespace ropecheck::cli {

inline void add_report_flags(CLI::App& cmd, reports::report_paths& paths) {
  cmd.add_option("--json", paths.json, "write the JSON report (docs/report-schema.md)");
  cmd.add_option("--markdown", paths.markdown, "write a Markdown summary for a pull request");
  cmd.add_option("--html", paths.html, "write a self-contained HTML page");
  cmd.add_option("--junit", paths.junit, "write JUnit XML for CI systems");
}

}  // namespace ropecheck::cli
