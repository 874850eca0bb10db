// `identify` in process: dumps generated here from a convention written out independently
// (long double rotation, rounded once to the output dtype) — both pairings, partial rotary, a
// position offset, a linear factor, a piecewise (YaRN-like) scaling, an attention factor, in
// float32, float16 and bfloat16 — and identify must recover the convention, and write a spec
// the audit passes the dump against.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <fstream>
#include <random>

#include "audit/identify.h"
#include "audit/positions_test_support.h"
#include "io/io_error.h"
#include "reference/double_tier.h"
#include "reference/rope_tensor.h"
#include "numeric/half.h"
#include "spec/spec_reader.h"

namespace ropecheck::audit {
namespace {

struct convention {
  int head_dim = 64, rotary_dim = 64;
  long double base = 10000;
  pairing pair = pairing::half_split;
  std::function<long double(int)> theta_scale = [](int) { return 1.0L; };  // θ'_j = θ_j · scale(j)
  long double attention = 1;
  std::int64_t offset = 0;
  long double x_scale = 1;  // X is N(0, 1)·x_scale
  std::function<void(std::vector<double>& x, std::vector<double>& y)> edit = {};  // applied last
};

double rounded(dtype t, long double v) {
  if (t == dtype::float16) return float16_bits_to_float(double_to_float16_bits(static_cast<double>(v)));
  if (t == dtype::bfloat16) return bfloat16_bits_to_float(double_to_bfloat16_bits(static_cast<double>(v)));
  return static_cast<float>(v);
}

identification identify_dump(const convention& c, const std::vector<std::int64_t>& positions, dtype t) {
  constexpr std::int64_t heads = 4;
  const auto rows = static_cast<std::int64_t>(positions.size());
  std::vector<double> x(static_cast<std::size_t>(rows * heads * c.head_dim)), y(x.size());
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  for (double& v : x) v = rounded(t, normal(rng) * c.x_scale);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::size_t o = static_cast<std::size_t>((r * heads + h) * c.head_dim);
      for (int k = c.rotary_dim; k < c.head_dim; ++k) y[o + k] = x[o + k];
      for (int j = 0; j < c.rotary_dim / 2; ++j) {
        const std::size_t a = o + (c.pair == pairing::adjacent ? 2 * j : j);
        const std::size_t b = o + (c.pair == pairing::adjacent ? 2 * j + 1 : j + c.rotary_dim / 2);
        const long double theta = std::pow(c.base, -2.0L * j / c.rotary_dim) * c.theta_scale(j);
        const long double phi = static_cast<long double>(positions[r] + c.offset) * theta;
        y[a] = rounded(t, c.attention * (x[a] * std::cos(phi) - x[b] * std::sin(phi)));
        y[b] = rounded(t, c.attention * (x[b] * std::cos(phi) + x[a] * std::sin(phi)));
      }
    }
  if (c.edit) c.edit(x, y);
  identify_input in;
  in.x_file = "X.npy";
  in.y_file = "Y.npy";
  in.positions_file = "POS.npy";
  in.x = from_float64(x, {rows, heads, c.head_dim}, t);
  in.y = from_float64(y, {rows, heads, c.head_dim}, t);
  in.positions = positions;
  in.heads = heads;
  in.judged = t;
  return identify(in);
}

using test_positions::dense;
using test_positions::spread;

std::string fmt_config(const char* scaling, const char* pairing_name) {
  return std::string(R"({"head_dim": 64, "rope_theta": 10000.0, "max_position_embeddings": 4096, "pairing": ")") +
         pairing_name + R"(", "rope_scaling": )" + scaling + "}";
}

TEST(Identify, RecoversBaseAndFrequenciesOfACorrectFloat32OutputToOneInAMillion) {
  for (const pairing pair : {pairing::half_split, pairing::adjacent})
    for (const auto& positions : {dense(0, 256), spread()}) {
      convention c;
      c.pair = pair;
      c.base = 500000;
      const identification id = identify_dump(c, positions, dtype::float32);
      EXPECT_EQ(id.pair, pair);
      EXPECT_EQ(id.rotary_dim, 64);
      EXPECT_NEAR(id.base / 500000.0, 1, 1e-6) << id.base;
      EXPECT_EQ(id.linear_factor, 1);
      EXPECT_FALSE(id.explicit_frequencies);
      for (int j = 0; j < 32; ++j) {
        const double expected = std::pow(500000.0, -2.0 * j / 64);
        EXPECT_NEAR(std::pow(id.base, -2.0 * j / 64) / expected, 1, 1e-6) << j;
      }
      EXPECT_EQ(id.offset, 0);
      EXPECT_EQ(id.attention_factor, 1);
      EXPECT_TRUE(id.audit_passed) << identification_text(id);
    }
}

