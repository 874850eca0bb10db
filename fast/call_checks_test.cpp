// Every invalid call returns an error status naming the problem (never UB, never abort),
// and the exact row-overlap test agrees with brute force.
#include <gtest/gtest.h>

#include <random>

#include "fast/call_checks.h"
#include "fast/kernel_test_support.h"

namespace ropecheck::fast {
namespace {

using namespace ropecheck::fast::testing;

constexpr std::int64_t d = 16;
constexpr std::int64_t tokens = 4;
constexpr std::int64_t heads = 2;

class invalid_calls : public ::testing::TestWithParam<std::size_t> {
 protected:
  const kernel_info& kernel() const { return kernel_registry()[GetParam()]; }

  void SetUp() override {
    const rope_spec spec = make_spec(d, d, 1e4, pairing::half_split);
    angles_ = std::make_unique<rope_angles>(prepare_or_die(kernel(), unscaled_frequencies(spec), 100));
    x_ = random_buffer(dtype::float32, 4 * tokens * heads * d, 3);
    y_ = buffer(dtype::float32, 4 * tokens * heads * d);
  }

  rope_call valid() {
    return make_call({dtype::float32, pairing::half_split, d, d},
                     std::span(positions_.data(), static_cast<std::size_t>(tokens)),
                     packed_tensor(x_.data(), y_.data(), heads, d));
  }

  // The call must fail with `code` and a message containing `phrase`.
  void expect_error(const rope_call& c, status_code code, const std::string& phrase) {
    const status s = kernel().apply(c, *angles_);
    EXPECT_FALSE(s.ok()) << "accepted: expected '" << phrase << "'";
    EXPECT_EQ(s.code, code) << s.message;
    EXPECT_NE(s.message.find(phrase), std::string::npos) << "message: " << s.message;
  }

