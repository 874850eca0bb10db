// What a kernel under test can do to a run, end to end (abi/kernel_worker.h): a library kernel
// that crashes, aborts, exits (with status 0 too) or hangs ends its own worker process, and the
// gate reports it as that kernel's verdict (crashed, timed_out) with the call that was running,
// keeps the other kernels' results, writes every report and exits 1; a library that cannot be
// loaded (a constructor that exits, SIZE_MAX kernels, a truncated file) is exit 2 naming it; and
// the saved call replays the crash, in process with --isolate never.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_test_support.h"
#include "io/npy.h"

namespace ropecheck {
namespace {

using testing::expect_bad_input;
using testing::file_text;
using testing::run_result;

run_result run(const std::string& args) { return testing::run_ropecheck_with_timeout(args, 300); }

std::string library(const std::string& variant) { return std::string(HOSTILE_LIB_DIR) + "/libhostile_" + variant + ".so"; }

class KernelIsolation : public testing::scratch_dir_test {};

TEST_F(KernelIsolation, AMisbehavingKernelGetsItsVerdictAndTheOtherKernelKeepsItsOwn) {
  const struct {
    std::string variant, verdict, cause, options;
  } cases[] = {
      {"segv", "crashed", "SIGSEGV", ""},
      {"abort", "crashed", "SIGABRT", ""},
      {"exit0", "crashed", "exit status 0", ""},
      {"exit3", "crashed", "exit status 3", ""},
      {"hang", "timed_out", "no answer within 1 s", " --kernel-timeout 1"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.variant);
    const std::string json = path(c.variant + ".json"), junit = path(c.variant + ".xml");
    const run_result r = run("gate --kernel-lib " + library(c.variant) + " --kernel-lib " + EXAMPLE_KERNEL_LIB +
                             c.options + " --json " + json + " --junit " + junit);
    // Never exit 0, never a signal or exit 3: the parent alone decides, after every report.
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("hostile: " + c.verdict), std::string::npos) << r.output;
    ASSERT_TRUE(std::filesystem::exists(json)) << r.output;
    EXPECT_TRUE(std::filesystem::exists(junit));
    const auto report = nlohmann::json::parse(file_text(json));
    ASSERT_EQ(report["kernels"].size(), 2u);
    const auto& hostile = report["kernels"][0];
    EXPECT_EQ(hostile["name"], "hostile");
    EXPECT_EQ(hostile["verdict"], c.verdict);
    EXPECT_NE(hostile["ended"]["cause"].get<std::string>().find(c.cause), std::string::npos) << hostile["ended"];
    // The third call of the gate falls in its first property.
    EXPECT_EQ(hostile["ended"]["property"], "within_bound_of_reference/float32");
    EXPECT_EQ(hostile["ended"]["case"]["case"], "ropecheck_kernel_call");
    EXPECT_EQ(report["kernels"][1]["name"], "example_c");
    EXPECT_EQ(report["kernels"][1]["verdict"], "pass");
    // The saved report reads back (its schema and invariants, reports/saved_report.h).
    const run_result again = run("report " + json);
    EXPECT_EQ(again.exit_code, 1) << again.output;
  }
}

TEST_F(KernelIsolation, ALibraryThatCannotBeLoadedIsExitTwoNamingIt) {
  const std::string library_bytes = file_text(library("segv"));
  std::ofstream(path("truncated.so"), std::ios::binary) << library_bytes.substr(0, 3000);
  for (const std::string& lib : {library("ctor_exit"), library("count_max"), path("truncated.so")}) {
    for (const std::string command : {"gate --kernel-lib ", "kernels --kernel-lib "}) {
      const run_result r = run(command + lib);
      EXPECT_EQ(r.exit_code, 2) << command << lib << ": " << r.output;
      EXPECT_EQ(r.output.rfind("ropecheck: " + lib + ": ", 0), 0u) << r.output;
      EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    }
  }
}

TEST_F(KernelIsolation, ALibraryThatNeverFinishesLoadingIsExitTwoAfterTheTimeout) {
  const run_result r = run("gate --kernel-timeout 1 --kernel-lib " + library("ctor_hang"));
  expect_bad_input(r, {library("ctor_hang"), "did not finish loading within 1 s"});
}

TEST_F(KernelIsolation, ApplyOfACrashingKernelFailsAndWritesNothing) {
  // head_dim 8: rotary_dim/2 = 4 is not a multiple of 8, where the segv_partial kernel crashes.
  std::ofstream(path("spec.json")) << R"({"head_dim": 8, "rope_theta": 10000.0})";
  const std::vector<double> x(4 * 8, 0.5), positions = {0, 1, 2, 3};
  write_npy(path("x.npy"), from_float64(x, {4, 1, 8}, dtype::float32));
  write_npy(path("pos.npy"), from_float64(positions, {4}, dtype::int64));
  const run_result r = run("apply --kernel hostile --kernel-lib " + library("segv_partial") + " --spec " +
                           path("spec.json") + " --x " + path("x.npy") + " --pos " + path("pos.npy") + " --out " +
                           path("y.npy"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.rfind("ropecheck: --kernel: hostile crashed: signal 11 (SIGSEGV)", 0), 0u) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("y.npy")));
}

