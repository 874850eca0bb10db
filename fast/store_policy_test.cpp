// store_policy (store_policy.h) and the fp8 codec of the SIMD loops (float8_simd-inl.h):
//  - the last-level cache is read from sysfs as the kernel documents it
//    (Documentation/ABI/testing/sysfs-devices-system-cpu: index*/level, type, size "32768K");
//  - every SIMD kernel, every dtype, both pairings and directions, on every SIMD target this CPU
//    runs: a call past the streaming threshold takes the non-temporal path (counted) and writes
//    the bits of its portable scalar twin; calls below it, and in place, keep cached stores;
//  - the codec against numeric/fp8.h on every fp8 byte and on the float32 values where
//    rounding decides: each fp8 value, the midpoints between neighbours, one float32 ulp
//    either side of both, saturation, NaN payloads, signed zeros, and random bit patterns.
#include <gtest/gtest.h>

#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "fast/kernel_test_support.h"
#include "fast/rotation.h"
#include "fast/simd_target.h"
#include "fast/store_policy.h"
#include "numeric/fp8.h"

namespace ropecheck::fast {
namespace {

using namespace ropecheck::fast::testing;

TEST(cache_size, parses_the_sysfs_size_text) {
  EXPECT_EQ(parse_cache_size("32768K"), std::int64_t{32} << 20);
  EXPECT_EQ(parse_cache_size("1M"), std::int64_t{1} << 20);
  EXPECT_EQ(parse_cache_size("512"), 512);
  EXPECT_EQ(parse_cache_size(""), 0);
  EXPECT_EQ(parse_cache_size("K"), 0);
  EXPECT_EQ(parse_cache_size("12X"), 0);
}

void write_cache(const std::filesystem::path& dir, int index, int level, const char* type, const char* size) {
  const auto entry = dir / ("index" + std::to_string(index));
  std::filesystem::create_directories(entry);
  std::ofstream(entry / "level") << level << "\n";
  std::ofstream(entry / "type") << type << "\n";
  std::ofstream(entry / "size") << size << "\n";
}

TEST(cache_size, takes_the_highest_data_or_unified_level_else_the_fallback) {
  const auto dir = std::filesystem::temp_directory_path() / ("ropecheck_cache_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  // This VM's CPU 0 (AMD EPYC, 2 cores): L1d 48K, L1i 32K, L2 1024K, L3 32768K.
  write_cache(dir, 0, 1, "Data", "48K");
  write_cache(dir, 1, 1, "Instruction", "32K");
  write_cache(dir, 2, 2, "Unified", "1024K");
  write_cache(dir, 3, 3, "Unified", "32768K");
  last_level_cache found = last_level_cache_from(dir);
  EXPECT_EQ(found.bytes, std::int64_t{32} << 20);
  EXPECT_NE(found.source.find("L3"), std::string::npos) << found.source;
  // An instruction cache at a higher level is not where the output goes.
  write_cache(dir, 4, 4, "Instruction", "65536K");
  EXPECT_EQ(last_level_cache_from(dir).bytes, std::int64_t{32} << 20);
  std::filesystem::remove_all(dir);
  found = last_level_cache_from(dir);
  EXPECT_EQ(found.bytes, fallback_last_level_cache_bytes);
  EXPECT_NE(found.source.find("fallback"), std::string::npos) << found.source;
}

TEST(streaming_threshold, defaults_to_the_last_level_cache_and_can_be_set) {
  const std::int64_t llc = find_last_level_cache().bytes;
  EXPECT_GT(llc, 0);
  EXPECT_EQ(streaming_threshold_bytes(), llc);
  set_streaming_threshold_bytes(4096);
  EXPECT_EQ(streaming_threshold_bytes(), 4096);
  set_streaming_threshold_bytes(0);
  EXPECT_EQ(streaming_threshold_bytes(), llc);
}

struct twin {
  const char* simd;
  const char* scalar;
};
constexpr twin twins[] = {{"cache_simd", "cache_scalar"},
                          {"on_the_fly_simd", "on_the_fly_scalar"},
                          {"precise_simd", "precise_scalar"}};

// Random values of the dtype, with special values sprinkled in (NaN, ±inf, ±0, huge, tiny).
buffer input_of(dtype storage, std::int64_t n, std::uint32_t seed) {
  buffer x = random_buffer(storage, n, seed, 3.0f);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), INFINITY, -INFINITY, 0.0f, -0.0f,
                            1e30f, -1e30f, 1e-30f, 500.0f, -70000.0f};
  for (std::int64_t i = 0; i < n; i += 97) x.set(i, specials[(i / 97) % std::size(specials)]);
  return x;
}

bool same_or_both_nan(const buffer& a, const buffer& b) {
  for (std::int64_t i = 0; i < a.count; ++i) {
    const float x = a.get(i), y = b.get(i);
    if (std::isnan(x) && std::isnan(y)) continue;
    if (std::memcmp(&x, &y, sizeof x) != 0) return false;
  }
  return true;
}

// One call of `k`: 64 tokens × 4 heads × 128, positions 0, 7, 14, …
buffer apply(const kernel_info& k, dtype storage, pairing p, direction dir, const buffer& x, float output_scale,
             bool in_place) {
  constexpr std::int64_t tokens = 64, heads = 4, d = 128;
  std::vector<std::int64_t> positions(tokens);
  for (std::int64_t i = 0; i < tokens; ++i) positions[static_cast<std::size_t>(i)] = 7 * i;
  const rope_spec spec = make_spec(d, d, 5e5, p);
  const rope_angles angles = prepare_or_die(k, unscaled_frequencies(spec), 7 * tokens);
  // The output 64-byte aligned, as streaming stores need (buffer's storage is only 8-aligned).
  const std::size_t bytes = static_cast<std::size_t>(x.count) * size_of(storage);
  const std::unique_ptr<std::byte, decltype(&std::free)> aligned(
      static_cast<std::byte*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)), &std::free);
  if (in_place) std::memcpy(aligned.get(), x.data(), bytes);
  rope_call c = make_call({storage, p, d, d}, positions,
                          packed_tensor(in_place ? aligned.get() : x.data(), aligned.get(), heads, d), {}, dir);
  c.output_scale = output_scale;
  const status st = k.apply(c, angles);
  EXPECT_TRUE(st.ok()) << st.message;
  buffer y(storage, x.count);
  std::memcpy(y.data(), aligned.get(), bytes);
  return y;
}

