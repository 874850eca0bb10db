// Behaviour every registered kernel must share: in place == out of place, pass-through dims,
// Q+K in one call == two calls, inverse∘forward ≈ identity, strided layouts == packed, the
// strategies and the SIMD/scalar paths agree bit for bit, and the registry/JSON/CLI helpers.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "fast/kernel_test_support.h"
#include "fast/simd_target.h"
#include "fast/store_policy.h"
#include "spec/pair_index.h"

namespace ropecheck::fast {
namespace {

using namespace ropecheck::fast::testing;

struct setup {
  const kernel_info* kernel;
  dtype storage;
  pairing pair;
};

std::string name_of(const setup& s) {
  return std::string(s.kernel->name) + "_" + std::string(to_string(s.storage)) + "_" +
         std::string(to_string(s.pair));
}

std::vector<setup> all_setups() {
  std::vector<setup> all;
  for (const kernel_info& k : kernel_registry()) {
    for (dtype t : storage_dtypes()) {
      if (!k.supports(t)) continue;
      for (pairing p : pairings()) all.push_back({&k, t, p});
    }
  }
  return all;
}

constexpr std::int64_t head_dim = 40;
constexpr std::int64_t rotary_dim = 36;  // 18 pairs: whole vectors plus a scalar tail
constexpr std::int64_t tokens = 37;

std::vector<std::int64_t> some_positions(std::int64_t n) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) p[static_cast<std::size_t>(i)] = (i * 7919) % 5000;
  return p;
}

class kernel_behaviour : public ::testing::TestWithParam<setup> {
 protected:
  const kernel_info& kernel() const { return *GetParam().kernel; }
  dtype storage() const { return GetParam().storage; }

  rope_call base_call() const {
    return make_call({storage(), GetParam().pair, head_dim, rotary_dim},
                     std::span(positions_.data(), static_cast<std::size_t>(tokens)), {});
  }
  const rope_angles& angles() const { return angles_for(kernel()); }
  const rope_angles& angles_for(const kernel_info& k) const {
    static std::map<angle_strategy, rope_angles> prepared;
    auto it = prepared.find(k.strategy);
    if (it == prepared.end()) {
      const rope_spec spec = make_spec(head_dim, rotary_dim, 5e5, pairing::half_split);
      it = prepared.emplace(k.strategy, prepare_or_die(k, unscaled_frequencies(spec), 5000)).first;
    }
    return it->second;
  }
  // Packed out-of-place rotation of x with `heads` heads.
  buffer rotate(const kernel_info& k, const buffer& x, std::int64_t heads, direction dir = direction::forward) const {
    buffer y(x.type, x.count);
    rope_call c = base_call();
    c.dir = dir;
    c.q = packed_tensor(x.data(), y.data(), heads, head_dim);
    const status s = k.apply(c, angles_for(k));
    EXPECT_TRUE(s.ok()) << s.message;
    return y;
  }

  std::vector<std::int64_t> positions_ = some_positions(tokens);
};

TEST_P(kernel_behaviour, in_place_equals_out_of_place) {
  const buffer x = random_buffer(storage(), tokens * 3 * head_dim, 11);
  const buffer y = rotate(kernel(), x, 3);
  buffer z = x;
  rope_call c = base_call();
  c.q = packed_tensor(z.data(), z.data(), 3, head_dim);
  ASSERT_TRUE(kernel().apply(c, angles()).ok());
  EXPECT_TRUE(z.same_bits(y));
}

