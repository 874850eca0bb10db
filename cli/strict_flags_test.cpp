// Flags read strictly, one-line errors, and no gigabyte table for one large position, end to
// end through the executable:
// * every numeric flag of every subcommand is a plain decimal, checked, never clamped: a
//   leading zero (read as octal elsewhere), hex, a space, a sign, an empty value or a value
//   past the flag's range is exit 2 with one line "ropecheck: <flag>: …";
// * RC_PARAMS is read strictly before the gate prints a line: a malformed value, a key
//   RapidCheck does not have or ropecheck does not honour, and max_success=0 are exit 2 alone;
//   `bench` errors are "ropecheck: …" like every subcommand's;
// * a cache kernel's table for 32 tokens with one position 16 777 215 is three rows, so
//   `apply` runs under a 2 GB address-space limit and writes the on-the-fly kernel's bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cli/cli_test_support.h"
#include "io/npy.h"

namespace ropecheck {
namespace {

using testing::file_text;
using testing::run_result;

run_result run(const std::string& args) { return testing::run_ropecheck_with_timeout(args, 120); }

// Exit 2 and exactly one line, "ropecheck: …", containing `fragment`.
void expect_one_line_refusal(const run_result& r, const std::string& fragment, const std::string& what) {
  EXPECT_EQ(r.exit_code, 2) << what << "\n" << r.output;
  EXPECT_EQ(r.output.rfind("ropecheck: ", 0), 0u) << what << "\n" << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << what << "\n" << r.output;
  EXPECT_NE(r.output.find(fragment), std::string::npos) << what << " lacks \"" << fragment << "\"\n" << r.output;
}

// `value` as one shell word.
std::string quoted(const std::string& value) {
  std::string word = "'";
  for (const char c : value) word += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return word + "'";
}

// ropecheck run with environment variables set ("NAME=value " words).
run_result run_with(const std::string& environment, const std::string& args) {
  return testing::run_ropecheck_prefixed("timeout 120 env " + environment + " ", args);
}

class StrictFlags : public testing::scratch_dir_test {
 protected:
  void SetUp() override {
    scratch_dir_test::SetUp();
    write_text("spec.json", R"({"head_dim": 8, "rope_theta": 10000.0})");
    std::mt19937_64 rng(31);
    std::normal_distribution<float> normal;
    std::vector<double> x(32);
    for (auto& v : x) v = normal(rng);
    write_npy(path("x.npy"), from_float64(x, {4, 1, 8}, dtype::float32));
    write_npy(path("pos.npy"), from_float64(std::vector<double>{0, 1, 2, 3}, {4}, dtype::int64));
    const auto r = run("apply --kernel cache_scalar" + inputs() + " --out " + path("y.npy"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  std::string inputs() const {
    return " --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " + path("pos.npy");
  }
  // Each subcommand with valid arguments, so that the flag under test is the only thing wrong.
  std::string command(const std::string& subcommand) const {
    if (subcommand == "reference") return "reference" + inputs() + " --out " + path("out.npy");
    if (subcommand == "apply") return "apply --kernel cache_scalar" + inputs() + " --out " + path("out.npy");
    if (subcommand == "audit") return "audit" + inputs() + " --y " + path("y.npy");
    if (subcommand == "identify")
      return "identify --x " + path("x.npy") + " --pos " + path("pos.npy") + " --y " + path("y.npy");
    if (subcommand == "gate") return "gate --kernel cache_scalar --property norm_preserved";
    return subcommand;  // bench: every bad value is refused before a row runs
  }
  bool has_bench() const { return run("bench --help").exit_code == 0; }
};

const std::string two_to_63 = "9223372036854775808";
const std::string two_to_64 = "18446744073709551616";

// The same bad forms for every integer flag, and each flag's first value past its range.
TEST_F(StrictFlags, EveryIntegerFlagIsAPlainDecimalWithinItsRange) {
  struct flag {
    std::string subcommand, name, past_range;
  };
  std::vector<flag> flags = {
      {"gate", "--max-position", two_to_63}, {"gate", "--seed", two_to_64},
      {"reference", "--layer", "2147483648"}, {"apply", "--layer", "2147483648"},
      {"audit", "--layer", "2147483648"},    {"identify", "--streams", "5"},
  };
  if (has_bench()) flags.push_back({"bench", "--repetitions", "101"});
  for (const auto& f : flags) {
    std::vector<std::string> bad = {"010", "0x10", " 5", "5 ", "", "+5", "-1", "1e3", "5.0", "5x",
                                    two_to_64, "36893488147419103232", f.past_range};
    if (f.name != "--seed") bad.push_back(two_to_63);
    for (const auto& value : bad) {
      const std::string what = f.subcommand + " " + f.name + " " + quoted(value);
      expect_one_line_refusal(run(command(f.subcommand) + " " + f.name + " " + quoted(value)), f.name, what);
    }
  }
  // The leading zero is refused, not read as octal (010 = 8) or decimal, also as --flag=value.
  expect_one_line_refusal(run(command("gate") + " --max-position=010"), "--max-position", "--max-position=010");
  // 0 would have meant "no limit" for --max-position: a limit is at least 1.
  expect_one_line_refusal(run(command("gate") + " --max-position 0"), "--max-position", "--max-position 0");
}

TEST_F(StrictFlags, ShardNumbersAreRefusedInTheFlagAndInTheEnvironment) {
  for (const std::string& value : std::vector<std::string>{"010/20", "0x1/2", " 0/2", "0/2 ", "", "+0/2",
                                                          "0/" + two_to_63, "0/" + two_to_64, "01/2"})
    expect_one_line_refusal(run(command("gate") + " --shard " + quoted(value)), "--shard", "--shard " + value);
  expect_one_line_refusal(run_with("GTEST_SHARD_INDEX=01 GTEST_TOTAL_SHARDS=2", command("gate")),
                          "GTEST_SHARD_INDEX", "GTEST_SHARD_INDEX=01");
  expect_one_line_refusal(run_with("GTEST_SHARD_INDEX=0 GTEST_TOTAL_SHARDS=0x2", command("gate")),
                          "GTEST_TOTAL_SHARDS", "GTEST_TOTAL_SHARDS=0x2");
}

// Decimal numbers (an optional fraction and exponent), finite, no space, hex, inf or nan.
TEST_F(StrictFlags, EveryNumberFlagIsAFiniteDecimal) {
  std::vector<std::pair<std::string, std::string>> flags = {
      {"reference", "--output-scale"}, {"apply", "--output-scale"}, {"audit", "--output-scale"},
      {"audit", "--tolerance"}};
  if (has_bench()) flags.push_back({"bench", "--output-scale"});
  for (const auto& [subcommand, name] : flags) {
    for (const std::string value : {"010", "0x10", "0x1p3", " 5", "5 ", "", "+5", "inf", "nan", "-inf",
                                    "1e999", "5x", "1e", "1.e3"}) {
      const std::string what = subcommand + " " + name + " " + quoted(value);
      expect_one_line_refusal(run(command(subcommand) + " " + name + " " + quoted(value)), name, what);
    }
  }
}

TEST_F(StrictFlags, ValidDecimalsAreStillAccepted) {
  EXPECT_EQ(run(command("gate") + " --max-position 4096 --seed 0").exit_code, 0);
  EXPECT_EQ(run(command("gate") + " --max-position=1 --shard 0/2").exit_code, 0);
  EXPECT_EQ(run(command("audit") + " --tolerance 2.5e0").exit_code, 0);
  EXPECT_EQ(run(command("reference") + " --output-scale 0.5").exit_code, 0);
}

// RC_PARAMS is read before the gate prints its first line: one line of output, exit 2.
TEST_F(StrictFlags, RcParamsAreReadStrictlyBeforeAnythingIsPrinted) {
  struct refused {
    std::string rc_params, fragment;
  };
  for (const refused& r : std::vector<refused>{
           {"seed=abc", "seed"},
           {"seed=-1", "seed"},
           {"seed=0x10", "seed"},
           {"seed=" + two_to_64, "seed"},
           {"seed=5", "seed"},  // disagrees with the gate's --seed (its default)
           {"max_success=0", "max_success"},
           {"max_success=-3", "max_success"},
           {"max_success=", "max_success"},
           {"max_success=010", "max_success"},
           {"max_success=3 max_success=4", "max_success"},
           {"noshrink=2", "noshrink"},
           {"reproduce=", "reproduce"},
           {"reproduce=BCJ", "reproduce"},
           {"max_sucess=10", "max_sucess"},  // a typo RapidCheck would ignore
           {"banana=1", "banana"},
           {"max_size=5", "max_size"},  // RapidCheck's, but without effect here
           {"max_discard_ratio=5", "max_discard_ratio"},
           {"verbose_progress=1", "verbose_progress"},
           {"verbose_shrinking=1", "verbose_shrinking"},
           {"max_success='3", "RC_PARAMS"},
       }) {
    const run_result out = run_with("RC_PARAMS=" + quoted(r.rc_params), command("gate"));
    expect_one_line_refusal(out, "RC_PARAMS", r.rc_params);
    EXPECT_NE(out.output.find(r.fragment), std::string::npos) << r.rc_params << ": " << out.output;
  }
  // The keys it honours, and a seed equal to --seed, still run.
  EXPECT_EQ(run_with("RC_PARAMS='seed=7 max_success=2 noshrink=1'", command("gate") + " --seed 7").exit_code, 0);
}

TEST_F(StrictFlags, BenchErrorsAreOneLineStartingRopecheck) {
  if (!has_bench()) GTEST_SKIP() << "built without benchmarks";
  expect_one_line_refusal(run("bench --simd-target no_such_target"), "--simd-target", "bench --simd-target");
  expect_one_line_refusal(run("bench --output-scale 0"), "--output-scale", "bench --output-scale 0");
  expect_one_line_refusal(run("bench --repetitions 0"), "--repetitions", "bench --repetitions 0");
}

// One large position: the table is sized by the distinct positions, not by the largest one.
TEST_F(StrictFlags, OneLargePositionNeedsNoGigabyteTable) {
  constexpr int tokens = 32, heads = 2, head_dim = 64;
  write_text("spec64.json", R"({"head_dim": 64, "rope_theta": 10000.0})");
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(tokens * heads * head_dim);
  for (auto& v : x) v = u(rng);
  write_npy(path("x64.npy"), from_float64(x, {tokens, heads, head_dim}, dtype::float32));
  std::vector<double> positions(tokens, 0);
  positions[5] = 16777215;
  positions[9] = 16777215;
  positions[7] = 3;
  write_npy(path("pos64.npy"), from_float64(positions, {tokens}, dtype::int64));
  const std::string args =
      " --spec " + path("spec64.json") + " --x " + path("x64.npy") + " --pos " + path("pos64.npy");
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  const std::string limit;  // a sanitizer reserves terabytes of address space up front
#else
  const std::string limit = "ulimit -v 2000000; ";  // a dense table would be 4 GiB
#endif
  const auto apply = [&](const std::string& kernel) {
    return testing::run_ropecheck_prefixed(limit, "apply --kernel " + kernel + args + " --out " +
                                                      path("y_" + kernel + ".npy"));
  };
  ASSERT_EQ(apply("on_the_fly_scalar").exit_code, 0);
  const std::string expected = file_text(path("y_on_the_fly_scalar.npy"));
  for (const std::string kernel : {"cache_simd", "cache_scalar"}) {
    const run_result r = apply(kernel);
    ASSERT_EQ(r.exit_code, 0) << kernel << ": " << r.output;
    EXPECT_EQ(file_text(path("y_" + kernel + ".npy")), expected) << kernel;  // the same bits
    const run_result audited = run("audit" + args + " --y " + path("y_" + kernel + ".npy"));
    EXPECT_EQ(audited.exit_code, 0) << kernel << ": " << audited.output;
  }
  // A negative position has no cache row: exit 2 naming the element and the value.
  positions[3] = -2;
  write_npy(path("neg.npy"), from_float64(positions, {tokens}, dtype::int64));
  expect_one_line_refusal(run("apply --kernel cache_simd --spec " + path("spec64.json") + " --x " + path("x64.npy") +
                              " --pos " + path("neg.npy") + " --out " + path("neg_out.npy")),
                          "element [3]", "negative position");
}

}  // namespace
}  // namespace ropecheck
