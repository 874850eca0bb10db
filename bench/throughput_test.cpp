// Tests of the throughput table's machinery (never of speed): a row's ratio is taken against the
// fastest of the copies measured in the same run (the copies themselves: copy_baseline_test).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/throughput.h"
#include "fast/kernels.h"

namespace ropecheck::bench {
namespace {

// One quick pass: 16 KiB, 1 thread, one short repetition, no console report.
throughput_options quick_options() {
  throughput_options options;
  options.sizes = {std::int64_t{16} << 10};
  options.threads = {1};
  options.min_seconds = 0.001;
  options.repetitions = 1;
  options.console = false;
  return options;
}

TEST(throughput_table, ratio_is_against_the_faster_copy) {
  const throughput_options options = quick_options();
  const auto rows = run_throughput_table(options);
  ASSERT_FALSE(rows.empty());
  for (const throughput_row& r : rows) {
    ASSERT_GT(r.memcpy_gbps, 0) << r.kernel;
    ASSERT_GT(r.stream_copy_gbps, 0) << r.kernel;
    EXPECT_DOUBLE_EQ(r.ratio, r.gbps / std::max(r.memcpy_gbps, r.stream_copy_gbps)) << r.kernel;
  }
  const nlohmann::json json = throughput_json(rows);
  for (const char* field : {"memcpy_gbps", "stream_copy_gbps", "ratio", "gbps", "simd_target"})
    EXPECT_TRUE(json.at(0).contains(field)) << field;
}

// An fp8 output scale measures the fp8 rows only (other dtypes refuse σ ≠ 1), each of them: a
// kernel that refused the call would be left out, so the rows are counted.
TEST(throughput_table, output_scale_measures_every_fp8_row) {
  throughput_options options = quick_options();
  options.output_scale = 3.0f;
  std::size_t expected = 0;
  for (const fast::kernel_info& k : fast::kernel_registry())
    for (dtype t : {dtype::float8_e4m3fn, dtype::float8_e5m2})
      if (k.supports(t)) expected += k.pairings.size();
  ASSERT_GT(expected, 0u);
  const auto rows = run_throughput_table(options);
  EXPECT_EQ(rows.size(), expected);
  for (const throughput_row& r : rows) {
    EXPECT_TRUE(r.dtype == "float8_e4m3fn" || r.dtype == "float8_e5m2") << r.kernel << " " << r.dtype;
    EXPECT_EQ(r.output_scale, 3.0f);
    EXPECT_GT(r.gbps, 0) << r.kernel;
  }
  EXPECT_EQ(throughput_json(rows).at(0).at("output_scale"), 3.0);
}

}  // namespace
}  // namespace ropecheck::bench