TEST_P(kernel_behaviour, pass_through_dims_are_bit_exact) {
  buffer x = random_buffer(storage(), tokens * 2 * head_dim, 12);
  // Odd bit patterns (NaN payloads, negative zero) must survive the copy untouched.
  for (std::int64_t r = 0; r < tokens * 2; ++r) {
    x.set(r * head_dim + rotary_dim, -0.0f);
    x.set(r * head_dim + rotary_dim + 1, std::nanf("0x12"));
  }
  const buffer y = rotate(kernel(), x, 2);
  const std::size_t e = size_of(storage());
  for (std::int64_t r = 0; r < tokens * 2; ++r) {
    const std::size_t at = static_cast<std::size_t>(r * head_dim + rotary_dim) * e;
    EXPECT_EQ(std::memcmp(x.data() + at, y.data() + at, static_cast<std::size_t>(head_dim - rotary_dim) * e), 0);
  }
  // In place: the same bytes stay as they were.
  buffer z = x;
  rope_call c = base_call();
  c.q = packed_tensor(z.data(), z.data(), 2, head_dim);
  ASSERT_TRUE(kernel().apply(c, angles()).ok());
  EXPECT_TRUE(z.same_bits(y));
}

TEST_P(kernel_behaviour, q_and_k_in_one_call_equal_two_calls) {
  const std::int64_t q_heads = 4, k_heads = 2;  // GQA
  const buffer q = random_buffer(storage(), tokens * q_heads * head_dim, 13);
  const buffer k = random_buffer(storage(), tokens * k_heads * head_dim, 14);
  buffer q_out(storage(), q.count), k_out(storage(), k.count);
  rope_call c = base_call();
  c.q = packed_tensor(q.data(), q_out.data(), q_heads, head_dim);
  c.k = packed_tensor(k.data(), k_out.data(), k_heads, head_dim);
  ASSERT_TRUE(kernel().apply(c, angles()).ok());
  EXPECT_TRUE(q_out.same_bits(rotate(kernel(), q, q_heads)));
  EXPECT_TRUE(k_out.same_bits(rotate(kernel(), k, k_heads)));
}

TEST_P(kernel_behaviour, inverse_after_forward_is_nearly_identity) {
  const buffer x = random_buffer(storage(), tokens * 2 * head_dim, 15);
  const buffer back = rotate(kernel(), rotate(kernel(), x, 2), 2, direction::inverse);
  // Two roundings of each rotation plus cos²+sin² ≠ 1 in float: a few units of the storage
  // precision relative to the pair norm.
  const double u = std::ldexp(1.0, -precision_bits(storage()));
  const std::int64_t pairs = rotary_dim / 2;
  for (std::int64_t r = 0; r < tokens * 2; ++r) {
    for (std::int64_t j = 0; j < pairs; ++j) {
      const auto [a, b] = pair_of(GetParam().pair, rotary_dim, j);
      const std::int64_t ia = r * head_dim + a;
      const std::int64_t ib = r * head_dim + b;
      const double norm = std::hypot(x.get(ia), x.get(ib));
      EXPECT_NEAR(back.get(ia), x.get(ia), 8 * u * norm);
      EXPECT_NEAR(back.get(ib), x.get(ib), 8 * u * norm);
    }
  }
}

TEST_P(kernel_behaviour, strided_layouts_equal_packed) {
  const std::int64_t heads = 3;
  const buffer x = random_buffer(storage(), tokens * heads * head_dim, 16);
  const buffer expected = rotate(kernel(), x, heads);
  struct layout {
    const char* name;
    std::int64_t token_stride, head_stride;
  };
  // sbhd with batch 2 (this is batch entry 0), heads-major [h, t, d], padded rows.
  for (layout l : {layout{"sbhd", 2 * heads * head_dim, head_dim},
                   layout{"hsd", head_dim, tokens * head_dim},
                   layout{"padded", heads * (head_dim + 8) + 24, head_dim + 8}}) {
    const std::int64_t extent = (tokens - 1) * l.token_stride + (heads - 1) * l.head_stride + head_dim;
    buffer xs(storage(), extent), ys(storage(), extent);
    for (std::int64_t t = 0; t < tokens; ++t)
      for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t i = 0; i < head_dim; ++i)
          xs.set(t * l.token_stride + h * l.head_stride + i, x.get(packed_index(t, h, heads, head_dim) + i));
    rope_call c = base_call();
    c.q = {xs.data(), ys.data(), heads, l.token_stride, l.head_stride, l.token_stride, l.head_stride};
    ASSERT_TRUE(kernel().apply(c, angles()).ok()) << l.name;
    bool same = true;
    for (std::int64_t t = 0; t < tokens; ++t)
      for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t i = 0; i < head_dim; ++i) {
          const float a = ys.get(t * l.token_stride + h * l.head_stride + i);
          const float b = expected.get(packed_index(t, h, heads, head_dim) + i);
          same = same && std::memcmp(&a, &b, sizeof a) == 0;
        }
    EXPECT_TRUE(same) << l.name;
  }
}

