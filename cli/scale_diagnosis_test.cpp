// The audit's diagnosis on fp8 outputs written with a per-call output scale σ
// (--output-scale): the detectors and the recipe fit replay the call's σ (round(fl(y/σ)) in fp8),
// so a correct scaled output is reproduced by a correct kernel's recipe and blamed for nothing,
// a bug that is not the scale's is still named (every position shifted by one), and the scale
// mutants (mutants/mutant_registry.cpp: fp8_scale_multiplied stores round(y·σ), fp8_scale_ignored
// round(y)) are named output_scale_misapplied. The dumps are written by the project's kernels
// (the built-in on_the_fly_simd and the mutants), never by the audit's own recomputation.
// In process: audit::run_audit on fast::apply_packed's output.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "audit/audit.h"
#include "fast/kernels.h"
#include "io/tensor.h"
#include "mutants/mutant_registry.h"
#include "spec/spec_reader.h"

namespace ropecheck {
namespace {

constexpr std::int64_t heads = 2;

rope_spec plain_spec() {
  return parse_spec(nlohmann::json{{"head_dim", 128}, {"rope_theta", 10000.0}}, "spec.json", spec_options{});
}

struct scaled_call {
  const fast::kernel_info& kernel;
  dtype storage;
  float sigma;
  std::int64_t shift = 0;  // Y written at positions + shift, audited at the positions
};

// 64 rows at positions 0, 37, 74, …; X ~ 4·N(0, 1) stored in fp8; Y from the kernel with σ.
reports::audit_report audit_of(const scaled_call& call) {
  const rope_spec spec = plain_spec();
  audit::audit_input in;
  in.spec = spec;
  for (std::int64_t r = 0; r < 64; ++r) in.positions.push_back(37 * r);
  const auto rows = static_cast<std::int64_t>(in.positions.size());
  std::vector<std::int64_t> written = in.positions;
  for (auto& m : written) m += call.shift;
  std::vector<double> x(static_cast<std::size_t>(rows * heads * spec.head_dim));
  std::mt19937_64 rng(16);
  std::normal_distribution<double> normal;
  for (double& v : x) v = 4 * normal(rng);
  in.x = from_float64(x, {rows, heads, spec.head_dim}, call.storage);
  in.y = tensor(call.storage, in.x.shape);
  const fast::status s = fast::apply_packed(call.kernel, spec, call.storage, in.x.bytes().data(),
                                            in.y.mutable_bytes().data(), heads, written, fast::direction::forward,
                                            call.sigma);
  EXPECT_TRUE(s.ok()) << s.message;
  in.heads = heads;
  in.tokens_per_sequence = rows;
  in.judged = call.storage;
  in.output_scale = call.sigma;
  return audit::run_audit(in);
}

bool names(const reports::audit_report& r, const std::string& code) {
  return std::any_of(r.diagnosis.begin(), r.diagnosis.end(), [&](const auto& f) { return f.code == code; });
}

const fast::kernel_info& builtin(const char* name) {
  const fast::kernel_info* k = fast::find_kernel(name);
  EXPECT_NE(k, nullptr) << name;
  return *k;
}

const fast::kernel_info& mutant(const char* name) {
  const mutants::mutant* m = mutants::find_mutant(name);
  EXPECT_NE(m, nullptr) << name;
  return m->kernel;
}

constexpr dtype fp8_types[] = {dtype::float8_e4m3fn, dtype::float8_e5m2};
constexpr float scales[] = {3.0f, 0.25f};  // not a power of two (fl(y/σ) rounds), and one

// A correct kernel's scaled output passes with no cause, and the recipe fit reproduces it with
// a correct kernel's recipe: it replays the division by σ (without it, almost no output would
// match bit for bit: y and y/3 or 4y differ in fp8).
TEST(ScaleDiagnosis, ACorrectScaledOutputIsReproducedAndBlamedForNothing) {
  for (const dtype t : fp8_types)
    for (const float sigma : scales) {
      SCOPED_TRACE(std::string(to_string(t)) + " sigma " + std::to_string(sigma));
      const auto r = audit_of({builtin("on_the_fly_simd"), t, sigma});
      EXPECT_TRUE(r.passed);
      EXPECT_TRUE(r.diagnosis.empty()) << r.diagnosis.front().code << ": " << r.diagnosis.front().message;
      EXPECT_EQ(r.output_scale, sigma);
      ASSERT_TRUE(r.recipe.fitted);
      EXPECT_GE(r.recipe.bit_exact, 0.99);
      EXPECT_EQ(r.recipe.positions, "exact");
      EXPECT_EQ(r.recipe.output, to_string(t));
    }
}

// Both scale mutants are named as the main cause, and the magnitude_scale detector (a factor
// σ² or σ on the output) does not claim them.
TEST(ScaleDiagnosis, EveryScaleMutantIsNamedAsTheScaleMisapplied) {
  struct mutant_case {
    const char* mutant;
    const char* says;
  };
  for (const mutant_case c : {mutant_case{"fp8_scale_multiplied", "stored as round(y · σ)"},
                              mutant_case{"fp8_scale_ignored", "stored as round(y) "}})
    for (const dtype t : fp8_types)
      for (const float sigma : scales) {
        SCOPED_TRACE(std::string(c.mutant) + " " + std::string(to_string(t)) + " sigma " + std::to_string(sigma));
        const auto r = audit_of({mutant(c.mutant), t, sigma});
        EXPECT_FALSE(r.passed);
        ASSERT_FALSE(r.diagnosis.empty());
        EXPECT_EQ(r.diagnosis.front().code, "output_scale_misapplied") << r.diagnosis.front().message;
        EXPECT_NE(r.diagnosis.front().message.find(c.says), std::string::npos) << r.diagnosis.front().message;
        EXPECT_GE(r.diagnosis.front().share, 0.99);
        EXPECT_FALSE(names(r, "magnitude_scale"));
        EXPECT_FALSE(names(r, "unexplained"));
      }
}

// A bug that is not the scale's, on a scaled output: the correct kernel at positions + 1 is
// named position_offset, and the scale is not blamed.
TEST(ScaleDiagnosis, APositionOffsetOnAScaledOutputIsNamedAndTheScaleIsNot) {
  for (const float sigma : scales) {
    SCOPED_TRACE(sigma);
    const auto r = audit_of({builtin("on_the_fly_simd"), dtype::float8_e4m3fn, sigma, 1});
    EXPECT_FALSE(r.passed);
    ASSERT_FALSE(r.diagnosis.empty());
    EXPECT_EQ(r.diagnosis.front().code, "position_offset") << r.diagnosis.front().message;
    EXPECT_NE(r.diagnosis.front().message.find("shifted by +1"), std::string::npos) << r.diagnosis.front().message;
    EXPECT_FALSE(names(r, "output_scale_misapplied"));
    EXPECT_FALSE(names(r, "magnitude_scale"));
  }
}

}  // namespace
}  // namespace ropecheck
