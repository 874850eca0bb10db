// The gate's run (core/gate_run.h) on an in-process kernel, as the Python module gives one,
// never passes over nothing: a kernel with no dtype or no pairing, a kernel name that would break
// a report, and a run that judged no case and compared no fixture value are refused (bad_input),
// whatever front end asked.
#include "core/gate_run.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fast/kernels.h"
#include "io/io_error.h"

namespace ropecheck::core {
namespace {

fast::kernel_info scalar() {
  const fast::kernel_info* k = fast::find_kernel("on_the_fly_scalar");
  EXPECT_NE(k, nullptr);
  return *k;
}

std::string refusal(const fast::kernel_info& kernel, gate_options o = {}) {
  o.in_process_kernels = {&kernel};
  try {
    run_gate_report(o);
  } catch (const bad_input& e) {
    return e.what();
  }
  return "no refusal";
}

TEST(GateRun, RefusesAKernelWithNoDtypeOrNoPairing) {
  fast::kernel_info k = scalar();
  k.dtypes = {};
  EXPECT_EQ(refusal(k), "dtypes: is empty: the gate would check nothing '[]'");
  k = scalar();
  k.pairings = {};
  EXPECT_EQ(refusal(k), "pairings: is empty: the gate would check nothing '[]'");
}

TEST(GateRun, RefusesNamesThatWouldBreakAReport) {
  for (const std::string& name : std::vector<std::string>{"", "a\nb", "a|b", "`k`", std::string(129, 'k')}) {
    fast::kernel_info k = scalar();
    k.name = name;
    EXPECT_TRUE(refusal(k).starts_with("name: is not 1 to 128 characters of [A-Za-z0-9_.-]")) << name;
  }
  EXPECT_NO_THROW(check_kernel_name("name", "rope.v2-fast_" + std::string(115, 'k')));
}

TEST(GateRun, ARunThatCheckedNothingIsRefusedNotPassed) {
  // float16 only, half-split only: no fixture applies (they need float32 or adjacent), and
  // with every property skipped nothing at all is judged.
  static constexpr dtype float16_only[] = {dtype::float16};
  static constexpr pairing half_only[] = {pairing::half_split};
  fast::kernel_info k = scalar();
  k.dtypes = float16_only;
  k.pairings = half_only;
  gate_options o;
  for (const std::string_view p : properties::kernel_property_names()) o.in_process_skipped[std::string(p)] = "test";
  const std::string why = refusal(k, o);
  EXPECT_NE(why.find("judged no case and no fixture value"), std::string::npos) << why;
}

}  // namespace
}  // namespace ropecheck::core