// Every kernel of the same rounding: the float32 kernels among themselves, the one-rounding
// kernels (kernel_info::rounds_once) among themselves.
TEST_P(kernel_behaviour, agrees_bit_for_bit_with_every_other_kernel) {
  buffer x = random_buffer(storage(), tokens * 2 * head_dim, 17, 70000.0f);
  // Specials: infinities, NaN, subnormals, values that overflow 16-bit formats when rotated.
  x.set(0, INFINITY);
  x.set(3, -INFINITY);
  x.set(5, 1e-40f);
  x.set(7, 65504.0f);
  x.set(8, 3.3e38f);
  const buffer mine = rotate(kernel(), x, 2);
  for (const kernel_info& other : kernel_registry()) {
    if (other.rounds_once != kernel().rounds_once || !other.supports(storage())) continue;
    const buffer theirs = rotate(other, x, 2);
    for (std::int64_t i = 0; i < x.count; ++i) {
      const float a = mine.get(i), b = theirs.get(i);
      if (std::isnan(a) && std::isnan(b)) continue;
      ASSERT_EQ(std::memcmp(&a, &b, sizeof a), 0) << other.name << " differs at " << i << ": " << a << " vs " << b;
    }
  }
}

TEST_P(kernel_behaviour, int32_positions_and_token_slices_match) {
  const buffer x = random_buffer(storage(), tokens * 2 * head_dim, 18);
  const buffer expected = rotate(kernel(), x, 2);
  std::vector<std::int32_t> narrow(positions_.begin(), positions_.end());
  buffer y(storage(), x.count);
  rope_call c = base_call();
  c.positions = narrow.data();
  c.position_type = dtype::int32;
  c.q = packed_tensor(x.data(), y.data(), 2, head_dim);
  for (std::int64_t begin : {0, 5, 21}) {
    const std::int64_t end = begin == 0 ? 5 : begin == 5 ? 21 : tokens;
    ASSERT_TRUE(kernel().apply(slice_tokens(c, begin, end), angles()).ok());
  }
  EXPECT_TRUE(y.same_bits(expected));
}