TEST_F(KernelIsolation, TheSavedCallReplaysTheCrashInAWorkerAndInProcess) {
  const std::string lib = library("segv_partial"), json = path("r.json");
  const run_result gate = run("gate --kernel-lib " + lib + " --json " + json);
  ASSERT_EQ(gate.exit_code, 1) << gate.output;
  const run_result isolated = run("replay " + json + " --kernel-lib " + lib);
  EXPECT_EQ(isolated.exit_code, 1) << isolated.output;
  EXPECT_NE(isolated.output.find("crashed — signal 11 (SIGSEGV)"), std::string::npos) << isolated.output;
  // In process the crash is ropecheck's own: the shell reports 128 + SIGSEGV (under
  // AddressSanitizer, its report of the SEGV in the kernel instead).
  const run_result in_process = run("replay " + json + " --kernel-lib " + lib + " --isolate never");
  EXPECT_TRUE(in_process.exit_code == 128 + 11 ||
              in_process.output.find("AddressSanitizer: SEGV on unknown address") != std::string::npos)
      << in_process.exit_code << ": " << in_process.output;
  // The same call, saved alone as a case file, on a correct kernel returns OK: it is a valid call.
  std::ofstream(path("case.json")) << nlohmann::json::parse(file_text(json))["kernels"][0]["ended"]["case"].dump();
  const run_result correct = run("replay " + path("case.json") + " --kernel-lib " + EXAMPLE_KERNEL_LIB +
                                 " --kernel example_c --isolate never");
  EXPECT_EQ(correct.exit_code, 0) << correct.output;
  EXPECT_NE(correct.output.find("returned status 0"), std::string::npos) << correct.output;
  // A case edited to reach past its saved memory is refused, not replayed.
  auto edited = nlohmann::json::parse(file_text(path("case.json")));
  edited["tokens"] = 100000;
  std::ofstream(path("edited.json")) << edited.dump();
  expect_bad_input(run("replay " + path("edited.json") + " --kernel-lib " + EXAMPLE_KERNEL_LIB + " --kernel example_c"),
                   {"edited.json", "regions"});
  std::ofstream(path("wrong_type.json")) << R"({"case": 1})";
  expect_bad_input(run("replay " + path("wrong_type.json") + " --kernel-lib " + lib), {"wrong_type.json"});
}

// --isolate always: the built-in kernels through the C ABI in a worker, as a library's are.
// They pass as in process; the one-rounding kernel keeps its claim (its property runs, not
// skipped), a cache kernel declares its table's domain (positions m >= 0); only the gate takes
// the mode.
TEST_F(KernelIsolation, IsolateAlwaysRunsTheBuiltInsInAWorker) {
  const auto precise = run("gate --isolate always --kernel precise_simd --property within_bound_of_reference "
                           "--property rounded_once_within_half_ulp --json " + path("p.json"));
  EXPECT_EQ(precise.exit_code, 0) << precise.output;
  const auto j = nlohmann::json::parse(file_text(path("p.json")));
  bool rounded_once_ran = false;
  for (const auto& p : j["kernels"][0]["properties"])
    if (p["name"] == "rounded_once_within_half_ulp/float32") rounded_once_ran = p["verdict"] == "pass";
  EXPECT_TRUE(rounded_once_ran) << precise.output;
  const auto cache = run("gate --isolate always --kernel cache_scalar --property within_bound_of_reference");
  EXPECT_EQ(cache.exit_code, 0) << cache.output;
  EXPECT_NE(cache.output.find("domain of cache_scalar: positions m >= 0"), std::string::npos) << cache.output;
  expect_bad_input(run("apply --isolate always --kernel cache_scalar --spec s.json --x x.npy --pos p.npy --out y.npy"),
                   {"--isolate"});
}

}  // namespace
}  // namespace ropecheck
