// Every SIMD target this CPU runs (not only the one Highway would pick) computes the same bits
// as the portable scalar loop: head dims with and without scalar tails, partial rotary, both
// pairings and directions, special values, in place, fp8 output scales, and the non-temporal
// store path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "fast/kernel_test_support.h"
#include "fast/simd_target.h"
#include "fast/store_policy.h"

namespace ropecheck::fast {
namespace {

using namespace ropecheck::fast::testing;

struct shape {
  std::int64_t head_dim;
  std::int64_t rotary_dim;
  std::int64_t heads;
  std::int64_t tokens;
};

// Bits equal, or both NaN (payload propagation through FMA is not part of the contract).
void expect_same(const buffer& a, const buffer& b, const std::string& what) {
  for (std::int64_t i = 0; i < a.count; ++i) {
    const float x = a.get(i), y = b.get(i);
    if (std::isnan(x) && std::isnan(y)) continue;
    ASSERT_EQ(std::memcmp(&x, &y, sizeof x), 0) << what << " at " << i << ": " << x << " vs " << y;
  }
}

buffer run(const kernel_info& k, const rope_angles& angles, dtype storage, pairing p, direction dir,
           const shape& s, const buffer& x, const std::vector<std::int64_t>& positions, bool in_place,
           float output_scale = 1.0f) {
  buffer y = in_place ? x : buffer(storage, x.count);
  rope_call c = make_call({storage, p, s.head_dim, s.rotary_dim},
                                std::span(positions.data(), static_cast<std::size_t>(s.tokens)),
                                packed_tensor(in_place ? y.data() : x.data(), y.data(), s.heads, s.head_dim),
                                {}, dir);
  c.output_scale = output_scale;
  const status st = k.apply(c, angles);
  EXPECT_TRUE(st.ok()) << st.message;
  return y;
}

class every_simd_target : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { ASSERT_TRUE(use_simd_target(GetParam()).ok()); }
  void TearDown() override { ASSERT_TRUE(use_simd_target("best").ok()); }
};

TEST_P(every_simd_target, is_the_one_dispatched_to) { EXPECT_EQ(current_simd_target(), GetParam()); }

// Each SIMD kernel against its portable twin: the float32 kernels (cache: positions < 5000)
// and the one-rounding kernels (on the fly: positions up to 2^31 − 1, negative ones too).
struct twin {
  const char* simd;
  const char* scalar;
  bool large_positions;
};
constexpr twin twins[] = {{"cache_simd", "cache_scalar", false},
                          {"precise_simd", "precise_scalar", true}};

TEST_P(every_simd_target, agrees_bit_for_bit_with_the_scalar_loop) {
  for (const twin& pair_of_kernels : twins) {
    const kernel_info& simd = *find_kernel(pair_of_kernels.simd);
    const kernel_info& scalar = *find_kernel(pair_of_kernels.scalar);
    // 18, 64, 96, 16 and 5 pairs: whole 2·lanes steps for 8 and 16 lanes, tails, partial rotary.
    for (const shape& s : {shape{40, 36, 3, 9}, shape{128, 128, 4, 7}, shape{256, 192, 2, 5},
                           shape{64, 32, 3, 6}, shape{12, 10, 2, 4}}) {
      std::vector<std::int64_t> positions(static_cast<std::size_t>(s.tokens));
      for (std::int64_t i = 0; i < s.tokens; ++i) {
        positions[static_cast<std::size_t>(i)] =
            pair_of_kernels.large_positions ? (i % 2 == 0 ? 1 : -1) * ((i * 2654435761LL) % 2147483647LL)
                                            : (i * 7919) % 5000;
      }
      rope_spec spec = make_spec(static_cast<int>(s.head_dim), static_cast<int>(s.rotary_dim), 1e4, pairing::half_split);
      const rope_angles a_simd = prepare_or_die(simd, unscaled_frequencies(spec), 5000);
      const rope_angles a_scalar = prepare_or_die(scalar, unscaled_frequencies(spec), 5000);
      for (dtype storage : storage_dtypes()) {
        if (!simd.supports(storage)) continue;
        buffer x = random_buffer(storage, s.tokens * s.heads * s.head_dim, 5, 70000.0f);
        x.set(0, INFINITY);
        x.set(3, -INFINITY);
        x.set(4, NAN);
        x.set(5, 1e-40f);
        x.set(7, 65504.0f);
        x.set(8, 3.3e38f);
        for (pairing p : pairings()) {
          for (direction dir : {direction::forward, direction::inverse}) {
            for (bool in_place : {false, true}) {
              // fp8 also with output scales σ (rope_call::output_scale): the vector stores divide
              // as the scalar loop does; a power of two and two that round.
              for (const float scale : is_float8(storage) ? std::vector<float>{1.0f, 0.25f, 0.1f, 3.0f}
                                                          : std::vector<float>{1.0f}) {
                const std::string what = GetParam() + " " + std::string(simd.name) + " " +
                                         std::string(to_string(storage)) + " " +
                                         std::string(to_string(p)) + " dims " + std::to_string(s.rotary_dim) +
                                         "/" + std::to_string(s.head_dim) + (in_place ? " in place" : "") +
                                         (dir == direction::inverse ? " inverse" : "") +
                                         " scale " + std::to_string(scale);
                expect_same(run(simd, a_simd, storage, p, dir, s, x, positions, in_place, scale),
                            run(scalar, a_scalar, storage, p, dir, s, x, positions, in_place, scale), what);
              }
            }
          }
        }
      }
    }
  }
}

// The SIMD fp8 load and store (fast/float8_simd-inl.h): every one of the 256 byte values of each format — zeros, subnormals, max, e5m2's infinities, the NaNs — read
// and rotated, paired with many others, gives the scalar loop's bits (its load is numeric/fp8.h's
// decoder). Position 0 (the identity) stores each input back through the encoder too. A NaN's
// sign and payload after arithmetic are not part of the contract (expect_same).
TEST_P(every_simd_target, every_fp8_byte_agrees_with_the_scalar_loop) {
  const shape s{256, 256, 1, 8};
  const std::vector<std::int64_t> positions{0, 1, 2, 17, 1000, 4999, 3, 2500};
  for (const twin& pair_of_kernels : twins) {
    const kernel_info& simd = *find_kernel(pair_of_kernels.simd);
    const kernel_info& scalar = *find_kernel(pair_of_kernels.scalar);
    const rope_spec spec = make_spec(256, 256, 1e4, pairing::half_split);
    const rope_angles a_simd = prepare_or_die(simd, unscaled_frequencies(spec), 5000);
    const rope_angles a_scalar = prepare_or_die(scalar, unscaled_frequencies(spec), 5000);
    for (dtype storage : {dtype::float8_e4m3fn, dtype::float8_e5m2}) {
      buffer x(storage, s.tokens * s.head_dim);
      auto* bytes = reinterpret_cast<std::uint8_t*>(x.data());
      for (std::int64_t t = 0; t < s.tokens; ++t)  // every byte in each row, in an order per token
        for (std::int64_t i = 0; i < 256; ++i) bytes[t * 256 + i] = static_cast<std::uint8_t>((i * (2 * t + 1) + 37 * t) % 256);
      for (pairing p : pairings()) {
        const std::string what = GetParam() + " " + std::string(simd.name) + " " +
                                 std::string(to_string(storage)) + " " + std::string(to_string(p));
        const buffer mine = run(simd, a_simd, storage, p, direction::forward, s, x, positions, false);
        const buffer theirs = run(scalar, a_scalar, storage, p, direction::forward, s, x, positions, false);
        expect_same(mine, theirs, what);  // decoded values: fp8 decoding is one-to-one but for NaN
      }
    }
  }
}

// Outputs past the streaming threshold are stored non-temporally where aligned
// (store_policy.h); lowered here below these calls' 16 MiB. store_policy_test checks, with
// aligned outputs, that the path runs for every kernel and dtype.
TEST_P(every_simd_target, streaming_stores_write_the_same_bits) {
  set_streaming_threshold_bytes(std::int64_t{1} << 20);
  for (const auto& [simd_name, scalar_name] : {std::pair{"on_the_fly_simd", "on_the_fly_scalar"},
                                               std::pair{"precise_simd", "precise_scalar"}}) {
    const kernel_info& simd = *find_kernel(simd_name);
    const kernel_info& scalar = *find_kernel(scalar_name);
    for (dtype storage : storage_dtypes()) {
      if (!simd.supports(storage)) continue;
      const shape s{128, 128, 32, storage == dtype::float32 ? 1024 : 2048};
      std::vector<std::int64_t> positions(static_cast<std::size_t>(s.tokens));
      for (std::int64_t i = 0; i < s.tokens; ++i) positions[static_cast<std::size_t>(i)] = 3 * i;
      const rope_spec spec = make_spec(128, 128, 5e5, pairing::half_split);
      const rope_angles a_simd = prepare_or_die(simd, unscaled_frequencies(spec), 0);
      const rope_angles a_scalar = prepare_or_die(scalar, unscaled_frequencies(spec), 0);
      const buffer x = random_buffer(storage, s.tokens * s.heads * s.head_dim, 9);
      for (pairing p : pairings()) {
        expect_same(run(simd, a_simd, storage, p, direction::forward, s, x, positions, false),
                    run(scalar, a_scalar, storage, p, direction::forward, s, x, positions, false),
                    GetParam() + " streaming " + std::string(simd.name) + " " +
                        std::string(to_string(storage)) + " " + std::string(to_string(p)));
      }
    }
  }
  set_streaming_threshold_bytes(0);
}

INSTANTIATE_TEST_SUITE_P(fast, every_simd_target, ::testing::ValuesIn(available_simd_targets()),
                         [](const auto& info) { return info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(every_simd_target);  // a CPU without AVX2

TEST(simd_target, unknown_target_is_refused_with_the_available_ones) {
  const status s = use_simd_target("neon");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message.find("neon"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("available"), std::string::npos) << s.message;
}

}  // namespace
}  // namespace ropecheck::fast
