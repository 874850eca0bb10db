// The output rules (docs/cli.md, "Inputs and outputs") for every subcommand that writes a file, end to
// end through the executable: each output — the report flags, identify's --spec-out, reference
// and apply's --out, the gate's GTEST_SHARD_STATUS_FILE — is checked before the run, and a path
// that cannot be written (an input, another output, a FIFO or device, a symbolic link loop, a
// name too long, a missing folder, an empty value) is exit 2 with one line "ropecheck: …" and
// leaves the folder as it was. identify's degenerate data is exit 2 naming the file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli/cli_test_support.h"
#include "io/npy.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using testing::file_text;
using testing::expect_bad_input;
using testing::run_result;

run_result run(const std::string& args, const std::string& env = "") {
  return testing::run_ropecheck_prefixed(env + "timeout 60 ", args);
}


class OutputRules : public testing::scratch_dir_test {
 protected:
  void SetUp() override {
    scratch_dir_test::SetUp();
    write_text("spec.json", R"({"head_dim": 8, "rope_theta": 10000.0})");
    std::mt19937_64 rng(31);
    std::normal_distribution<float> normal;
    x_.resize(64 * 8);
    for (auto& v : x_) v = normal(rng);
    write_npy(path("x.npy"), from_float64(x_, {64, 1, 8}, dtype::float32));
    std::vector<double> positions(64);
    for (std::size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<double>(i * i);
    write_npy(path("pos.npy"), from_float64(positions, {64}, dtype::int64));
    const auto r = run("apply --kernel cache_scalar --spec " + path("spec.json") + " --x " + path("x.npy") +
                       " --pos " + path("pos.npy") + " --out " + path("y.npy"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_EQ(run(audit_args() + " --json " + path("saved.json")).exit_code, 0);
    // Named .npy: --out of reference and apply names that format.
    ASSERT_EQ(::mkfifo(path("fifo.npy").c_str(), 0600), 0);
    fs::create_symlink("/dev/null", path("device.npy"));
    fs::create_symlink("loop.npy", path("loop.npy"));
  }

  std::string inputs() const {
    return " --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " + path("pos.npy");
  }
  std::string audit_args() const { return "audit" + inputs() + " --y " + path("y.npy"); }
  std::string identify_args() const {
    return "identify --x " + path("x.npy") + " --pos " + path("pos.npy") + " --y " + path("y.npy");
  }

  // Every subcommand that writes, with its inputs and the flag that names a report file.
  std::vector<std::pair<std::string, std::string>> writers() const {
    return {{"gate --kernel cache_scalar --property norm_preserved", "--json"},
            {audit_args(), "--json"},
            {identify_args(), "--json"},
            {identify_args(), "--spec-out"},
            {"report " + path("saved.json"), "--html"},
            {"reference" + inputs(), "--out"},
            {"apply --kernel cache_scalar" + inputs(), "--out"}};
  }

  // Each entry's name and, for a regular file, its contents: what "unchanged" compares.
  std::map<std::string, std::string> snapshot() const {
    std::map<std::string, std::string> s;
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string name = e.path().filename().string();
      s[name] = e.is_symlink() ? "link" : e.is_regular_file() ? file_text(e.path().string()) : "other";
    }
    return s;
  }

  std::vector<double> x_;
};

// A path that is no regular file, or cannot be used at all, is refused by every writer.
TEST_F(OutputRules, UnusablePathsAreRefusedByEveryWriterBeforeTheRun) {
  const auto before = snapshot();
  const std::string too_long = std::string(252, 'n') + ".npy";  // 256 bytes: beyond NAME_MAX
  for (const auto& [command, flag] : writers()) {
    SCOPED_TRACE(command + " " + flag);
    expect_bad_input(run(command + " " + flag + " " + path("fifo.npy")), {flag, "is a FIFO"});
    expect_bad_input(run(command + " " + flag + " " + path("device.npy")), {flag, "is a character device"});
    expect_bad_input(run(command + " " + flag + " " + path("loop.npy")), {flag, "Too many levels of symbolic links"});
    expect_bad_input(run(command + " " + flag + " " + path(too_long)), {flag, "File name too long"});
    expect_bad_input(run(command + " " + flag + " " + path("nodir/r.npy")), {flag, "its folder does not exist"});
    expect_bad_input(run(command + " " + flag + " ''"), {flag, flag == "--out" ? "is not a .npy path" : "is empty"});
    EXPECT_EQ(snapshot(), before);
  }
}

// identify's outputs follow the rules --json had: no output onto an input, none shared, all
// or nothing.
TEST_F(OutputRules, IdentifyChecksEveryOutputBeforeReading) {
  const auto before = snapshot();
  expect_bad_input(run(identify_args() + " --spec-out " + path("x.npy")), {"--spec-out", "is the input file of --x"});
  expect_bad_input(run(identify_args() + " --json " + path("pos.npy")), {"--json", "is the input file of --pos"});
  expect_bad_input(run(identify_args() + " --markdown " + path("y.npy")), {"--markdown", "is the input file of --y"});
  expect_bad_input(run(identify_args() + " --spec-out " + path("s.json") + " --json " + path("s.json")),
                   {"--spec-out", "is the same file as the output of --json"});
  expect_bad_input(run(identify_args() + " --spec-out " + path("s.json") + " --junit " + path("nodir/r.xml")),
                   {"--junit", "its folder does not exist"});
  EXPECT_EQ(snapshot(), before);
  // Written, all of them, and the report's spec is the spec file's.
  const auto r = run(identify_args() + " --spec-out " + path("s.json") + " --json " + path("r.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(file_text(path("r.json")))["spec"], nlohmann::json::parse(file_text(path("s.json"))));
}

// GTEST_SHARD_STATUS_FILE is an output like the report files.
TEST_F(OutputRules, TheShardStatusFileIsCheckedAsAnOutput) {
  const auto before = snapshot();
  const std::string gate = "gate --kernel cache_scalar --property norm_preserved --json " + path("r.json");
  const auto status = [](const std::string& p) { return "GTEST_SHARD_STATUS_FILE='" + p + "' "; };
  expect_bad_input(run(gate, status("")), {"GTEST_SHARD_STATUS_FILE", "is empty"});
  expect_bad_input(run(gate, status(path("r.json"))), {"GTEST_SHARD_STATUS_FILE", "same file as the output of --json"});
  expect_bad_input(run(gate, status(path("fifo.npy"))), {"GTEST_SHARD_STATUS_FILE", "is a FIFO"});
  expect_bad_input(run(gate, status(path("device.npy"))), {"GTEST_SHARD_STATUS_FILE", "is a character device"});
  expect_bad_input(run(gate, status(path("loop.npy"))), {"GTEST_SHARD_STATUS_FILE", "Too many levels of symbolic links"});
  expect_bad_input(run(gate, status(path("nodir/status"))), {"GTEST_SHARD_STATUS_FILE", "its folder does not exist"});
  expect_bad_input(run(gate + " --baseline " + path("saved.json"), status(path("saved.json"))),
                   {"GTEST_SHARD_STATUS_FILE", "is the input file of --baseline"});
  EXPECT_EQ(snapshot(), before);
  // Made with the reports, after the run: bad input found during it leaves no status file.
  write_text("bad.json", "not json");
  const auto r = run(gate + " --baseline " + path("bad.json"), status(path("status")));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(fs::exists(path("status")));
  EXPECT_FALSE(fs::exists(path("r.json")));
}

// Two identify runs racing on the same outputs leave the files of one of them: the spec file
// and the report's spec agree (all are renamed under one lock on their folder).
TEST_F(OutputRules, RacingIdentifyRunsLeaveOneRunsSpecAndReport) {
  write_text("spec2.json", R"({"head_dim": 8, "rope_theta": 500000.0})");
  ASSERT_EQ(run("apply --kernel cache_scalar --spec " + path("spec2.json") + " --x " + path("x.npy") + " --pos " +
                path("pos.npy") + " --out " + path("y2.npy"))
                .exit_code,
            0);
  const std::string outputs = " --spec-out " + path("s.json") + " --json " + path("r.json") + " --markdown " +
                              path("r.md") + " > /dev/null";
  const std::string second = std::string(ROPECHECK_EXE) + " identify --x " + path("x.npy") + " --pos " +
                             path("pos.npy") + " --y " + path("y2.npy") + outputs;
  for (int round = 0; round < 8; ++round) {
    const auto r = run(identify_args() + outputs + " & " + second + "; wait");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto spec = nlohmann::json::parse(file_text(path("s.json")));
    EXPECT_EQ(nlohmann::json::parse(file_text(path("r.json")))["spec"], spec) << round;
    const bool first = spec["rope_theta"].get<double>() < 100000;
    EXPECT_NE(file_text(path("r.md")).find(first ? "base θ                   10000" : "base θ                   500000"),
              std::string::npos)
        << round << file_text(path("r.md"));
  }
}

// A name of 255 bytes is valid: written, with no temporary left beside it.
TEST_F(OutputRules, ANameOfNameMaxBytesIsWritten) {
  const std::string name = std::string(250, 'r') + ".json";
  const auto r = run(audit_args() + " --json " + path(name) + " --junit " + path(std::string(251, 'j') + ".xml"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto after = snapshot();
  EXPECT_TRUE(after.contains(name));
  for (const auto& [entry, contents] : after) EXPECT_EQ(entry.find(".ropecheck-tmp-"), std::string::npos) << entry;
}

// An existing read-only report is replaced (the folder's permission is what the rename needs)
// and stays read-only — as a user the file's mode binds (run as nobody when the test is root).
TEST_F(OutputRules, AReadOnlyReportIsReplacedAsAUser) {
  std::string as_user;
  fs::create_directory(path("out"));
  write_text("out/r.json", "old");
  ASSERT_EQ(::chmod(path("out/r.json").c_str(), 0444), 0);
  if (::geteuid() == 0) {
    if (std::system("command -v setpriv > /dev/null") != 0) GTEST_SKIP() << "no setpriv to run as a user";
    ASSERT_EQ(::chown(path("out").c_str(), 65534, 65534), 0);
    ASSERT_EQ(::chown(path("out/r.json").c_str(), 65534, 65534), 0);
    as_user = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    if (run("kernels", as_user).exit_code != 0) GTEST_SKIP() << "the user nobody cannot run " ROPECHECK_EXE;
  }
  const auto r = run(audit_args() + " --json " + path("out/r.json"), as_user);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(file_text(path("out/r.json")))["report"], "audit");
  struct stat info {};
  ASSERT_EQ(::stat(path("out/r.json").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0444u);
  EXPECT_EQ(std::distance(fs::directory_iterator(path("out")), fs::directory_iterator()), 1);
}

// Degenerate data: exit 2 naming the input file and why, never a spec with a null field.
TEST_F(OutputRules, IdentifyOfDataThatCannotDecideNamesTheFile) {
  std::vector<double> zero(x_.size(), 0.0), minus(x_.size());
  std::transform(x_.begin(), x_.end(), minus.begin(), [](double v) { return -v; });
  write_npy(path("zero.npy"), from_float64(zero, {64, 1, 8}, dtype::float32));
  write_npy(path("minus.npy"), from_float64(minus, {64, 1, 8}, dtype::float32));
  const auto before = snapshot();
  const auto identify = [&](const std::string& x, const std::string& y) {
    return run("identify --x " + path(x) + " --pos " + path("pos.npy") + " --y " + path(y) + " --spec-out " +
               path("s.json") + " --json " + path("r.json"));
  };
  expect_bad_input(identify("zero.npy", "zero.npy"), {"zero.npy: values: are all zero", "no angle can be read"});
  expect_bad_input(identify("x.npy", "minus.npy"), {"minus.npy: values: are -X", "no angle changes with the position"});
  expect_bad_input(identify("x.npy", "zero.npy"), {"zero.npy: values: are zero in most pairs where X is not"});
  EXPECT_EQ(snapshot(), before);
}

}  // namespace
}  // namespace ropecheck
