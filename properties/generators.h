// generators: ropecheck's RapidCheck generators for RoPE inputs.
//
// Why not RapidCheck's own: arbitrary<double> draws an integer plus a fraction in [0, 1), so it
// never produces wide exponents, subnormals, signed zeros or values near a format's limits, and
// gen::inRange scales its range with the test size (the first cases only see a small part of
// it). Every generator here is size-independent (gen::resize(kNominalSize, ...)) and biased on
// purpose toward what breaks RoPE code:
//   * head dims: even 2..512 with the common ones (64, 128, ...) over-weighted; odd dims only
//     for the error paths; rotary dims full or partial (pass-through dims);
//   * bases log-uniform in [2, 1e9] plus the common 1e4, 5e5, 1e6 (Llama-2, Llama-3, Qwen);
//   * positions log-uniform over [0, limit) (so biased toward 0), powers of two ± 1, and
//     positions whose angle m·θ_j lies near a multiple of π/2 (cos or sin ≈ 0);
//   * values: a per-row magnitude, with elements of any exponent of the storage format
//     (subnormals included) and specials (±0, smallest subnormal, largest allowed) mixed in,
//     and pairs set up to cancel: (x_a, x_b) ∥ (sin φ, cos φ) makes y_a = x_a·cos φ − x_b·sin φ
//     vanish up to rounding, where only the norm-relative error is meaningful.
// Shrinking goes toward small dims, position 0, value 1 and no cancellation.
#pragma once

#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <numbers>
#include <ostream>
#include <random>
#include <span>
#include <sstream>
#include <vector>

#include "numeric/dtype.h"
#include "numeric/ulp.h"
#include "spec/rope_spec.h"
#include "spec/pair_index.h"
#include "properties/summarise_runs.h"