class every_simd_target : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { ASSERT_TRUE(use_simd_target(GetParam()).ok()); }
  void TearDown() override {
    set_streaming_threshold_bytes(0);
    ASSERT_TRUE(use_simd_target("best").ok());
  }
};

TEST_P(every_simd_target, calls_past_the_threshold_stream_and_write_the_scalar_bits) {
  constexpr std::int64_t elements = 64 * 4 * 128;
  for (const twin& t : twins) {
    const kernel_info& simd = *find_kernel(t.simd);
    const kernel_info& scalar = *find_kernel(t.scalar);
    for (dtype storage : storage_dtypes()) {
      const buffer x = input_of(storage, elements, 5);
      const std::int64_t output_bytes = elements * static_cast<std::int64_t>(size_of(storage));
      const std::vector<float> scales =
          is_float8(storage) ? std::vector<float>{1.0f, 0.5f, 3.0f} : std::vector<float>{1.0f};
      for (pairing p : pairings()) {
        for (direction dir : {direction::forward, direction::inverse}) {
          for (float scale : scales) {
            const std::string what = GetParam() + " " + t.simd + " " + std::string(to_string(storage)) + " " +
                                     std::string(to_string(p)) + (dir == direction::inverse ? " inverse" : "") +
                                     " scale " + std::to_string(scale);
            set_streaming_threshold_bytes(output_bytes - 1);  // this call is past it
            const std::int64_t before = streamed_chunks();
            const buffer streamed = apply(simd, storage, p, dir, x, scale, false);
            EXPECT_GT(streamed_chunks(), before) << what << ": the streaming path did not run";
            set_streaming_threshold_bytes(0);
            EXPECT_TRUE(same_or_both_nan(streamed, apply(scalar, storage, p, dir, x, scale, false))) << what;
            if (scale != 1.0f || dir == direction::inverse) continue;
            // At the threshold itself, and in place past it: cached stores, the same bits.
            set_streaming_threshold_bytes(output_bytes);
            const std::int64_t cached_before = streamed_chunks();
            const buffer cached = apply(simd, storage, p, dir, x, scale, false);
            set_streaming_threshold_bytes(output_bytes - 1);
            const buffer in_place = apply(simd, storage, p, dir, x, scale, true);
            EXPECT_EQ(streamed_chunks(), cached_before) << what << ": streamed below the threshold or in place";
            EXPECT_TRUE(cached.same_bits(streamed)) << what;
            EXPECT_TRUE(in_place.same_bits(streamed)) << what;
          }
        }
      }
    }
  }
}

