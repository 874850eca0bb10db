// The audit's forensics in process: for each recipe a real implementation uses, a dump
// generated here by an independent simulation of that recipe — plain float / long double code
// and numeric/half.h's roundings, nothing from audit/ — and the diagnosis must name the cause
// that was injected, first, in float32, float16 and bfloat16, at dense, sampled and decode-block
// positions. A correct output states no cause. The exact rotation comes from long double.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "audit/audit.h"
#include "audit/positions_test_support.h"
#include "io/tensor.h"
#include "numeric/half.h"
#include "numeric/storage_element.h"
#include "spec/spec_reader.h"

namespace ropecheck::audit {
namespace {

constexpr int heads = 2;
constexpr double base = 10000.0;

// One RoPE implementation, pair by pair: (m, j, θ_j exact, x_a, x_b) → (y_a, y_b), in double.
using pair_recipe = std::function<std::pair<double, double>(std::int64_t, int, long double, double, double)>;


using test_positions::decode_block;
using test_positions::spread;
std::vector<std::int64_t> dense(std::int64_t n) { return test_positions::dense(0, n); }

// X standard normal, representable in `x_type`; Y = `recipe` on every pair, in `pair`'s pairing;
// the spec says `spec_pair` when given (a pairing mix-up), else `pair`.
reports::audit_report audit_of(const pair_recipe& recipe, const std::vector<std::int64_t>& positions,
                               dtype x_type, dtype out, int head_dim = 64, int rotary_dim = 64,
                               pairing pair = pairing::half_split, double attention_factor = 1,
                               std::optional<pairing> spec_pair = std::nullopt) {
  audit_input in;
  in.spec = rope_spec{head_dim, rotary_dim, base, spec_pair.value_or(pair), "test"};
  if (attention_factor != 1) in.spec.attention_factor = attention_factor;
  const auto rows = static_cast<std::int64_t>(positions.size());
  std::vector<double> x(static_cast<std::size_t>(rows * heads * head_dim)), y(x.size());
  std::mt19937_64 rng(15);
  std::normal_distribution<double> normal;
  for (double& v : x) v = round_to_storage(x_type, normal(rng));
  for (std::int64_t r = 0; r < rows; ++r)
    for (int h = 0; h < heads; ++h) {
      const std::size_t o = static_cast<std::size_t>((r * heads + h) * head_dim);
      for (int c = rotary_dim; c < head_dim; ++c) y[o + c] = x[o + c];
      for (int j = 0; j < rotary_dim / 2; ++j) {
        const long double theta = std::pow(static_cast<long double>(base), -2.0L * j / rotary_dim);
        // The pair's two coordinates, as the pairing forms them (written out, not pair_of).
        const std::size_t a = o + (pair == pairing::adjacent ? 2 * j : j);
        const std::size_t b = o + (pair == pairing::adjacent ? 2 * j + 1 : j + rotary_dim / 2);
        const auto [ya, yb] = recipe(positions[r], j, theta, x[a], x[b]);
        y[a] = round_to_storage(out, ya);
        y[b] = round_to_storage(out, yb);
      }
    }
  const std::vector<std::int64_t> shape = {rows, heads, head_dim};
  in.x = from_float64(x, shape, x_type);
  in.y = from_float64(y, shape, out);
  in.positions = positions;
  in.tokens_per_sequence = rows;
  in.heads = heads;
  in.judged = out;
  return run_audit(in);
}

// The rotation with float32 products and one FMA, as a correct float32 kernel does.
std::pair<double, double> fused(double xa, double xb, double c, double s) {
  const float fa = static_cast<float>(xa), fb = static_cast<float>(xb);
  const float fc = static_cast<float>(c), fs = static_cast<float>(s);
  const float pb = fb * fs, pa = fa * fs;
  return {std::fma(fa, fc, -pb), std::fma(fb, fc, pa)};
}

// The exact rotation by angle φ (long double), rounded by the caller.
std::pair<double, double> exact(long double phi, double xa, double xb) {
  return {static_cast<double>(xa * std::cos(phi) - xb * std::sin(phi)),
          static_cast<double>(xb * std::cos(phi) + xa * std::sin(phi))};
}

std::string fmt_share(double share) { return "(" + std::to_string(static_cast<int>(100 * share)) + "%)"; }
std::string codes(const reports::audit_report& r) {
  std::string s;
  for (const auto& f : r.diagnosis) s += f.code + fmt_share(f.share) + " ";
  return s;
}

// The recipes -------------------------------------------------------------------------------

// Correct: the exact rotation rounded once to the output.
const pair_recipe correct = [](std::int64_t m, int, long double theta, double xa, double xb) {
  return exact(m * theta, xa, xb);
};

// The angle m·θ_j computed in float32 (θ_j and m as float32, one rounded product), cos/sin in
// double from it, the rest as a correct kernel.
const pair_recipe float32_angle = [](std::int64_t m, int, long double theta, double xa, double xb) {
  const float phi = static_cast<float>(m) * static_cast<float>(theta);
  return fused(xa, xb, std::cos(static_cast<double>(phi)), std::sin(static_cast<double>(phi)));
};

// Positions from arange(…, dtype=float16): every position above 2048 rounded.
const pair_recipe float16_positions = [](std::int64_t m, int, long double theta, double xa, double xb) {
  const long double p = float16_bits_to_float(double_to_float16_bits(static_cast<double>(m)));
  const long double phi = p * theta;
  return fused(xa, xb, static_cast<double>(std::cos(phi)), static_cast<double>(std::sin(phi)));
};

// Inverse frequencies kept in bfloat16, everything else exact.
const pair_recipe bfloat16_frequencies = [](std::int64_t m, int, long double theta, double xa, double xb) {
  const long double t = bfloat16_bits_to_float(double_to_bfloat16_bits(static_cast<double>(theta)));
  const long double phi = m * t;
  return fused(xa, xb, static_cast<double>(std::cos(phi)), static_cast<double>(std::sin(phi)));
};

// cos/sin computed exactly, kept in a 16-bit cache, the rotation in float32 with FMA.
pair_recipe cache_in(dtype cache) {
  return [cache](std::int64_t m, int, long double theta, double xa, double xb) {
    const long double phi = m * theta;
    return fused(xa, xb, round_to_storage(cache, static_cast<double>(std::cos(phi))),
                 round_to_storage(cache, static_cast<double>(std::sin(phi))));
  };
}

// PyTorch's native 16-bit path: cos/sin cast to the 16-bit type, each product and the sum in it.
pair_recipe native_16_bit(dtype t) {
  return [t](std::int64_t m, int, long double theta, double xa, double xb) {
    const long double phi = m * theta;
    const double c = round_to_storage(t, static_cast<double>(std::cos(phi)));
    const double s = round_to_storage(t, static_cast<double>(std::sin(phi)));
    const auto r = [t](double v) { return round_to_storage(t, static_cast<float>(v)); };
    return std::pair{r(r(xa * c) - r(xb * s)), r(r(xb * c) + r(xa * s))};
  };
}

// Hugging Face's float32 path: inv_freq = 1 / base^(arange(0, d, 2) / d) in float32, the angle
// float(m)·inv_freq in float32, cosf/sinf, the rotation in float32 without FMA.
const pair_recipe hugging_face_float32 = [](std::int64_t m, int j, long double, double xa, double xb) {
  const float inv_freq = 1.0f / std::pow(static_cast<float>(base), static_cast<float>(2 * j) / 64.0f);
  const float phi = static_cast<float>(m) * inv_freq;
  const float c = std::cos(phi), s = std::sin(phi), fa = static_cast<float>(xa), fb = static_cast<float>(xb);
  const float pa = fa * c, pb = fb * s, qa = fb * c, qb = fa * s;
  return std::pair<double, double>{pa - pb, qa + qb};
};

// Meta's llama reference: freqs_cis = polar(1, outer(arange(end).float(), inv_freq)) — inv_freq
// and the angle in float32, cos/sin of it in float32 (complex64) — then (x_a + i·x_b)·freqs_cis
// in float32 without FMA, cast to the output type (type_as). Adjacent pairs (view_as_complex).
const pair_recipe meta_polar = [](std::int64_t m, int j, long double, double xa, double xb) {
  const float inv_freq = 1.0f / std::pow(static_cast<float>(base), static_cast<float>(2 * j) / 64.0f);
  const float phi = static_cast<float>(m) * inv_freq;
  const float c = std::cos(phi), s = std::sin(phi), fa = static_cast<float>(xa), fb = static_cast<float>(xb);
  const float ac = fa * c, bs = fb * s, as = fa * s, bc = fb * c;
  return std::pair<double, double>{ac - bs, as + bc};
};

// ggml (float16 tensors, computed in float): θ_scale = powf(base, −2/d) and the angle itself
// carried by repeated products, theta = p, then theta *= θ_scale per pair; cosf/sinf.
const pair_recipe ggml_repeated = [](std::int64_t m, int j, long double, double xa, double xb) {
  const float scale = std::pow(static_cast<float>(base), -2.0f / 64.0f);
  float theta = static_cast<float>(m);
  for (int i = 0; i < j; ++i) theta *= scale;
  const float c = std::cos(theta), s = std::sin(theta), fa = static_cast<float>(xa), fb = static_cast<float>(xb);
  const float p0 = fa * c, p1 = fb * s, p2 = fa * s, p3 = fb * c;
  return std::pair<double, double>{p0 - p1, p2 + p3};
};

// Hugging Face in float16: inv_freq, the angle and cos/sin in float32, the cache cast to
// float16 (cos.to(dtype)), then q·cos + rotate_half(q)·sin with float16 products and sums.
const pair_recipe hugging_face_float16 = [](std::int64_t m, int j, long double, double xa, double xb) {
  const float inv_freq = 1.0f / std::pow(static_cast<float>(base), static_cast<float>(2 * j) / 64.0f);
  const float phi = static_cast<float>(m) * inv_freq;
  const double c = round_to_storage(dtype::float16, std::cos(phi));
  const double s = round_to_storage(dtype::float16, std::sin(phi));
  const auto h = [](double v) { return round_to_storage(dtype::float16, static_cast<float>(v)); };
  return std::pair<double, double>{h(h(xa * c) + h(-xb * s)), h(h(xb * c) + h(xa * s))};
};

// `v` rounded toward zero to float16 (10 stored bits; spacing 2^-24 below 2^-14), written from
// the format's definition rather than numeric/'s codec.
double toward_zero_float16(double v) {
  if (v == 0) return v;
  const double spacing = std::fabs(v) < 0x1p-14 ? 0x1p-24 : std::ldexp(1.0, std::ilogb(v) - 10);
  return std::trunc(v / spacing) * spacing;
}

// A correct float32 rotation stored by dropping the low bits (a truncating float16 store).
const pair_recipe truncating_float16_store = [](std::int64_t m, int, long double theta, double xa, double xb) {
  const long double phi = m * theta;
  const auto [ya, yb] = fused(xa, xb, static_cast<double>(std::cos(phi)), static_cast<double>(std::sin(phi)));
  return std::pair{toward_zero_float16(ya), toward_zero_float16(yb)};
};

// cos/sin cached in float16 without A, × A in float32 when read (the attention factor after
// the cache), or with A folded in before the cache (MLAS with onnxruntime-genai's cache).
pair_recipe float16_cache_with_factor(double attention_factor, bool after) {
  return [attention_factor, after](std::int64_t m, int, long double theta, double xa, double xb) {
    const long double phi = m * theta;
    const float a = static_cast<float>(attention_factor);
    double c = static_cast<double>(std::cos(phi)), s = static_cast<double>(std::sin(phi));
    if (after) {
      c = static_cast<float>(round_to_storage(dtype::float16, c)) * a;
      s = static_cast<float>(round_to_storage(dtype::float16, s)) * a;
    } else {
      c = round_to_storage(dtype::float16, c * attention_factor);
      s = round_to_storage(dtype::float16, s * attention_factor);
    }
    return fused(xa, xb, c, s);
  };
}

std::string attribution_text(const reports::audit_report& r) {
  std::string s = "recipe: positions " + r.recipe.positions + ", " + r.recipe.inverse_frequencies + ", angle " +
                  r.recipe.angle + ", trig " + r.recipe.trig + " → " + r.recipe.trig_cache + ", " + r.recipe.arithmetic +
                  "; attribution:";
  for (const auto& a : r.attribution) s += " " + a.stage + " " + fmt_share(a.share);
  return s;
}

// Tests --------------------------------------------------------------------------------------

TEST(Forensics, CorrectOutputsStateNoCauseInEveryDtype) {
  for (const dtype out : {dtype::float32, dtype::float16, dtype::bfloat16}) {
    const auto r = audit_of(correct, spread(), out == dtype::float32 ? dtype::float32 : out, out);
    EXPECT_TRUE(r.passed) << to_string(out);
    EXPECT_TRUE(r.diagnosis.empty()) << to_string(out) << ": " << codes(r);
    ASSERT_TRUE(r.recipe.fitted);
    EXPECT_EQ(r.recipe.positions, "exact");
    EXPECT_EQ(r.recipe.angle, "float64");
  }
}

TEST(Forensics, Float32AngleIsNamedAtSpreadDecodeBlockAndSinglePositions) {
  for (const auto& positions : {spread(), decode_block(), std::vector<std::int64_t>{1 << 20}}) {
    for (const dtype out : {dtype::float32, dtype::float16, dtype::bfloat16}) {
      // At 10^5 the float32 angle's error (≈ 10^5·2^-24 rad) hides under a 16-bit output's unit.
      if (out != dtype::float32 && positions.size() == 64) continue;
      const auto r = audit_of(float32_angle, positions, out, out);
      const std::string what = std::string(to_string(out)) + " from position " + std::to_string(positions.front());
      ASSERT_FALSE(r.passed) << what;
      ASSERT_FALSE(r.diagnosis.empty()) << what;
      EXPECT_EQ(r.diagnosis.front().code, "angle_precision") << what << ": " << codes(r);
      EXPECT_EQ(r.recipe.angle, "float32") << what;
      // In a 16-bit output most of the mean error is the output's own rounding (stated after
      // every other cause); the float32 angle is still the first cause.
      EXPECT_GT(r.diagnosis.front().share, out == dtype::float32 ? 0.5 : 0.05) << what << ": " << codes(r);
      EXPECT_FALSE(r.diagnosis.front().evidence.empty());
    }
  }
}

TEST(Forensics, HuggingFaceFloat32IsReproducedBitForBit) {
  const auto r = audit_of(hugging_face_float32, spread(), dtype::float32, dtype::float32);
  ASSERT_FALSE(r.passed);
  EXPECT_GT(r.recipe.bit_exact, 0.99) << attribution_text(r);
  EXPECT_EQ(r.recipe.inverse_frequencies, "pow float32") << attribution_text(r);
  EXPECT_EQ(r.recipe.trig, "float32") << attribution_text(r);
  EXPECT_EQ(r.recipe.arithmetic, "float32") << attribution_text(r);
  // Both roundings of the angle's inputs are causes of the same size: θ_j from powf, and m·θ_j.
  ASSERT_GE(r.diagnosis.size(), 2u) << codes(r) << attribution_text(r);
  const std::string first = r.diagnosis[0].code, second = r.diagnosis[1].code;
  EXPECT_TRUE((first == "angle_precision" && second == "low_precision_inverse_frequencies") ||
              (second == "angle_precision" && first == "low_precision_inverse_frequencies"))
      << codes(r) << attribution_text(r);
}

// The dumps the slope detector left unexplained, rebuilt from each recipe.
TEST(Forensics, MetaPolarFloat16To131071NamesTheFloat32Angle) {
  std::vector<std::int64_t> positions = spread();
  while (positions.back() > 131071) positions.pop_back();
  positions.push_back(131071);
  const auto r = audit_of(meta_polar, positions, dtype::float16, dtype::float16, 64, 64, pairing::adjacent);
  ASSERT_FALSE(r.passed);
  ASSERT_GE(r.diagnosis.size(), 2u) << codes(r) << attribution_text(r);
  const std::string first = r.diagnosis[0].code, second = r.diagnosis[1].code;
  EXPECT_TRUE(first == "angle_precision" || second == "angle_precision") << codes(r) << attribution_text(r);
  EXPECT_EQ(r.recipe.angle, "float32") << attribution_text(r);
}

TEST(Forensics, GgmlFloat16ToTwoToTheTwentyNamesTheAngle) {
  const auto r = audit_of(ggml_repeated, spread(), dtype::float16, dtype::float16, 64, 64, pairing::adjacent);
  ASSERT_FALSE(r.passed);
  ASSERT_FALSE(r.diagnosis.empty());
  const std::string first = r.diagnosis[0].code;
  EXPECT_EQ(first, "angle_precision") << codes(r) << attribution_text(r);
  EXPECT_EQ(r.recipe.angle, "float32_repeated_product") << attribution_text(r);
}

TEST(Forensics, HuggingFaceFloat16To511NamesTheCacheAndTheArithmetic) {
  const auto r = audit_of(hugging_face_float16, dense(512), dtype::float16, dtype::float16);
  ASSERT_FALSE(r.passed);
  ASSERT_GE(r.diagnosis.size(), 2u) << codes(r) << attribution_text(r);
  const std::string first = r.diagnosis[0].code, second = r.diagnosis[1].code;
  EXPECT_TRUE((first == "low_precision_arithmetic" && second == "low_precision_trig_cache") ||
              (first == "low_precision_trig_cache" && second == "low_precision_arithmetic"))
      << codes(r) << attribution_text(r);
  EXPECT_EQ(r.recipe.trig_cache, "float16") << attribution_text(r);
  EXPECT_EQ(r.recipe.arithmetic, "float16") << attribution_text(r);
}

TEST(Forensics, Float16PositionsAreNamed) {
  std::vector<std::int64_t> positions;
  for (std::int64_t m = 0; m < 9000; m += 7) positions.push_back(m);
  const auto r = audit_of(float16_positions, positions, dtype::float32, dtype::float32);
  ASSERT_FALSE(r.passed);
  ASSERT_FALSE(r.diagnosis.empty());
  EXPECT_EQ(r.diagnosis.front().code, "position_precision") << codes(r);
  EXPECT_EQ(r.recipe.positions, "float16");
}

TEST(Forensics, Bfloat16InverseFrequenciesAreNamed) {
  const auto r = audit_of(bfloat16_frequencies, dense(512), dtype::float32, dtype::float32);
  ASSERT_FALSE(r.passed);
  ASSERT_FALSE(r.diagnosis.empty());
  EXPECT_EQ(r.diagnosis.front().code, "low_precision_inverse_frequencies") << codes(r);
  EXPECT_EQ(r.recipe.inverse_frequencies, "pow bfloat16");
}

TEST(Forensics, A16BitTrigCacheIsNamedInEveryOutputDtype) {
  for (const dtype cache : {dtype::float16, dtype::bfloat16})
    for (const dtype out : {dtype::float32, dtype::float16, dtype::bfloat16}) {
      if (precision_bits(out) < precision_bits(cache)) continue;  // the output hides the cache
      // GPT-NeoX style: partial rotary (32 of 64 dims).
      const auto r = audit_of(cache_in(cache), dense(300), out == dtype::float32 ? dtype::float32 : out, out, 64, 32);
      ASSERT_FALSE(r.passed) << to_string(cache) << " → " << to_string(out);
      ASSERT_FALSE(r.diagnosis.empty());
      EXPECT_EQ(r.diagnosis.front().code, "low_precision_trig_cache")
          << to_string(cache) << " → " << to_string(out) << ": " << codes(r);
      EXPECT_EQ(r.recipe.trig_cache, std::string(to_string(cache)));
    }
}

TEST(Forensics, Native16BitArithmeticIsNamedWithItsCache) {
  for (const dtype t : {dtype::float16, dtype::bfloat16}) {
    const auto r = audit_of(native_16_bit(t), dense(512), t, t);
    ASSERT_FALSE(r.passed) << to_string(t);
    ASSERT_GE(r.diagnosis.size(), 2u) << codes(r);
    const std::string first = r.diagnosis[0].code, second = r.diagnosis[1].code;
    EXPECT_TRUE((first == "low_precision_arithmetic" && second == "low_precision_trig_cache") ||
                (first == "low_precision_trig_cache" && second == "low_precision_arithmetic"))
        << to_string(t) << ": " << codes(r);
    EXPECT_EQ(r.recipe.arithmetic, std::string(to_string(t)));
    double total = 0;
    for (const auto& a : r.attribution) total += a.share;
    EXPECT_NEAR(total, 1.0, 1e-9);
  }
}

// The stages a recipe's contract is spelled in are the ones the audit names: a truncating
// store, and where the attention factor meets a 16-bit cache.
TEST(Forensics, ATruncatingStoreIsNamed) {
  const auto r = audit_of(truncating_float16_store, spread(), dtype::float16, dtype::float16);
  ASSERT_FALSE(r.passed);
  ASSERT_FALSE(r.diagnosis.empty());
  EXPECT_EQ(r.diagnosis.front().code, "output_store") << codes(r) << attribution_text(r);
  EXPECT_EQ(r.recipe.output_store, "truncation") << attribution_text(r);
  EXPECT_GT(r.recipe.bit_exact, 0.99) << attribution_text(r);
}

TEST(Forensics, TheAttentionFactorIsPlacedBeforeOrAfterA16BitCache) {
  for (const bool after : {false, true}) {
    const auto r = audit_of(float16_cache_with_factor(1.2, after), dense(300), dtype::float32, dtype::float32, 64,
                            64, pairing::half_split, 1.2);
    ASSERT_FALSE(r.passed) << after;
    ASSERT_FALSE(r.diagnosis.empty());
    EXPECT_EQ(r.diagnosis.front().code, "low_precision_trig_cache") << codes(r);
    EXPECT_EQ(r.recipe.trig_cache, "float16") << attribution_text(r);
    EXPECT_EQ(r.recipe.attention_factor, after ? "after_cache" : "in_cache") << attribution_text(r);
    EXPECT_GT(r.recipe.bit_exact, 0.9) << attribution_text(r);
  }
}

// The rows that fail are few and none of the evenly spread sample: float16 positions (exact
// below 2048) in a dump of many short sequences and one long one. The sample holds the failing
// vectors wherever they lie, so the recipe and the causes are those of the failing outputs.
TEST(Forensics, FewFailingRowsOutsideTheSpreadAreStillExplained) {
  std::vector<std::int64_t> positions;
  for (int sequence = 0; sequence < 40; ++sequence)
    for (std::int64_t m = 0; m < 2048; m += 16) positions.push_back(m);
  for (std::int64_t m = 2049; m < 8192; m += 997) positions.push_back(m);  // 7 rows, odd positions
  const auto r = audit_of(float16_positions, positions, dtype::float32, dtype::float32);
  ASSERT_FALSE(r.passed);
  ASSERT_FALSE(r.diagnosis.empty());
  EXPECT_EQ(r.diagnosis.front().code, "position_precision") << codes(r) << attribution_text(r);
  EXPECT_EQ(r.recipe.positions, "float16") << attribution_text(r);
  EXPECT_NE(r.diagnosis.front().evidence.find("at the vector holding the worst output"), std::string::npos)
      << r.diagnosis.front().evidence;
}

// A bug on top of a low-precision recipe: the float32 angle of most real kernels, at positions
// off by one, to 10^5 (past which the float32 angle's own error hides a correct kernel's
// tolerance). The audit names the offset first and the float32 angle after it.
TEST(Forensics, AnOffByOneOnFloat32AnglesIsNamedFirst) {
  const pair_recipe off_by_one = [](std::int64_t m, int j, long double theta, double xa, double xb) {
    return float32_angle(m + 1, j, theta, xa, xb);
  };
  std::vector<std::int64_t> positions;
  for (std::int64_t m = 0; m < 100000; m += 397) positions.push_back(m);
  const auto r = audit_of(off_by_one, positions, dtype::float32, dtype::float32);
  ASSERT_FALSE(r.passed);
  ASSERT_GE(r.diagnosis.size(), 2u) << codes(r);
  EXPECT_EQ(r.diagnosis[0].code, "position_offset") << codes(r) << attribution_text(r);
  EXPECT_NE(r.diagnosis[0].message.find("shifted by +1"), std::string::npos) << r.diagnosis[0].message;
  EXPECT_EQ(r.diagnosis[1].code, "angle_precision") << codes(r);
}

// A pairing mix-up in a kernel with a float16 cos/sin cache (GPT-J's interleaved pairs where
// the config says NeoX's halves): named wrong_pairing first, not a low-precision cache.
TEST(Forensics, APairingMixUpOnAFloat16CacheIsNamedFirst) {
  const auto r = audit_of(cache_in(dtype::float16), spread(), dtype::float32, dtype::float32, 64, 64,
                          pairing::adjacent, 1, pairing::half_split);
  ASSERT_FALSE(r.passed);
  ASSERT_GE(r.diagnosis.size(), 2u) << codes(r);
  EXPECT_EQ(r.diagnosis[0].code, "wrong_pairing") << codes(r) << attribution_text(r);
  EXPECT_NE(r.diagnosis[0].evidence.find("trig_cache=float16"), std::string::npos) << r.diagnosis[0].evidence << codes(r);
}

// Position streams get the same forensics: M-RoPE (Qwen2-VL's sections 16/24/24, contiguous)
// with float32 angles, image tokens at positions past 10^5: the recipe found is the float32
// angle and it is the main cause. Y from an independent simulation: each pair at its section's
// stream position.
TEST(Forensics, MRopeWithFloat32AnglesIsNamedByItsRecipe) {
  audit_input in;
  in.spec = parse_spec(nlohmann::json::parse(
                           R"({"head_dim": 128, "rope_theta": 1000000.0,
                               "rope_scaling": {"rope_type": "default", "mrope_section": [16, 24, 24]}})"),
                       "qwen2_vl.json");
  std::vector<std::vector<std::int64_t>> streams(3);
  for (std::int64_t r = 0; r < 12; ++r)
    for (std::int64_t c = 0; c < 16; ++c) {
      const std::int64_t t = 100000 + 977 * r;
      streams[0].push_back(t), streams[1].push_back(t + r), streams[2].push_back(t + 3 * c);
    }
  const auto rows = static_cast<std::int64_t>(streams[0].size());
  for (const auto& s : streams) in.stream_positions.insert(in.stream_positions.end(), s.begin(), s.end());
  in.positions = streams[0];
  constexpr int head_dim = 128;
  std::vector<double> x(static_cast<std::size_t>(rows * heads * head_dim)), y(x.size());
  std::mt19937_64 rng(21);
  std::normal_distribution<double> normal;
  for (double& v : x) v = static_cast<float>(normal(rng));
  for (std::int64_t row = 0; row < rows; ++row)
    for (int h = 0; h < heads; ++h)
      for (int j = 0; j < head_dim / 2; ++j) {
        const int stream = j < 16 ? 0 : j < 40 ? 1 : 2;
        const long double theta = std::pow(1000000.0L, -2.0L * j / head_dim);
        const std::size_t o = static_cast<std::size_t>((row * heads + h) * head_dim);
        const auto [ya, yb] = float32_angle(streams[static_cast<std::size_t>(stream)][static_cast<std::size_t>(row)], j,
                                            theta, x[o + j], x[o + j + head_dim / 2]);
        y[o + j] = static_cast<float>(ya);
        y[o + j + head_dim / 2] = static_cast<float>(yb);
      }
  in.x = from_float64(x, {rows, heads, head_dim}, dtype::float32);
  in.y = from_float64(y, {rows, heads, head_dim}, dtype::float32);
  in.tokens_per_sequence = rows;
  in.heads = heads;
  in.judged = dtype::float32;
  const auto r = run_audit(in);
  ASSERT_FALSE(r.passed);
  ASSERT_FALSE(r.diagnosis.empty());
  EXPECT_EQ(r.diagnosis.front().code, "angle_precision") << codes(r) << attribution_text(r);
  EXPECT_EQ(r.recipe.angle, "float32") << attribution_text(r);
  EXPECT_GT(r.recipe.bit_exact, 0.9) << attribution_text(r);
}

// A rotation that equals the reference at most sampled positions names nothing: float32 angles
// at positions 0 … 4100 fail at a few outputs, and "m mod 4096" (equal to m below 4096) is not
// named as the cause.
TEST(Forensics, AnAlternativeEqualToTheReferenceWhereItPassesNamesNothing) {
  const auto r = audit_of(float32_angle, dense(4101), dtype::float32, dtype::float32);
  ASSERT_FALSE(r.passed);
  ASSERT_FALSE(r.diagnosis.empty());
  EXPECT_EQ(r.diagnosis.front().code, "angle_precision") << codes(r);
  for (const auto& f : r.diagnosis) EXPECT_NE(f.code, "positions_wrapped") << codes(r);
}

}  // namespace
}  // namespace ropecheck::audit