// A 16-bit SIMD kernel stores exactly its float32 result rounded once (numeric/half.h), NaN
// included: the float32 kernel on the same (widened) inputs, rounded, gives the same bits. The
// bfloat16 store rounds without a NaN case of its own (rotation_simd.cpp, bfloat16_even_odd),
// which is right only for the NaNs a rotation can produce; this checks it with payload NaNs in
// the input (signalling and quiet, either sign, each with a finite partner), inf·0 at position
// 0 (sin = 0) and inf − inf, on every SIMD target. 64 pairs: every target's vector loops run.
TEST(kernel_nan, sixteen_bit_stores_round_the_float32_result_nan_included) {
  constexpr std::int64_t dim = 128, heads = 2, rows = 3;
  const std::vector<std::int64_t> positions{0, 1, 4099};
  const rope_spec spec = make_spec(dim, dim, 1e4, pairing::half_split);
  for (const std::string& target : available_simd_targets()) {
    ASSERT_TRUE(use_simd_target(target).ok());
    for (const char* name : {"cache_simd", "on_the_fly_simd"}) {
      const kernel_info& k = *find_kernel(name);
      const rope_angles angles = prepare_or_die(k, unscaled_frequencies(spec), 5000);
      for (dtype t : {dtype::bfloat16, dtype::float16}) {
        for (pairing p : pairings()) {
          buffer x = random_buffer(t, rows * heads * dim, 21);
          const std::uint32_t payloads[] = {0x7F810000u, 0xFF850000u, 0x7FC30000u, 0xFFE00000u};
          for (std::int64_t r = 0; r < rows * heads; ++r) {
            for (std::int64_t i = 0; i < 4; ++i) x.set(r * dim + 8 * i + 2, std::bit_cast<float>(payloads[i]));
            x.set(r * dim + 40, INFINITY);
            x.set(r * dim + 41, INFINITY);
            x.set(r * dim + 41 + dim / 2, -INFINITY);
          }
          buffer wide(dtype::float32, x.count);
          for (std::int64_t i = 0; i < x.count; ++i) wide.set(i, x.get(i));
          buffer y(t, x.count), y32(dtype::float32, x.count);
          ASSERT_TRUE(k.apply(make_call({t, p, dim, dim}, positions,
                                        packed_tensor(x.data(), y.data(), heads, dim)),
                              angles).ok());
          ASSERT_TRUE(k.apply(make_call({dtype::float32, p, dim, dim}, positions,
                                        packed_tensor(wide.data(), y32.data(), heads, dim)),
                              angles).ok());
          for (std::int64_t i = 0; i < x.count; ++i) {
            const std::uint16_t expected = t == dtype::bfloat16 ? float_to_bfloat16_bits(y32.get(i))
                                                                : float_to_float16_bits(y32.get(i));
            const std::uint16_t got = reinterpret_cast<const std::uint16_t*>(y.data())[i];
            ASSERT_EQ(got, expected) << target << " " << name << " " << to_string(t) << " "
                                     << to_string(p) << " element " << i;
          }
        }
      }
    }
  }
  ASSERT_TRUE(use_simd_target("best").ok());
}

INSTANTIATE_TEST_SUITE_P(fast, kernel_behaviour, ::testing::ValuesIn(all_setups()),
                         [](const auto& info) { return name_of(info.param); });

// fp8 stores are the float32 result rounded once to nearest even and saturated at ±max: the
// fp8 inputs widen exactly, the float32 arithmetic is the same, so each fp8 output must equal
// the float32 kernel's output on the same (widened) inputs, stored by numeric/fp8.h's
// saturating encoder. Inputs up to 4× the format's max make a good share of outputs saturate.
TEST(kernel_fp8, stores_round_to_nearest_even_and_saturate) {
  const std::int64_t t = 37, heads = 2;
  const rope_spec spec = make_spec(head_dim, rotary_dim, 5e5, pairing::half_split);
  const std::vector<std::int64_t> positions = some_positions(t);
  for (dtype storage : {dtype::float8_e4m3fn, dtype::float8_e5m2}) {
    const float max = static_cast<float>(format_of(storage).max_finite());
    const buffer x = random_buffer(storage, t * heads * head_dim, 23, 4 * max);
    buffer wide(dtype::float32, x.count);
    for (std::int64_t i = 0; i < x.count; ++i) wide.set(i, x.get(i));
    for (const kernel_info& k : kernel_registry()) {
      // The one-rounding kernels round their float64 result, not a float32 one: their fp8
      // store (saturation included) is checked in fast_precise_test.
      if (!k.supports(storage) || k.rounds_once) continue;
      for (pairing p : pairings()) {
        const rope_angles a = prepare_or_die(k, unscaled_frequencies(spec), 5000);
        buffer y(storage, x.count), y32(dtype::float32, x.count);
        const auto pos = std::span(positions.data(), static_cast<std::size_t>(t));
        ASSERT_TRUE(k.apply(make_call({storage, p, head_dim, rotary_dim}, pos,
                                      packed_tensor(x.data(), y.data(), heads, head_dim)), a).ok());
        ASSERT_TRUE(k.apply(make_call({dtype::float32, p, head_dim, rotary_dim}, pos,
                                      packed_tensor(wide.data(), y32.data(), heads, head_dim)), a).ok());
        std::int64_t saturated = 0;
        for (std::int64_t i = 0; i < x.count; ++i) {
          ASSERT_EQ(y.get(i), round_to_storage(storage, y32.get(i)))
              << k.name << " " << to_string(storage) << " element " << i << " float32 " << y32.get(i);
          saturated += std::fabs(y32.get(i)) > max;
        }
        EXPECT_GT(saturated, x.count / 10) << "the inputs must exercise saturation";
      }
    }
  }
}

