// saved_report: a report file read back — by `ropecheck report`, `report merge` and
// `gate --baseline` — and trusted only once it is checked: against its schema (the fields and
// types gate_report_from_json / audit_report_from_json read) and against the invariants every
// report ropecheck writes holds (docs/report-schema.md, "Reading a saved report"):
//   * counts (cases, failed cases, values, outputs, …) are ≥ 0, and a part never exceeds its
//     whole (failed_cases ≤ cases, outputs_beyond_tolerance ≤ outputs, …);
//   * ratios and errors are numbers ≥ 0, infinite only on a row that failed; shares are in [0, 1];
//   * every verdict agrees with its rows: a passing property has no failed case, a kernel passes
//     iff none of its properties or fixtures fails, the report (gate or audit) passes iff nothing
//     in it fails — and a pass needs at least one judged case, fixture value, mutant or output.
// A hand-edited or truncated report is thus exit 2 naming the file, the field and the value,
// never a silent pass.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <variant>

#include <nlohmann/json_fwd.hpp>

#include "reports/audit_report.h"
#include "reports/gate_report.h"

namespace ropecheck::reports {

// A saved report that is not one ropecheck writes: "<file>: field '<path>': <problem> '<value>'"
// (one line; exit 2).
class saved_report_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How a gate report is used. A shard of a `report merge` may have judged nothing (shard I of N
// holds 0 cases when N exceeds a property's cases): the merged report is held to the rule.
enum class report_use { whole, merge_input };

// Throw saved_report_error naming `file` and the first field that breaks an invariant.
void validate_report(const gate_report& report, std::string_view file, report_use use = report_use::whole);
void validate_report(const audit_report& report, std::string_view file);

using saved_report = std::variant<gate_report, audit_report>;

// `j` read as the report its "report" field names, schema and invariants checked;
// saved_report_error naming `file` otherwise.
saved_report saved_report_from_json(const nlohmann::json& j, std::string_view file,
                                    report_use use = report_use::whole);

// The report in `path`, read by io/json_file.h's strict reader (io_error: not a regular file,
// malformed JSON, a repeated key, …), then as saved_report_from_json.
saved_report read_saved_report(const std::filesystem::path& path, report_use use = report_use::whole);

// A gate report only: an audit report is refused (saved_report_error naming 'report').
gate_report read_saved_gate_report(const std::filesystem::path& path, report_use use = report_use::whole);

}  // namespace ropecheck::reports