// A base no config rounds to (123456.7) in an exact kernel: the integer 123457 fits θ_j within a
// float32 recipe's rounding, but the recipe search reproduces Y better under the fit, so the
// fit is kept and the report says why.
TEST(Identify, AnUnconventionalBaseOfAnExactKernelIsNotSnapped) {
  convention c;
  c.base = 123456.7L;
  const identification id = identify_dump(c, spread(), dtype::float32);
  EXPECT_NEAR(id.base / 123456.7, 1, 2e-7) << identification_text(id);
  EXPECT_FALSE(id.convention.base_snapped);
  EXPECT_NE(id.convention.snap_refused.find("rope_theta 123457 fits"), std::string::npos) << identification_text(id);
  EXPECT_TRUE(id.audit_passed) << identification_text(id);
  EXPECT_EQ(identification_json(id).at("base").at("snap_refused"), id.convention.snap_refused);
}

TEST(Identify, PartialRotaryAndAnOffsetDecodeBlockInEveryDtype) {
  for (const dtype t : {dtype::float32, dtype::float16, dtype::bfloat16}) {
    convention c;
    c.rotary_dim = 32;
    c.pair = pairing::adjacent;
    c.offset = 3;
    const identification id = identify_dump(c, dense(1000, 64), t);
    EXPECT_EQ(id.rotary_dim, 32) << to_string(t);
    EXPECT_EQ(id.pair, pairing::adjacent) << to_string(t);
    EXPECT_EQ(id.offset, 3) << to_string(t) << identification_text(id);
    EXPECT_NEAR(id.base / 10000.0, 1, t == dtype::float32 ? 1e-4 : 3e-2) << to_string(t) << identification_text(id);
  }
}

TEST(Identify, ALinearFactorAndAnAttentionFactor) {
  for (const dtype t : {dtype::float32, dtype::bfloat16}) {
    convention c;
    c.theta_scale = [](int) { return 0.25L; };
    c.attention = 1.25L;
    const identification id = identify_dump(c, spread(), t);
    EXPECT_FALSE(id.explicit_frequencies) << identification_text(id);
    EXPECT_NEAR(id.linear_factor, 4, t == dtype::float32 ? 1e-5 : 1e-2) << identification_text(id);
    EXPECT_NEAR(id.attention_factor, 1.25, t == dtype::float32 ? 1e-6 : 1e-2) << identification_text(id);
    const auto spec = nlohmann::json::parse(spec_json(id).dump());
    EXPECT_EQ(spec["rope_scaling"]["rope_type"], "linear");
  }
}

TEST(Identify, APiecewiseScalingIsWrittenAsExplicitFrequenciesTheAuditAccepts) {
  convention c;
  c.theta_scale = [](int j) { return j < 12 ? 1.0L : j < 20 ? 1.0L / (1 + (j - 11) / 8.0L * 7) : 0.125L; };
  const identification id = identify_dump(c, spread(), dtype::float32);
  EXPECT_TRUE(id.explicit_frequencies) << identification_text(id);
  for (int j = 0; j < 32; ++j) {
    const double expected = static_cast<double>(std::pow(10000.0L, -2.0L * j / 64) * c.theta_scale(j));
    EXPECT_NEAR(id.theta[j] / expected, 1, 1e-6) << j;
  }
  EXPECT_TRUE(id.audit_passed) << identification_text(id);
  EXPECT_NO_THROW(parse_spec(spec_json(id), "identify"));
}

// Data that cannot show a convention is bad input (io_error, exit 2), named in one line.
TEST(Identify, OnePositionOrNothingRotatedIsBadInput) {
  convention c;
  EXPECT_THROW(identify_dump(c, {std::int64_t{7}, std::int64_t{7}}, dtype::float32), io_error);
  EXPECT_THROW(identify_dump(c, {std::int64_t{0}, std::int64_t{0}}, dtype::float32), io_error);
}

