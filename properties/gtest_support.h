// gtest_support: runs a RapidCheck property as the current GoogleTest test, the ropecheck way
// (property_runner.h): fixed default seed, ROPECHECK_PROFILE, RC_PARAMS; on failure the test
// fails with the shrunk counterexample, the seed and a one-line replay command for this very
// test; every run prints one line and records cases and worst/bound as test properties.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

#include "properties/kernel_properties.h"
#include "properties/property_runner.h"

namespace ropecheck::properties::testing {

// This executable, relative to the working directory when below it (ctest runs from the source
// root, so the replay line reads ./build/properties/…).
inline std::string this_executable() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "<this test executable>";
  const auto relative = std::filesystem::relative(exe, std::filesystem::current_path(), ec);
  if (!ec && !relative.empty() && *relative.begin() != "..") return "./" + relative.string();
  return exe.string();
}

inline std::string current_test_name() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(info->test_suite_name()) + "." + info->name();
}

inline std::string replay_command_for_current_test() {
  return this_executable() + " --gtest_filter='" + current_test_name() + "'";
}

// Settings for the current test: ROPECHECK_PROFILE, RC_PARAMS (its seed or the default one).
inline run_settings current_settings() {
  return settings_from_rc_params(profile_from_environment(), seed_from_environment(),
                                 replay_command_for_current_test());
}

// Fails the current test with the result's counterexample and replay line, skips it when
// RC_PARAMS reproduces other properties, and prints/records cases and worst/bound.
inline void report(const property_result& r, const std::string& label) {
  std::printf("[ property ] %-62s %-9s cases %8lld  worst/bound %.4g%s%s\n", label.c_str(),
              r.dtype.c_str(), static_cast<long long>(r.cases), r.worst_over_bound,
              r.detail.empty() ? "" : "  ", r.detail.c_str());
  std::fflush(stdout);
  const std::string suffix = r.dtype.empty() ? "" : "_" + r.dtype;
  ::testing::Test::RecordProperty("cases" + suffix, std::to_string(r.cases));
  ::testing::Test::RecordProperty("worst_over_bound" + suffix, std::to_string(r.worst_over_bound));
  if (!r.passed) {
    ADD_FAILURE() << label << (r.dtype.empty() ? "" : " [" + r.dtype + "]") << " failed.\n"
                  << r.counterexample << "\n\nReplay (seed " << seed_from_environment()
                  << "):\n  " << r.replay << "\n";
  } else if (r.cases == 0 && r.detail.rfind("skipped", 0) == 0) {
    GTEST_SKIP() << r.detail;
  }
}

// The deep profile's cases for a property of the 266-bit reference (forms, rotation, tiers,
// scaling). A case there costs 1–11 ms (matrix products, per-element MPFR pow and sin/cos by
// design: each form computes its own angles), 10^6 would take 1–3 CPU-hours per property, so
// the reference gets 2·10^4 — 100–400× its quick count — and the kernels the 10^6
// (kernel_properties.h). These are exact identities checked to 2^-200: a wrong formula fails
// on nearly every input, not on one in a million.
inline constexpr int reference_deep_cases = 20'000;

// Runs `testable` (a RapidCheck property body) as the current test under the id
// "<suite>/<test>", the key RC_PARAMS reproduce strings use.
template <class Testable>
void check_property(Testable&& testable, int quick_cases, const observation& seen,
                    int deep_cases = reference_deep_cases) {
  run_settings settings = current_settings();
  settings.deep_cases = deep_cases;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string id = std::string(info->test_suite_name()) + "/" + info->name();
  property_result r;
  if (skipped_by_reproduce(settings, id)) {
    r.name = info->name();
    r.detail = "skipped: RC_PARAMS reproduces other properties";
  } else {
    r = run_testable(id, info->name(), std::forward<Testable>(testable), quick_cases, settings,
                     seen);
  }
  report(r, id);
}

}  // namespace ropecheck::properties::testing
