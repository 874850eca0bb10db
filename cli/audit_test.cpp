// `ropecheck audit` end to end: correct outputs pass; outputs made the way real bugs make them
// fail with the right figure and the right diagnosis; bad input is exit 2.
// The fp32-angle generator below imitates the peers' recipe (Hugging Face / ggml):
// inv_freq in float32, angle = float(m)·inv_freq in float32, cosf/sinf, rotation in float32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "cli/cli_test_support.h"
#include "io/npy.h"
#include "numeric/half.h"

namespace ropecheck {
namespace {

using testing::file_text;
const auto run = testing::run_ropecheck;

constexpr int heads = 2, head_dim = 128;

// Positions 0, 1, then 2^(k/3) for k up to 60: every power-of-two bucket to 2^20.
std::vector<std::int64_t> audit_positions() {
  std::vector<std::int64_t> p = {0, 1};
  for (int k = 3; k <= 60; ++k) {
    const auto m = static_cast<std::int64_t>(std::llround(std::exp2(k / 3.0)));
    if (m > p.back()) p.push_back(m);
  }
  return p;
}

std::vector<double> random_inputs(std::size_t n) {
  std::mt19937_64 rng(2024);
  std::normal_distribution<float> normal;
  std::vector<double> x(n);
  for (auto& v : x) v = normal(rng);  // float32 values, exact in double
  return x;
}

class Audit : public testing::scratch_dir_test {
 protected:
  void SetUp() override {
    scratch_dir_test::SetUp();
    positions = audit_positions();
    x = random_inputs(positions.size() * heads * head_dim);
    shape = {static_cast<std::int64_t>(positions.size()), heads, head_dim};
    write_npy(path("x.npy"), from_float64(x, shape, dtype::float32));
    std::vector<double> p(positions.begin(), positions.end());
    write_npy(path("pos.npy"), from_float64(p, {static_cast<std::int64_t>(p.size())}, dtype::int64));
    write_text("spec.json", R"({"head_dim": 128, "rope_theta": 10000.0})");
  }

  // Half-split rotation of every head vector by `angle(m, j)` with cos/sin from `trig`.
  template <class Rotate>
  std::vector<double> rotated(Rotate rotate) const {
    std::vector<double> y(x.size());
    for (std::size_t t = 0; t < positions.size(); ++t)
      for (int h = 0; h < heads; ++h) {
        const std::size_t o = (t * heads + h) * head_dim;
        for (int j = 0; j < head_dim / 2; ++j) rotate(positions[t], j, &x[o + j], &x[o + j + head_dim / 2], &y[o + j], &y[o + j + head_dim / 2]);
      }
    return y;
  }

  nlohmann::json audit(const std::vector<double>& y, dtype storage, const std::string& extra = "",
                       int expected_exit = 1) {
    write_npy(path("y.npy"), from_float64(y, shape, storage));
    const auto r = run("audit --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " +
                       path("pos.npy") + " --y " + path("y.npy") + " --json " + path("r.json") + " " + extra);
    EXPECT_EQ(r.exit_code, expected_exit) << r.output;
    return nlohmann::json::parse(file_text(path("r.json")));
  }

  static bool diagnosed(const nlohmann::json& report, const std::string& code) {
    for (const auto& f : report["diagnosis"])
      if (f["code"] == code) return true;
    return false;
  }