namespace ropecheck::properties {

// ---------------------------------------------------------------------------------------------
// Generated values with a show() that prints them exactly (hex float next to the decimal).

struct rope_shape {
  int head_dim = 2;
  int rotary_dim = 2;
  double base = 10000;
  pairing pair = pairing::half_split;
};

inline void showValue(const rope_shape& s, std::ostream& os) {
  os << "head_dim=" << s.head_dim << " rotary_dim=" << s.rotary_dim
     << " base=" << std::setprecision(17) << s.base << " (" << std::hexfloat << s.base
     << std::defaultfloat << ") pairing=" << to_string(s.pair);
}

// Values of one storage dtype, kept as doubles (every float32/float16/bfloat16 value and every
// generated float64 value is exact in a double). Rows of `row_length` for display.
struct value_rows {
  dtype storage = dtype::float32;
  int row_length = 1;
  std::vector<double> values;
};

// One row per line, runs of equal values summarised (summarise_runs.h).
inline void showValue(const value_rows& v, std::ostream& os) {
  const std::size_t row = static_cast<std::size_t>(std::max(v.row_length, 1));
  os << to_string(v.storage) << ", " << v.values.size() / row << " rows of " << v.row_length << ":";
  for (std::size_t start = 0; start < v.values.size(); start += row) {
    std::ostringstream line;
    for (std::size_t i = start; i < std::min(start + row, v.values.size()); ++i)
      line << (i == start ? "" : ", ") << std::hexfloat << v.values[i];
    os << "\n  " << summarise_runs(line.str());
  }
}

// The exponents a generated value of a format may have: from the smallest subnormal up to one
// below the largest exponent, so that |x| ≤ max/2, a pair's norm ≤ max/√2 and no exact RoPE
// output overflows (overflow is not a RoPE question). `max_exponent` narrows that further.
struct value_range {
  float_format format;
  int min_exponent;  // exponent of the smallest magnitude (subnormals: below min_normal_exponent)
  int max_exponent;  // values < 2^(max_exponent + 1)
};

namespace gen {

// ---------------------------------------------------------------------------------------------
// Primitives.

// Uniform in [lo, hi] whatever the test size; shrinks toward lo.
inline rc::Gen<std::int64_t> uniform_int(std::int64_t lo, std::int64_t hi) {
  return rc::gen::resize(rc::kNominalSize, rc::gen::inRange<std::int64_t>(lo, hi + 1));
}

// Uniform in [0, 1) with 53 random bits; shrinks toward 0.
inline rc::Gen<double> unit_interval() {
  return rc::gen::map(uniform_int(0, (std::int64_t{1} << 53) - 1),
                      [](std::int64_t k) { return std::ldexp(static_cast<double>(k), -53); });
}

// Log-uniform in [lo, hi] (lo > 0); shrinks toward lo.
inline rc::Gen<double> log_uniform(double lo, double hi) {
  return rc::gen::map(unit_interval(), [lo, hi](double t) {
    return std::clamp(std::exp(std::log(lo) + t * (std::log(hi) - std::log(lo))), lo, hi);
  });
}

// An integer in [lo, hi] (lo ≤ 0 ≤ hi) that shrinks toward 0 from either side.
inline rc::Gen<std::int64_t> int_toward_zero(std::int64_t lo, std::int64_t hi) {
  if (lo >= 0) return uniform_int(lo, hi);
  if (hi <= 0) return rc::gen::map(uniform_int(-hi, -lo), [](std::int64_t v) { return -v; });
  return rc::gen::mapcat(rc::gen::arbitrary<bool>(), [lo, hi](bool negative) {
    return negative ? rc::gen::map(uniform_int(1, -lo), [](std::int64_t v) { return -v; })
                    : uniform_int(0, hi);
  });
}

// One of `values`, uniformly; shrinks toward values[0] (rc::gen::elementOf does not shrink).
template <class T>
rc::Gen<T> element_of(std::vector<T> values) {
  const auto last = static_cast<std::int64_t>(values.size()) - 1;
  return rc::gen::map(uniform_int(0, last), [values = std::move(values)](std::int64_t i) {
    return values[static_cast<std::size_t>(i)];
  });
}

// One of the generators, chosen with the given weights; shrinks toward the first one (so list
// the simplest first). rc::gen::weightedOneOf never shrinks its choice.
template <class T>
rc::Gen<T> weighted_one_of(std::vector<std::pair<int, rc::Gen<T>>> alternatives) {
  std::int64_t total = 0;
  for (const auto& a : alternatives) total += a.first;
  return rc::gen::mapcat(uniform_int(0, total - 1),
                         [alternatives = std::move(alternatives)](std::int64_t k) {
                           for (const auto& [weight, g] : alternatives) {
                             if (k < weight) return g;
                             k -= weight;
                           }
                           return alternatives.back().second;
                         });
}

template <class T>
rc::Gen<T> weighted_element(std::vector<std::pair<int, T>> choices) {
  std::vector<std::pair<int, rc::Gen<T>>> alternatives;
  for (const auto& [weight, value] : choices) alternatives.emplace_back(weight, rc::gen::just(value));
  return weighted_one_of(std::move(alternatives));
}

// A per-call fp8 output scale σ (fast/rope_call.h), a float32 as pipelines keep it: half the
// time a power of two 2^k, k in [-8, 8] (the division exact), else log-uniform in [2^-8, 2^8]
// rounded to float32 and nudged off any power of two (one more float32 rounding). Below 1
// more outputs saturate, above 1 more reach fp8's subnormals. Shrinks toward 1.
inline rc::Gen<float> output_scale() {
  return weighted_one_of<float>(
      {{1, rc::gen::map(int_toward_zero(-8, 8),
                        [](std::int64_t k) { return std::ldexp(1.0f, static_cast<int>(k)); })},
       {1, rc::gen::map(log_uniform(0x1p-8, 0x1p8), [](double v) {
          float f = static_cast<float>(v);
          int e = 0;
          if (std::frexp(f, &e) == 0.5f) f = std::nextafter(f, 2 * f);
          return f;
        })}});
}

// ---------------------------------------------------------------------------------------------
// Shapes.

// Even head dims in [2, 512]: the common widths (Llama 128, GPT-J 256, NeoX/Phi 64/80/96, ...)
// half the time, any even width otherwise (small widths exercise the SIMD tails).
inline rc::Gen<int> even_head_dim(int max_dim = 512) {
  std::vector<int> common;
  for (int d : {2, 4, 8, 16, 32, 64, 80, 96, 128, 256, 512})
    if (d <= max_dim) common.push_back(d);
  return weighted_one_of<int>(
      {{1, element_of(common)},
       {1, rc::gen::map(uniform_int(1, max_dim / 2), [](std::int64_t h) { return 2 * static_cast<int>(h); })}});
}

// Full rotation (most models) or a partial one: an even rotary_dim in [2, head_dim]; with
// `allow_odd_head_dim` the head may also get one odd pass-through element.
inline rc::Gen<rope_shape> shape(std::span<const pairing> pairings, int max_dim = 512,
                                 bool allow_odd_head_dim = false) {
  const std::vector<pairing> allowed(pairings.begin(), pairings.end());
  const auto base = weighted_one_of<double>(
      {{1, element_of(std::vector<double>{1e4, 5e5, 1e6})}, {1, log_uniform(2.0, 1e9)}});
  return rc::gen::mapcat(even_head_dim(max_dim), [=](int head_dim) {
    const auto rotary = weighted_one_of<int>(
        {{2, rc::gen::just(head_dim)},
         {1, rc::gen::map(uniform_int(1, head_dim / 2),
                          [](std::int64_t h) { return 2 * static_cast<int>(h); })}});
    const auto extra = allow_odd_head_dim && head_dim < max_dim
                           ? weighted_element<int>({{3, 0}, {1, 1}})
                           : rc::gen::just(0);
    return rc::gen::apply(
        [head_dim](int rotary_dim, int odd, double b, pairing p) {
          return rope_shape{head_dim + odd, rotary_dim, b, p};
        },
        rotary, extra, base, element_of(allowed));
  });
}

// A shape with pass-through dims: head_dim in [3, max_dim] (odd ones included: the trailing
// dims need not pair up) and an even rotary_dim in [2, head_dim − 1].
inline rc::Gen<rope_shape> partial_shape(std::span<const pairing> pairings, int max_dim = 512) {
  const std::vector<pairing> allowed(pairings.begin(), pairings.end());
  return rc::gen::mapcat(uniform_int(3, max_dim), [=](std::int64_t h) {
    const int head_dim = static_cast<int>(h);
    return rc::gen::apply(
        [head_dim](std::int64_t half_rotary, double b, pairing p) {
          return rope_shape{head_dim, 2 * static_cast<int>(half_rotary), b, p};
        },
        uniform_int(1, (head_dim - 1) / 2), log_uniform(2.0, 1e9), element_of(allowed));
  });
}

// Invalid (head_dim, rotary_dim) combinations, for the error paths: odd rotary dims (odd head
// dims among them), rotary_dim > head_dim, rotary_dim 0.
struct invalid_dims {
  int head_dim = 0;
  int rotary_dim = 0;
};
inline void showValue(const invalid_dims& d, std::ostream& os) {
  os << "head_dim=" << d.head_dim << " rotary_dim=" << d.rotary_dim;
}
inline rc::Gen<invalid_dims> invalid_dims_for(int max_dim = 64) {
  return rc::gen::mapcat(uniform_int(1, max_dim), [](std::int64_t h) {
    const int head_dim = static_cast<int>(h);
    std::vector<rc::Gen<invalid_dims>> options;
    // Odd rotary dims at or below head_dim (an odd head_dim fully rotated among them).
    options.push_back(rc::gen::map(uniform_int(0, (head_dim - 1) / 2), [head_dim](std::int64_t k) {
      return invalid_dims{head_dim, 2 * static_cast<int>(k) + 1};
    }));
    options.push_back(rc::gen::map(uniform_int(1, 8), [head_dim](std::int64_t k) {
      return invalid_dims{head_dim, head_dim + static_cast<int>(k)};  // wider than the head
    }));
    options.push_back(rc::gen::just(invalid_dims{head_dim, 0}));
    return rc::gen::join(element_of(options));
  });
}

// ---------------------------------------------------------------------------------------------
// Positions.

// θ_j = base^(−2j/rotary_dim), in long double: generation only needs it approximately.
inline std::vector<long double> approximate_inverse_frequencies(int rotary_dim, double base) {
  std::vector<long double> theta(static_cast<std::size_t>(rotary_dim / 2));
  for (std::size_t j = 0; j < theta.size(); ++j)
    theta[j] = std::pow(static_cast<long double>(base),
                        -2.0L * static_cast<long double>(j) / rotary_dim);
  return theta;
}

// A position in [0, limit) (limit ≥ 1): log-uniform (so biased toward 0), small, a power of
// two ± 1, limit − 1, or a position where m·θ_j is the integer nearest k·π/2 / θ_j for some
// pair j, putting cos or sin of that pair's angle near 0 or ±1.
inline rc::Gen<std::int64_t> position(std::int64_t limit, std::vector<long double> theta) {
  const std::int64_t top = limit - 1;
  const double log2_limit = std::log2(static_cast<double>(limit));
  auto clamp_to_range = [top](std::int64_t m) { return std::clamp<std::int64_t>(m, 0, top); };
  const auto log_uniform_position = rc::gen::map(unit_interval(), [=](double t) {
    return clamp_to_range(static_cast<std::int64_t>(std::floor(std::exp2(t * log2_limit))) - 1);
  });
  const auto small = uniform_int(0, std::min<std::int64_t>(top, 63));
  const auto power_of_two = rc::gen::apply(
      [=](std::int64_t k, std::int64_t delta) {
        return clamp_to_range((std::int64_t{1} << k) + delta);
      },
      uniform_int(0, std::max<std::int64_t>(0, static_cast<std::int64_t>(log2_limit))),
      int_toward_zero(-1, 1));
  // Among the quarter-turn multiples k·(π/2)/θ_j for k in a window of 1024 starting at a random
  // k₀, the one nearest an integer: the angle then misses k·π/2 by ≈ θ_j/2048 rather than θ_j/2.
  const auto near_quarter_turn = rc::gen::mapcat(
      uniform_int(0, std::max<std::int64_t>(0, static_cast<std::int64_t>(theta.size()) - 1)),
      [=](std::int64_t j) {
        constexpr std::int64_t window = 1024;
        const long double quarter = std::numbers::pi_v<long double> / 2;
        const long double step = theta.empty() ? quarter : quarter / theta[static_cast<std::size_t>(j)];
        const auto turns = static_cast<std::int64_t>(std::min<long double>(
            static_cast<long double>(top) / step, static_cast<long double>(std::int64_t{1} << 40)));
        return rc::gen::map(uniform_int(0, std::max<std::int64_t>(turns - window, 0)),
                            [=](std::int64_t first) {
          // frac(k·step) stepped by frac(step) rather than k·step rounded per k (nearbyintl was
          // a quarter of a case): the sum drifts by ≤ 1024·2^-64·step ≈ 2^-23, far below the
          // 2^-11 misses this looks for.
          const long double increment = step - std::floor(step);
          long double fraction = static_cast<long double>(first) * step;
          fraction -= std::floor(fraction);
          std::int64_t best_k = first;
          long double best_miss = 1;
          for (std::int64_t k = first; k < first + window && k <= turns; ++k) {
            const long double miss = std::min(fraction, 1 - fraction);
            if (miss < best_miss) {
              best_miss = miss;
              best_k = k;
            }
            fraction += increment;
            if (fraction >= 1) fraction -= 1;
          }
          return clamp_to_range(std::llround(static_cast<long double>(best_k) * step));
        });
      });
  return weighted_one_of<std::int64_t>({{1, small},
                                        {4, log_uniform_position},
                                        {2, power_of_two},
                                        {2, near_quarter_turn},
                                        {1, rc::gen::just(top)}});
}

// `count` positions in [0, limit); with `allow_negative` some are negated (on-the-fly kernels
// and the reference accept negative positions).
inline rc::Gen<std::vector<std::int64_t>> positions(std::int64_t count, std::int64_t limit,
                                                    const std::vector<long double>& theta,
                                                    bool allow_negative = false) {
  auto one = position(limit, theta);
  if (allow_negative) {
    one = rc::gen::apply([](std::int64_t m, bool negate) { return negate ? -m : m; }, one,
                         weighted_element<bool>({{7, false}, {1, true}}));
  }
  return rc::gen::container<std::vector<std::int64_t>>(static_cast<std::size_t>(count), one);
}

// ---------------------------------------------------------------------------------------------
// Values.

inline value_range full_range(dtype storage) {
  const float_format f = format_of(storage);
  return {f, f.min_normal_exponent - f.precision_bits + 1, f.max_exponent() - 1};
}

// Values are drawn imperatively from one random source per row (class draws) rather than
// composed from a generator per element: RapidCheck's per-generator Random splits and shrink
// trees cost ~20 µs an element, three quarters of a deep-profile case. The distributions are
// the ones the comments state; shrinking is explicit (shrink_value, row_recipe below). A row's
// source is a split_mix_64 seeded with one 64-bit draw of the row's rc::Random, so a case is
// still replayed from its RapidCheck seed: rc::Random runs a Threefish block per four draws
// (~25 ns a draw), which was half of a case's time before (17dc5fd).

// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA
// 2014; the generator of Java's SplittableRandom and the seeder the xoshiro authors
// recommend): a Weyl counter through a 64-bit mixer, as a UniformRandomBitGenerator. Rows are
// short and each gets its own engine, so the state must be small: std::mt19937_64's 312-word
// seeding and refill was an eighth of a case, more than the draws themselves.
class split_mix_64 {
 public:
  using result_type = std::uint64_t;
  explicit split_mix_64(std::uint64_t seed) : state_(seed) {}
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return UINT64_MAX; }
  result_type operator()() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

// Uniform integers and weighted choices from one row's random source.
class draws {
 public:
  explicit draws(const rc::Random& random) : engine_(rc::Random(random).next()) {}

