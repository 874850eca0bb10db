// The fifteen ways a careful new user broke ropecheck, end to end through the
// executable, and their siblings in the other subcommands: each bad input is exit 2 with one
// line "ropecheck: …" naming the file (or flag), the field and the value, and leaves no output
// behind; every report the tool writes, `ropecheck report` reads back with the saved verdict.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli/cli_test_support.h"
#include "io/npy.h"
#include "io/safetensors.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using testing::file_text;
using testing::expect_bad_input;
using testing::run_result;

// Every run under timeout(1): a hang is exit 124, not a stuck test.
run_result run(const std::string& args) { return testing::run_ropecheck_with_timeout(args, 60); }


class HostileInputs : public testing::scratch_dir_test {
 protected:
  void SetUp() override {
    scratch_dir_test::SetUp();
    write_text("spec.json", R"({"head_dim": 8, "rope_theta": 10000.0})");
    write_inputs(1.0);
  }

  // X [4 tokens, 1 head, 8] of N(0, 1)·scale in float32, positions 0 … 3, and Y = a correct
  // kernel's output (`apply`), so the audit passes.
  void write_inputs(double scale) {
    std::mt19937_64 rng(13);
    std::normal_distribution<float> normal;
    std::vector<double> x(32);
    for (auto& v : x) v = static_cast<float>(normal(rng) * scale);
    write_npy(path("x.npy"), from_float64(x, {4, 1, 8}, dtype::float32));
    const std::vector<double> positions = {0, 1, 2, 3};
    write_npy(path("pos.npy"), from_float64(positions, {4}, dtype::int64));
    const auto r = run("apply --kernel cache_scalar --spec " + path("spec.json") + " --x " + path("x.npy") +
                       " --pos " + path("pos.npy") + " --out " + path("y.npy"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  std::string audit_args() const {
    return "audit --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " + path("pos.npy");
  }
  run_result audit(const std::string& extra) const { return run(audit_args() + " " + extra); }

  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  const std::vector<std::string> inputs_only = {"pos.npy", "spec.json", "x.npy", "y.npy"};
};

// §1
TEST_F(HostileInputs, AFifoIsRefusedNamingItAsYXAndSpec) {
  ASSERT_EQ(::mkfifo(path("f.npy").c_str(), 0600), 0);
  expect_bad_input(audit("--y " + path("f.npy")), {"f.npy", "is a FIFO"});
  expect_bad_input(run("audit --spec " + path("spec.json") + " --x " + path("f.npy") + " --pos " +
                       path("pos.npy") + " --y " + path("y.npy")),
                   {"f.npy", "is a FIFO"});
  ASSERT_EQ(::mkfifo(path("f.json").c_str(), 0600), 0);
  expect_bad_input(run("audit --spec " + path("f.json") + " --x " + path("x.npy") + " --pos " +
                       path("pos.npy") + " --y " + path("y.npy")),
                   {"f.json", "is a FIFO"});
  // Siblings: the report reader, the baseline, a kernel library.
  expect_bad_input(run("report " + path("f.json")), {"f.json", "is a FIFO"});
  expect_bad_input(run("gate --baseline " + path("f.json") + " --kernel cache_scalar"), {"f.json", "is a FIFO"});
  expect_bad_input(run("gate --kernel-lib " + path("f.npy")), {"f.npy", "is a FIFO"});
}

// §2
TEST_F(HostileInputs, AnEndlessDeviceIsRefusedBeforeReading) {
  for (const char* device : {"/dev/zero", "/dev/urandom"}) {
    for (const char* name : {"z.npy", "z.safetensors"}) {
      fs::remove(path(name));
      fs::create_symlink(device, path(name));
      expect_bad_input(audit("--y " + path(name)), {name, "is a character device"});
    }
  }
  fs::remove(path("z.npy"));
  fs::create_symlink("/dev/zero", path("z.json"));
  expect_bad_input(run("report " + path("z.json")), {"z.json", "is a character device"});
}

// §3
TEST_F(HostileInputs, ANumberBeyondDoubleNamesFileAndField) {
  write_text("spec.json", R"({"head_dim": 8, "rope_theta": 1e999})");
  expect_bad_input(audit("--y " + path("y.npy")), {"spec.json", "field 'rope_theta'", "1e999"});
  write_text("spec.json", R"({"head_dim": 8, "rope_scaling": {"rope_type": "linear", "factor": 1e400}})");
  expect_bad_input(audit("--y " + path("y.npy")), {"spec.json", "field 'rope_scaling.factor'", "1e400"});
}

// §4
TEST_F(HostileInputs, ADirectoryAsSpecIsNamed) {
  fs::create_directory(path("d"));
  expect_bad_input(run("audit --spec " + path("d") + " --x " + path("x.npy") + " --pos " + path("pos.npy") +
                       " --y " + path("y.npy")),
                   {path("d"), "is a directory"});
  expect_bad_input(run("report " + path("d")), {path("d"), "is a directory"});
}

// §5
TEST_F(HostileInputs, NoOutputIsLeftBehindOnExit2) {
  expect_bad_input(audit("--y " + path("y.npy") + " --json " + path("ok.json") + " --html " +
                         path("missing-dir/r.html")),
                   {"r.html", "--html", "folder does not exist"});
  EXPECT_EQ(entries(), inputs_only);
  // Siblings: gate and report check their outputs before the run; apply and reference --out.
  expect_bad_input(run("gate --kernel cache_scalar --json " + path("ok.json") + " --junit " + path("missing-dir/r.xml")),
                   {"--junit", "folder does not exist"});
  expect_bad_input(run("apply --kernel cache_scalar --spec " + path("spec.json") + " --x " + path("x.npy") +
                       " --pos " + path("pos.npy") + " --out " + path("missing-dir/y2.npy")),
                   {"--out", "folder does not exist"});
  // --out names the format it gets.
  expect_bad_input(run("reference --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " +
                       path("pos.npy") + " --out " + path("y.safetensors")),
                   {"--out", "is not a .npy path", "y.safetensors"});
  EXPECT_EQ(entries(), inputs_only);
}

// §6
TEST_F(HostileInputs, TwoOutputsOnOnePathAreRefused) {
  fs::create_directory(path("out"));
  expect_bad_input(audit("--y " + path("y.npy") + " --json " + path("out/same") + " --html " + path("out/same")),
                   {"out/same", "--html", "same file as the output of --json"});
  expect_bad_input(audit("--y " + path("y.npy") + " --json " + path("out/same") + " --markdown " +
                         path("out/../out/same")),
                   {"--markdown", "same file as the output of --json"});
  EXPECT_TRUE(fs::is_empty(path("out")));
}

// §7
TEST_F(HostileInputs, ToleranceMustBeFiniteAndPositive) {
  for (const char* bad : {"inf", "nan", "-1", "0", "-inf"})
    expect_bad_input(audit("--y " + path("y.npy") + " --tolerance " + bad + " --json " + path("r.json")),
                     {"--tolerance", "is not a finite number > 0"});
  EXPECT_EQ(entries(), inputs_only);
}

// §7: every report the tool writes, it reads back: same JSON, same verdict as exit code.
void expect_round_trip(const std::string& report_path, int verdict_exit, const std::string& again_path) {
  const auto r = run("report " + report_path + " --json " + again_path);
  EXPECT_EQ(r.exit_code, verdict_exit) << r.output;
  EXPECT_EQ(nlohmann::json::parse(file_text(report_path)), nlohmann::json::parse(file_text(again_path)));
}

TEST_F(HostileInputs, EveryAuditReportReadsBack) {
  // Passing, with a tolerance, failing, and failing with a non-finite error (a zero X pair
  // rotated to a non-zero Y: error / ‖pair‖ is infinite).
  ASSERT_EQ(audit("--y " + path("y.npy") + " --json " + path("pass.json")).exit_code, 0);
  expect_round_trip(path("pass.json"), 0, path("pass2.json"));
  ASSERT_EQ(audit("--y " + path("y.npy") + " --tolerance 3 --json " + path("tol.json")).exit_code, 0);
  expect_round_trip(path("tol.json"), 0, path("tol2.json"));
  ASSERT_EQ(audit("--y " + path("x.npy") + " --json " + path("fail.json")).exit_code, 1);
  expect_round_trip(path("fail.json"), 1, path("fail2.json"));

  std::vector<double> x(32, 0.0), y(32, 0.0);
  y[0] = 1;  // pair (0, 4) of token 0 is zero in X
  write_npy(path("x0.npy"), from_float64(x, {4, 1, 8}, dtype::float32));
  write_npy(path("y0.npy"), from_float64(y, {4, 1, 8}, dtype::float32));
  const auto r = run("audit --spec " + path("spec.json") + " --x " + path("x0.npy") + " --pos " + path("pos.npy") +
                     " --y " + path("y0.npy") + " --json " + path("inf.json"));
  ASSERT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(nlohmann::json::parse(file_text(path("inf.json")))["max_rel_pair_error"], "Infinity");
  expect_round_trip(path("inf.json"), 1, path("inf2.json"));
}

// §8
TEST_F(HostileInputs, AKernelLibraryBreakingTheNameRuleIsRefused) {
  expect_bad_input(run("gate --kernel-lib " MISNAMED_BAD_NAME_LIB),
                   {MISNAMED_BAD_NAME_LIB, "field 'name'", "bad name; rm -rf /\\x0a<script>"});
  expect_bad_input(run("gate --kernel-lib " MISNAMED_DUPLICATE_LIB),
                   {MISNAMED_DUPLICATE_LIB, "a second kernel of this name", "fine_name"});
  // Siblings: one library twice (its kernels would be gated twice), a kernel or mutant named twice.
  expect_bad_input(run("gate --kernel-lib " EXAMPLE_FLOAT32_ANGLES_LIB " --kernel-lib " EXAMPLE_FLOAT32_ANGLES_LIB),
                   {"--kernel-lib", "a kernel of this name is also in"});
  expect_bad_input(run("gate --kernel cache_scalar --kernel cache_scalar"), {"--kernel", "is given twice", "cache_scalar"});
  expect_bad_input(run("gate --mutant base_ignored --mutant base_ignored"), {"--mutant", "is given twice"});
}

// §9: the replay line of a --kernel-lib kernel names its library and replays the failure.
TEST_F(HostileInputs, TheReplayLineReplays) {
  const auto gate = run("gate --kernel-lib " EXAMPLE_FLOAT32_ANGLES_LIB " --json " + path("g.json"));
  ASSERT_EQ(gate.exit_code, 1) << gate.output;
  const auto report = nlohmann::json::parse(file_text(path("g.json")));
  std::string replay;
  for (const auto& k : report["kernels"])
    for (const auto& p : k["properties"])
      if (p["verdict"] == "fail" && replay.empty()) replay = p["replay"].get<std::string>();
  ASSERT_FALSE(replay.empty());
  EXPECT_NE(replay.find("--kernel-lib " + fs::absolute(EXAMPLE_FLOAT32_ANGLES_LIB).lexically_normal().string()),
            std::string::npos) << replay;
  expect_round_trip(path("g.json"), 1, path("g2.json"));
  // Run it as a shell would, with this build's ropecheck first on PATH.
  const std::string command = "cd " + path("") + " && PATH=" + fs::path(ROPECHECK_EXE).parent_path().string() +
                              ":$PATH " + replay + " > /dev/null 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << replay;
  EXPECT_EQ(WEXITSTATUS(status), 1) << replay;  // fails again; exit 2 would be a broken line
}

// §10
TEST_F(HostileInputs, ASeedOutOfRangeIsRefused) {
  for (const char* bad : {"-1", "1180591620717411303424", "18446744073709551616", "1e3", "0x10", "12abc"})
    expect_bad_input(run(std::string("gate --kernel cache_scalar --seed ") + bad), {"--seed", "is not an integer"});
}

// §11
TEST_F(HostileInputs, DuplicateKeysAreRefusedNamingTheKey) {
  write_text("spec.json", R"({"head_dim":32,"head_dim":64})");
  expect_bad_input(audit("--y " + path("y.npy")), {"spec.json", "field 'head_dim'", "duplicate key"});
  const std::string entry = R"({"dtype": "F32", "shape": [4, 1, 8], "data_offsets": [0, 128]})";
  std::vector<std::byte> bytes = encode_safetensors({{"y", read_npy(path("y.npy"))}});
  // Rewrite the header with the tensor named twice.
  const std::string header = "{\"y\": " + entry + ", \"y\": " + entry + "}";
  std::vector<std::byte> dup;
  for (int i = 0; i < 8; ++i) dup.push_back(static_cast<std::byte>((header.size() >> (8 * i)) & 0xff));
  for (char c : header) dup.push_back(static_cast<std::byte>(c));
  dup.insert(dup.end(), bytes.end() - 128, bytes.end());
  write_text("spec.json", R"({"head_dim": 8})");
  write_text("dup.safetensors", std::string(reinterpret_cast<const char*>(dup.data()), dup.size()));
  expect_bad_input(audit("--y " + path("dup.safetensors")), {"dup.safetensors", "header field 'y'", "duplicate key"});
}

// §12
TEST_F(HostileInputs, AnOutputThatIsAnInputIsRefused) {
  const std::string y_before = file_text(path("y.npy"));
  expect_bad_input(audit("--y " + path("y.npy") + " --json " + path("y.npy")), {"--json", "is the input file of --y"});
  fs::create_symlink(path("y.npy"), path("link.json"));
  expect_bad_input(audit("--y " + path("y.npy") + " --html " + path("link.json")), {"--html", "is the input file of --y"});
  expect_bad_input(audit("--y " + path("y.npy") + " --junit " + path("spec.json")), {"--junit", "input file of --spec"});
  EXPECT_EQ(file_text(path("y.npy")), y_before);
  // Siblings: apply and reference --out, report's output, gate's --baseline.
  expect_bad_input(run("apply --kernel cache_scalar --spec " + path("spec.json") + " --x " + path("x.npy") +
                       " --pos " + path("pos.npy") + " --out " + path("x.npy")),
                   {"--out", "is the input file of --x"});
  expect_bad_input(run("reference --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " +
                       path("pos.npy") + " --out " + path("pos.npy")),
                   {"--out", "is the input file of --pos"});
  ASSERT_EQ(audit("--y " + path("y.npy") + " --json " + path("r.json")).exit_code, 0);
  expect_bad_input(run("report " + path("r.json") + " --json " + path("r.json")), {"--json", "input file of IN.json"});
  expect_bad_input(run("gate --kernel cache_scalar --baseline " + path("r.json") + " --json " + path("r.json")),
                   {"--json", "input file of --baseline"});
}

// §13: for tiny inputs the absolute (underflow) term decides, and the summary and the HTML show it.
TEST_F(HostileInputs, TheSummaryShowsTheToleranceApplied) {
  write_inputs(1e-40);
  const auto r = audit("--y " + path("y.npy") + " --json " + path("r.json") + " --html " + path("r.html"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("tolerance per output"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1.401e-45 absolute (float32 underflow)"), std::string::npos) << r.output;
  // The HTML page states the same terms.
  const std::string html = file_text(path("r.html"));
  EXPECT_NE(html.find("tolerance per output"), std::string::npos);
  EXPECT_NE(html.find("1.401e-45 absolute (float32 underflow)"), std::string::npos);
  EXPECT_NE(html.find("for the oracle&apos;s own error"), std::string::npos);
  EXPECT_NE(r.output.find("at the worst output      error"), std::string::npos) << r.output;
  const auto report = nlohmann::json::parse(file_text(path("r.json")));
  EXPECT_EQ(report["tolerance_terms"]["absolute"].get<double>(), std::ldexp(1.0, -149));
  const double error = report["worst"]["error"], allowed = report["worst"]["allowed"];
  EXPECT_GT(error, 0);
  EXPECT_LE(error, allowed);
  // Without the absolute term, this error would be far beyond 2.5 units of the pair norm.
  EXPECT_GT(report["max_rel_pair_error_units"].get<double>(), 2.5);
}

// §14
TEST_F(HostileInputs, ReportExitsWithTheSavedVerdict) {
  ASSERT_EQ(audit("--y " + path("x.npy") + " --json " + path("fail.json")).exit_code, 1);
  EXPECT_EQ(run("report " + path("fail.json")).exit_code, 1);
  ASSERT_EQ(audit("--y " + path("y.npy") + " --json " + path("pass.json")).exit_code, 0);
  EXPECT_EQ(run("report " + path("pass.json")).exit_code, 0);
}

// §15
TEST_F(HostileInputs, UsageErrorsAreOnePrefixedLineNamingTheWord) {
  expect_bad_input(run("frobnicate"), {"unknown subcommand 'frobnicate'"});
  expect_bad_input(audit("--y " + path("y.npy") + " --frobnicate 3"), {"--frobnicate"});
  expect_bad_input(run("audit"), {"--spec"});
  expect_bad_input(run(""), {"subcommand"});
  expect_bad_input(run("gate --profile fast"), {"fast"});
  EXPECT_EQ(run("--help").exit_code, 0);
}

// Also seen: two audits racing on the same report paths leave the files of one run, never the
// JSON of one beside the HTML of the other (the renames happen under a lock on the folder).
TEST_F(HostileInputs, TwoRacingRunsLeaveTheOutputsOfOne) {
  const std::string outputs = " --json " + path("r.json") + " --html " + path("r.html") + " --markdown " + path("r.md");
  const std::string passing = ROPECHECK_EXE " " + audit_args() + " --y " + path("y.npy") + outputs;
  const std::string failing = ROPECHECK_EXE " " + audit_args() + " --y " + path("x.npy") + outputs;
  for (int round = 0; round < 8; ++round) {
    const std::string both = "(" + passing + " >/dev/null 2>&1 & " + failing + " >/dev/null 2>&1 & wait)";
    ASSERT_EQ(std::system(both.c_str()), 0);
    const bool json_passed = nlohmann::json::parse(file_text(path("r.json")))["verdict"] == "pass";
    const bool html_passed = file_text(path("r.html")).find("ropecheck audit: pass") != std::string::npos;
    const bool md_passed = file_text(path("r.md")).find("audit: ✅ pass") != std::string::npos;
    EXPECT_EQ(json_passed, html_passed) << "round " << round;
    EXPECT_EQ(json_passed, md_passed) << "round " << round;
  }
  EXPECT_EQ(entries(), (std::vector<std::string>{"pos.npy", "r.html", "r.json", "r.md", "spec.json", "x.npy", "y.npy"}));
}

// Sibling of §13: negative positions (allowed, a finding) label their |position| bucket in the
// HTML plot by |m|, not by log2 of a negative number.
TEST_F(HostileInputs, NegativePositionsRenderInTheHtmlPlot) {
  const std::vector<double> positions = {-3, -2, -1, 0};
  write_npy(path("pos.npy"), from_float64(positions, {4}, dtype::int64));
  ASSERT_EQ(run("apply --kernel on_the_fly_scalar --spec " + path("spec.json") + " --x " + path("x.npy") +
                " --pos " + path("pos.npy") + " --out " + path("y.npy")).exit_code, 0);
  const auto r = audit("--y " + path("y.npy") + " --html " + path("r.html"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string html = file_text(path("r.html"));
  EXPECT_NE(html.find(">2^1<"), std::string::npos);
  EXPECT_EQ(html.find("2^-2147483648"), std::string::npos);
}

// A saved report with a repeated key or a number beyond double is named like a spec.
TEST_F(HostileInputs, AMalformedSavedReportNamesFileAndField) {
  write_text("r.json", R"({"report": "audit", "report": "gate"})");
  expect_bad_input(run("report " + path("r.json")), {"r.json", "field 'report'", "duplicate key"});
  write_text("r.json", R"({"report": "gate", "seed": 1e999})");
  expect_bad_input(run("report " + path("r.json")), {"r.json", "field 'seed'", "1e999"});
  // Integers are whole and in range, not truncated or wrapped (sibling of §10).
  // One property is enough for a valid saved report (the whole gate of a kernel is ~30 s).
  ASSERT_EQ(run("gate --kernel cache_scalar --property norm_preserved --json " + path("g.json")).exit_code, 0);
  auto gate = nlohmann::json::parse(file_text(path("g.json")));
  gate["seed"] = -1;
  write_text("r.json", gate.dump());
  expect_bad_input(run("report " + path("r.json")), {"r.json", "field 'seed'", "-1"});
  gate["seed"] = 7;
  gate["kernels"][0]["properties"][0]["cases"] = 1.5;
  write_text("r.json", gate.dump());
  expect_bad_input(run("report " + path("r.json")), {"r.json", "field 'cases'", "1.5"});
  write_text("r.json", R"({"report": "audit", "tolerance_units": null})");
  expect_bad_input(run("report " + path("r.json")), {"r.json", "field"});
}

}  // namespace
}  // namespace ropecheck
