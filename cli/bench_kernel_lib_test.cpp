// `ropecheck bench --kernel-lib` and the throughput ratchet, end to end. No speed is asserted:
// the smoke run checks what the rows say (which kernels, which workload, the CPU, a ratio that
// is the kernel's GB/s over the fastest copy's), and the ratchet's exit 1 comes from a build of
// the example kernel that is 20 times slower than itself (examples/c_kernel/throttled_rope.c),
// gated with a tolerance of 0.5, while the normal build passes against its own run with 0.9.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli/cli_test_support.h"

namespace ropecheck::testing {
namespace {

const std::string example = EXAMPLE_KERNEL_LIB;
const std::string throttled = THROTTLED_LIB;
const std::string throttled_slow = THROTTLED_SLOW_LIB;
const std::string domain_declared = std::string(DOMAIN_LIB_DIR) + "/libdomain_declared.so";
// 64 tokens × 4 heads × 64: 64 KiB of float32, a few milliseconds per example call.
const std::string small = " --tokens 64 --heads 4 --head-dim 64 --repetitions 1";

// The CPU's model name as /proc/cpuinfo spells it, spaces collapsed.
std::string proc_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    std::string words, word;
    std::istringstream rest(line.substr(line.find(':') + 1));
    while (rest >> word) words += (words.empty() ? "" : " ") + word;
    return words;
  }
  return {};
}

class bench_kernel_lib : public scratch_dir_test {
 protected:
  nlohmann::json rows(const std::string& file) { return nlohmann::json::parse(file_text(path(file))); }
  // `ropecheck ARGS --json`, its stdout (the rows) into `file`, its stderr into the result.
  run_result run_json(const std::string& args, const std::string& file) {
    return run_ropecheck_prefixed("", args + " --json 2>&1 >" + path(file) + " #");
  }
};

TEST_F(bench_kernel_lib, measures_the_library_beside_the_builtins_and_the_copies) {
  const auto r = run_json("bench --kernel-lib " + example + small, "run.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json all = rows("run.json");
  const auto listed = nlohmann::json::parse(run_ropecheck("kernels --json 2>/dev/null").output);
  std::set<std::string> builtins, seen_builtins, library_pairings;
  for (const auto& k : listed) builtins.insert(k.at("name").get<std::string>());
  ASSERT_FALSE(builtins.empty());
  const std::string model = proc_model_name();
  bool library_part = true;  // the library's rows come first
  for (const auto& row : all) {
    const std::string source = row.at("source");
    if (source == "library") {
      EXPECT_TRUE(library_part) << row;
      EXPECT_EQ(row.at("kernel"), "example_c");
      library_pairings.insert(row.at("pairing").get<std::string>());
    } else {
      library_part = false;
      EXPECT_EQ(source, "built-in");
      seen_builtins.insert(row.at("kernel").get<std::string>());
    }
    // The example serves float32 only, so the built-ins are measured in float32 only.
    EXPECT_EQ(row.at("dtype"), "float32") << row;
    EXPECT_EQ(row.at("tokens"), 64);
    EXPECT_EQ(row.at("heads"), 4);
    EXPECT_EQ(row.at("head_dim"), 64);
    EXPECT_EQ(row.at("bytes"), 64 * 4 * 64 * 4);
    EXPECT_EQ(row.at("threads"), 1);
    if (!model.empty()) {
      EXPECT_EQ(row.at("cpu"), model);
    }
    const double gbps = row.at("gbps"), memcpy_gbps = row.at("memcpy_gbps"),
                 other = row.at("stream_copy_gbps");
    EXPECT_GT(gbps, 0) << row;
    EXPECT_GT(memcpy_gbps, 0) << row;
#if defined(__x86_64__)
    EXPECT_GT(other, 0) << row;
    EXPECT_FALSE(row.at("stream_copy").get<std::string>().empty()) << row;
#endif
    EXPECT_NEAR(row.at("ratio").get<double>(), gbps / std::max(memcpy_gbps, other), 1e-9 * gbps) << row;
  }
  EXPECT_EQ(library_pairings, (std::set<std::string>{"half", "adjacent"}));
  EXPECT_EQ(seen_builtins, builtins);

  const auto text = run_ropecheck("bench --kernel-lib " + example + small);
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("CPU: " + (model.empty() ? std::string() : model)), std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("example_c (library)"), std::string::npos) << text.output;
}

