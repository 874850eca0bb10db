// The audit's diagnosis on position-stream outputs: the outputs of the stream
// mutants (mutants/mutant_registry.cpp — the defects that shipped: M-RoPE height and width
// sections exchanged, contiguous where interleaved was meant, a text position put in one stream
// only, vision rows and columns exchanged) fail their audit, and the diagnosis names the stream
// layout as the main cause; the defect-free kernel passes with no cause. Specs from real configs
// in fixtures/model-configs/, positions Qwen2-VL's get_rope_index gives an image after text.
// In process: audit::run_audit on fast::apply_packed's output.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
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

rope_spec fixture_spec(const std::string& file, const std::string& tower = "") {
  std::ifstream in(ROPECHECK_SOURCE_DIR "/fixtures/model-configs/" + file);
  return parse_spec(nlohmann::json::parse(in), file, spec_options{"", tower});
}

// Text tokens 0..5 (three equal streams), a 10 × 14 image at t = 6, h = 6 + row, w = 6 + col,
// then 6 text tokens from 20; vision: the (row, col) of a 10 × 14 patch grid.
std::vector<std::int64_t> stream_positions(int streams) {
  std::vector<std::vector<std::int64_t>> s(3);
  auto token = [&](std::int64_t t, std::int64_t h, std::int64_t w) { s[0].push_back(t), s[1].push_back(h), s[2].push_back(w); };
  if (streams == 2) {
    for (std::int64_t r = 0; r < 10; ++r)
      for (std::int64_t c = 0; c < 14; ++c) token(r, c, 0);
  } else {
    for (std::int64_t k = 0; k < 6; ++k) token(k, k, k);
    for (std::int64_t r = 0; r < 10; ++r)
      for (std::int64_t c = 0; c < 14; ++c) token(6, 6 + r, 6 + c);
    for (std::int64_t k = 20; k < 26; ++k) token(k, k, k);
  }
  std::vector<std::int64_t> out;
  for (int k = 0; k < streams; ++k) out.insert(out.end(), s[k].begin(), s[k].end());
  return out;
}

reports::audit_report audit_of(const fast::kernel_info& kernel, const rope_spec& spec) {
  constexpr std::int64_t heads = 2;
  const int streams = spec.streams.streams();
  audit::audit_input in;
  in.spec = spec;
  in.stream_positions = stream_positions(streams);
  const auto rows = static_cast<std::int64_t>(in.stream_positions.size()) / streams;
  in.positions.assign(in.stream_positions.begin(), in.stream_positions.begin() + rows);
  std::vector<double> x(static_cast<std::size_t>(rows * heads * spec.head_dim));
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  for (double& v : x) v = normal(rng);
  in.x = from_float64(x, {rows, heads, spec.head_dim}, dtype::float32);
  in.y = tensor(dtype::float32, in.x.shape);
  const fast::status s = fast::apply_packed(kernel, spec, dtype::float32, in.x.bytes().data(),
                                            in.y.mutable_bytes().data(), heads, in.stream_positions);
  EXPECT_TRUE(s.ok()) << s.message;
  in.heads = heads;
  in.tokens_per_sequence = rows;
  in.judged = dtype::float32;
  return audit::run_audit(in);
}

TEST(StreamDiagnosis, EveryStreamMutantIsNamedAsAStreamLayoutBug) {
  struct mutant_case {
    const char* mutant;
    const char* config;
    const char* tower;
    const char* says;  // in the main cause's message
  };
  const mutant_case cases[] = {
      {"mrope_sections_swapped", "Qwen2.5-VL-7B-Instruct.json", "", "height and width sections exchanged"},
      {"mrope_contiguous_for_interleaved", "Qwen3-VL-8B-Instruct.json", "",
       "the mrope_sections layout where mrope_interleaved was configured"},
      {"text_position_in_one_stream", "Qwen2.5-VL-7B-Instruct.json", "", "text token's position put in stream 0 only"},
      {"vision_rows_columns_swapped", "Qwen2.5-VL-7B-Instruct.json", "vision", "rows and columns exchanged"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.mutant);
    const mutants::mutant* m = mutants::find_mutant(c.mutant);
    ASSERT_NE(m, nullptr);
    const rope_spec spec = fixture_spec(c.config, c.tower);
    const auto r = audit_of(m->kernel, spec);
    EXPECT_FALSE(r.passed);
    ASSERT_FALSE(r.diagnosis.empty());
    EXPECT_EQ(r.diagnosis.front().code, "stream_layout") << r.diagnosis.front().message;
    EXPECT_NE(r.diagnosis.front().message.find(c.says), std::string::npos) << r.diagnosis.front().message;
    EXPECT_GE(r.diagnosis.front().share, 0.99);
    EXPECT_TRUE(r.recipe.fitted);  // the recipe fit runs on streams too
  }
  // Control: the same kernel without the defect passes, no cause stated.
  for (const auto& [config, tower] : {std::pair{"Qwen2.5-VL-7B-Instruct.json", ""}, std::pair{"Qwen3-VL-8B-Instruct.json", ""},
                                      std::pair{"Qwen2.5-VL-7B-Instruct.json", "vision"}}) {
    const auto r = audit_of(mutants::defect_free_kernel(), fixture_spec(config, tower));
    EXPECT_TRUE(r.passed) << config << tower;
    EXPECT_TRUE(r.diagnosis.empty()) << config << tower << ": " << r.diagnosis.front().message;
  }
}

