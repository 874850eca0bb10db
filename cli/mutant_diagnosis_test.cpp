// The audit names each mutant: a dump of the mutant's own output (one packed forward call on
// the case below, made as fast::apply_packed makes it, with the mutant's frequency code) audited
// in process with audit::run_audit is named first by the diagnosis code the mutant declares
// (mutants/mutant_registry.h, `diagnosis`), but for the audit's known misnamings listed below.
// A mutant that declares none has a defect no such dump can show (in K, the inverse direction,
// strides, in place, large calls, refused calls): its dump must then pass the audit, which
// checks that claim too. The dumps are the mutants' output, never the audit's recomputation;
// the defect-free kernel's dumps of the same cases pass.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "audit/audit.h"
#include "fast/kernels.h"
#include "io/tensor.h"
#include "mutants/mutant_registry.h"
#include "spec/spec_reader.h"
#include "spec/stream_layout.h"

namespace ropecheck {
namespace {

// What a defect needs to show, as spec and call choices (data, per mutant; the rest share the
// default case: base 5e5, head_dim 80 with rotary_dim 40 — a partial rotary whose 20 pairs are
// not a multiple of the vector width —, 2 heads, positions 0 … 255 and then up to 151 000).
struct dump_case {
  nlohmann::json spec = {{"head_dim", 80}, {"partial_rotary_factor", 0.5}, {"rope_theta", 500000.0}};
  float output_scale = 1.0f;
  std::string config;  // a model config of fixtures/model-configs instead of `spec`
  std::string tower;   // its vision tower
};

dump_case case_for(std::string_view mutant) {
  dump_case c;
  if (mutant.starts_with("attention_factor"))
    c.spec["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 32768}};
  if (mutant == "llama3_factors_swapped") c.config = "Llama-3.1-8B.json";
  if (mutant == "dynamic_ntk_static_base") {  // the sequence (151 041) far past the trained 4096
    c.spec["rope_scaling"] = {{"rope_type", "dynamic"}, {"factor", 2.0}};
    c.spec["max_position_embeddings"] = 4096;
  }
  if (mutant.starts_with("fp8_scale")) c.output_scale = 0.375f;
  if (mutant.starts_with("mrope_") || mutant == "text_position_in_one_stream")
    c.config = mutant == "mrope_contiguous_for_interleaved" ? "Qwen3-VL-8B-Instruct.json" : "Qwen2.5-VL-7B-Instruct.json";
  if (mutant == "vision_rows_columns_swapped") {
    c.config = "Qwen2.5-VL-7B-Instruct.json";
    c.tower = "vision";
  }
  return c;
}

rope_spec spec_of(const dump_case& c) {
  if (c.config.empty()) return parse_spec(c.spec, "case.json", spec_options{});
  std::ifstream in(ROPECHECK_SOURCE_DIR "/fixtures/model-configs/" + c.config);
  return parse_spec(nlohmann::json::parse(in), c.config, spec_options{"", c.tower});
}

// Per stream: text tokens 0 … 255 on every stream, then an image grid (stream 0 fixed, the others
// its rows and columns) or, for one stream, positions up to 151 000.
std::vector<std::int64_t> case_positions(int streams) {
  std::vector<std::vector<std::int64_t>> s(static_cast<std::size_t>(streams));
  for (std::int64_t m = 0; m < 256; ++m)
    for (auto& stream : s) stream.push_back(m);
  if (streams == 1) {
    for (std::int64_t k = 1; k <= 256; ++k) s[0].push_back(256 + k * 589);
  } else {
    for (std::int64_t r = 0; r < 12; ++r)
      for (std::int64_t col = 0; col < 16; ++col) {
        s[0].push_back(streams == 2 ? r : 256);
        s[1].push_back(streams == 2 ? col : 256 + r);
        if (streams == 3) s[2].push_back(256 + col);
      }
  }
  std::vector<std::int64_t> out;
  for (const auto& stream : s) out.insert(out.end(), stream.begin(), stream.end());
  return out;
}

// The dump of one packed forward call of `kernel` on the case of `mutant` (its frequency code
// when the defect is there), audited in process.
reports::audit_report audit_of_dump(const mutants::mutant& mutant, const fast::kernel_info& kernel,
                                    dtype storage) {
  constexpr std::int64_t heads = 2;
  const dump_case c = case_for(mutant.kernel.name);
  const rope_spec spec = spec_of(c);
  audit::audit_input in;
  in.spec = spec;
  const int streams = spec.streams.streams();
  const std::vector<std::int64_t> positions = case_positions(streams);
  const auto rows = static_cast<std::int64_t>(positions.size()) / streams;
  in.positions.assign(positions.begin(), positions.begin() + rows);
  if (streams > 1) in.stream_positions = positions;
  std::vector<double> x(static_cast<std::size_t>(rows * heads * spec.head_dim));
  std::mt19937_64 rng(26);
  std::normal_distribution<double> normal;
  for (double& v : x) v = 4 * normal(rng);
  in.x = from_float64(x, {rows, heads, spec.head_dim}, storage);
  in.y = tensor(storage, in.x.shape);
  // As fast::apply_packed calls a kernel, with the mutant's frequencies and a dense table.
  std::int64_t max_position = 0;
  for (const std::int64_t m : positions) max_position = std::max(max_position, m + 1);
  auto angles = kernel.prepare(mutants::mutant_frequencies(mutant, spec, max_position), max_position);
  EXPECT_TRUE(angles.ok()) << angles.state.message;
  const std::vector<std::int32_t> map = pair_streams(spec.streams, spec.rotary_dim);
  fast::rope_call call = fast::with_streams(
      fast::make_call({storage, spec.pair, spec.head_dim, spec.rotary_dim}, positions,
                      fast::packed_tensor(in.x.bytes().data(), in.y.mutable_bytes().data(), heads, spec.head_dim)),
      positions, streams, map);
  call.output_scale = c.output_scale;
  const fast::status s = kernel.apply(call, *angles.value);
  EXPECT_TRUE(s.ok()) << kernel.name << ": " << s.message;
  in.heads = heads;
  in.tokens_per_sequence = rows;
  in.judged = storage;
  in.output_scale = c.output_scale;
  return audit::run_audit(in);
}

std::vector<std::string> mutant_names() {
  std::vector<std::string> names;
  for (const auto& m : mutants::mutant_registry()) names.emplace_back(m.kernel.name);
  return names;
}

// What the audit names first today where that is not the mutant's declared code: the audit's
// known misnamings, kept as data so that a fix (or a new misnaming) fails here until this table
// and the registry agree again.
struct misnaming {
  std::string_view mutant;
  std::string_view named_now;
  std::string_view why;
};
constexpr std::array<misnaming, 0> known_misnamings{};  // none today; a new one is a row here

class mutant_diagnosis : public ::testing::TestWithParam<std::string> {};

TEST_P(mutant_diagnosis, the_audit_of_its_dump_names_it_first) {
  const mutants::mutant& m = *mutants::find_mutant(GetParam());
  const reports::audit_report r = audit_of_dump(m, m.kernel, m.kernel.dtypes.front());
  const std::string first = r.diagnosis.empty() ? "(none)" : r.diagnosis.front().code;
  std::string all;
  for (const auto& f : r.diagnosis) all += " " + f.code + fmt::format("({:.2g})", f.share);
  std::printf("[ audit    ] %-32s declares %-34s named:%s\n", std::string(m.kernel.name).c_str(),
              m.diagnosis.empty() ? "(a pass)" : std::string(m.diagnosis).c_str(), all.c_str());
  if (m.diagnosis.empty()) {
    EXPECT_TRUE(r.passed) << m.kernel.name << " declares no diagnosis, but its dump fails the audit, first "
                          << first << (r.diagnosis.empty() ? "" : ": " + r.diagnosis.front().message);
    return;
  }
  EXPECT_FALSE(r.passed) << m.kernel.name << ": its dump passes the audit";
  ASSERT_FALSE(r.diagnosis.empty());
  for (const misnaming& known : known_misnamings) {
    if (known.mutant != m.kernel.name) continue;
    EXPECT_NE(known.named_now, m.diagnosis);
    EXPECT_EQ(first, known.named_now) << m.kernel.name << ": the audit no longer misnames it as " << known.named_now
                                      << " (" << known.why << "): drop it from known_misnamings";
    return;
  }
  EXPECT_EQ(first, m.diagnosis) << m.kernel.name << ": " << r.diagnosis.front().message << " [" << r.diagnosis.front().evidence << "]";
}

INSTANTIATE_TEST_SUITE_P(catalog, mutant_diagnosis, ::testing::ValuesIn(mutant_names()),
                         [](const auto& info) { return info.param; });

// The control: the mutants' kernel without a defect passes the audit of every mutant's case (its
// first dtype; the fp8-only mutants' cases in bfloat16, the control having no fp8).
TEST(mutant_diagnosis_control, the_defect_free_dump_of_each_case_passes) {
  const fast::kernel_info& control = mutants::defect_free_kernel();
  for (const auto& m : mutants::mutant_registry()) {
    const mutants::mutant correct{m.kernel, "", {}, ""};  // its case, correct frequencies
    const dtype storage = control.supports(m.kernel.dtypes.front()) ? m.kernel.dtypes.front() : dtype::bfloat16;
    if (case_for(m.kernel.name).output_scale != 1.0f && storage != m.kernel.dtypes.front()) continue;
    const reports::audit_report r = audit_of_dump(correct, control, storage);
    EXPECT_TRUE(r.passed) << m.kernel.name << "'s case: " << (r.diagnosis.empty() ? "" : r.diagnosis.front().message);
  }
}

}  // namespace
}  // namespace ropecheck
