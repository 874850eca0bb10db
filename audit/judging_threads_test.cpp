// `ropecheck audit --threads N`: the judging loop splits the rows over threads and merges their
// findings in row order, so the whole report — counts, maxima, ULP mean, the worst output, the
// profiles and the diagnosis drawn from the sample — is the same JSON for every thread count.
// Dumps made here: X standard normal, Y the rotation in long double rounded to float32 (a
// pass), and the same Y with every third head vector's first output pushed off by 2^-12
// relative (a fail with far more failing vectors than the sample's reservoir of 64, so its
// random replacements are exercised), with a non-finite X element, a NaN in Y and a modified
// pass-through element.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "audit/audit.h"
#include "audit/judging_loop.h"
#include "io/tensor.h"

namespace ropecheck::audit {
namespace {

constexpr int heads = 4, head_dim = 64, rotary_dim = 48;
constexpr double base = 10000.0;

audit_input dump(bool failing, std::int64_t rows) {
  audit_input in;
  in.spec = rope_spec{head_dim, rotary_dim, base, pairing::half_split, "test"};
  std::vector<double> x(static_cast<std::size_t>(rows * heads * head_dim)), y(x.size());
  std::mt19937_64 rng(33);
  std::normal_distribution<double> normal;
  for (double& v : x) v = static_cast<float>(normal(rng));
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t m = r * 37 + (r % 5) * 100003;  // positions over many |m| buckets
    in.positions.push_back(m);
    for (int h = 0; h < heads; ++h) {
      const std::size_t o = static_cast<std::size_t>((r * heads + h) * head_dim);
      for (int c = rotary_dim; c < head_dim; ++c) y[o + c] = x[o + c];
      for (int j = 0; j < rotary_dim / 2; ++j) {
        const long double angle = static_cast<long double>(m) * std::pow(static_cast<long double>(base), -2.0L * j / rotary_dim);
        const long double c = std::cos(angle), s = std::sin(angle);
        const std::size_t a = o + static_cast<std::size_t>(j), b = a + rotary_dim / 2;
        y[a] = static_cast<float>(x[a] * c - x[b] * s);
        y[b] = static_cast<float>(x[b] * c + x[a] * s);
      }
      if (failing && (r * heads + h) % 3 == 0) y[o] = static_cast<float>(y[o] + std::ldexp(std::fabs(y[o]) + 1, -12));
    }
  }
  x[static_cast<std::size_t>(7 * heads * head_dim + 3)] = std::numeric_limits<double>::infinity();
  y[static_cast<std::size_t>(11 * heads * head_dim + 5)] = std::numeric_limits<double>::quiet_NaN();
  y[static_cast<std::size_t>(13 * heads * head_dim + rotary_dim + 1)] += 1;
  const std::vector<std::int64_t> shape = {rows, heads, head_dim};
  in.x = from_float64(x, shape, dtype::float32);
  in.y = from_float64(y, shape, dtype::float32);
  in.tokens_per_sequence = rows;
  in.heads = heads;
  in.judged = dtype::float32;
  return in;
}

std::string report_json(audit_input in, int threads) {
  in.threads = threads;
  return to_json(run_audit(in)).dump();
}

TEST(judging_threads, blocks_depend_on_the_dump_only) {
  EXPECT_EQ(judging_block_rows(1, 1024), 1);
  EXPECT_EQ(judging_block_rows(640, 1024), 10);                   // ~64 blocks
  EXPECT_EQ(judging_block_rows(1 << 20, 16384), 64);              // at most 1 MiB of X rows
  EXPECT_EQ(judging_block_rows(100, std::int64_t{8} << 20), 1);  // a row past 1 MiB
  EXPECT_GE(default_judging_threads(), 1);
}

TEST(judging_threads, every_thread_count_gives_the_report_of_one_thread) {
  constexpr std::int64_t rows = 701;  // 64 blocks of 11 rows, the last one short
  ASSERT_EQ(judging_block_rows(rows, heads * head_dim * 4), 11);
  for (const bool failing : {false, true}) {
    const audit_input in = dump(failing, rows);
    const std::string one = report_json(in, 1);
    const nlohmann::json parsed = nlohmann::json::parse(one);
    ASSERT_GT(parsed.at("outputs").get<std::int64_t>(), 0);
    if (failing) {
      ASSERT_GT(parsed.at("outputs_beyond_tolerance").get<std::int64_t>(), 200) << "the reservoir is not exercised";
    } else {
      ASSERT_LE(parsed.at("outputs_beyond_tolerance").get<std::int64_t>(), 1);  // the NaN in Y
    }
    for (const int threads : {2, 3, 8, 0}) EXPECT_EQ(report_json(in, threads), one) << threads << " threads, failing " << failing;
  }
}

}  // namespace
}  // namespace ropecheck::audit