// Every named scaling, generated by the reference's double tier from a spec the spec reader
// parses (the reference shares no code with identify): identify writes a spec under which the
// audit passes, and θ_j within 10^-6 of the tier's.
TEST(Identify, EveryNamedScalingInBothPairingsIsReproducedBySpecItWrites) {
  const char* scalings[] = {
      R"({"rope_type": "linear", "factor": 4.0})",
      R"({"rope_type": "ntk", "factor": 4.0})",
      R"({"rope_type": "dynamic", "factor": 4.0})",
      R"({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096})",
      R"({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192})",
  };
  for (const char* scaling : scalings)
    for (const char* pairing_name : {"half", "adjacent"}) {
      const auto config = nlohmann::json::parse(fmt_config(scaling, pairing_name));
      const rope_spec spec = parse_spec(config, "test");
      const std::vector<std::int64_t> positions = spread();
      const reference::double_tier tier(spec, positions);
      constexpr std::int64_t heads = 2;
      const auto rows = static_cast<std::int64_t>(positions.size());
      std::vector<double> x(static_cast<std::size_t>(rows * heads * 64)), y(x.size());
      std::mt19937_64 rng(3);
      std::normal_distribution<double> normal;
      for (double& v : x) v = static_cast<float>(normal(rng));
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t h = 0; h < heads; ++h) {
          const std::span<const double> xs(x.data() + (r * heads + h) * 64, 64);
          const std::span<double> ys(y.data() + (r * heads + h) * 64, 64);
          tier.rotate(xs, positions[r], ys);
          for (double& v : ys) v = static_cast<float>(v);
        }
      identify_input in;
      in.x = from_float64(x, {rows, heads, 64}, dtype::float32);
      in.y = from_float64(y, {rows, heads, 64}, dtype::float32);
      in.positions = positions;
      in.heads = heads;
      const identification id = identify(in);
      const std::string what = std::string(scaling) + " " + pairing_name;
      EXPECT_EQ(id.pair, spec.pair) << what;
      EXPECT_TRUE(id.audit_passed) << what << "\n" << identification_text(id);
      EXPECT_NEAR(id.attention_factor / tier.attention_factor(), 1, 1e-6) << what;
      for (int j = 0; j < 32; ++j)
        EXPECT_NEAR(id.theta[j] / tier.inverse_frequencies()[j], 1, 1e-6) << what << " j " << j;
      // Named as the config names it, with its base and factor (identify_conventions.h).
      const auto written = spec_json(id);
      EXPECT_EQ(written.at("rope_theta"), 10000.0) << what;
      EXPECT_EQ(written.at("rope_scaling").at("rope_type"), config.at("rope_scaling").at("rope_type")) << what;
      EXPECT_EQ(written.at("rope_scaling").at("factor"), config.at("rope_scaling").at("factor")) << what;
      EXPECT_EQ(id.convention.confidence, 1) << what;
    }
}