// numeric/fp8.h's decoder and encoder are the reference, element by element.
TEST_P(every_simd_target, float8_codec_matches_numeric_fp8_bit_for_bit) {
  for (dtype storage : {dtype::float8_e4m3fn, dtype::float8_e5m2}) {
    const std::string what = GetParam() + " " + std::string(to_string(storage));
    // Decode: every byte.
    std::vector<std::uint8_t> bytes(256);
    for (int b = 0; b < 256; ++b) bytes[static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(b);
    std::vector<float> decoded(256);
    detail::float8_decode_simd(storage, bytes.data(), decoded.data(), bytes.size());
    for (int b = 0; b < 256; ++b) {
      const auto mine = std::bit_cast<std::uint32_t>(decoded[static_cast<std::size_t>(b)]);
      const auto theirs = std::bit_cast<std::uint32_t>(float8_bits_to_float(storage, static_cast<std::uint8_t>(b)));
      EXPECT_EQ(mine, theirs) << what << " decode of byte " << b;
    }
    // Encode: the values where rounding decides, then random float32 bit patterns.
    std::vector<float> values;
    for (int b = 0; b < 256; ++b) {
      const float v = float8_bits_to_float(storage, static_cast<std::uint8_t>(b));
      const float next = float8_bits_to_float(storage, static_cast<std::uint8_t>((b & 0x80) | ((b & 0x7F) + 1)));
      for (const float u : {v, (b & 0x7F) < 0x7F ? v + (next - v) / 2 : v}) {
        values.insert(values.end(), {u, std::nextafter(u, 0.0f), std::nextafter(u, 2 * u + (u < 0 ? -1.0f : 1.0f))});
      }
    }
    const float extra[] = {INFINITY, -INFINITY, 448.0f, 464.0f, 465.0f, 57344.0f, 61440.0f, 1e38f, -1e38f,
                           0x1p-10f, 0x1p-17f, 0x1p-130f, 0x1p-149f, -0x1p-149f};
    values.insert(values.end(), std::begin(extra), std::end(extra));
    for (std::uint32_t payload : {0x7FC00000u, 0xFFC00000u, 0x7FE00000u, 0x7FA00001u, 0xFFF00000u, 0x7F800001u})
      values.push_back(std::bit_cast<float>(payload));
    std::mt19937 rng(11);
    for (int i = 0; i < (1 << 18); ++i) values.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
    values.resize((values.size() + 63) / 64 * 64, 0.0f);
    std::vector<std::uint8_t> encoded(values.size());
    detail::float8_encode_simd(storage, values.data(), encoded.data(), values.size());
    int reported = 0;
    for (std::size_t i = 0; i < values.size() && reported < 10; ++i) {
      const std::uint8_t theirs = float_to_float8_bits(storage, values[i]);
      if (encoded[i] != theirs) {
        ++reported;
        ADD_FAILURE() << what << " encode of " << values[i] << " (bits 0x" << std::hex
                      << std::bit_cast<std::uint32_t>(values[i]) << "): 0x" << int{encoded[i]} << " vs 0x"
                      << int{theirs};
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(fast, every_simd_target, ::testing::ValuesIn(available_simd_targets()),
                         [](const auto& info) { return info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(every_simd_target);  // a CPU without AVX2

}  // namespace
}  // namespace ropecheck::fast
