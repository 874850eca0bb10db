// Tests of the throughput table's machinery (never of speed): the streaming copy copies every
// byte at any length and alignment of the tail, and a row's ratio is taken against the faster of
// the two copies measured in the same run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/stream_copy.h"
#include "bench/throughput.h"
#include "fast/kernels.h"

namespace ropecheck::bench {
namespace {

TEST(stream_copy, copies_every_byte_whatever_the_length) {
  constexpr std::size_t capacity = 4096 + 64;
  auto free_bytes = [](std::byte* p) { std::free(p); };
  std::unique_ptr<std::byte, decltype(free_bytes)> in(
      static_cast<std::byte*>(std::aligned_alloc(64, capacity)), free_bytes);
  std::unique_ptr<std::byte, decltype(free_bytes)> out(
      static_cast<std::byte*>(std::aligned_alloc(64, capacity)), free_bytes);
  for (std::size_t i = 0; i < capacity; ++i) in.get()[i] = static_cast<std::byte>(i * 131 + 7);
  for (std::size_t length : {std::size_t{0}, std::size_t{1}, std::size_t{63}, std::size_t{64},
                             std::size_t{255}, std::size_t{256}, std::size_t{4097}, capacity}) {
    std::memset(out.get(), 0xEE, capacity);
    stream_copy(in.get(), out.get(), length);
    EXPECT_EQ(std::memcmp(in.get(), out.get(), length), 0) << "length " << length;
    if (length < capacity) {
      EXPECT_EQ(out.get()[length], std::byte{0xEE}) << "wrote past " << length;
    }
  }
}

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
