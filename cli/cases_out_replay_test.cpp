// Reproducible worst cases: `gate --cases-out DIR` writes a failure's worst case and shrunk
// counterexample as judged case files, and `ropecheck replay` runs each again and reproduces its
// error to the last bit. The kernel is the example C kernel built with float32 angles
// (examples/c_kernel/example_rope.c, EXAMPLE_FLOAT32_ANGLES: its error grows with the position),
// through the C ABI in a worker process; and a mutant, replayed by name without a library.
// What is compared comes from three places: the gate's JSON report (the property's
// worst/bound), the case file (each output's recorded kernel output and error) and the replay's
// own run of the kernel. The same for a seeded regression's norm_preserved failure (the float32
// recipe example's regressed build).
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_support.h"

namespace ropecheck {
namespace {

using testing::file_text;
const auto run = testing::run_ropecheck;

const std::string f32_angles_lib = FLOAT32_ANGLES_LIB;
const std::string recipe_regressed_lib = RECIPE_REGRESSED_LIB;

double hex_value(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  EXPECT_EQ(end, text.c_str() + text.size()) << "not a hex float: " << text;
  return v;
}

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

// The hex float after `label ` on the replay's "replay: worst error …" line.
double replayed(const std::string& output, const std::string& label) {
  const auto line = output.find("replay: worst error ");
  EXPECT_NE(line, std::string::npos) << output;
  if (line == std::string::npos) return 0;
  const auto at = output.find(label + " ", line);
  const auto start = at + label.size() + 1;
  return hex_value(output.substr(start, output.find(' ', start) - start));
}

std::vector<std::filesystem::path> files_ending(const std::filesystem::path& dir, const std::string& suffix) {
  std::vector<std::filesystem::path> out;
  if (!std::filesystem::exists(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().ends_with(suffix)) out.push_back(e.path());
  return out;
}

// The recorded output of largest error/bound in a case file.
nlohmann::json worst_output(const nlohmann::json& c) {
  nlohmann::json worst;
  double ratio = -1;
  for (const auto& o : c["outputs"]) {
    const double r = hex_value(o["error_over_bound"]);
    if (r > ratio) {
      ratio = r;
      worst = o;
    }
  }
  return worst;
}

class CasesOut : public testing::scratch_dir_test {};

TEST_F(CasesOut, ReplayReproducesTheWorstCaseAndTheCounterexampleToTheLastBit) {
  const auto gate = run("gate --kernel-lib " + f32_angles_lib + " --property within_bound_of_reference --cases-out " +
                        path("cases") + " --json " + path("report.json"));
  ASSERT_EQ(gate.exit_code, 1) << gate.output;
  const auto report = nlohmann::json::parse(file_text(path("report.json")));
  const auto worst_files = files_ending(path("cases"), "__within_bound_of_reference__float32__worst.json");
  ASSERT_EQ(worst_files.size(), 1u) << gate.output;
  const auto c = nlohmann::json::parse(file_text(worst_files[0]));
  const std::string kernel = c["kernel"];
  double reported = -1;
  for (const auto& p : report["kernels"][0]["properties"])
    if (p["name"] == "within_bound_of_reference/float32") reported = p["worst_over_bound"];
  ASSERT_GT(reported, 1) << "the property did not fail";

  // The case file holds the case the report's worst/bound came from: its worst output's ratio is
  // the report's, bit for bit, and that output is beyond its bound.
  const auto recorded = worst_output(c);
  EXPECT_TRUE(same_bits(hex_value(recorded["error_over_bound"]), reported))
      << recorded.dump() << " against the report's " << reported;
  // θ_j and A at full precision, Q and K, positions: the spec the call was made with.
  EXPECT_EQ(c["spec"]["theta"].size(), c["spec"]["rotary_dim"].get<std::size_t>() / 2);
  EXPECT_TRUE(std::string(c["spec"]["theta"][0]).starts_with("0x")) << c["spec"].dump();
  EXPECT_FALSE(c["positions"].empty());
  EXPECT_FALSE(c["q"]["values"].empty());

  // The replay runs the kernel again and measures the same error, to the last bit.
  const auto replay = run("replay " + worst_files[0].string() + " --kernel-lib " + f32_angles_lib);
  EXPECT_EQ(replay.exit_code, 1) << replay.output;  // an output beyond its bound
  EXPECT_TRUE(same_bits(replayed(replay.output, "error"), hex_value(recorded["error"]))) << replay.output;
  EXPECT_TRUE(same_bits(replayed(replay.output, "error/bound"), reported)) << replay.output;
  EXPECT_NE(replay.output.find("the kernel's outputs are the recorded ones, bit for bit"), std::string::npos)
      << replay.output;
  EXPECT_NE(replay.output.find("BEYOND"), std::string::npos) << replay.output;

  // The shrunk counterexample: a case beyond its bound, replayed the same.
  const auto shrunk = files_ending(path("cases"), "__within_bound_of_reference__float32__counterexample.json");
  ASSERT_EQ(shrunk.size(), 1u);
  const auto s = nlohmann::json::parse(file_text(shrunk[0]));
  const auto shrunk_worst = worst_output(s);
  EXPECT_GT(hex_value(shrunk_worst["error_over_bound"]), 1) << shrunk_worst.dump();
  const auto again = run("replay " + shrunk[0].string() + " --kernel-lib " + f32_angles_lib + " --kernel " + kernel);
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_TRUE(same_bits(replayed(again.output, "error"), hex_value(shrunk_worst["error"]))) << again.output;
}

// A seeded regression's case: the float32 recipe example built with its attention factor scaled
// by 1 + 2^-21 (EXAMPLE_REGRESSED) breaks norm_preserved; its case holds each pair's norm.
TEST_F(CasesOut, ARegressionsPairNormsReplayToTheLastBit) {
  const auto gate = run("gate --kernel-lib " + recipe_regressed_lib + " --property norm_preserved --cases-out " +
                        path("cases") + " --json " + path("report.json"));
  ASSERT_EQ(gate.exit_code, 1) << gate.output;
  const auto report = nlohmann::json::parse(file_text(path("report.json")));
  const auto worst = files_ending(path("cases"), "__norm_preserved__float32__worst.json");
  ASSERT_EQ(worst.size(), 1u) << gate.output;
  const auto c = nlohmann::json::parse(file_text(worst[0]));
  double reported = -1;
  for (const auto& p : report["kernels"][0]["properties"])
    if (p["name"] == "norm_preserved/float32") reported = p["worst_over_bound"];
  const auto recorded = worst_output(c);
  EXPECT_GE(recorded["partner"].get<int>(), 0) << recorded.dump();
  EXPECT_TRUE(same_bits(hex_value(recorded["error_over_bound"]), reported));
  const auto replay = run("replay " + worst[0].string() + " --kernel-lib " + recipe_regressed_lib);
  EXPECT_EQ(replay.exit_code, 1) << replay.output;
  EXPECT_TRUE(same_bits(replayed(replay.output, "error"), hex_value(recorded["error"]))) << replay.output;
  EXPECT_TRUE(same_bits(replayed(replay.output, "error/bound"), reported)) << replay.output;
  EXPECT_NE(replay.output.find("‖(y["), std::string::npos) << replay.output;
}

// A mutant's case replays by name, without a library; a correct kernel on the same case passes.
TEST_F(CasesOut, AMutantCaseReplaysByNameAndACorrectKernelPassesIt) {
  const auto gate = run("gate --mutant float32_angles --property within_bound_of_reference --cases-out " +
                        path("cases"));
  ASSERT_EQ(gate.exit_code, 0) << gate.output;  // the mutant killed: the gate passes
  const auto worst = files_ending(path("cases"), "__within_bound_of_reference__float32__worst.json");
  ASSERT_EQ(worst.size(), 1u) << gate.output;
  const auto c = nlohmann::json::parse(file_text(worst[0]));
  const auto replay = run("replay " + worst[0].string());
  EXPECT_EQ(replay.exit_code, 1) << replay.output;
  EXPECT_TRUE(same_bits(replayed(replay.output, "error"), hex_value(worst_output(c)["error"]))) << replay.output;
  const auto correct = run("replay " + worst[0].string() + " --kernel on_the_fly_scalar");
  EXPECT_EQ(correct.exit_code, 0) << correct.output;
  EXPECT_NE(correct.output.find("differ from the recorded ones"), std::string::npos) << correct.output;
}

// Bad input: exit 2, one line naming the flag or the file's field; nothing left behind.
TEST_F(CasesOut, BadInputIsOneLine) {
  write_text("file", "");
  testing::expect_bad_input(run("gate --kernel on_the_fly_scalar --property within_bound_of_reference --cases-out " +
                                path("file")),
                            {"--cases-out", "not a directory"});
  write_text("case.json", R"({"judged_case": 1, "kernel": "on_the_fly_scalar", "property": "p", "dtype": "float32",
    "direction": "forward", "spec": {"pairing": "half", "head_dim": 2, "rotary_dim": 2, "base": "10000",
    "scaling": "none", "theta": ["0x1p+0"], "attention_factor": "0x1p+0"}, "positions": [0],
    "q": {"heads": 1, "values": ["0x1p+0", "0x0p+0"]}, "k": {"heads": 0, "values": []}, "bound": "b", "outputs": []})");
  testing::expect_bad_input(run("replay " + path("case.json")), {"case.json", "spec.base", "10000"});
}

}  // namespace
}  // namespace ropecheck