// A per-call output scale σ (rope_call.h): fp8 stores round(fl32(y / σ)), y the float32
// result. So each float32-working kernel's scaled fp8 output must equal the float32 kernel's
// output on the same inputs, divided by σ in float32 here and stored by numeric/fp8.h's
// saturating encoder; the SIMD kernels thereby agree with the scalar ones too. Scales: powers
// of two (the division exact) and general values (one more float32 rounding), below and above 1.
// The one-rounding kernels divide in float64 before their one rounding (precise_rotation.h),
// other bits; the property output_scale_within_bound holds them (and these) to the bound.
TEST(kernel_fp8, output_scale_divides_in_float32_before_the_store) {
  const std::int64_t t = 21, heads = 2;
  const rope_spec spec = make_spec(head_dim, rotary_dim, 1e4, pairing::half_split);
  const std::vector<std::int64_t> positions = some_positions(t);
  const auto pos = std::span(positions.data(), static_cast<std::size_t>(t));
  for (dtype storage : {dtype::float8_e4m3fn, dtype::float8_e5m2}) {
    const float max = static_cast<float>(format_of(storage).max_finite());
    const buffer x = random_buffer(storage, t * heads * head_dim, 29, max);
    buffer wide(dtype::float32, x.count);
    for (std::int64_t i = 0; i < x.count; ++i) wide.set(i, x.get(i));
    for (const kernel_info& k : kernel_registry()) {
      if (!k.supports(storage) || k.rounds_once) continue;
      const rope_angles a = prepare_or_die(k, unscaled_frequencies(spec), 5000);
      for (pairing p : pairings()) {
        buffer y32(dtype::float32, x.count);
        ASSERT_TRUE(k.apply(make_call({dtype::float32, p, head_dim, rotary_dim}, pos,
                                      packed_tensor(wide.data(), y32.data(), heads, head_dim)), a).ok());
        for (const float scale : {0.25f, 8.0f, 0.1f, 3.0f, max / 7}) {
          buffer y(storage, x.count);
          rope_call call = make_call({storage, p, head_dim, rotary_dim}, pos,
                                     packed_tensor(x.data(), y.data(), heads, head_dim));
          call.output_scale = scale;
          ASSERT_TRUE(k.apply(call, a).ok()) << k.name;
          std::int64_t changed = 0;
          for (std::int64_t i = 0; i < x.count; ++i) {
            const float quotient = y32.get(i) / scale;
            ASSERT_EQ(y.get(i), round_to_storage(storage, quotient))
                << k.name << " " << to_string(storage) << " scale " << scale << " element " << i
                << " float32 " << y32.get(i);
            changed += y.get(i) != round_to_storage(storage, y32.get(i));
          }
          EXPECT_GT(changed, x.count / 4) << "scale " << scale << " must change most outputs";
          // In place, the pass-through dims are scaled too: the same bits as out of place.
          buffer z = x;
          rope_call in_place = make_call({storage, p, head_dim, rotary_dim}, pos,
                                         packed_tensor(z.data(), z.data(), heads, head_dim));
          in_place.output_scale = scale;
          ASSERT_TRUE(k.apply(in_place, a).ok()) << k.name;
          EXPECT_TRUE(z.same_bits(y)) << k.name << " in place, scale " << scale;
        }
      }
    }
  }
}

