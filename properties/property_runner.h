// property_runner: runs one RapidCheck property the ropecheck way — seed and case count from
// the profile and RC_PARAMS, no console noise, the worst error/bound ratio measured while it
// runs, and on failure the shrunk counterexample plus a one-line replay command. Shared by the
// kernel properties (library) and the gtest files (reference properties).
#pragma once

#include <rapidcheck.h>
#include <rapidcheck/detail/Configuration.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bounds/accuracy_contracts.h"
#include "properties/kernel_properties.h"

namespace ropecheck::properties {

// One failed case as the property body saw it: where, and the case's inputs labelled.
struct failed_case {
  case_location location;
  std::string inputs;  // labelled, runs of equal values summarised (kernel_cases.h describe_case)
  std::shared_ptr<const judged_case> data;  // the case as a call to run again, if the property keeps one
};

// The worst observed error/bound ratio of a property and what produced it. The property body
// updates it for every case it runs (shrink attempts included).
struct observation {
  double worst_over_bound = 0;
  std::string worst_case;  // short description of where the worst ratio occurred
  double worst_over_target = 0;  // same error over the documented target (accuracy properties)
  double worst_pair_error = 0;   // max |y − y_exact| / ‖(x_a, x_b)‖ (numeric/pair_error.h)
  double worst_noncancelling_ulps = 0;  // max ulp distance where |y_exact| ≥ ‖(x_a, x_b)‖/2
  bool all_bit_identical = true;  // agreement properties: every compared output had equal bits
  // Kernel accuracy properties, the worst ratio over parts of the cases (pairs of normal
  // magnitude only, where the relative terms of the bound dominate): K outputs, and cases with a
  // rope_scaling or an attention factor A ≠ 1 (error_bounds.h §16).
  double worst_key_over_bound = 0;
  double worst_scaled_over_bound = 0;
  case_location worst_location;  // where worst_over_bound occurred
  std::shared_ptr<const judged_case> worst_data;  // the case of worst_over_bound, if kept (judged_case.h)
  // The worst ratio of the case being run and its position (one point of the error-versus-
  // position plot per case; property_runner.cpp collects them).
  double case_worst = -1;  // −1: nothing recorded yet in this case
  std::int64_t case_position = 0;
  int case_pair = -1;      // j and head_dim of the case's worst (−1: not a per-pair measure)
  int case_head_dim = -1;
  // Failures by message, so that the shrunk counterexample's message finds its location and
  // labelled inputs (kept for the last few hundred distinct messages).
  std::unordered_map<std::string, failed_case> failures;
  std::vector<std::pair<std::int64_t, double>> points;  // (position, case_worst) per case
  std::vector<std::pair<std::int64_t, double>> pair_points;      // (j, case_worst) per case
  std::vector<std::pair<std::int64_t, double>> head_dim_points;  // (head_dim, case_worst) per case
  // `locate` is only called for a new worst (describing a location costs more than checking
  // it); it returns a case_location whose `text` is the one-line description.
  // Reference properties: a ratio and a description only.
  template <class Describe>
  void record(double ratio, Describe&& where) {
    if (ratio > worst_over_bound) {
      worst_over_bound = ratio;
      worst_case = where();
      worst_location.text = worst_case;
    }
  }
  template <class Locate>
  void record(double ratio, std::int64_t position, Locate&& locate) {
    if (ratio > case_worst) {
      case_worst = ratio;
      case_position = position;
    }
    if (ratio > worst_over_bound) {
      worst_over_bound = ratio;
      worst_location = locate();
      worst_case = worst_location.text;
    }
  }
  // A per-pair measure: also where in the head (pair j of a head of head_dim) for the plots.
  template <class Locate>
  void record(double ratio, std::int64_t position, int pair, int head_dim, Locate&& locate) {
    if (ratio > case_worst) {
      case_pair = pair;
      case_head_dim = head_dim;
    }
    record(ratio, position, std::forward<Locate>(locate));
  }
};

// The deep profile's budget: 10^6 cases per property.
inline constexpr int deep_cases_per_property = 1'000'000;

// The deep cases of each of `runs` runs that split one property's `total` (rounded up).
constexpr int deep_share(int total, int runs) { return runs <= 1 ? total : (total + runs - 1) / runs; }

// Everything a run needs besides the property itself.
struct run_settings {
  profile level = profile::quick;
  std::uint64_t seed = default_seed;
  int max_success_override = 0;  // RC_PARAMS max_success; 0: the profile decides
  // Cases this run takes in the deep profile: 10^6, or its share of a property's 10^6 when
  // several runs split it (deep_share).
  int deep_cases = deep_cases_per_property;
  bool disable_shrinking = false;
  std::unordered_map<std::string, rc::detail::Reproduce> reproduce;  // RC_PARAMS reproduce=…
  std::string replay_command;  // appended to the replay line
  // What the error bounds allow (bounds/accuracy_contracts.h); never null.
  const bounds::accuracy_contract* contract = &bounds::exact_contract();
  std::int64_t max_position = 0;  // > 0: no case has |m| beyond it (--max-position)
  // The calls this run's cases keep to: the kernel's declared domain narrowed by the run's
  // (--positions, --max-position; check_kernel_property). Its max_position is max_position's.
  fast::kernel_domain domain = {};
  // Sharding (gate --shard I/N): this run takes case_block(total, shard_index, shard_count) of
  // the property's case stream; 0/1 runs every case.
  int shard_index = 0;
  int shard_count = 1;
};

// The cases [begin, end) of a stream of `total` that shard `index` of `count` runs: contiguous
// blocks in shard order, so that the union over the shards is the stream, a shard's first
// failure is the stream's first failure when no earlier shard fails, and the first `k` plot
// points of the stream are the shards' points in shard order.
struct case_block {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};
constexpr case_block shard_block(std::int64_t total, int index, int count) {
  return {total * index / count, total * (index + 1) / count};
}

// RC_PARAMS, in RapidCheck's syntax, read strictly: the keys ropecheck honours are seed
// (0 ... 2^64 - 1), max_success (1 ... 2^31 - 1: a run of 0 cases would pass vacuously),
// noshrink (0 or 1) and reproduce (RapidCheck's token, decoded by RapidCheck), each at most
// once, numbers as plain decimals. Any other key — unknown, or one of RapidCheck's that has no
// effect here (max_size, max_discard_ratio, verbose_progress, verbose_shrinking) — is refused
// rather than ignored. Throws std::runtime_error "RC_PARAMS: …" (exit 2) naming the key.
struct rc_params_values {
  std::optional<std::uint64_t> seed;
  int max_success = 0;  // 0: not given
  bool noshrink = false;
  std::unordered_map<std::string, rc::detail::Reproduce> reproduce;
};
rc_params_values read_rc_params();

// Settings from RC_PARAMS (read_rc_params) for the given profile and seed; the seed argument
// wins over RC_PARAMS's (the gate refuses the two when they differ).
run_settings settings_from_rc_params(profile level, std::uint64_t seed, std::string replay_command);

// Cases a property runs: RC_PARAMS max_success if given; deep: settings.deep_cases; quick its
// own `quick_cases`, a quarter of it in sanitizer builds (ASan/UBSan run this allocation-heavy
// code ~10× slower — RapidCheck builds a shrink tree per generated value — and the quick suite,
// both builds, must stay under 3 minutes).
int case_count(const run_settings& settings, int quick_cases);

// True when RC_PARAMS asks to reproduce failures and `id` is not among them (RapidCheck then
// skips the property; callers report it as skipped rather than as zero cases passed).
bool skipped_by_reproduce(const run_settings& settings, const std::string& id);

// The message of a failed case's RapidCheck description (location and macro lines dropped,
// one line): the key of observation::failures, and property_result::message.
std::string case_message(const std::string& description);

// Runs the property under the metadata id `id` (the key reproduce strings use). A shard runs
// RapidCheck's whole stream up to its block's end but generates only its block's cases: case i
// is drawn from the i-th split of the seed's random whatever the shard, so the shards' cases are
// the unsharded run's (exactly so when no case is discarded, as none of the kernel properties
// on the built-in kernels is). `cases` and "Falsifiable after N tests" count as the unsharded
// run does: cases are the block's, N is the case's index in the whole stream.
property_result run_property(const std::string& id, const std::string& name,
                             const rc::detail::Property& property, int quick_cases,
                             const run_settings& settings, const observation& seen);

// A case body for shrinking a regression (gate --baseline): the case fails only where its
// worst/bound exceeds `limit`, the ratio past which the ratchet calls the property regressed (the
// baseline's worst/bound and the ratchet's growth), so that RapidCheck shrinks to a case of the
// new error, not to one of the old failure. The message names `property` and leads with that
// case's worst/bound and where it is, then the case's first violation. A case that fails with no ratio (a status or a
// bit-exact check) fails as itself. `into` collects the failures' labelled inputs.
std::function<void()> failing_above(std::string property, double limit, observation& into,
                                    std::function<void(observation&)> run_case);

template <class Testable>
property_result run_testable(const std::string& id, const std::string& name, Testable&& testable,
                             int quick_cases, const run_settings& settings,
                             const observation& seen) {
  return run_property(id, name, rc::detail::toProperty(std::forward<Testable>(testable)),
                      quick_cases, settings, seen);
}

}  // namespace ropecheck::properties
