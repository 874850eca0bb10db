// The generators reach what they promise (generators.h), at every RapidCheck size — size 0
// included, where gen::inRange and arbitrary<double> would still be near zero: the edge cases
// the properties rely on must actually be generated, or those properties could not fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "numeric/storage_element.h"
#include "numeric/ulp.h"
#include "properties/generators.h"
#include "properties/scaling_cases.h"

namespace ropecheck::properties {
namespace {

constexpr int samples = 3000;
constexpr int tensor_samples = 200;

template <class T>
std::vector<T> sample(const rc::Gen<T>& g, int size, int count = samples) {
  std::vector<T> out;
  out.reserve(static_cast<std::size_t>(count));
  rc::Random random(static_cast<std::uint64_t>(size) * 7919 + 1);
  for (int i = 0; i < count; ++i) out.push_back(g(random.split(), size).value());
  return out;
}

class at_size : public ::testing::TestWithParam<int> {};

TEST_P(at_size, shapes_cover_dims_bases_and_pairings) {
  const std::vector<pairing> both{pairing::half_split, pairing::adjacent};
  const auto shapes = sample(gen::shape(both, 512, true), GetParam());
  std::set<int> dims;
  bool partial = false, odd = false, big_base = false, small_base = false, common_base = false;
  std::set<pairing> pairings;
  for (const auto& s : shapes) {
    EXPECT_GE(s.rotary_dim, 2);
    EXPECT_EQ(s.rotary_dim % 2, 0);
    EXPECT_LE(s.rotary_dim, s.head_dim);
    EXPECT_GE(s.base, 2.0);
    EXPECT_LE(s.base, 1e9);
    dims.insert(s.head_dim);
    partial = partial || s.rotary_dim < s.head_dim;
    odd = odd || s.head_dim % 2 == 1;
    big_base = big_base || s.base > 1e8;
    small_base = small_base || s.base < 10;
    common_base = common_base || s.base == 1e4 || s.base == 5e5 || s.base == 1e6;
    pairings.insert(s.pair);
  }
  EXPECT_TRUE(dims.count(2) && dims.count(128) && dims.count(512));
  EXPECT_GT(dims.size(), 100u);  // not just the common widths
  EXPECT_TRUE(partial && odd && big_base && small_base && common_base);
  EXPECT_EQ(pairings.size(), 2u);
}

TEST_P(at_size, invalid_dims_are_all_invalid_and_varied) {
  bool odd = false, too_wide = false, zero = false;
  for (const auto& d : sample(gen::invalid_dims_for(64), GetParam())) {
    const bool invalid = d.rotary_dim < 2 || d.rotary_dim % 2 == 1 || d.rotary_dim > d.head_dim;
    EXPECT_TRUE(invalid) << d.head_dim << "/" << d.rotary_dim;
    odd = odd || d.rotary_dim % 2 == 1;
    too_wide = too_wide || d.rotary_dim > d.head_dim;
    zero = zero || d.rotary_dim == 0;
  }
  EXPECT_TRUE(odd && too_wide && zero);
}

TEST_P(at_size, positions_reach_zero_powers_of_two_the_limit_and_quarter_turns) {
  const std::int64_t limit = std::int64_t{1} << 31;
  const rope_shape s{128, 128, 1e4, pairing::half_split};
  const auto theta = gen::approximate_inverse_frequencies(s.rotary_dim, s.base);
  const auto positions = sample(gen::position(limit, theta), GetParam());
  int zero = 0, below_1024 = 0, above_2_24 = 0, power_adjacent = 0, top = 0, quarter = 0;
  for (std::int64_t m : positions) {
    ASSERT_GE(m, 0);
    ASSERT_LT(m, limit);
    zero += m == 0;
    below_1024 += m < 1024;
    above_2_24 += m > (1 << 24);
    top += m == limit - 1;
    for (int k = 1; k < 31; ++k)
      power_adjacent += m == (std::int64_t{1} << k) - 1 || m == (std::int64_t{1} << k) + 1;
    // cos or sin of some pair's angle within 1e-5 of 0 past the first turn (chance: ~1e-3).
    for (long double t : theta) {
      const long double phi = static_cast<long double>(m) * t;
      if (phi > 6.3L && (std::fabs(std::cos(phi)) < 1e-5L || std::fabs(std::sin(phi)) < 1e-5L)) {
        ++quarter;
        break;
      }
    }
  }
  // Log-uniform means a third of the cases below 2^10 and a fifth above 2^24.
  EXPECT_GT(below_1024, samples / 5);
  EXPECT_GT(above_2_24, samples / 10);
  EXPECT_GT(zero, 10);
  EXPECT_GT(power_adjacent, samples / 20);
  EXPECT_GT(top, 10);
  EXPECT_GT(quarter, samples / 20);
}

TEST_P(at_size, values_span_the_format_with_subnormals_specials_and_cancellation) {
  for (dtype storage : storage_dtypes) {
    const value_range range = gen::full_range(storage);
    const rope_shape s{64, 64, 1e4, pairing::adjacent};
    const std::vector<std::int64_t> positions{0, 1, 4097, 1 << 20};
    const auto tensors = sample(
        gen::tensor_rows(storage, range, s, 2, positions,
                         gen::approximate_inverse_frequencies(s.rotary_dim, s.base)),
        GetParam(), tensor_samples);
    int subnormal = 0, zero = 0, negative_zero = 0, huge = 0, tiny = 0, cancelled = 0;
    const double smallest_normal = std::ldexp(1.0, range.format.min_normal_exponent);
    const double largest_allowed = std::ldexp(1.0, range.max_exponent + 1);
    for (const auto& t : tensors) {
      ASSERT_EQ(t.values.size(), positions.size() * 2 * 64);
      for (double v : t.values) {
        ASSERT_TRUE(std::isfinite(v));
        ASSERT_LT(std::fabs(v), largest_allowed);  // headroom: no RoPE output overflows
        // Every value is exact in the storage format: rounding it changes nothing.
        ASSERT_EQ(gen::round_to_format(v, range), v);
        subnormal += v != 0 && std::fabs(v) < smallest_normal;
        zero += v == 0 && !std::signbit(v);
        negative_zero += v == 0 && std::signbit(v);
        huge += std::fabs(v) >= std::ldexp(1.0, range.max_exponent - 2);
        tiny += v != 0 && std::fabs(v) <= std::ldexp(1.0, range.format.min_normal_exponent + 2);
      }
      for (std::size_t tok = 0; tok < positions.size(); ++tok) {
        for (int h = 0; h < 2; ++h) {
          const double* row = t.values.data() + (tok * 2 + static_cast<std::size_t>(h)) * 64;
          for (int j = 0; j < 32; ++j) {
            const long double phi = positions[tok] * std::pow(1e4L, -2.0L * j / 64);
            const long double a = row[2 * j], b = row[2 * j + 1];
            const long double r = std::hypot(a, b);
            const long double ya = a * std::cos(phi) - b * std::sin(phi);
            const long double yb = b * std::cos(phi) + a * std::sin(phi);
            // Cancelled: an output below 2^-6 of its pair's norm (the format's rounding of the
            // set-up pair leaves ≈ 2^-p of r); a uniform direction would do that 1 % of the time.
            cancelled += r > 0 && r >= smallest_normal &&
                         std::min(std::fabs(ya), std::fabs(yb)) < r * 0x1p-6L && positions[tok] > 0;
          }
        }
      }
    }
    const int values = tensor_samples * static_cast<int>(positions.size()) * 2 * 64;
    EXPECT_GT(subnormal, values / 500) << to_string(storage);
    EXPECT_GT(zero, values / 1000) << to_string(storage);
    EXPECT_GT(negative_zero, values / 1000) << to_string(storage);
    EXPECT_GT(huge, values / 500) << to_string(storage);
    EXPECT_GT(tiny, values / 500) << to_string(storage);
    // ≈ 1/5 of the pairs at positions > 0 (3 of 4 tokens × 2 heads × 32 pairs) are set up.
    EXPECT_GT(cancelled, tensor_samples * 6 * 32 / 10) << to_string(storage);
  }
}

// fp8 with saturation allowed (kernel_cases.cpp: within_bound_of_reference): inputs reach the
// format's top binade, stay representable (e4m3fn's stops at 448), and a share of the pairs
// have an exact rotated output beyond max — or the saturating store would go unchecked.
TEST_P(at_size, fp8_saturation_range_makes_some_outputs_exceed_max) {
  for (dtype storage : {dtype::float8_e4m3fn, dtype::float8_e5m2}) {
    value_range range = gen::full_range(storage);
    range.max_exponent = range.format.max_exponent();
    const double max = range.format.max_finite();
    const rope_shape s{64, 64, 1e4, pairing::half_split};
    const std::vector<std::int64_t> positions{0, 3, 100};
    const auto tensors = sample(
        gen::tensor_rows(storage, range, s, 1, positions,
                         gen::approximate_inverse_frequencies(s.rotary_dim, s.base)),
        GetParam(), tensor_samples);
    int beyond = 0, pairs = 0;
    for (const auto& t : tensors) {
      for (double v : t.values) ASSERT_EQ(round_to_storage(storage, v), v) << to_string(storage) << " " << v;
      for (std::size_t tok = 0; tok < positions.size(); ++tok) {
        const double* row = t.values.data() + tok * 64;
        for (int j = 0; j < 32; ++j, ++pairs) {
          const long double phi = positions[tok] * std::pow(1e4L, -2.0L * j / 64);
          const long double a = row[j], b = row[j + 32];
          const long double ya = a * std::cos(phi) - b * std::sin(phi);
          const long double yb = b * std::cos(phi) + a * std::sin(phi);
          beyond += std::max(std::fabs(ya), std::fabs(yb)) > max;
        }
      }
    }
    // Measured: ~0.08 % of pairs for e5m2 (its range spans 2^-16 … 2^15, so rows rarely sit at
    // the top), more for e4m3fn; a quick-profile case has ~10^2 pairs.
    EXPECT_GT(beyond, pairs / 2000) << to_string(storage);
  }
}

// The kernel cases' specs (scaling_cases.h): plain RoPE half the time, every rope_type and
// convention, explicit attention factors across [1/4, 4] (powers of two and 1 ± 2^-20 among
// them), sequence lengths on both sides of L0 and L_max — or the properties could not fail on
// a kernel that mishandles them.
TEST_P(at_size, kernel_specs_cover_every_scaling_and_attention_factors) {
  const std::vector<pairing> both{pairing::half_split, pairing::adjacent};
  const auto shapes = sample(gen::shape(both, 512), GetParam(), samples);
  std::set<scaling_type> types;
  std::set<std::string> conventions;  // as the generated JSON writes them
  // L0 of the types that have one, else the context.
  const auto original_context = [](const rope_spec& s) -> std::int64_t {
    if (const auto* y = std::get_if<yarn_scaling>(&s.scaling)) return y->original_max_position_embeddings;
    if (const auto* l = std::get_if<llama3_scaling>(&s.scaling)) return l->original_max_position_embeddings;
    if (const auto* l = std::get_if<longrope_scaling>(&s.scaling)) return l->original_max_position_embeddings;
    return s.max_position_embeddings;
  };
  int plain = 0, explicit_factor = 0, beyond_max = 0, within_original = 0, near_one = 0;
  double lowest = 1, highest = 1;
  rc::Random random(static_cast<std::uint64_t>(GetParam()) + 17);
  for (const auto& shape : shapes) {
    const auto generated = gen::kernel_spec(shape)(random.split(), GetParam()).value();
    const rope_spec& s = generated.spec;
    EXPECT_EQ(s.rotary_dim, shape.rotary_dim);
    if (type_of(s.scaling) == scaling_type::none && !s.attention_factor) ++plain;
    if (type_of(s.scaling) != scaling_type::none) {
      types.insert(type_of(s.scaling));
      conventions.insert(generated.config.at("scaling_convention").get<std::string>());
      EXPECT_GT(s.sequence_length, 0);  // θ'_j and A fixed by the spec, not by the call
      const std::int64_t original = original_context(s);
      beyond_max += s.sequence_length > s.max_position_embeddings;
      within_original += s.sequence_length <= original;
    }
    if (s.attention_factor) {
      ++explicit_factor;
      lowest = std::min(lowest, *s.attention_factor);
      highest = std::max(highest, *s.attention_factor);
      near_one += *s.attention_factor != 1 && std::fabs(*s.attention_factor - 1) <= 0x1p-20;
    }
  }
  EXPECT_GT(plain, samples * 4 / 10);
  EXPECT_LT(plain, samples * 6 / 10);
  // Every scaling type of the spec's variant is drawn (proportional on the shapes that rotate
  // the whole head): a type added to the spec and not drawn fails here.
  EXPECT_EQ(types.size(), std::variant_size_v<rope_scaling> - 1);
  EXPECT_EQ(conventions.size(), 5u);
  EXPECT_GT(explicit_factor, samples / 8);
  EXPECT_LT(lowest, 0.3);
  EXPECT_GT(highest, 3.0);
  EXPECT_GT(near_one, 10);
  EXPECT_GT(beyond_max, 30);
  EXPECT_GT(within_original, 30);
}

// Size 0 (where RapidCheck's own generators are degenerate) and the nominal maximum.
INSTANTIATE_TEST_SUITE_P(generators, at_size, ::testing::Values(0, 100),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "size_" + std::to_string(info.param);
                         });

// draws: uniform over [lo, hi], both ends reached, nothing outside — spans of one, of a few and
// of 2^52 (a float64 significand), and the weighted choice in its proportions.
TEST(draws, uniform_stays_in_range_and_reaches_both_ends) {
  gen::draws d(rc::Random(12345));
  EXPECT_EQ(d.uniform(7, 7), 7);
  int low = 0, high = 0;
  for (int i = 0; i < 4000; ++i) {
    const std::int64_t v = d.uniform(-3, 4);
    ASSERT_GE(v, -3);
    ASSERT_LE(v, 4);
    low += v == -3;
    high += v == 4;
  }
  EXPECT_GT(low, 350);  // 500 expected
  EXPECT_GT(high, 350);
  const std::int64_t wide = std::int64_t{1} << 52;
  bool upper_half = false, lower_half = false;
  for (int i = 0; i < 64; ++i) {
    const std::int64_t v = d.uniform(0, wide - 1);
    ASSERT_GE(v, 0);
    ASSERT_LT(v, wide);
    (v >= wide / 2 ? upper_half : lower_half) = true;
  }
  EXPECT_TRUE(upper_half && lower_half);
  int first = 0;
  for (int i = 0; i < 8000; ++i) first += d.weighted({6, 1, 1}) == 0;
  EXPECT_NEAR(first, 6000, 300);
}

// shrink_value: candidates are simpler (1 first, then |v|, then the binade's low end) and stay
// in the range.
TEST(shrink_value, goes_toward_one_and_stays_in_range) {
  const value_range range = gen::full_range(dtype::float16);
  const auto candidates = [&](double v) {
    std::vector<double> out;
    auto seq = gen::shrink_value(range, v);
    while (auto c = seq.next()) out.push_back(*c);
    return out;
  };
  EXPECT_EQ(candidates(-3.5), (std::vector<double>{1.0, 3.5, -2.0}));
  EXPECT_TRUE(candidates(1.0).empty());
  EXPECT_EQ(candidates(0.0), std::vector<double>{1.0});
  const double subnormal = std::ldexp(3.0, -24);  // float16: 3 quanta
  EXPECT_EQ(candidates(subnormal), (std::vector<double>{1.0, std::ldexp(1.0, -23)}));
  const value_range tiny{range.format, range.min_exponent, -5};  // 1 is outside this range
  auto seq = gen::shrink_value(tiny, std::ldexp(1.5, -7));
  EXPECT_EQ(*seq.next(), std::ldexp(1.0, -5));
}

// split_mix_64 is SplitMix64: the first five outputs for seed 1234567 as published on Rosetta
// Code ("Pseudo-random numbers/Splitmix64"), an independent source of the reference algorithm.
TEST(split_mix_64, matches_the_published_outputs_for_seed_1234567) {
  gen::split_mix_64 engine(1234567);
  for (std::uint64_t expected : {6457827717110365317ull, 3203168211198807973ull, 9817491932198370423ull,
                                 4593380528125082431ull, 16408922859458223821ull})
    EXPECT_EQ(engine(), expected);
}

}  // namespace
}  // namespace ropecheck::properties