// A scale must be finite and > 0 (invalid_argument), and applies to fp8 only: σ ≠ 1 with
// float32/float16/bfloat16 storage is refused (unsupported), not ignored; σ = 1 is accepted.
TEST(kernel_fp8, output_scale_is_refused_when_invalid_or_not_fp8) {
  const std::int64_t t = 3, heads = 1;
  const rope_spec spec = make_spec(head_dim, rotary_dim, 1e4, pairing::half_split);
  const std::vector<std::int64_t> positions = some_positions(t);
  const auto pos = std::span(positions.data(), static_cast<std::size_t>(t));
  for (const kernel_info& k : kernel_registry()) {
    const rope_angles a = prepare_or_die(k, unscaled_frequencies(spec), 5000);
    for (dtype storage : storage_dtypes()) {
      if (!k.supports(storage)) continue;
      const buffer x = random_buffer(storage, t * heads * head_dim, 5);
      buffer y(storage, x.count);
      rope_call call = make_call({storage, pairing::half_split, head_dim, rotary_dim}, pos,
                                 packed_tensor(x.data(), y.data(), heads, head_dim));
      for (const float bad : {0.0f, -0.0f, -2.0f, std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::infinity()}) {
        call.output_scale = bad;
        const status s = k.apply(call, a);
        EXPECT_EQ(s.code, status_code::invalid_argument) << k.name << " scale " << bad;
        EXPECT_NE(s.message.find("output_scale"), std::string::npos) << s.message;
      }
      call.output_scale = 2.0f;
      const status s = k.apply(call, a);
      if (is_float8(storage)) {
        EXPECT_TRUE(s.ok()) << k.name << " " << s.message;
      } else {
        EXPECT_EQ(s.code, status_code::unsupported) << k.name << " " << to_string(storage);
        EXPECT_NE(s.message.find("fp8 storage only"), std::string::npos) << s.message;
      }
      call.output_scale = 1.0f;
      EXPECT_TRUE(k.apply(call, a).ok()) << k.name;
    }
  }
}

// Attention factor 0.5 (a power of two, so every product scales exactly) halves float32
// outputs bit for bit: the factor reaches cos and sin, nothing else.
TEST(kernel_attention_factor, scales_cos_and_sin) {
  const std::int64_t t = 9;
  const rope_spec spec = make_spec(head_dim, rotary_dim, 5e5, pairing::half_split);
  rope_frequencies halved = unscaled_frequencies(spec);
  halved.attention_factor = 0.5;
  const std::vector<std::int64_t> positions = some_positions(t);
  const buffer x = random_buffer(dtype::float32, t * head_dim, 19);
  for (const kernel_info& k : kernel_registry()) {
    for (pairing p : pairings()) {
      buffer y(dtype::float32, x.count), z(dtype::float32, x.count);
      rope_call c = make_call({dtype::float32, p, head_dim, rotary_dim},
                              std::span(positions.data(), static_cast<std::size_t>(t)),
                              packed_tensor(x.data(), y.data(), 1, head_dim));
      ASSERT_TRUE(k.apply(c, prepare_or_die(k, unscaled_frequencies(spec), 5000)).ok());
      c.q = packed_tensor(x.data(), z.data(), 1, head_dim);
      ASSERT_TRUE(k.apply(c, prepare_or_die(k, halved, 5000)).ok());
      for (std::int64_t r = 0; r < t; ++r)
        for (std::int64_t i = 0; i < rotary_dim; ++i)
          EXPECT_EQ(z.get(r * head_dim + i), 0.5f * y.get(r * head_dim + i)) << k.name;
    }
  }
}

