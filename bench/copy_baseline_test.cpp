// Tests of the copy baseline, the `bench --kernel-lib` workload and the throughput ratchet's
// logic (never of speed): every copy copies every byte and nothing else at any length and
// alignment; the copies offered are those /proc/cpuinfo's flags allow; the CPU model is
// /proc/cpuinfo's; a library kernel gets calls inside its declared domain only; the ratchet
// flags a ratio below (1 − tolerance) × the saved one, regressed rows first.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench/cpu_model.h"
#include "bench/kernel_comparison.h"
#include "bench/stream_copy.h"
#include "bench/throughput_ratchet.h"
#include "fast/kernels.h"
#include "io/io_error.h"

namespace ropecheck::bench {
namespace {

// The words after "name\t: " on /proc/cpuinfo's first such line, spaces collapsed.
std::string cpuinfo_field(const std::string& name) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name, 0) != 0) continue;
    std::istringstream rest(line.substr(line.find(':') + 1));
    std::string words, word;
    while (rest >> word) words += (words.empty() ? "" : " ") + word;
    return words;
  }
  return {};
}

TEST(copy_baseline, every_copy_copies_every_byte_and_nothing_else) {
  ASSERT_FALSE(fast_copies().empty() &&
               std::string(cpuinfo_field("flags")).find("sse2") != std::string::npos);
  constexpr std::size_t capacity = 4096 + 512;
  std::vector<std::byte> in(capacity), out(capacity), expected(capacity);
  for (std::size_t i = 0; i < capacity; ++i) in[i] = static_cast<std::byte>(i * 131 + 7);
  for (const copy_method& copy : fast_copies())
    for (std::size_t from : {0, 1, 7, 33})
      for (std::size_t to : {0, 1, 17, 40, 63})
        for (std::size_t length : {0, 1, 63, 64, 65, 255, 256, 257, 1000, 4097}) {
          std::memset(out.data(), 0xEE, capacity);
          copy.copy(in.data() + from, out.data() + to, length);
          std::memset(expected.data(), 0xEE, capacity);
          for (std::size_t i = 0; i < length; ++i) expected[to + i] = in[from + i];
          ASSERT_EQ(std::memcmp(out.data(), expected.data(), capacity), 0)
              << copy.name << " from +" << from << " to +" << to << " length " << length;
        }
}

// The widths offered are those the CPU reports (an AVX2-only machine gets no AVX-512 copy).
TEST(copy_baseline, offers_each_vector_width_the_cpu_has) {
#if defined(__x86_64__)
  const std::string flags = " " + cpuinfo_field("flags") + " ";
  if (flags.size() <= 2) GTEST_SKIP() << "no /proc/cpuinfo flags";
  std::set<std::string> names;
  for (const copy_method& copy : fast_copies()) names.insert(std::string(copy.name));
  std::set<std::string> expected{"stream_sse2", "rep_movsb"};
  if (flags.find(" avx2 ") != std::string::npos) expected.insert("stream_avx2");
  if (flags.find(" avx512f ") != std::string::npos) expected.insert("stream_avx512");
  EXPECT_EQ(names, expected);
#else
  EXPECT_TRUE(fast_copies().empty());
#endif
}

TEST(copy_baseline, cpu_model_is_proc_cpuinfos) {
  const std::string model = cpuinfo_field("model name");
  if (model.empty()) GTEST_SKIP() << "no model name in /proc/cpuinfo";
  EXPECT_EQ(cpu_model(), model);
}

// A library kernel that records what it was called with and refuses what its domain excludes.
struct recorder {
  fast::kernel_domain domain;
  long calls = 0;
  long outside = 0;  // calls outside the domain
  std::set<std::int64_t> heads;
};
fast::status recording_entry(const void* context, const fast::rope_call& call, const fast::rope_angles&) {
  auto& r = *static_cast<recorder*>(const_cast<void*>(context));
  ++r.calls;
  const bool absent = call.q.heads == 0 || call.k.heads == 0;
  bool positions_ok = true;
  for (std::int64_t i = 0; i < call.tokens; ++i)
    positions_ok = positions_ok && r.domain.serves_position(fast::position_at(call, i));
  if ((absent && !r.domain.absent_tensor) || !positions_ok) {
    ++r.outside;
    return fast::status::error(fast::status_code::unsupported, "outside the declared domain");
  }
  r.heads.insert(call.q.heads + call.k.heads);
  return fast::status::success();
}

constexpr dtype float16_only[] = {dtype::float16};
constexpr pairing both_pairings[] = {pairing::half_split, pairing::adjacent};