  std::unique_ptr<rope_angles> angles_;
  buffer x_, y_;
  std::vector<std::int64_t> positions_{0, 1, 2, 99};
};

TEST_P(invalid_calls, valid_call_succeeds) { EXPECT_TRUE(kernel().apply(valid(), *angles_).ok()); }

TEST_P(invalid_calls, sizes) {
  rope_call c = valid();
  c.rotary_dim = 15;
  expect_error(c, status_code::invalid_argument, "rotary_dim must be even");
  c = valid();
  c.rotary_dim = 0;
  expect_error(c, status_code::invalid_argument, "rotary_dim must be even");
  c = valid();
  c.rotary_dim = 18;
  c.head_dim = 16;
  expect_error(c, status_code::invalid_argument, "exceeds head_dim");
  c = valid();
  c.head_dim = 0;
  expect_error(c, status_code::invalid_argument, "head_dim must be positive");
  c = valid();
  c.tokens = -1;
  expect_error(c, status_code::invalid_argument, "tokens is negative");
  c = valid();
  c.q.heads = -2;
  expect_error(c, status_code::invalid_argument, "q.heads is negative");
  c = valid();
  c.head_dim = 32;
  c.rotary_dim = 32;  // angles were prepared for 8 pairs
  c.q = packed_tensor(x_.data(), y_.data(), heads, 32);
  expect_error(c, status_code::invalid_argument, "inverse frequencies");
}

TEST_P(invalid_calls, positions) {
  rope_call c = valid();
  c.positions = nullptr;
  expect_error(c, status_code::invalid_argument, "positions is null");
  c = valid();
  c.position_type = dtype::float32;
  expect_error(c, status_code::invalid_argument, "int32 or int64");
  std::vector<std::int64_t> bad{0, 1, -3, 2};
  c = valid();
  c.positions = bad.data();
  if (kernel().strategy == angle_strategy::cache) {
    expect_error(c, status_code::out_of_range, "positions[2] = -3");
    bad[2] = 100;  // the cache covers [0, 100)
    expect_error(c, status_code::out_of_range, "outside the cos/sin cache [0, 100)");
  } else {
    EXPECT_TRUE(kernel().apply(c, *angles_).ok()) << "on-the-fly accepts negative positions";
    bad[2] = (std::int64_t{1} << 31) + 1;
    expect_error(c, status_code::out_of_range, "positions[2]");
  }
}

TEST_P(invalid_calls, pointers_and_alignment) {
  rope_call c = valid();
  c.q.input = nullptr;
  expect_error(c, status_code::invalid_argument, "q.input is null");
  c = valid();
  c.q.output = nullptr;
  expect_error(c, status_code::invalid_argument, "q.output is null");
  c = valid();
  c.k = packed_tensor(nullptr, y_.data() + 2048, 1, d);
  expect_error(c, status_code::invalid_argument, "k.input is null");
  c = valid();
  c.q.input = x_.data() + 1;
  expect_error(c, status_code::invalid_argument, "not aligned");
  c = valid();
  c.q.input_head_stride = -d;
  expect_error(c, status_code::invalid_argument, "negative stride");
  c = valid();
  c.q.output_token_stride = std::int64_t{1} << 62;
  expect_error(c, status_code::invalid_argument, "overflow");
}

TEST_P(invalid_calls, aliasing) {
  rope_call c = valid();
  c.q.output = x_.data() + 4 * d * 4;  // shifted by 4 rows into its own input
  expect_error(c, status_code::invalid_argument, "overlaps its input");
  c = valid();
  c.q.output = x_.data();
  c.q.output_head_stride = d + 1;  // same pointer, different strides: not exactly in place
  c.q.output_token_stride = 2 * (d + 1);
  expect_error(c, status_code::invalid_argument, "without being exactly in place");
  c = valid();
  c.q.output_head_stride = d / 2;  // rows of 16 every 8 elements
  expect_error(c, status_code::invalid_argument, "strides alias");
  c = valid();
  c.q.output_head_stride = 0;
  expect_error(c, status_code::invalid_argument, "strides alias");
  c = valid();
  c.q.output_token_stride = d;  // token t+1 head 0 lands on token t head 1
  expect_error(c, status_code::invalid_argument, "strides alias");
  // K written over Q's output rows.
  c = valid();
  const buffer k_in = random_buffer(dtype::float32, tokens * d, 4);
  c.k = packed_tensor(k_in.data(), y_.data() + d * 4, 1, d);
  c.k.output_token_stride = heads * d;
  expect_error(c, status_code::invalid_argument, "q and k outputs overlap");
  // K reading from Q's output region while Q is written out of place.
  c = valid();
  buffer k_out(dtype::float32, tokens * d);
  c.k = packed_tensor(y_.data(), k_out.data(), 1, d);
  expect_error(c, status_code::invalid_argument, "q output overlaps k input");
}

TEST_P(invalid_calls, fused_qkv_in_place_is_accepted) {
  // [tokens, 2 + 1 + 1, d]: Q heads 0-1, K head 2, V head 3, rotated in place in one call.
  buffer qkv = random_buffer(dtype::float32, tokens * 4 * d, 5);
  rope_call c = valid();
  c.q = {qkv.data(), qkv.data(), 2, 4 * d, d, 4 * d, d};
  c.k = {qkv.data() + 2 * d * 4, qkv.data() + 2 * d * 4, 1, 4 * d, d, 4 * d, d};
  EXPECT_TRUE(kernel().apply(c, *angles_).ok()) << kernel().apply(c, *angles_).message;
}

TEST_P(invalid_calls, unsupported_dtype_and_mismatched_angles) {
  rope_call c = valid();
  c.storage = dtype::float64;
  expect_error(c, status_code::unsupported, "does not support dtype float64");
  // Angles of the other strategy.
  const kernel_info* other = nullptr;
  for (const kernel_info& k : kernel_registry()) {
    if (k.strategy != kernel().strategy) other = &k;
  }
  ASSERT_NE(other, nullptr);
  const rope_angles wrong = prepare_or_die(*other, unscaled_frequencies(make_spec(d, d, 1e4, pairing::half_split)), 100);
  const status s = kernel().apply(valid(), wrong);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message.find("needs angles prepared for strategy"), std::string::npos) << s.message;
}

TEST_P(invalid_calls, bad_frequencies_are_refused_at_prepare) {
  rope_frequencies f;
  EXPECT_FALSE(kernel().prepare(f, 10).ok());
  f.inverse_frequencies = {1.0, std::nan("")};
  EXPECT_NE(kernel().prepare(f, 10).state.message.find("not finite"), std::string::npos);
  f.inverse_frequencies = {1.0};
  f.attention_factor = INFINITY;
  EXPECT_FALSE(kernel().prepare(f, 10).ok());
  if (kernel().strategy == angle_strategy::cache) {
    f.attention_factor = 1;
    EXPECT_FALSE(kernel().prepare(f, -1).ok());
    EXPECT_FALSE(kernel().prepare(f, std::int64_t{1} << 40).ok());
  }
}

INSTANTIATE_TEST_SUITE_P(fast, invalid_calls,
                         ::testing::Range<std::size_t>(0, kernel_registry().size()),
                         [](const auto& info) { return std::string(kernel_registry()[info.param].name); });

TEST(lattice_rows_overlap, agrees_with_brute_force) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 3000; ++trial) {
    const std::int64_t t = 1 + rng() % 5, h = 1 + rng() % 5, len = 1 + rng() % 6;
    const std::int64_t ts = rng() % 20, hs = rng() % 20;
    const std::int64_t offset = static_cast<std::int64_t>(rng() % 41) - 20;
    const bool self = rng() % 2 == 0;
    // Self: rows of one lattice; cross: rows of a second lattice shifted by offset.
    bool brute = false;
    for (std::int64_t t1 = 0; t1 < t; ++t1)
      for (std::int64_t h1 = 0; h1 < h; ++h1)
        for (std::int64_t t2 = 0; t2 < t; ++t2)
          for (std::int64_t h2 = 0; h2 < h; ++h2) {
            if (self && t1 == t2 && h1 == h2) continue;
            const std::int64_t a = t1 * ts + h1 * hs;
            const std::int64_t b = (self ? 0 : offset) + t2 * ts + h2 * hs;
            brute = brute || (a < b + len && b < a + len);
          }
    const bool fast_answer =
        self ? detail::lattice_rows_overlap(0, 0, t - 1, ts, -(h - 1), h - 1, hs, len, true)
             : detail::lattice_rows_overlap(offset, -(t - 1), t - 1, ts, -(h - 1), h - 1, hs, len, false);
    ASSERT_EQ(fast_answer, brute) << "t " << t << " h " << h << " len " << len << " ts " << ts
                                  << " hs " << hs << " offset " << offset << " self " << self;
  }
}

}  // namespace
}  // namespace ropecheck::fast