TEST_F(bench_kernel_lib, isolate_never_runs_the_library_in_process) {
  const auto r = run_json("bench --kernel-lib " + example + small + " --isolate never", "run.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(rows("run.json").at(0).at("source"), "library, in process");
}

// A kernel's declared domain is kept: domain_limited needs Q and K (served by splitting the
// heads) and serves positions up to 1000000.
TEST_F(bench_kernel_lib, keeps_to_each_kernels_declared_domain) {
  const auto split = run_json(
      "bench --kernel-lib " + domain_declared + " --tokens 16 --heads 2 --head-dim 8 --repetitions 1",
      "run.json");
  ASSERT_EQ(split.exit_code, 0) << split.output;  // a refused call would be exit 1
  std::set<std::string> kernels;
  for (const auto& row : rows("run.json"))
    if (row.at("source") == "library") kernels.insert(row.at("kernel").get<std::string>());
  EXPECT_EQ(kernels, (std::set<std::string>{"domain_limited", "refuses_negatives"}));

  const auto one_head = run_json(
      "bench --kernel-lib " + domain_declared + " --tokens 16 --heads 1 --head-dim 8 --repetitions 1",
      "one.json");
  ASSERT_EQ(one_head.exit_code, 0) << one_head.output;
  EXPECT_NE(one_head.output.find("not measured: domain_limited: it needs Q and K"), std::string::npos)
      << one_head.output;
  for (const auto& row : rows("one.json")) EXPECT_NE(row.at("kernel"), "domain_limited");

  expect_bad_input(run_ropecheck("bench --kernel-lib " + domain_declared +
                                 " --kernel domain_limited --tokens 1000002 --heads 2 --head-dim 2"),
                   {"--tokens", "serves positions up to 1000000", "1000002 tokens reach position 1000001",
                    "domain_limited", "'1000002'"});
  expect_bad_input(
      run_ropecheck("bench --kernel-lib " + domain_declared + " --kernel domain_limited --heads 1"),
      {"--heads", "Q and K", "domain_limited", "'1'"});
}

TEST_F(bench_kernel_lib, kernel_flags_are_checked) {
  expect_bad_input(run_ropecheck("bench --kernel example_c"), {"--kernel", "needs --kernel-lib"});
  expect_bad_input(run_ropecheck("bench --kernel-lib " + example + " --kernel nope"), {"--kernel", "'nope'"});
  expect_bad_input(run_ropecheck("bench --kernel-lib " + example + " --kernel example_c --kernel example_c"),
                   {"--kernel", "twice"});
  expect_bad_input(run_ropecheck("bench --kernel-lib " + example + " --head-dim 63"), {"--head-dim", "odd"});
  expect_bad_input(run_ropecheck("bench --tokens 100000 --heads 4096 --head-dim 8192"), {"--tokens", "2^28"});
  expect_bad_input(run_ropecheck("bench --kernel-lib " + example + " --all"), {"--all"});
}

TEST_F(bench_kernel_lib, ratchet_fails_a_slowed_kernel_and_passes_the_same_build) {
  // Best of 3 rounds: the normal build's own runs then differ by far less than the 0.9 allowed.
  const std::string kernel = " --kernel throttled_c --tokens 64 --heads 4 --head-dim 64 --repetitions 3";
  const auto saved = run_json("bench --kernel-lib " + throttled + kernel, "base.json");
  ASSERT_EQ(saved.exit_code, 0) << saved.output;

  const auto slow = run_ropecheck("bench --kernel-lib " + throttled_slow + kernel + " --baseline " +
                                  path("base.json") + " --tolerance 0.5");
  EXPECT_EQ(slow.exit_code, 1) << slow.output;
  EXPECT_NE(slow.output.find("ratchet: FAIL"), std::string::npos) << slow.output;
  const auto regressed = slow.output.find("\nregressed  throttled_c (library)");
  ASSERT_NE(regressed, std::string::npos) << slow.output;
  // Regressed rows first: no "ok" row above them.
  const auto first_ok = slow.output.find("\nok ");
  if (first_ok != std::string::npos) {
    EXPECT_LT(regressed, first_ok) << slow.output;
  }

  const auto same = run_ropecheck("bench --kernel-lib " + throttled + kernel + " --baseline " +
                                  path("base.json") + " --tolerance 0.9");
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("ratchet: PASS"), std::string::npos) << same.output;
  EXPECT_EQ(same.output.find("\nregressed "), std::string::npos) << same.output;
}

TEST_F(bench_kernel_lib, ratchet_refuses_what_it_cannot_compare) {
  write_text("base.json",
             R"([{"source": "built-in", "kernel": "cache_simd", "dtype": "float32", "pairing": "half",
    "threads": 1, "bytes": 65536, "heads": 4, "head_dim": 64, "output_scale": 1.0, "ratio": 0.9}])");
  const std::string base = " --baseline " + path("base.json");
  for (const char* tolerance : {"0", "1", "1.5", "-0.1", "nan", "inf", "''"})
    expect_bad_input(run_ropecheck("bench" + base + " --tolerance " + tolerance), {"--tolerance", "(0, 1)"});
  expect_bad_input(run_ropecheck("bench --tolerance 0.1"), {"--tolerance", "needs --baseline"});

  write_text("object.json", "{}");
  expect_bad_input(run_ropecheck("bench --baseline " + path("object.json")),
                   {path("object.json"), "JSON", "array"});
  write_text("missing.json", R"([{"source": "built-in", "kernel": "cache_simd"}])");
  expect_bad_input(run_ropecheck("bench --baseline " + path("missing.json")),
                   {path("missing.json"), "[0].dtype", "missing"});
  write_text("negative.json",
             R"([{"source": "built-in", "kernel": "cache_simd", "dtype": "float32", "pairing": "half",
    "threads": 1, "bytes": 65536, "heads": 4, "head_dim": 64, "output_scale": 1.0, "ratio": -1}])");
  expect_bad_input(run_ropecheck("bench --baseline " + path("negative.json")),
                   {path("negative.json"), "[0].ratio", "-1"});
  write_text("twice.json",
             "[" + file_text(path("base.json")).substr(1, file_text(path("base.json")).size() - 2) + ", " +
                 file_text(path("base.json")).substr(1));
  expect_bad_input(run_ropecheck("bench --baseline " + path("twice.json")),
                   {path("twice.json"), "[1]", "repeats the row [0]"});

  // A saved run of another workload: its rows were not measured, so nothing is compared.
  expect_bad_input(run_ropecheck("bench --kernel-lib " + example +
                                 " --tokens 32 --heads 4 --head-dim 64 --repetitions 1" + base),
                   {path("base.json"), "[0]", "was not measured in this run", "cache_simd"});
}

}  // namespace
}  // namespace ropecheck::testing