// Large out-of-place calls take the non-temporal store path where aligned (the threshold,
// store_policy.h, lowered below these 16 MiB); it must write the same bits.
TEST(kernel_streaming, large_outputs_match_scalar) {
  set_streaming_threshold_bytes(std::int64_t{1} << 20);
  const std::int64_t t = 1024, heads = 32, d = 128;  // 16 MiB of float32 output
  const rope_spec spec = make_spec(d, d, 1e4, pairing::half_split);
  std::vector<std::int64_t> positions(static_cast<std::size_t>(t));
  for (std::int64_t i = 0; i < t; ++i) positions[static_cast<std::size_t>(i)] = i;
  for (dtype storage : storage_dtypes()) {
    for (pairing p : pairings()) {
      const std::int64_t tokens_here = storage == dtype::float32 ? t : 2 * t - 16;
      const buffer x = random_buffer(storage, tokens_here * heads * d, 20);
      buffer fast_out(storage, x.count), scalar_out(storage, x.count);
      std::vector<std::int64_t> pos(static_cast<std::size_t>(tokens_here));
      for (std::int64_t i = 0; i < tokens_here; ++i) pos[static_cast<std::size_t>(i)] = i % t;
      for (auto [name, out] : {std::pair{"cache_simd", &fast_out}, std::pair{"cache_scalar", &scalar_out}}) {
        const kernel_info& k = *find_kernel(name);
        const rope_angles a = prepare_or_die(k, unscaled_frequencies(spec), t);
        const rope_call c = make_call({storage, p, d, d},
                                      std::span(pos.data(), static_cast<std::size_t>(tokens_here)),
                                      packed_tensor(x.data(), out->data(), heads, d));
        ASSERT_TRUE(k.apply(c, a).ok());
      }
      EXPECT_TRUE(fast_out.same_bits(scalar_out)) << to_string(storage) << " " << to_string(p);
    }
  }
  set_streaming_threshold_bytes(0);
}

TEST(registry, names_are_unique_and_findable) {
  std::set<std::string_view> names;
  for (const kernel_info& k : kernel_registry()) {
    EXPECT_TRUE(names.insert(k.name).second) << k.name;
    EXPECT_EQ(find_kernel(k.name), &k);
    EXPECT_FALSE(k.description.empty());
    EXPECT_FALSE(k.dtypes.empty());
    EXPECT_FALSE(k.pairings.empty());
  }
  EXPECT_EQ(find_kernel("no_such_kernel"), nullptr);
}

TEST(apply_packed, rotates_in_place_and_out_of_place_alike_and_refuses_a_bad_rotary_dim) {
  const std::int64_t rows = 5, heads = 2, d = 16;
  const rope_spec spec = make_spec(d, d, 1e4, pairing::adjacent);
  const buffer x = random_buffer(dtype::float32, rows * heads * d, 21);
  const std::vector<std::int64_t> positions{4, 0, 9, 2, 7};
  for (const kernel_info& k : kernel_registry()) {
    buffer out(dtype::float32, x.count);
    buffer in_place = x;
    ASSERT_TRUE(apply_packed(k, spec, dtype::float32, x.data(), out.data(), heads, positions).ok());
    ASSERT_TRUE(apply_packed(k, spec, dtype::float32, in_place.data(), in_place.data(), heads, positions).ok());
    EXPECT_TRUE(out.same_bits(in_place)) << k.name;
    EXPECT_FALSE(out.same_bits(x)) << k.name;
  }
  rope_spec odd = spec;
  odd.rotary_dim = 7;
  const status refused = apply_packed(kernel_registry()[0], odd, dtype::float32, x.data(), nullptr, heads, positions);
  EXPECT_EQ(refused.code, status_code::invalid_argument);
  EXPECT_NE(refused.message.find("rotary_dim"), std::string::npos) << refused.message;
}

}  // namespace
}  // namespace ropecheck::fast