// A bug that is not a stream layout's, on stream inputs: every stream's position shifted by one
// (an off-by-one position_ids) is named by the position_offset detector, which now runs on
// streams. Made by the defect-free kernel at positions + 1 and audited at the positions.
TEST(StreamDiagnosis, APositionOffsetOnStreamsIsNamed) {
  const rope_spec spec = fixture_spec("Qwen2.5-VL-7B-Instruct.json");
  constexpr std::int64_t heads = 2;
  audit::audit_input in;
  in.spec = spec;
  in.stream_positions = stream_positions(3);
  const auto rows = static_cast<std::int64_t>(in.stream_positions.size()) / 3;
  in.positions.assign(in.stream_positions.begin(), in.stream_positions.begin() + rows);
  std::vector<std::int64_t> shifted = in.stream_positions;
  for (auto& p : shifted) p += 1;
  std::vector<double> x(static_cast<std::size_t>(rows * heads * spec.head_dim));
  std::mt19937_64 rng(9);
  std::normal_distribution<double> normal;
  for (double& v : x) v = normal(rng);
  in.x = from_float64(x, {rows, heads, spec.head_dim}, dtype::float32);
  in.y = tensor(dtype::float32, in.x.shape);
  ASSERT_TRUE(fast::apply_packed(mutants::defect_free_kernel(), spec, dtype::float32, in.x.bytes().data(),
                                 in.y.mutable_bytes().data(), heads, shifted).ok());
  in.heads = heads;
  in.tokens_per_sequence = rows;
  in.judged = dtype::float32;
  const auto r = audit::run_audit(in);
  EXPECT_FALSE(r.passed);
  ASSERT_FALSE(r.diagnosis.empty());
  EXPECT_EQ(r.diagnosis.front().code, "position_offset") << r.diagnosis.front().message;
  EXPECT_NE(r.diagnosis.front().message.find("shifted by +1"), std::string::npos) << r.diagnosis.front().message;
}

// position_outside_context checks every stream, not only the first (the one reports show): an
// M-RoPE dump whose temporal stream is in range but whose width stream has a negative position
// (row 12) and whose height stream one past max_position_embeddings 128000 (row 40) states both,
// naming the stream; a 2-D vision dump with a negative column likewise. Y is the defect-free
// kernel's at those positions, so the verdict passes: the finding describes the data.
TEST(StreamDiagnosis, PositionsOutsideTheContextAreFoundInEveryStream) {
  for (const char* tower : {"", "vision"}) {
    SCOPED_TRACE(tower);
    const rope_spec spec = fixture_spec("Qwen2.5-VL-7B-Instruct.json", tower);
    const int streams = spec.streams.streams();
    constexpr std::int64_t heads = 2;
    audit::audit_input in;
    in.spec = spec;
    in.stream_positions = stream_positions(streams);
    const auto rows = static_cast<std::int64_t>(in.stream_positions.size()) / streams;
    const auto at = [&](int stream, std::int64_t row) -> std::int64_t& {
      return in.stream_positions[static_cast<std::size_t>(stream * rows + row)];
    };
    at(streams - 1, 12) = -3;  // the last stream: width (M-RoPE) or column (vision)
    if (streams == 3) at(1, 40) = 128000;
    in.positions.assign(in.stream_positions.begin(), in.stream_positions.begin() + rows);
    ASSERT_TRUE(std::all_of(in.positions.begin(), in.positions.end(), [](std::int64_t m) { return m >= 0 && m < 128000; }));
    std::vector<double> x(static_cast<std::size_t>(rows * heads * spec.head_dim));
    std::mt19937_64 rng(3);
    std::normal_distribution<double> normal;
    for (double& v : x) v = normal(rng);
    in.x = from_float64(x, {rows, heads, spec.head_dim}, dtype::float32);
    in.y = tensor(dtype::float32, in.x.shape);
    ASSERT_TRUE(fast::apply_packed(mutants::defect_free_kernel(), spec, dtype::float32, in.x.bytes().data(),
                                   in.y.mutable_bytes().data(), heads, in.stream_positions).ok());
    in.heads = heads;
    in.tokens_per_sequence = rows;
    in.judged = dtype::float32;
    const auto r = audit::run_audit(in);
    EXPECT_TRUE(r.passed);
    std::vector<std::string> messages;
    for (const auto& f : r.diagnosis)
      if (f.code == "position_outside_context") messages.push_back(f.message);
    ASSERT_EQ(messages.size(), streams == 3 ? 2u : 1u);
    const std::string of_rows = "1 of " + std::to_string(rows) + " rows have ";
    EXPECT_NE(messages[0].find(of_rows + "negative positions (lowest -3; in stream " + std::to_string(streams - 1) +
                               " of " + std::to_string(streams) + ")"),
              std::string::npos) << messages[0];
    if (streams == 3) {
      EXPECT_NE(messages[1].find(of_rows + "positions at or past max_position_embeddings 128000 (highest 128000; in "
                                           "stream 1 of 3)"),
                std::string::npos) << messages[1];
    }
  }
}

}  // namespace
}  // namespace ropecheck
