// kernel_properties: every property a fast RoPE kernel must have, run with RapidCheck against
// one fast::kernel_info (all its dtypes × pairings). The gtest suite (properties/*_test.cpp) and
// the CLI gate call this same code; the gate wraps a shared-library kernel into a kernel_info,
// so nothing here uses more of a kernel than kernel_info exposes.
//
// Bounds come from bounds/error_bounds.h (derived in docs/error-bounds.md); the oracle is
// the double tier (reference/double_tier.h, sound per docs/double-tier.md).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bounds/accuracy_contracts.h"
#include "fast/kernels.h"
#include "numeric/dtype.h"
#include "properties/judged_case.h"
#include "reports/gate_report.h"

namespace ropecheck::properties {

// quick: every CI run (each property's own case count, a quarter of it under AddressSanitizer);
// deep: 10^6 cases per property, split evenly over the kernels and dtypes it runs on, for
// nightly or manual runs (RC_PARAMS=max_success=N sets every run's count instead).
enum class profile { quick, deep };

std::string_view to_string(profile p);

// Where a case's error occurred: what a kernel author needs to find it again.
struct case_location {
  std::string dtype;           // storage dtype
  std::string pairing;         // half | adjacent
  int head_dim = 0;
  int rotary_dim = 0;
  std::int64_t position = 0;   // m
  int pair = -1;               // j (−1: not a per-pair measure)
  double units = -1;           // error in units of 2^-24·A·‖pair‖ (−1: not a per-pair measure)
  std::string text;            // the one-line description the messages use
};

// How a property run ended. `skipped`: the kernel or dtype cannot be checked (detail says
// why); `not_run`: not selected (--property, or RC_PARAMS reproduces other properties).
enum class run_state { ran, skipped, not_run };

struct property_result {
  std::string name;            // stable snake_case id, e.g. "within_bound_of_reference"
  std::string dtype;           // storage dtype the property ran on ("float32", ...)
  bool passed = true;
  run_state state = run_state::ran;
  std::int64_t cases = 0;
  double worst_over_bound = 0; // observed worst error / derived bound (0 for bit-exact properties that held)
  std::string counterexample;  // shrunk counterexample when failed; last line: the message
                               // naming the violated bound (property_runner.cpp)
  std::string replay;          // one-line command/seed to replay
  std::string detail;          // extra measurements (e.g. worst error over the documented target)
  std::string message;         // the shrunk counterexample's message (what failed), if failed
  std::int64_t failed_cases = 0;  // cases of `cases` that broke the property (all were run)
  case_location worst;         // where worst_over_bound occurred, over every case run
  case_location counterexample_location;  // the shrunk counterexample's location (if known)
  // Per case: (position, worst error/bound of the case), for the error-versus-position plot;
  // at most max_plot_points (the deep profile keeps the first ones).
  std::vector<std::pair<std::int64_t, double>> points;
  // The same per case against the pair index j and the head_dim of the case's worst output
  // (the per-pair properties only), for the plots against j and head_dim.
  std::vector<std::pair<std::int64_t, double>> pair_points;
  std::vector<std::pair<std::int64_t, double>> head_dim_points;
  // The largest call the property sent the kernel, in token-heads (tokens × (Q heads + K heads)).
  std::int64_t largest_call_token_heads = 0;
  // The worst case and the shrunk counterexample as calls that can be run again (judged_case.h);
  // null where the property does not judge outputs against a reference (or none failed).
  std::shared_ptr<const judged_case> worst_data;
  std::shared_ptr<const judged_case> counterexample_data;
};

// The report's limit (`report merge` cuts the shards' joined points at the same count).
inline constexpr std::size_t max_plot_points = reports::max_points_per_property;

// Drops the memoized oracle tables, so that the next case starts cold as a new process would
// (bench/property_case_throughput.cpp measures every run from a cold memo).
void clear_oracle_memo();

// What a gate run may change about the properties, besides profile and seed.
struct check_options {
  const bounds::accuracy_contract* contract = nullptr;  // nullptr: exact
  std::int64_t max_position = 0;                        // > 0: no case beyond |m| = this
  // The run's domain (--positions): intersected with each kernel's declared domain
  // (fast::kernel_domain) and max_position; the cases keep to the result.
  fast::kernel_domain domain = {};
  std::vector<std::string> properties;                  // empty: all; else the others are not_run
  // gate --shard I/N: each property runs block I of N of its case stream (property_runner.h
  // shard_block); 0/1 runs them all.
  int shard_index = 0;
  int shard_count = 1;
  // Asked before each property: a non-empty answer ends the kernel's run there (a library
  // kernel whose worker process ended, abi/kernel_worker.h), and says why the rest are not run.
  std::function<std::string()> stopped;
  // Told "<property>/<dtype>" as each property starts running.
  std::function<void(std::string_view)> starting;
  // Told "<property>/<dtype>" and the case's index when a property's first case fails (the
  // failure's discovery: the rest of its budget, the shrinking and the report follow).
  std::function<void(std::string_view, std::int64_t)> first_failure;
  // gate --baseline: "<kernel>/<property>/<dtype>" → the worst/bound past which the ratchet calls
  // it regressed. A failing property past it is shrunk to a case past it (property_runner.h
  // failing_above), so that its counterexample shows the new error, not the baseline's.
  std::map<std::string, double> shrink_above;
};

struct kernel_result {
  std::string kernel;
  bool passed = true;
  std::vector<property_result> properties;
};

// Runs every kernel property on one kernel (all its dtypes × pairings), deterministic for a seed.
// RC_PARAMS is honoured for max_success, noshrink and reproduce (the seed argument wins over
// its seed). `replay_command` is what a failure's replay line runs after the RC_PARAMS=…
// prefix; empty means the gtest executable that covers the registered kernels.
kernel_result check_kernel(const fast::kernel_info& kernel, profile p, std::uint64_t seed,
                           std::string_view replay_command = {}, const check_options& options = {});

// The property ids, in the order check_kernel runs them.
std::span<const std::string_view> kernel_property_names();

// One property on one storage dtype (check_kernel is a loop over these). In the deep profile
// the property's 10^6 cases are split over `deep_runs` runs (the suite's kernels × dtypes, or
// check_kernel's dtypes): this run takes ⌈10^6 / deep_runs⌉. Throws std::invalid_argument for
// an unknown property name.
property_result check_kernel_property(const fast::kernel_info& kernel, std::string_view property,
                                      dtype storage, profile p, std::uint64_t seed,
                                      std::string_view replay_command = {}, int deep_runs = 1,
                                      const check_options& options = {});

// The fixed seed CI uses unless RC_PARAMS says otherwise.
inline constexpr std::uint64_t default_seed = 20240611;

// ROPECHECK_PROFILE=quick|deep (default quick); throws std::invalid_argument for other values.
profile profile_from_environment();

// RC_PARAMS's seed=N if given, else default_seed; throws std::runtime_error (exit 2) if RC_PARAMS
// does not parse (property_runner.h read_rc_params).
std::uint64_t seed_from_environment();

}  // namespace ropecheck::properties
