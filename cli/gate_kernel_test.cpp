// The gate on one kernel (cli/gate_kernel.h) never passes over nothing: a kernel with no dtype
// or no pairing, a kernel name that would break a report, and a run that judged no case and
// compared no fixture value are refused (bad_input), whatever front end asked.
#include "cli/gate_kernel.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fast/kernels.h"
#include "io/io_error.h"

namespace ropecheck::cli {
namespace {

fast::kernel_info scalar() {
  const fast::kernel_info* k = fast::find_kernel("on_the_fly_scalar");
  EXPECT_NE(k, nullptr);
  return *k;
}

std::string refusal(const fast::kernel_info& kernel, const gate_kernel_settings& settings = {}) {
  try {
    gate_kernel(kernel, settings);
  } catch (const bad_input& e) {
    return e.what();
  }
  return "no refusal";
}

TEST(GateKernel, RefusesAKernelWithNoDtypeOrNoPairing) {
  fast::kernel_info k = scalar();
  k.dtypes = {};
  EXPECT_EQ(refusal(k), "dtypes: is empty: the gate would check nothing '[]'");
  k = scalar();
  k.pairings = {};
  EXPECT_EQ(refusal(k), "pairings: is empty: the gate would check nothing '[]'");
}

TEST(GateKernel, RefusesNamesThatWouldBreakAReport) {
  for (const std::string& name : std::vector<std::string>{"", "a\nb", "a|b", "`k`", std::string(129, 'k')}) {
    fast::kernel_info k = scalar();
    k.name = name;
    EXPECT_TRUE(refusal(k).starts_with("name: is not 1 to 128 characters of [A-Za-z0-9_.-]")) << name;
  }
  EXPECT_NO_THROW(check_kernel_name("name", "rope.v2-fast_" + std::string(115, 'k')));
}

TEST(GateKernel, ARunThatCheckedNothingIsRefusedNotPassed) {
  // float16 only, half-split only: no fixture applies (they need float32 or adjacent), and
  // with every property skipped nothing at all is judged.
  static constexpr dtype float16_only[] = {dtype::float16};
  static constexpr pairing half_only[] = {pairing::half_split};
  fast::kernel_info k = scalar();
  k.dtypes = float16_only;
  k.pairings = half_only;
  gate_kernel_settings settings;
  for (const std::string_view p : properties::kernel_property_names()) settings.skipped[std::string(p)] = "test";
  EXPECT_TRUE(refusal(k, settings).starts_with("gate: judged no property case and compared no fixture value"))
      << refusal(k, settings);
}

}  // namespace
}  // namespace ropecheck::cli