  // Uniform in [lo, hi], exactly (libstdc++'s distribution: multiply-and-reject, no division
  // for spans below 2^32).
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(engine_);
  }
  // One fair bit, 64 to an engine draw.
  bool coin() {
    if (coin_bits_left_ == 0) {
      coin_bits_ = engine_();
      coin_bits_left_ = 64;
    }
    --coin_bits_left_;
    const bool heads = (coin_bits_ & 1) != 0;
    coin_bits_ >>= 1;
    return heads;
  }
  // Index i with probability weights[i] / Σ weights.
  std::size_t weighted(std::initializer_list<int> weights) {
    int total = 0;
    for (int w : weights) total += w;
    std::int64_t k = uniform(0, total - 1);
    std::size_t i = 0;
    for (int w : weights) {
      if (k < w) return i;
      k -= w;
      ++i;
    }
    return weights.size() - 1;
  }
  // As int_toward_zero: a sign, then uniform on that side of 0 (lo ≤ 0 ≤ hi).
  std::int64_t toward_zero(std::int64_t lo, std::int64_t hi) {
    if (lo >= 0) return uniform(lo, hi);
    if (hi <= 0) return -uniform(-hi, -lo);
    return coin() ? -uniform(1, -lo) : uniform(0, hi);
  }

 private:
  split_mix_64 engine_;
  std::uint64_t coin_bits_ = 0;
  int coin_bits_left_ = 0;
};

// ±N·2^(e − p + 1) with N uniform over the binade [2^e, 2^(e+1)) of exponent e (subnormal
// binades have fewer significant bits).
inline double draw_value_with_exponent(draws& d, const value_range& r, int exponent,
                                       bool negative) {
  const int quantum_exponent =
      std::max(exponent, r.format.min_normal_exponent) - r.format.precision_bits + 1;
  const std::int64_t lowest = std::int64_t{1} << (exponent - quantum_exponent);
  // Clamped to the largest finite value: e4m3fn's top binade stops at 1.75·2^8 (S.1111.111 is
  // NaN), so the top of the range draws max more often instead of an unrepresentable value.
  const double v = std::min(
      std::ldexp(static_cast<double>(lowest + d.uniform(0, lowest - 1)), quantum_exponent),
      r.format.max_finite());
  return negative ? -v : v;
}

// Any value of the range: a random exponent (subnormals included) and significand.
inline double draw_any_value(draws& d, const value_range& r) {
  const int exponent = static_cast<int>(d.toward_zero(r.min_exponent, r.max_exponent));
  return draw_value_with_exponent(d, r, exponent, d.coin());
}

// The values where formats and kernels have edges: ±0, ±1, ±0.5, ±2, the smallest subnormal,
// the smallest normal and the largest value of the range.
inline double draw_special_value(draws& d, const value_range& r) {
  const std::array<double, 7> specials{
      0.0, 1.0, 0.5, 2.0, std::ldexp(1.0, r.min_exponent),
      std::ldexp(1.0, r.format.min_normal_exponent),
      std::min(std::ldexp(2.0 - std::ldexp(1.0, 1 - r.format.precision_bits), r.max_exponent),
               r.format.max_finite())};
  const double v =
      specials[static_cast<std::size_t>(d.uniform(0, std::ssize(specials) - 1))];
  return d.coin() ? -v : v;
}

// A value of magnitude in [2^(scale−3), 2^(scale+1)): the "ordinary" elements of a row.
inline double draw_value_near(draws& d, const value_range& r, int scale) {
  const int lo = std::max(scale - 3, r.min_exponent);
  const int hi = std::max(std::min(scale, r.max_exponent), lo);
  const int exponent = static_cast<int>(d.uniform(lo, hi));
  return draw_value_with_exponent(d, r, exponent, d.coin());
}

// One row of n values around a per-row scale (biased to [2^-4, 2^4] but anywhere in range),
// with a quarter of the elements drawn from the whole range or the specials (6:1:1).
inline std::vector<double> draw_row(draws& d, const value_range& r, int n) {
  const int scale = static_cast<int>(
      d.weighted({3, 1}) == 0
          ? d.toward_zero(std::max(-4, r.min_exponent + 3), std::min(4, r.max_exponent))
          : d.toward_zero(r.format.min_normal_exponent + 3, r.max_exponent));
  std::vector<double> values(static_cast<std::size_t>(n));
  for (double& v : values) {
    switch (d.weighted({6, 1, 1})) {
      case 0: v = draw_value_near(d, r, scale); break;
      case 1: v = draw_any_value(d, r); break;
      default: v = draw_special_value(d, r); break;
    }
  }
  return values;
}

// Simpler values to try for v, simplest first: 2^e for the exponent e of the range closest to
// 0 (1 in every range that holds it), then |v|, then v with its significand at the binade's
// low end. Every candidate lies in the range when v does.
inline rc::Seq<double> shrink_value(const value_range& r, double v) {
  std::vector<double> candidates;
  const double simplest = std::ldexp(1.0, std::clamp(0, r.min_exponent, r.max_exponent));
  if (v != simplest) candidates.push_back(simplest);
  if (std::signbit(v) && v != 0) candidates.push_back(-v);
  if (v != 0 && std::isfinite(v)) {
    const double low_end = std::copysign(std::ldexp(1.0, std::ilogb(v)), v);
    if (low_end != v && low_end != simplest) candidates.push_back(low_end);
  }
  return rc::seq::fromContainer(std::move(candidates));
}

// Any value of the range (draw_any_value); shrinks with shrink_value.
inline rc::Gen<double> any_value(const value_range& r) {
  return rc::Gen<double>([r](const rc::Random& random, int) {
    draws d(random);
    return rc::shrinkable::shrinkRecur(draw_any_value(d, r),
                                       [r](double v) { return shrink_value(r, v); });
  });
}

// `count` storage bit patterns uniform in [0, max_bits] — what pass-through dims may hold, NaN
// payloads included — drawn as a row is. Not shrunk: one pattern is as simple as another.
inline rc::Gen<std::vector<std::uint32_t>> bit_patterns(std::int64_t count, std::uint32_t max_bits) {
  return rc::Gen<std::vector<std::uint32_t>>([=](const rc::Random& random, int) {
    draws d(random);
    std::vector<std::uint32_t> bits(static_cast<std::size_t>(count));
    for (std::uint32_t& b : bits) b = static_cast<std::uint32_t>(d.uniform(0, max_bits));
    return rc::shrinkable::just(std::move(bits));
  });
}

// How a pair is set up relative to its angle φ: left alone, or made to cancel one output.
enum class cancellation { none, first_output, second_output };

// Rounds to the storage format (ties to even, no overflow: magnitudes stay within the range).
inline double round_to_format(double v, const value_range& r) {
  if (v == 0 || !std::isfinite(v)) return v;
  const int quantum = std::max(std::ilogb(v), r.format.min_normal_exponent) -
                      r.format.precision_bits + 1;
  return std::ldexp(std::nearbyint(std::ldexp(v, -quantum)), quantum);
}

// Sets the pair (a, b) of norm ≈ ρ to (ρ·sin φ, ρ·cos φ) (y_a = a·cos φ − b·sin φ ≈ 0) or to
// (ρ·cos φ, −ρ·sin φ) (y_b = b·cos φ + a·sin φ ≈ 0), rounded to the format.
inline void make_pair_cancel(double& a, double& b, long double phi, cancellation kind,
                             const value_range& r) {
  if (kind == cancellation::none) return;
  const long double rho = std::hypot(static_cast<long double>(a), static_cast<long double>(b));
  if (rho == 0) return;
  const long double c = std::cos(phi), s = std::sin(phi);
  const long double na = kind == cancellation::first_output ? rho * s : rho * c;
  const long double nb = kind == cancellation::first_output ? rho * c : -rho * s;
  const double limit = std::ldexp(1.0, r.max_exponent + 1);
  a = std::clamp(round_to_format(static_cast<double>(na), r), -limit / 2, limit / 2);
  b = std::clamp(round_to_format(static_cast<double>(nb), r), -limit / 2, limit / 2);
}

// One row before its pairs are set to cancel: n values (draw_row) and, per rotated pair, how it
// cancels (none 8 : first output 1 : second output 1).
struct row_values {
  std::vector<double> values;
  std::vector<cancellation> kinds;
};

// Shrinks one value at a time (shrink_value), then one pair at a time toward no cancellation.
inline rc::Gen<row_values> row_recipe(const value_range& r, int n, int pairs) {
  return rc::Gen<row_values>([=](const rc::Random& random, int) {
    draws d(random);
    row_values row{draw_row(d, r, n), std::vector<cancellation>(static_cast<std::size_t>(pairs))};
    for (cancellation& kind : row.kinds) kind = static_cast<cancellation>(d.weighted({8, 1, 1}));
    return rc::shrinkable::shrinkRecur(std::move(row), [r](const row_values& x) {
      auto fewer_values = rc::seq::map(
          rc::shrink::eachElement(x.values, [r](double v) { return shrink_value(r, v); }),
          [kinds = x.kinds](std::vector<double> values) {
            return row_values{std::move(values), kinds};
          });
      auto fewer_cancellations = rc::seq::map(
          rc::shrink::eachElement(x.kinds,
                                  [](cancellation k) {
                                    return k == cancellation::none
                                               ? rc::Seq<cancellation>()
                                               : rc::seq::just(cancellation::none);
                                  }),
          [values = x.values](std::vector<cancellation> kinds) {
            return row_values{values, std::move(kinds)};
          });
      return rc::seq::concat(std::move(fewer_values), std::move(fewer_cancellations));
    });
  });
}

// Rows of a [tokens, heads, head_dim] tensor whose token t sits at positions[t]; a fifth of
// the rotated pairs are made to cancel at their angle m_t·θ_j (`theta`: the frequencies the
// rows will be rotated by, approximately). `storage` decides the format (float64 for the
// reference properties, with `range` narrowing its exponents).
inline rc::Gen<value_rows> tensor_rows(dtype storage, const value_range& range,
                                       const rope_shape& s, int heads,
                                       const std::vector<std::int64_t>& token_positions,
                                       const std::vector<long double>& theta) {
  const int tokens = static_cast<int>(token_positions.size());
  const int pairs = s.rotary_dim / 2;
  const auto one_row = row_recipe(range, s.head_dim, pairs);
  return rc::gen::map(
      rc::gen::container<std::vector<row_values>>(static_cast<std::size_t>(tokens * heads),
                                                  one_row),
      [=](const std::vector<row_values>& recipes) {
        value_rows out{storage, s.head_dim, {}};
        out.values.reserve(static_cast<std::size_t>(tokens * heads * s.head_dim));
        for (int t = 0; t < tokens; ++t) {
          for (int h = 0; h < heads; ++h) {
            auto [values, kinds] = recipes[static_cast<std::size_t>(t * heads + h)];
            for (int j = 0; j < pairs; ++j) {
              const auto [ia, ib] = pair_of(s.pair, s.rotary_dim, j);
              const long double phi =
                  static_cast<long double>(token_positions[static_cast<std::size_t>(t)]) *
                  theta[static_cast<std::size_t>(j)];
              make_pair_cancel(values[static_cast<std::size_t>(ia)],
                               values[static_cast<std::size_t>(ib)], phi,
                               kinds[static_cast<std::size_t>(j)], range);
            }
            out.values.insert(out.values.end(), values.begin(), values.end());
          }
        }
        return out;
      });
}

}  // namespace gen
}  // namespace ropecheck::properties