// Position streams. The dumps come from the 256-bit reference
// (reference/rope_tensor.h, its own statement of the stream rules in rope_streams.cpp, rounded
// once to float32) under a spec the spec reader parses from a real config in
// fixtures/model-configs/ — never from identify or the double tier it audits with.
namespace streams_test {

rope_spec fixture_spec(const std::string& file, const std::string& tower = "") {
  std::ifstream in(ROPECHECK_SOURCE_DIR "/fixtures/model-configs/" + file);
  return parse_spec(nlohmann::json::parse(in), file, spec_options{"", tower});
}

// Qwen2-VL's get_rope_index: `text` text tokens (three equal streams), then an image of
// grid_h × grid_w merged patches at t = text, h = text + row, w = text + col, then `after` text
// tokens from max + 1.
std::vector<std::int64_t> image_after_text(std::int64_t text, std::int64_t grid_h, std::int64_t grid_w,
                                           std::int64_t after) {
  std::vector<std::int64_t> t, h, w;
  for (std::int64_t k = 0; k < text; ++k) t.push_back(k), h.push_back(k), w.push_back(k);
  for (std::int64_t r = 0; r < grid_h; ++r)
    for (std::int64_t c = 0; c < grid_w; ++c) t.push_back(text), h.push_back(text + r), w.push_back(text + c);
  const std::int64_t next = text + std::max(grid_h, grid_w);
  for (std::int64_t k = 0; k < after; ++k) t.push_back(next + k), h.push_back(next + k), w.push_back(next + k);
  std::vector<std::int64_t> out = t;
  out.insert(out.end(), h.begin(), h.end());
  out.insert(out.end(), w.begin(), w.end());
  return out;
}

// A vision grid's (row, col) per patch, stream-major; `first` is the first row's and column's
// index (Llama 4 counts from 1).
std::vector<std::int64_t> patch_grid(std::int64_t grid_h, std::int64_t grid_w, std::int64_t first = 0) {
  std::vector<std::int64_t> row, col;
  for (std::int64_t r = 0; r < grid_h; ++r)
    for (std::int64_t c = 0; c < grid_w; ++c) row.push_back(first + r), col.push_back(first + c);
  row.insert(row.end(), col.begin(), col.end());
  return row;
}

identify_input reference_dump(const rope_spec& spec, const std::vector<std::int64_t>& positions) {
  constexpr std::int64_t heads = 2;
  const int streams = spec.streams.streams();
  const auto rows = static_cast<std::int64_t>(positions.size()) / streams;
  std::vector<double> x(static_cast<std::size_t>(rows * heads * spec.head_dim));
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  for (double& v : x) v = static_cast<float>(normal(rng));
  const auto y = reference::rope_tensor(x, {rows, heads}, positions, spec, reference::reference_form::elementwise,
                                        reference::reference_output::float32);
  identify_input in;
  in.x = from_float64(x, {rows, heads, spec.head_dim}, dtype::float32);
  in.y = from_float64(y, {rows, heads, spec.head_dim}, dtype::float32);
  in.positions = positions;
  in.streams = streams;
  in.heads = heads;
  in.judged = dtype::float32;
  in.x_file = "x.npy", in.y_file = "y.npy", in.positions_file = "pos.npy";
  return in;
}

void expect_found(const rope_spec& truth, const identification& id) {
  EXPECT_EQ(id.layout.rule, truth.streams.rule) << to_string(id.layout.rule);
  EXPECT_EQ(id.layout.section, truth.streams.section);
  EXPECT_EQ(id.spec.streams.rule, truth.streams.rule);  // the spec written reads back the same
  EXPECT_EQ(id.spec.streams.section, truth.streams.section);
  EXPECT_EQ(id.rotary_dim, truth.rotary_dim);
  EXPECT_EQ(id.pair, truth.pair);
  EXPECT_NEAR(id.base / truth.base, 1, 1e-6);
  EXPECT_FALSE(id.explicit_frequencies);
  EXPECT_EQ(id.offset, 0);
  EXPECT_TRUE(id.audit_passed);
  const auto j = identification_json(id);
  EXPECT_EQ(j.at("position_streams").at("layout"), std::string(to_string(truth.streams.rule)));
  EXPECT_EQ(j.at("position_streams").at("count"), truth.streams.streams());
}

}  // namespace streams_test

// Qwen2.5-VL-7B-Instruct (fixture): contiguous sections [16, 24, 24], half-split, base 10^6,
// at an image grid after text. identify names mrope_sections with those sections.
TEST(IdentifyStreams, Qwen25VLContiguousSectionsAtAnImageGrid) {
  using namespace streams_test;
  const rope_spec truth = fixture_spec("Qwen2.5-VL-7B-Instruct.json");
  ASSERT_EQ(truth.streams.rule, stream_rule::mrope_sections);
  const auto id = identify(reference_dump(truth, image_after_text(6, 10, 14, 6)));
  expect_found(truth, id);
  EXPECT_EQ(id.stream_distinct_pairs, 64);
  EXPECT_NE(identification_text(id).find("mrope_sections [16, 24, 24]"), std::string::npos);
  const auto spec = spec_json(id);
  EXPECT_EQ(spec.at("rope_scaling").at("mrope_section"), nlohmann::json({16, 24, 24}));
  EXPECT_FALSE(spec.at("rope_scaling").contains("mrope_interleaved"));
}