  std::vector<std::int64_t> positions;
  std::vector<double> x;
  std::vector<std::int64_t> shape;
};

TEST_F(Audit, Float32AngleRecipeIsCaughtWithTheRightFigure) {
  const auto y = rotated([](std::int64_t m, int j, const double* a, const double* b, double* ya, double* yb) {
    const float inv_freq = 1.0f / std::pow(10000.0f, static_cast<float>(2 * j) / head_dim);
    const float angle = static_cast<float>(m) * inv_freq;
    const float c = std::cos(angle), s = std::sin(angle);
    const float fa = static_cast<float>(*a), fb = static_cast<float>(*b);
    *ya = fa * c - fb * s;
    *yb = fb * c + fa * s;
  });
  const auto report = audit(y, dtype::float32, "--html " + path("r.html"));
  EXPECT_EQ(report["verdict"], "fail");
  EXPECT_TRUE(diagnosed(report, "angle_precision")) << report["diagnosis"].dump();
  // Measured on real implementations: ≈1e3 × 2^-24 near position 512, ≈6e5 × 2^-24 at 2^20.
  double near_512 = 0, near_2_20 = 0;
  for (const auto& b : report["by_position"]) {
    if (b["first"] == 512) near_512 = b["max_units"];
    if (b["first"] >= (1 << 19)) near_2_20 = std::max(near_2_20, b["max_units"].get<double>());
  }
  EXPECT_GT(near_512, 100);
  EXPECT_LT(near_512, 1e4);
  EXPECT_GT(near_2_20, 1e5);
  EXPECT_LT(near_2_20, 3e6);
  EXPECT_EQ(report["max_rel_pair_error_units"].get<double>() * 0x1p-24, report["max_rel_pair_error"].get<double>());
  const std::string html = file_text(path("r.html"));
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST_F(Audit, CorrectOutputsPass) {
  ASSERT_EQ(run("reference --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " +
                path("pos.npy") + " --out " + path("ref.npy") + " --out-dtype float32").exit_code, 0);
  auto r = run("audit --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " +
               path("pos.npy") + " --y " + path("ref.npy"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(run("apply --kernel on_the_fly_simd --spec " + path("spec.json") + " --x " + path("x.npy") +
                " --pos " + path("pos.npy") + " --out " + path("k.npy")).exit_code, 0);
  r = run("audit --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " + path("pos.npy") +
          " --y " + path("k.npy"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("none (within tolerance)"), std::string::npos);
}

// The exact rotation (long double) of pair (a, b) by m·θ_j, then a bug-specific twist.
double exact_angle(std::int64_t m, int j) {
  return static_cast<double>(static_cast<long double>(m) * std::pow(10000.0L, -2.0L * j / head_dim));
}

TEST_F(Audit, DiagnosesOffByOnePositions) {
  const auto y = rotated([](std::int64_t m, int j, const double* a, const double* b, double* ya, double* yb) {
    const long double phi = static_cast<long double>(m + 1) * std::pow(10000.0L, -2.0L * j / head_dim);
    *ya = static_cast<double>(*a * std::cos(phi) - *b * std::sin(phi));
    *yb = static_cast<double>(*b * std::cos(phi) + *a * std::sin(phi));
  });
  const auto report = audit(y, dtype::float64);
  EXPECT_TRUE(diagnosed(report, "position_offset")) << report["diagnosis"].dump();
  EXPECT_FALSE(diagnosed(report, "angle_precision"));
}

TEST_F(Audit, DiagnosesAScaleFactor) {
  const auto y = rotated([](std::int64_t m, int j, const double* a, const double* b, double* ya, double* yb) {
    const long double phi = exact_angle(m, j), f = 1.2772588722239781L;  // YaRN 0.1·ln 16 + 1
    *ya = static_cast<double>(f * (*a * std::cos(phi) - *b * std::sin(phi)));
    *yb = static_cast<double>(f * (*b * std::cos(phi) + *a * std::sin(phi)));
  });
  const auto report = audit(y, dtype::float64);
  EXPECT_TRUE(diagnosed(report, "magnitude_scale")) << report["diagnosis"].dump();
}

TEST_F(Audit, DiagnosesABfloat16TrigCache) {
  const auto y = rotated([](std::int64_t m, int j, const double* a, const double* b, double* ya, double* yb) {
    const long double phi = static_cast<long double>(m) * std::pow(10000.0L, -2.0L * j / head_dim);
    const double c = bfloat16_bits_to_float(double_to_bfloat16_bits(static_cast<double>(std::cos(phi))));
    const double s = bfloat16_bits_to_float(double_to_bfloat16_bits(static_cast<double>(std::sin(phi))));
    *ya = *a * c - *b * s;
    *yb = *b * c + *a * s;
  });
  const auto report = audit(y, dtype::float64);
  EXPECT_TRUE(diagnosed(report, "low_precision_trig_cache")) << report["diagnosis"].dump();
}

// fp8 outputs travel as uint8 .npy bits: refused without --dtype (exit 2 naming the flag), and
// judged as fp8 with it. X is scaled so that a share of the exact outputs exceed e4m3fn's 448:
// the reference rounded once and saturated (numeric/fp8.h, tested against the OCP value table)
// passes, because the audit compares with clamp(exact, ±448).
TEST_F(Audit, Fp8OutputsAreUint8BitsReadWithDtypeAndSaturationIsJudged) {
  std::vector<double> big(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) big[i] = static_cast<double>(static_cast<float>(x[i] * 300));
  write_npy(path("x.npy"), from_float64(big, shape, dtype::float32));
  ASSERT_EQ(run("reference --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " +
                path("pos.npy") + " --out " + path("ref.npy")).exit_code, 0);
  const auto exact = to_float64(read_npy(path("ref.npy")));
  EXPECT_GT(std::count_if(exact.begin(), exact.end(), [](double v) { return std::fabs(v) > 448; }), 100);
  write_npy(path("y8.npy"), from_float64(exact, shape, dtype::float8_e4m3fn));
  const std::string args = "audit --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " +
                           path("pos.npy") + " --y " + path("y8.npy");
  const auto refused = run(args);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("--dtype float8_e4m3fn"), std::string::npos) << refused.output;
  const auto judged = run(args + " --dtype float8_e4m3fn --json " + path("r.json"));
  EXPECT_EQ(judged.exit_code, 0) << judged.output;
  EXPECT_EQ(nlohmann::json::parse(file_text(path("r.json")))["dtype"], "float8_e4m3fn");
}

// The per-call fp8 output scale end to end: `apply --output-scale 3` on fp8 X (a scale that is
// not a power of two) writes Y that `audit --output-scale 3` passes, while judging the same Y
// unscaled, or with the reciprocal (y·S instead of y/S), fails. `reference --output-scale 2`
// writes the unscaled reference halved bit for bit (division by 2 is exact in float64). Bad
// scales, and a scale on a non-fp8 Y, are exit 2 naming the flag and the value.
TEST_F(Audit, Fp8OutputScaleIsAppliedJudgedAndRefused) {
  std::vector<double> x8(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) x8[i] = 40 * x[i];
  write_npy(path("x8.npy"), from_float64(x8, shape, dtype::float8_e4m3fn));
  const std::string inputs = " --spec " + path("spec.json") + " --x " + path("x8.npy") + " --pos " + path("pos.npy");
  const auto applied = run("apply --kernel on_the_fly_simd --dtype float8_e4m3fn --output-scale 3" + inputs +
                           " --out " + path("y8.npy"));
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  const std::string audit_args = "audit --dtype float8_e4m3fn" + inputs + " --y " + path("y8.npy");
  const auto scaled = run(audit_args + " --output-scale 3");
  EXPECT_EQ(scaled.exit_code, 0) << scaled.output;
  EXPECT_EQ(run(audit_args).exit_code, 1);
  EXPECT_EQ(run(audit_args + " --output-scale 0.333333333").exit_code, 1);

  const std::string ref_args =
      "reference --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " + path("pos.npy");
  ASSERT_EQ(run(ref_args + " --out " + path("ref.npy")).exit_code, 0);
  ASSERT_EQ(run(ref_args + " --output-scale 2 --out " + path("half.npy")).exit_code, 0);
  const auto ref = to_float64(read_npy(path("ref.npy")));
  const auto half = to_float64(read_npy(path("half.npy")));
  ASSERT_EQ(ref.size(), half.size());
  for (std::size_t i = 0; i < ref.size(); ++i) ASSERT_EQ(half[i], ref[i] / 2) << i;

  for (const std::string bad : {"0", "-1", "inf", "nan", "abc", "1e39", ""}) {
    const auto r = run(audit_args + " --output-scale '" + bad + "'");
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("--output-scale"), std::string::npos) << r.output;
  }
  const auto not_fp8 = run("audit --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " +
                           path("pos.npy") + " --y " + path("ref.npy") + " --output-scale 2");
  EXPECT_EQ(not_fp8.exit_code, 2) << not_fp8.output;
  EXPECT_NE(not_fp8.output.find("fp8"), std::string::npos) << not_fp8.output;
  const auto apply_not_fp8 = run("apply --kernel on_the_fly_simd --output-scale 2 --spec " + path("spec.json") +
                                 " --x " + path("x.npy") + " --pos " + path("pos.npy") + " --out " + path("y32.npy"));
  EXPECT_EQ(apply_not_fp8.exit_code, 2) << apply_not_fp8.output;
  EXPECT_NE(apply_not_fp8.output.find("--output-scale"), std::string::npos) << apply_not_fp8.output;
}

// The report records the output scale the audit judged with (`output_scale`, schema version 2):
// the value given to --output-scale, 1 without it; the summary, Markdown and HTML show it, and
// `ropecheck report` reads it back. A version 1 report (before the field) still reads, as
// unscaled; a version 2 report without it, or with a scale that is not > 0, is exit 2 naming it.
TEST_F(Audit, TheReportRecordsTheOutputScale) {
  write_npy(path("x8.npy"), from_float64(x, shape, dtype::float8_e4m3fn));
  const std::string inputs = " --spec " + path("spec.json") + " --x " + path("x8.npy") + " --pos " + path("pos.npy");
  for (const char* scale : {"3", "0.25"}) {
    ASSERT_EQ(run("apply --kernel on_the_fly_simd --dtype float8_e4m3fn --output-scale " + std::string(scale) +
                  inputs + " --out " + path("y8.npy")).exit_code, 0);
    const auto r = run("audit --dtype float8_e4m3fn --output-scale " + std::string(scale) + inputs + " --y " +
                       path("y8.npy") + " --json " + path("r.json") + " --markdown " + path("r.md") + " --html " +
                       path("r.html"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto report = nlohmann::json::parse(file_text(path("r.json")));
    EXPECT_EQ(report["schema_version"], 2);
    ASSERT_TRUE(report["output_scale"].is_number()) << report.dump();
    EXPECT_EQ(report["output_scale"].get<double>(), std::stod(scale));
    const std::string shown = "output scale " + std::string(scale) + ": Y = round(y / " + scale + ")";
    EXPECT_NE(r.output.find(shown), std::string::npos) << r.output;
    EXPECT_NE(file_text(path("r.md")).find(shown), std::string::npos);
    EXPECT_NE(file_text(path("r.html")).find(shown), std::string::npos);
    const auto replayed = run("report " + path("r.json"));
    EXPECT_EQ(replayed.exit_code, 0) << replayed.output;
    EXPECT_NE(replayed.output.find(shown), std::string::npos) << replayed.output;
  }
  auto saved = nlohmann::json::parse(file_text(path("r.json")));  // the passing scaled audit's
  const auto unscaled = audit(x, dtype::float32, "", 1);
  EXPECT_EQ(unscaled["output_scale"].get<double>(), 1.0);

  saved.erase("output_scale");
  write_text("old.json", saved.dump());
  const auto missing = run("report " + path("old.json"));
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("output_scale"), std::string::npos) << missing.output;
  saved["schema_version"] = 1;  // written before output_scale was recorded
  write_text("old.json", saved.dump());
  const auto v1 = run("report " + path("old.json"));
  EXPECT_EQ(v1.exit_code, 0) << v1.output;
  EXPECT_EQ(v1.output.find("output scale"), std::string::npos) << v1.output;
  saved["schema_version"] = 2;
  saved["output_scale"] = -2;
  write_text("old.json", saved.dump());
  const auto negative = run("report " + path("old.json"));
  EXPECT_EQ(negative.exit_code, 2) << negative.output;
  EXPECT_NE(negative.output.find("field 'output_scale': -2"), std::string::npos) << negative.output;
  saved["schema_version"] = 3;
  write_text("old.json", saved.dump());
  EXPECT_EQ(run("report " + path("old.json")).exit_code, 2);
}

TEST_F(Audit, DiagnosesTheWrongPairing) {
  write_text("adjacent.json", R"({"head_dim": 128, "rope_theta": 10000.0, "pairing": "adjacent"})");
  ASSERT_EQ(run("reference --spec " + path("adjacent.json") + " --x " + path("x.npy") + " --pos " +
                path("pos.npy") + " --out " + path("adj.npy")).exit_code, 0);
  const auto r = run("audit --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " +
                     path("pos.npy") + " --y " + path("adj.npy") + " --json " + path("r.json"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(diagnosed(nlohmann::json::parse(file_text(path("r.json"))), "wrong_pairing")) << r.output;
}

TEST_F(Audit, NonFiniteAndPassThroughAreFindingsNotCrashes) {
  write_text("spec.json", R"({"head_dim": 128, "rotary_dim": 64, "rope_theta": 10000.0})");
  ASSERT_EQ(run("reference --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " +
                path("pos.npy") + " --out " + path("ref.npy")).exit_code, 0);
  auto y = to_float64(read_npy(path("ref.npy")));
  y[100] = 7.0;            // token 0, head 0, dim 100: a pass-through dim
  y[5 * head_dim] = NAN;   // a rotated output
  const auto report = audit(y, dtype::float64);
  EXPECT_TRUE(diagnosed(report, "passthrough_modified")) << report["diagnosis"].dump();
  EXPECT_TRUE(diagnosed(report, "non_finite")) << report["diagnosis"].dump();
  EXPECT_EQ(report["passthrough"]["modified"], 1);
}

// Qwen2.5-7B's documented YaRN (factor 4 over 32768, base 1e6), written here from the Hugging
// Face formula on its own: corr(r) = d·ln(L0/(2πr))/(2 ln b), a linear ramp between
// floor(corr(32)) and ceil(corr(1)), θ' = (θ/s)(1 − e) + θ·e with e = 1 − ramp, A = 0.1·ln s + 1.
struct yarn_generator {
  static constexpr long double base = 1e6L, s = 4, original = 32768;
  long double theta(int j) const {
    const long double d = head_dim, pi = 3.141592653589793238462643383279502884L;
    const auto corr = [&](long double r) { return d * std::log(original / (2 * pi * r)) / (2 * std::log(base)); };
    const long double low = std::max<long double>(std::floor(corr(32)), 0);
    long double high = std::min<long double>(std::ceil(corr(1)), d - 1);
    if (high == low) high += 0.001L;
    const long double ramp = std::clamp((j - low) / (high - low), 0.0L, 1.0L);
    const long double extrapolation = 1 - ramp, plain = std::pow(base, -2.0L * j / d);
    return plain / s * (1 - extrapolation) + plain * extrapolation;
  }
  long double attention() const { return 0.1L * std::log(s) + 1; }
};

TEST_F(Audit, ScaledYarnDumpAuditsAndAMissingOrDoubledFactorIsNamed) {
  write_text("spec.json", R"({"head_dim": 128, "rope_theta": 1000000.0, "rope_scaling":
      {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}})");
  const yarn_generator yarn;
  for (const long double factor_power : {1.0L, 0.0L, 2.0L}) {
    const long double a = std::pow(yarn.attention(), factor_power);
    const auto y = rotated([&](std::int64_t m, int j, const double* xa, const double* xb, double* ya, double* yb) {
      const long double phi = static_cast<long double>(m) * yarn.theta(j);
      *ya = static_cast<double>(a * (*xa * std::cos(phi) - *xb * std::sin(phi)));
      *yb = static_cast<double>(a * (*xb * std::cos(phi) + *xa * std::sin(phi)));
    });
    const bool correct = factor_power == 1.0L;
    const auto report = audit(y, dtype::float64, "", correct ? 0 : 1);
    if (correct) {
      // A double-precision generator: far inside the float-level tolerance.
      EXPECT_LT(report["max_rel_pair_error_units"].get<double>(), 0.01) << report.dump();
    } else {
      EXPECT_TRUE(diagnosed(report, "magnitude_scale")) << report["diagnosis"].dump();
      const std::string expected_factor = factor_power == 0 ? "0.87" : "1.13";  // 1/A or A
      EXPECT_NE(report["diagnosis"].dump().find(expected_factor), std::string::npos) << report["diagnosis"].dump();
    }
  }
}

// Positions outside the model's context are a property of the data, not bad input: the audit
// still judges them (and passes a correct output) and says so in a finding. Dynamic NTK is
// built to run past max_position_embeddings, so there it is no finding.
TEST_F(Audit, PositionsOutsideTheContextAreAFindingNotAFailure) {
  std::vector<double> p(positions.begin(), positions.end());
  p[3] = -5;  // an underflowed offset
  write_npy(path("pos.npy"), from_float64(p, {static_cast<std::int64_t>(p.size())}, dtype::int64));
  const auto audit_of = [&](const std::string& spec_text) {
    write_text("spec.json", spec_text);
    EXPECT_EQ(run("reference --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " +
                  path("pos.npy") + " --out " + path("ref.npy") + " --out-dtype float32").exit_code, 0);
    const auto r = run("audit --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " +
                       path("pos.npy") + " --y " + path("ref.npy") + " --json " + path("r.json"));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(file_text(path("r.json")));
  };
  const auto report = audit_of(R"({"head_dim": 128, "rope_theta": 10000.0, "max_position_embeddings": 4096})");
  EXPECT_EQ(report["verdict"], "pass");
  std::vector<std::string> messages;
  for (const auto& f : report["diagnosis"])
    if (f["code"] == "position_outside_context") messages.push_back(f["message"]);
  ASSERT_EQ(messages.size(), 2u) << report["diagnosis"].dump();
  EXPECT_NE(messages[0].find("1 of " + std::to_string(p.size()) + " rows have negative positions (lowest -5)"), std::string::npos) << messages[0];
  // Positions 2^(k/3) from 4096 up to 2^20: every one at or past 4096 is counted.
  const auto past = std::count_if(p.begin(), p.end(), [](double m) { return m >= 4096; });
  EXPECT_NE(messages[1].find(std::to_string(past) + " of " + std::to_string(p.size()) +
                             " rows have positions at or past max_position_embeddings 4096 (highest 1048576)"),
            std::string::npos) << messages[1];

  p[3] = 5;
  write_npy(path("pos.npy"), from_float64(p, {static_cast<std::int64_t>(p.size())}, dtype::int64));
  const auto dynamic = audit_of(R"({"head_dim": 128, "rope_theta": 10000.0, "max_position_embeddings": 4096,
                                    "rope_scaling": {"type": "dynamic", "factor": 2.0}})");
  EXPECT_EQ(dynamic["verdict"], "pass");
  EXPECT_TRUE(dynamic["diagnosis"].empty()) << dynamic["diagnosis"].dump();
}

// identify end to end: the spec it writes is one audit reads unchanged and passes.
TEST_F(Audit, IdentifyWritesASpecTheAuditAccepts) {
  write_text("adjacent.json", R"({"head_dim": 128, "rotary_dim": 96, "rope_theta": 500000.0, "pairing": "adjacent"})");
  ASSERT_EQ(run("reference --spec " + path("adjacent.json") + " --x " + path("x.npy") + " --pos " + path("pos.npy") +
                " --out " + path("y.npy") + " --out-dtype float32").exit_code, 0);
  const auto r = run("identify --x " + path("x.npy") + " --pos " + path("pos.npy") + " --y " + path("y.npy") +
                     " --spec-out " + path("found.json") + " --json " + path("id.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto spec = nlohmann::json::parse(file_text(path("found.json")));
  EXPECT_EQ(spec["pairing"], "adjacent");
  EXPECT_EQ(spec["rotary_dim"], 96);
  EXPECT_NEAR(spec["rope_theta"].get<double>() / 500000.0, 1, 1e-6);
  const auto report = nlohmann::json::parse(file_text(path("id.json")));
  EXPECT_EQ(report["offset"]["value"], 0);
  const auto audit = run("audit --spec " + path("found.json") + " --x " + path("x.npy") + " --pos " +
                         path("pos.npy") + " --y " + path("y.npy"));
  EXPECT_EQ(audit.exit_code, 0) << audit.output;
  EXPECT_EQ(run("identify --x " + path("x.npy") + " --pos " + path("pos.npy") + " --y " + path("missing.npy")).exit_code, 2);
}

// identify with position streams end to end: [3, tokens] positions of an image
// after text and a Qwen3-VL-like interleaved spec, [2, tokens] patch positions and a vision spec;
// the reference writes Y, identify names the layout in its report and JSON and writes a spec the
// audit passes; text-only streams (all equal) are refused, exit 2.
TEST_F(Audit, IdentifyNamesTheStreamLayout) {
  std::vector<double> t, h, w;
  for (int k = 0; k < 6; ++k) t.push_back(k), h.push_back(k), w.push_back(k);
  for (int r = 0; r < 10; ++r)
    for (int c = 0; c < 14; ++c) t.push_back(6), h.push_back(6 + r), w.push_back(6 + c);
  const auto tokens = static_cast<std::int64_t>(t.size());
  std::vector<double> streams = t;
  streams.insert(streams.end(), h.begin(), h.end());
  streams.insert(streams.end(), w.begin(), w.end());
  write_npy(path("grid.npy"), from_float64(streams, {3, tokens}, dtype::int64));
  write_npy(path("xs.npy"), from_float64(random_inputs(static_cast<std::size_t>(tokens) * heads * head_dim),
                                         {tokens, heads, head_dim}, dtype::float32));
  write_text("qwen3vl.json", R"({"head_dim": 128, "rope_theta": 5000000.0,
    "rope_scaling": {"rope_type": "default", "mrope_section": [24, 20, 20], "mrope_interleaved": true}})");
  ASSERT_EQ(run("reference --spec " + path("qwen3vl.json") + " --x " + path("xs.npy") + " --pos " + path("grid.npy") +
                " --out " + path("ys.npy") + " --out-dtype float32").exit_code, 0);
  auto r = run("identify --x " + path("xs.npy") + " --pos " + path("grid.npy") + " --y " + path("ys.npy") +
               " --spec-out " + path("found.json") + " --json " + path("id.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("position streams         3: mrope_interleaved [24, 20, 20]"), std::string::npos) << r.output;
  const auto report = nlohmann::json::parse(file_text(path("id.json")));
  EXPECT_EQ(report["position_streams"]["layout"], "mrope_interleaved");
  EXPECT_EQ(report["position_streams"]["section"], nlohmann::json({24, 20, 20}));
  const auto spec = nlohmann::json::parse(file_text(path("found.json")));
  EXPECT_EQ(spec["rope_scaling"]["mrope_section"], nlohmann::json({24, 20, 20}));
  EXPECT_EQ(spec["rope_scaling"]["mrope_interleaved"], true);
  r = run("audit --spec " + path("found.json") + " --x " + path("xs.npy") + " --pos " + path("grid.npy") + " --y " +
          path("ys.npy"));
  EXPECT_EQ(r.exit_code, 0) << r.output;

  // Vision: rows, columns of the 10 × 14 grid (and the text tokens' equal pairs), columns first.
  std::vector<double> rc(h.begin(), h.end());
  rc.insert(rc.end(), w.begin(), w.end());
  write_npy(path("patches.npy"), from_float64(rc, {2, tokens}, dtype::int64));
  write_text("vision.json", R"({"head_dim": 128, "rope_theta": 10000.0, "pairing": "adjacent",
    "stream_layout": "vision_columns_first"})");
  ASSERT_EQ(run("reference --spec " + path("vision.json") + " --x " + path("xs.npy") + " --pos " +
                path("patches.npy") + " --out " + path("yv.npy") + " --out-dtype float32").exit_code, 0);
  r = run("identify --x " + path("xs.npy") + " --pos " + path("patches.npy") + " --y " + path("yv.npy") +
          " --spec-out " + path("found_v.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(file_text(path("found_v.json")))["stream_layout"], "vision_columns_first");
  r = run("audit --spec " + path("found_v.json") + " --x " + path("xs.npy") + " --pos " + path("patches.npy") +
          " --y " + path("yv.npy"));
  EXPECT_EQ(r.exit_code, 0) << r.output;

  // Three equal streams: refused, naming the positions file; no spec written.
  std::vector<double> text;
  for (int s = 0; s < 3; ++s)
    for (std::int64_t k = 0; k < tokens; ++k) text.push_back(static_cast<double>(k));
  write_npy(path("text.npy"), from_float64(text, {3, tokens}, dtype::int64));
  ASSERT_EQ(run("reference --spec " + path("qwen3vl.json") + " --x " + path("xs.npy") + " --pos " + path("text.npy") +
                " --out " + path("yt.npy") + " --out-dtype float32").exit_code, 0);
  r = run("identify --x " + path("xs.npy") + " --pos " + path("text.npy") + " --y " + path("yt.npy") +
          " --spec-out " + path("none.json"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(path("text.npy") + ": values: hold equal streams in every row"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("none.json")));

  // A 4-D X of batch 3 with [3, tokens] positions: one-stream positions per batch row, or three
  // streams? Refused, naming --streams.
  write_npy(path("xb.npy"), from_float64(random_inputs(3 * static_cast<std::size_t>(tokens) * heads * head_dim),
                                         {3, tokens, heads, head_dim}, dtype::float32));
  r = run("identify --x " + path("xb.npy") + " --pos " + path("grid.npy") + " --y " + path("xb.npy"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("say which with --streams 1 or --streams 3"), std::string::npos) << r.output;
}

TEST_F(Audit, BadInputIsExitTwo) {
  write_npy(path("short.npy"), from_float64(std::vector<double>(head_dim * heads, 0.0), {1, heads, head_dim}, dtype::float32));
  auto r = run("audit --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " +
               path("pos.npy") + " --y " + path("short.npy"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("short.npy: shape"), std::string::npos) << r.output;
  r = run("audit --spec " + path("spec.json") + " --x " + path("x.npy") + " --pos " + path("pos.npy") +
          " --y " + path("x.npy") + " --tolerance -1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--tolerance"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ropecheck
