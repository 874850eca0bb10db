// No false alarm from the audit on ggml's four-stream interleaved M-RoPE (mrope_interleaved_4):
// every built-in kernel that serves position streams × every dtype and pairing it serves × 20
// seeds — its own output at [4, tokens] positions (llama.cpp's e = 0 on odd seeds, e = t on even
// ones; sections [6, 5, 5] (no pair on e) or [8, 4, 4] (pairs 13, 14 on e) of 16 pairs, bases
// 10^4·(1 + seed)) passes the audit of its spec with no cause. Every fifth float32 one with pairs
// on e is also audited with e read the other way, which must fail (the audit can fail on these
// shapes). In process: audit::run_audit on
// fast::apply_packed's output.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "audit/audit.h"
#include "fast/kernels.h"
#include "io/tensor.h"
#include "spec/spec_reader.h"
#include "spec/stream_layout.h"

namespace ropecheck {
namespace {

constexpr std::int64_t heads = 2;

rope_spec imrope_spec(int seed) {
  const nlohmann::json sections = seed % 3 == 0 ? nlohmann::json{8, 4, 4} : nlohmann::json{6, 5, 5};
  return parse_spec({{"head_dim", 32},
                     {"rope_theta", 10000.0 * (1 + seed)},
                     {"stream_layout", "mrope_interleaved_4"},
                     {"rope_scaling", {{"rope_type", "default"}, {"mrope_section", sections}, {"mrope_interleaved", true}}}},
                    "imrope.json");
}

// 8 text tokens, then a 4 × 6 image at t = at; e = 0 (llama.cpp) or e = t (transformers).
std::vector<std::int64_t> positions_for(std::int64_t at, bool e_zero) {
  std::vector<std::vector<std::int64_t>> s(4);
  const auto token = [&](std::int64_t t, std::int64_t h, std::int64_t w) {
    s[0].push_back(t), s[1].push_back(h), s[2].push_back(w), s[3].push_back(e_zero ? 0 : t);
  };
  for (std::int64_t m = 0; m < 8; ++m) token(m, m, m);
  for (std::int64_t r = 0; r < 4; ++r)
    for (std::int64_t c = 0; c < 6; ++c) token(at, at + r, at + c);
  std::vector<std::int64_t> out;
  for (const auto& stream : s) out.insert(out.end(), stream.begin(), stream.end());
  return out;
}

TEST(ImropeNoFalseAlarm, EveryStreamKernelsOwnOutputPassesWithNoCause) {
  int audits = 0, controls = 0;
  for (const fast::kernel_info& kernel : fast::kernel_registry()) {
    if (!kernel.multi_stream) continue;
    for (const dtype t : kernel.dtypes)
      for (const pairing pair : kernel.pairings)
        for (int seed = 0; seed < 20; ++seed) {
          audit::audit_input in;
          in.spec = imrope_spec(seed);
          in.spec.pair = pair;
          ASSERT_EQ(in.spec.streams.streams(), 4);
          const bool e_zero = seed % 2 == 1;
          const std::vector<std::int64_t> positions = positions_for(seed % 4 == 0 ? 100000 : 8, e_zero);
          const auto rows = static_cast<std::int64_t>(positions.size()) / 4;
          in.positions.assign(positions.begin(), positions.begin() + rows);
          in.stream_positions = positions;
          std::vector<double> x(static_cast<std::size_t>(rows * heads * in.spec.head_dim));
          std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
          std::normal_distribution<double> normal;
          for (double& v : x) v = normal(rng);
          in.x = from_float64(x, {rows, heads, in.spec.head_dim}, t);
          in.y = tensor(t, in.x.shape);
          const std::string what = fmt::format("{} {} {} seed {}", kernel.name, to_string(t), to_string(pair), seed);
          const fast::status s =
              fast::apply_packed(kernel, in.spec, t, in.x.bytes().data(), in.y.mutable_bytes().data(), heads, positions);
          ASSERT_TRUE(s.ok()) << what << ": " << s.message;
          in.heads = heads;
          in.tokens_per_sequence = rows;
          in.judged = t;
          const reports::audit_report r = audit::run_audit(in);
          ++audits;
          std::string causes;
          for (const auto& f : r.diagnosis) causes += f.code + ": " + f.message + "\n";
          EXPECT_TRUE(r.passed) << what << "\n" << causes;
          EXPECT_TRUE(r.diagnosis.empty()) << what << "\n" << causes;
          // The control: e told the other way round. Only float32 resolves the low-frequency
          // pairs on e at the image's small positions, so the control runs there.
          if (seed % 5 != 0 || t != dtype::float32) continue;
          const auto map = pair_streams(in.spec.streams, in.spec.rotary_dim);
          if (std::count(map.begin(), map.end(), 3) == 0) continue;  // [6, 5, 5]: no pair sits on e
          for (std::int64_t row = 0; row < rows; ++row)
            in.stream_positions[static_cast<std::size_t>(3 * rows + row)] =
                e_zero ? in.stream_positions[static_cast<std::size_t>(row)] : 0;
          EXPECT_FALSE(audit::run_audit(in).passed) << what << ", e told the other way";
          ++controls;
        }
  }
  std::printf("[ audits   ] %d, controls %d\n", audits, controls);
  EXPECT_GT(audits, 20 * 2);   // every stream kernel, dtype and pairing: not a vacuous pass
  EXPECT_GT(controls, 0);
}

}  // namespace
}  // namespace ropecheck