// Qwen3-VL-8B-Instruct (fixture): interleaved sections [24, 20, 20], base 5·10^6.
TEST(IdentifyStreams, Qwen3VLInterleavedSections) {
  using namespace streams_test;
  const rope_spec truth = fixture_spec("Qwen3-VL-8B-Instruct.json");
  ASSERT_EQ(truth.streams.rule, stream_rule::mrope_interleaved);
  const auto id = identify(reference_dump(truth, image_after_text(6, 10, 14, 6)));
  expect_found(truth, id);
  EXPECT_EQ(spec_json(id).at("rope_scaling").at("mrope_interleaved"), true);
}

// Vision towers (`--tower vision` of the fixtures): Qwen2.5-VL rows first, Pixtral (Mistral
// Small 3.1) alternating — the same streams per pair, told apart by the frequency order — and
// the spec written carries the layout as "stream_layout".
TEST(IdentifyStreams, VisionRowsFirstAndAlternating) {
  using namespace streams_test;
  for (const char* file : {"Qwen2.5-VL-7B-Instruct.json", "Mistral-Small-3.1-24B-Instruct-2503.json"}) {
    const rope_spec truth = fixture_spec(file, "vision");
    const auto id = identify(reference_dump(truth, patch_grid(12, 16)));
    SCOPED_TRACE(file);
    expect_found(truth, id);
    EXPECT_EQ(spec_json(id).at("stream_layout"), std::string(to_string(truth.streams.rule)));
  }
}

// Equal streams in every row (text only): every layout fits, so identify refuses (exit 2)
// rather than pick one; so do positions that leave several sections fitting.
TEST(IdentifyStreams, EqualStreamsAreAmbiguousAndRefused) {
  using namespace streams_test;
  const rope_spec truth = fixture_spec("Qwen2.5-VL-7B-Instruct.json");
  std::vector<std::int64_t> text;
  for (int s = 0; s < 3; ++s)
    for (std::int64_t k = 0; k < 40; ++k) text.push_back(k);
  try {
    identify(reference_dump(truth, text));
    FAIL() << "equal streams were identified";
  } catch (const io_error& e) {
    EXPECT_NE(std::string(e.what()).find("hold equal streams in every row"), std::string::npos) << e.what();
  }
  // One image row: height equals temporal on every image token, so the t/h boundary is free.
  try {
    identify(reference_dump(truth, image_after_text(6, 1, 20, 0)));
    FAIL() << "a one-row image was identified";
  } catch (const io_error& e) {
    EXPECT_NE(std::string(e.what()).find("do not tell the stream layouts apart"), std::string::npos) << e.what();
  }
}

// Data that cannot decide the convention is refused (io_error, exit 2) naming the input file
// and why — never a spec with a null or non-finite field (a base of 0/0).
void expect_refused(const convention& c, const std::string& start, dtype t = dtype::float32) {
  try {
    const identification id = identify_dump(c, spread(), t);
    ADD_FAILURE() << "identified: " << spec_json(id).dump();
  } catch (const io_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(start, 0), 0u) << e.what();
  }
}

TEST(IdentifyDegenerate, ZeroXMinusXAndZeroPairsNameTheFileAndWhy) {
  convention zero;
  zero.edit = [](std::vector<double>& x, std::vector<double>& y) {
    std::fill(x.begin(), x.end(), 0.0);
    std::fill(y.begin(), y.end(), 0.0);
  };
  expect_refused(zero, "X.npy: values: are all zero");
  zero.edit = [](std::vector<double>& x, std::vector<double>& y) {
    std::fill(x.begin(), x.end(), 0.0);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = i % 2 ? -0.0 : 0.0;
  };
  expect_refused(zero, "X.npy: values: are all zero");
  convention minus;
  minus.edit = [](std::vector<double>& x, std::vector<double>& y) {
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = -x[i];
  };
  expect_refused(minus, "Y.npy: values: are -X");
  for (const dtype t : {dtype::float32, dtype::bfloat16}) expect_refused(minus, "Y.npy: values: are -X", t);
  convention zero_y;
  zero_y.edit = [](std::vector<double>&, std::vector<double>& y) { std::fill(y.begin(), y.end(), 0.0); };
  expect_refused(zero_y, "Y.npy: values: are zero in most pairs where X is not");
  // One pair (half-split pair 3: dims 3 and 35) zero in X, or only in Y.
  convention pair_x;
  pair_x.edit = [](std::vector<double>& x, std::vector<double>& y) {
    for (std::size_t o = 0; o < x.size(); o += 64) x[o + 3] = x[o + 35] = y[o + 3] = y[o + 35] = 0;
  };
  expect_refused(pair_x, "X.npy: values: are zero in pair 3 (dims 3 and 35)");
  convention pair_y;
  pair_y.edit = [](std::vector<double>&, std::vector<double>& y) {
    for (std::size_t o = 0; o < y.size(); o += 64) y[o + 3] = y[o + 35] = 0;
  };
  expect_refused(pair_y, "Y.npy: values: are zero in pair 3 (dims 3 and 35)");
  // Only the rotated half is -X: the pairs do not turn with the position.
  convention half;
  half.rotary_dim = 32;
  half.edit = [](std::vector<double>& x, std::vector<double>& y) {
    for (std::size_t o = 0; o < x.size(); o += 64)
      for (std::size_t k = 0; k < 32; ++k) y[o + k] = -x[o + k];
  };
  expect_refused(half, "Y.npy: values: turn pair 0 by the same angle at every position");
}

