// gate_report: the one model of what `ropecheck gate` found, from which every rendering
// (terminal, Markdown, JSON, JUnit XML) is made and into which a saved JSON report is read
// back by `ropecheck report`. The JSON schema is documented in docs/report-schema.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ropecheck::reports {

// Where a case's error occurred (properties/kernel_properties.h case_location).
struct location {
  std::string dtype;
  std::string pairing;
  int head_dim = 0;
  int rotary_dim = 0;
  std::int64_t position = 0;     // m
  int pair = -1;                 // j; −1 when the measure is not per pair
  double units = -1;             // error in 2^-24·A·‖pair‖; −1 when not a per-pair measure
  std::string text;              // one-line description; empty: no location known
};

struct property_outcome {
  std::string name;              // stable snake_case id, "<property>/<dtype>"
  bool passed = true;            // false for fail and known_failure
  std::int64_t cases = 0;
  double worst_over_bound = 0;   // worst error / bound over every case run; 0 for exact properties
  std::string counterexample;    // shrunk counterexample when failed (labelled inputs, message)
  std::string replay;            // one line that replays the failure
  // "" (ran: verdict pass/fail), "skipped" (dtype or comparator missing: `detail` says why),
  // "not_run" (not selected), "known_failure" (failed, and so did the --baseline, by no more).
  std::string status;
  std::string message;           // what failed: the shrunk counterexample's message
  std::int64_t failed_cases = 0; // cases of `cases` that broke the property
  location worst;                // where worst_over_bound occurred
  location counterexample_location;  // where the shrunk counterexample fails
  std::string detail;            // extra measurements, or why skipped / not run
  std::vector<std::pair<std::int64_t, double>> points;  // (position, case's worst/bound) per case
  // (pair index j, …) and (head_dim, …) of the case's worst output, per case (per-pair properties).
  std::vector<std::pair<std::int64_t, double>> pair_points;
  std::vector<std::pair<std::int64_t, double>> head_dim_points;
  // The largest call the property sent, in token-heads (tokens × (Q heads + K heads)); 0: unknown
  // (not run, or a report made before it was stated).
  std::int64_t largest_call_token_heads = 0;
};

// The most plot points a property keeps (the first ones of its case stream).
inline constexpr std::size_t max_points_per_property = 2000;

// "pass" | "fail" | "known_failure" | "skipped" | "not_run".
std::string verdict_of(const property_outcome& p);

// What ended a library kernel's worker process (abi/kernel_worker.h) during the gate.
struct kernel_ending {
  std::string verdict;    // "crashed" or "timed_out": the kernel's verdict
  std::string cause;      // "signal 11 (SIGSEGV)", "exit status 0 (the kernel called exit or _exit)", …
  std::string property;   // the property that was running
  std::string call;       // one line: the call that was running
  std::string case_json;  // that call as a case file (abi/abi_case.h), for `ropecheck replay`
  std::string replay;     // the command that replays it in process
};

// The calls a kernel was gated on: its declared domain (fast::kernel_domain, C ABI v3 limits)
// narrowed by the run's --positions and --max-position. JSON `kernels[].domain`.
struct served_domain {
  bool nonnegative_positions = false;  // "positions": "nonnegative" (else "all")
  std::int64_t max_position = 0;      // the largest |m| sent; 0: no bound (null)
  bool inverse = true;                 // the inverse direction
  bool attention_factor = true;        // an attention factor A != 1
  bool partial_rotary = true;          // rotary_dim < head_dim
  bool absent_tensor = true;           // a call with Q or K absent
  bool operator==(const served_domain&) const = default;
};

// "every call", or what the domain leaves out: "positions m >= 0, |m| <= 1000000, no inverse".
std::string describe(const served_domain& d);

struct kernel_outcome {
  std::string name;
  bool passed = true;
  std::vector<property_outcome> properties;
  std::optional<kernel_ending> ended;  // set: the kernel's run ended with it (never a pass)
  std::optional<served_domain> domain = std::nullopt;  // absent from reports made before domains were stated
};

// "pass" | "fail" | "crashed" | "timed_out".
std::string verdict_of(const kernel_outcome& k);

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
  std::string contract = "exact";      // the accuracy contract the bounds were widened by
  std::string contract_statement;      // its one-line recipe
  std::string contract_derivation;     // how its bound is composed (bounds::contract_derivation)
  std::int64_t max_position = 0;       // > 0: --max-position (no case beyond |m| = this)
  std::vector<std::string> selected_properties;  // --property; empty: all
  std::string baseline;                // --baseline path, if any
  // gate --shard I/N: this report holds block I of N of every property's cases (and, in shard
  // 0, the fixtures and mutants); `report merge` joins the N into the unsharded report (1/1).
  int shard_index = 0;
  int shard_count = 1;
  bool passed = true;
  std::vector<kernel_outcome> kernels;
  std::vector<fixture_outcome> fixtures;
  std::vector<mutant_outcome> mutants;  // only with --mutants (absent from the JSON otherwise)
};

// The verdicts from the outcomes: a kernel passes when none of its properties fails (a known
// failure, a skipped or not run property does not) and none of its fixtures (named
// "…/<kernel>/…") fails; the report passes when every kernel and fixture passes and every
// mutant is killed. Sets every kernel's `passed` and the report's.
void judge(gate_report& report);

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
