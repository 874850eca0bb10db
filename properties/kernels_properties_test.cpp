// Every kernel property (kernel_properties.h) on every registered kernel, each storage dtype
// the kernel supports, both pairings: one test per (kernel, property), generated from
// fast::kernel_registry(), so a newly registered kernel is covered without editing this file.
// The tests call the library the CLI gate calls; each prints, per dtype, the cases run and the
// observed worst error over its derived bound.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "properties/gtest_support.h"
#include "properties/kernel_properties.h"

namespace ropecheck::properties {
namespace {

// One test per (kernel, property, storage dtype), so ctest runs them in parallel and a failure
// names all three.
using kernel_property_dtype = std::tuple<std::size_t, std::string_view, dtype>;

std::vector<kernel_property_dtype> every_kernel_property_and_dtype() {
  std::vector<kernel_property_dtype> all;
  for (std::size_t k = 0; k < fast::kernel_registry().size(); ++k)
    for (std::string_view p : kernel_property_names())
      for (dtype t : fast::kernel_registry()[k].dtypes) all.emplace_back(k, p, t);
  return all;
}

// How many tests run `property` (one per registered kernel and dtype): they split its deep
// budget.
int runs_of(std::string_view property) {
  int runs = 0;
  for (const auto& [index, p, storage] : every_kernel_property_and_dtype()) runs += p == property;
  return runs;
}

class kernel_property : public ::testing::TestWithParam<kernel_property_dtype> {};

TEST_P(kernel_property, holds) {
  const auto [index, property, storage] = GetParam();
  const fast::kernel_info& kernel = fast::kernel_registry()[index];
  const property_result r = check_kernel_property(
      kernel, property, storage, profile_from_environment(), seed_from_environment(),
      testing::replay_command_for_current_test(), runs_of(property));
  const std::string label = std::string(kernel.name) + "/" + std::string(property);
  if (r.cases == 0 && r.passed) {
    std::printf("[ property ] %-62s %-9s %s\n", label.c_str(), r.dtype.c_str(), r.detail.c_str());
    GTEST_SKIP() << r.detail;
  }
  testing::report(r, label);
}

std::string test_name(const ::testing::TestParamInfo<kernel_property_dtype>& info) {
  const auto [index, property, storage] = info.param;
  return std::string(fast::kernel_registry()[index].name) + "__" + std::string(property) + "__" +
         std::string(to_string(storage));
}

INSTANTIATE_TEST_SUITE_P(kernels, kernel_property,
                         ::testing::ValuesIn(every_kernel_property_and_dtype()), test_name);

// The library entry point the gate uses runs the same catalog: every property, every dtype.
TEST(check_kernel, reports_every_property_for_every_dtype) {
  const fast::kernel_info& kernel = fast::kernel_registry().front();
  // One case per property keeps this a test of the plumbing, not of the kernel.
  const char* given = std::getenv("RC_PARAMS");
  const std::string saved = given == nullptr ? "" : given;
  ::setenv("RC_PARAMS", "max_success=1", 1);
  const kernel_result r = check_kernel(kernel, profile::quick, default_seed);
  if (given == nullptr) ::unsetenv("RC_PARAMS");
  else ::setenv("RC_PARAMS", saved.c_str(), 1);
  EXPECT_EQ(r.kernel, kernel.name);
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.properties.size(), kernel_property_names().size() * kernel.dtypes.size());
  for (const property_result& p : r.properties) {
    EXPECT_TRUE(p.passed) << p.name << " " << p.dtype << "\n" << p.counterexample;
    if (p.name == "rounded_once_within_half_ulp") {  // the kernel does not declare one rounding
      EXPECT_EQ(p.state, run_state::skipped) << p.detail;
      continue;
    }
    EXPECT_EQ(p.cases, 1) << p.name << " " << p.dtype << " " << p.detail;
  }
}

// The one-rounding property can fail: a float32 kernel (cos/sin rounded to float32, products in
// float32) that claimed one rounding is caught within the quick budget; one that does not
// claim it is skipped, with the reason.
TEST(rounded_once_within_half_ulp, catches_a_kernel_that_rounds_more_than_once) {
  fast::kernel_info claimed = *fast::find_kernel("on_the_fly_simd");
  const property_result skipped = check_kernel_property(
      claimed, "rounded_once_within_half_ulp", dtype::float32, profile::quick, default_seed);
  EXPECT_EQ(skipped.state, run_state::skipped);
  EXPECT_NE(skipped.detail.find("rounds_once"), std::string::npos) << skipped.detail;
  claimed.rounds_once = true;
  for (dtype storage : {dtype::float32, dtype::float16, dtype::bfloat16}) {
    const property_result r = check_kernel_property(claimed, "rounded_once_within_half_ulp", storage,
                                                    profile::quick, default_seed);
    EXPECT_FALSE(r.passed) << to_string(storage) << ": worst/bound " << r.worst_over_bound;
    EXPECT_GT(r.worst_over_bound, 1) << to_string(storage);
    EXPECT_NE(r.message.find("rounded_once_within_half_ulp violated"), std::string::npos) << r.message;
  }
}

}  // namespace
}  // namespace ropecheck::properties