// One pair (head_dim 2): its frequency is base^0 / factor whatever the base, so the base is a
// nominal one and only a linear factor is read; the spec written is one the audit passes.
TEST(IdentifyDegenerate, HeadDimTwoIsIdentifiedWithANominalBase) {
  for (const long double scale : {1.0L, 0.25L}) {
    convention c;
    c.head_dim = c.rotary_dim = 2;
    c.theta_scale = [scale](int) { return scale; };
    const identification id = identify_dump(c, spread(), dtype::float32);
    EXPECT_TRUE(id.base_undetermined);
    EXPECT_TRUE(id.audit_passed) << identification_text(id);
    EXPECT_NEAR(id.linear_factor, static_cast<double>(1 / scale), 1e-5) << identification_text(id);
    EXPECT_NO_THROW(parse_spec(spec_json(id), "identify")) << spec_json(id).dump();
    EXPECT_NE(identification_text(id).find("nominal"), std::string::npos);
  }
}

// Frequencies no base above 1 fits (rising with j), or all equal: written with a base the spec
// accepts (explicit frequencies where no base > 1 fits), and the audit passes the output.
TEST(IdentifyDegenerate, FrequenciesNoBaseAboveOneFitsAreWrittenExplicitly) {
  for (const bool rising : {false, true}) {
    convention c;
    c.theta_scale = [rising](int j) {
      const long double undo = std::pow(10000.0L, 2.0L * j / 64);  // θ_j · undo = 1
      return rising ? undo * std::pow(1.1L, j) * 1e-3L : undo * 0.5L;
    };
    const identification id = identify_dump(c, spread(), dtype::float32);
    EXPECT_TRUE(!rising || id.explicit_frequencies) << identification_text(id);  // equal: a base of 1 + ε fits
    EXPECT_GT(id.base, 1);
    EXPECT_NO_THROW(parse_spec(spec_json(id), "identify")) << spec_json(id).dump();
    EXPECT_TRUE(id.audit_passed) << identification_text(id);
  }
}

// A subnormal X, which the audit accepts: identified like any X (thresholds are relative to
// X's scale), or refused naming a file — never a spec with a null field.
TEST(IdentifyDegenerate, SubnormalXIsIdentifiedOrRefusedNamingAFile) {
  for (const long double scale : {1e-3L, 1e-20L, 1e-39L, 1e-43L}) {
    convention c;
    c.x_scale = scale;
    try {
      const identification id = identify_dump(c, spread(), dtype::float32);
      EXPECT_NO_THROW(parse_spec(spec_json(id), "identify")) << spec_json(id).dump();
      for (const double th : id.theta) EXPECT_TRUE(std::isfinite(th) && th > 0);
      if (scale >= 1e-20L) {
        EXPECT_TRUE(id.audit_passed) << static_cast<double>(scale) << identification_text(id);
      }
    } catch (const io_error& e) {
      EXPECT_TRUE(std::string(e.what()).starts_with("X.npy: ") || std::string(e.what()).starts_with("Y.npy: "))
          << e.what();
      EXPECT_LT(scale, 1e-30L) << e.what();
    }
  }
}

}  // namespace
}  // namespace ropecheck::audit