TEST(kernel_comparison, keeps_to_the_declared_domain_and_the_served_dtypes) {
  recorder record;
  record.domain.absent_tensor = false;
  record.domain.negative_positions = false;
  record.domain.max_position = 15;
  fast::kernel_info kernel{.name = "recorder",
                           .description = "records its calls",
                           .strategy = fast::angle_strategy::on_the_fly,
                           .dtypes = float16_only,
                           .pairings = both_pairings,
                           .entry = recording_entry,
                           .context = &record,
                           .domain = record.domain};
  comparison_options options;
  options.tokens = 16;
  options.heads = 3;
  options.head_dim = 8;
  options.rounds = 1;
  options.min_seconds = 0.0001;
  EXPECT_FALSE(why_not_measurable(kernel, options));
  options.tokens = 17;  // position 16 > 15
  const auto beyond = why_not_measurable(kernel, options);
  ASSERT_TRUE(beyond);
  EXPECT_EQ(beyond->flag, "--tokens");
  EXPECT_NE(beyond->reason.find("positions up to 15"), std::string::npos);
  options.tokens = 16;
  options.heads = 1;  // Q and K cannot both have a head
  const auto one_head = why_not_measurable(kernel, options);
  ASSERT_TRUE(one_head);
  EXPECT_EQ(one_head->flag, "--heads");
  options.heads = 3;

  const comparison_result result = run_kernel_comparison(std::span(&kernel, 1), options);
  EXPECT_TRUE(result.failures.empty()) << result.failures.front();
  EXPECT_GT(record.calls, 0);
  EXPECT_EQ(record.outside, 0);
  EXPECT_EQ(record.heads, (std::set<std::int64_t>{3}));  // Q and K split the 3 heads
  ASSERT_GE(result.rows.size(), 2u);
  EXPECT_EQ(result.rows[0].source, "library");
  EXPECT_EQ(result.rows[1].source, "library");
  for (const throughput_row& r : result.rows) {
    EXPECT_EQ(r.dtype, "float16") << r.kernel;  // built-ins only where the library is compared
    EXPECT_EQ(r.bytes, 16 * 3 * 8 * 2);
    EXPECT_GT(r.gbps, 0) << r.kernel;
    EXPECT_DOUBLE_EQ(r.ratio, r.gbps / std::max(r.memcpy_gbps, r.stream_copy_gbps)) << r.kernel;
  }
}

// The standard table in random interleaving (as `ropecheck bench` runs it) still pairs every
// row with the fastest copy, and names the copy and the CPU.
TEST(throughput_table, random_interleaving_keeps_every_row_and_its_baseline) {
  throughput_options options;
  options.sizes = {std::int64_t{16} << 10};
  options.threads = {1};
  options.min_seconds = 0.001;
  options.repetitions = 2;
  options.console = false;
  options.random_interleaving = true;
  std::size_t expected = 0;
  for (const fast::kernel_info& k : fast::kernel_registry())
    for (dtype t : k.dtypes) expected += k.supports(t) ? k.pairings.size() : 0;
  const auto rows = run_throughput_table(options);
  EXPECT_EQ(rows.size(), expected);
  for (const throughput_row& r : rows) {
    EXPECT_GT(r.gbps, 0) << r.kernel;
    EXPECT_DOUBLE_EQ(r.ratio, r.gbps / std::max(r.memcpy_gbps, r.stream_copy_gbps)) << r.kernel;
    EXPECT_EQ(r.cpu, cpu_model());
#if defined(__x86_64__)
    EXPECT_FALSE(r.stream_copy.empty()) << r.kernel;
#endif
  }
}

throughput_row row(const std::string& kernel, double ratio) {
  throughput_row r;
  r.kernel = kernel;
  r.dtype = "float32";
  r.pairing = "half";
  r.bytes = 1024;
  r.heads = 2;
  r.head_dim = 128;
  r.ratio = ratio;
  r.gbps = ratio;
  return r;
}

std::map<std::string, saved_ratio> saved_of(const std::vector<throughput_row>& rows) {
  std::map<std::string, saved_ratio> saved;
  for (std::size_t i = 0; i < rows.size(); ++i) saved[row_key(rows[i])] = {rows[i].ratio, i};
  return saved;
}

TEST(throughput_ratchet, a_ratio_below_one_minus_the_tolerance_of_the_saved_one_regresses) {
  const auto saved = saved_of({row("steady", 1.0), row("edge", 1.0), row("slower", 1.0)});
  const auto verdict = compare_to_baseline(
      {row("steady", 0.9), row("edge", 0.5), row("slower", 0.49), row("added", 0.1)}, saved, "old.json", 0.5);
  EXPECT_EQ(verdict.compared, 3u);
  EXPECT_EQ(verdict.regressed, 1u);
  ASSERT_EQ(verdict.lines.size(), 4u);
  EXPECT_EQ(verdict.lines[0].row.kernel, "slower");  // regressed first
  EXPECT_TRUE(verdict.lines[0].regressed);
  EXPECT_EQ(verdict.lines[1].row.kernel, "steady");
  EXPECT_EQ(verdict.lines[2].row.kernel, "edge");  // exactly (1 − 0.5) × 1: not below it
  EXPECT_FALSE(verdict.lines[2].regressed);
  EXPECT_EQ(verdict.lines[3].row.kernel, "added");
  EXPECT_FALSE(verdict.lines[3].saved_ratio);
  EXPECT_NE(ratchet_text(verdict, "old.json", 0.5).find("ratchet: FAIL (1 of 3"), std::string::npos);
}

TEST(throughput_ratchet, a_saved_row_this_run_lacks_is_refused) {
  const auto saved = saved_of({row("kept", 1.0), row("dropped", 1.0)});
  EXPECT_THROW(compare_to_baseline({row("kept", 1.0)}, saved, "old.json", 0.1), io_error);
}

TEST(throughput_ratchet, reads_what_bench_json_writes) {
  std::vector<throughput_row> rows{row("a", 0.25), row("b", 0.75)};
  rows[1].source = "library";
  const auto file =
      std::filesystem::temp_directory_path() / ("ropecheck_ratchet_" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << throughput_json(rows).dump();
  const auto saved = read_throughput_baseline(file);
  std::filesystem::remove(file);
  ASSERT_EQ(saved.size(), 2u);
  EXPECT_EQ(saved.at(row_key(rows[0])).ratio, 0.25);
  EXPECT_EQ(saved.at(row_key(rows[1])).ratio, 0.75);
}

}  // namespace
}  // namespace ropecheck::bench
