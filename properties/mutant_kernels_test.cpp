// The kernel properties have teeth: kernels with one deliberate defect each, wrapped into a
// fast::kernel_info exactly as the gate wraps a third-party kernel, must be caught by the
// property aimed at that defect — with a shrunk counterexample whose last line is the message
// naming the violated bound (never RapidCheck's expression text), the seed, and a replay
// line — while the same kernel without the defect passes. A property no mutant can fail would
// be a defect.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <string>

#include "numeric/half.h"
#include "numeric/storage_element.h"
#include "properties/kernel_properties.h"
#include "spec/pair_index.h"

namespace ropecheck::properties {
namespace {

enum class defect {
  none,
  float_frequency,       // θ_j rounded to float before m·θ_j: angle error m·θ·2^-24
  float_angle_recipe,    // float(m)·float(θ), then float cos/sin: the peers' recipe
  truncating_bfloat16,   // bfloat16 stored by truncation instead of RNE
  zeroed_pass_through,   // dims past rotary_dim written as 0
  in_place_overwrite,    // y_b computed from the already overwritten a (breaks in place only)
  inverse_as_forward,    // direction ignored
  key_not_rotated,       // in a Q+K call, K copied through unrotated
  attention_factor_dropped,  // cos and sin not multiplied by A
};

float load(dtype t, const std::byte* p) { return load_storage_element(t, p); }

void store(dtype t, std::byte* p, float v, bool truncate_bfloat16) {
  if (t == dtype::float32) {
    std::memcpy(p, &v, 4);
    return;
  }
  std::uint16_t bits = 0;
  if (t == dtype::float16) {
    bits = float_to_float16_bits(v);
  } else if (truncate_bfloat16) {
    std::uint32_t word;
    std::memcpy(&word, &v, 4);
    bits = static_cast<std::uint16_t>(word >> 16);
  } else {
    bits = float_to_bfloat16_bits(v);
  }
  std::memcpy(p, &bits, 2);
}

// The operation list of fast/rotation.h and fast/cos_sin.h, written plainly, with `D` injected.
template <defect D>
fast::status apply_mutant(const void*, const fast::rope_call& call, const fast::rope_angles& angles) {
  if (call.rotary_dim < 2 || call.rotary_dim % 2 != 0 || call.rotary_dim > call.head_dim ||
      call.positions == nullptr)
    return fast::status::error(fast::status_code::invalid_argument, "mutant: invalid call");
  if (call.output_scale != 1.0f)  // float32/16-bit storage only: no scale (fast/rope_call.h)
    return fast::status::error(fast::status_code::unsupported, "mutant: no output scale");
  const auto& theta = angles.frequencies().inverse_frequencies;
  const std::int64_t pairs = call.rotary_dim / 2;
  const std::size_t element = size_of(call.storage);
  const bool inverse = call.dir == fast::direction::inverse && D != defect::inverse_as_forward;
  const double factor =
      D == defect::attention_factor_dropped ? 1.0 : angles.frequencies().attention_factor;
  for (const fast::rope_tensor* t : {&call.q, &call.k}) {
    for (std::int64_t tok = 0; t->heads > 0 && tok < call.tokens; ++tok) {
      const std::int64_t m = call.position_type == dtype::int32
                                 ? static_cast<const std::int32_t*>(call.positions)[tok]
                                 : static_cast<const std::int64_t*>(call.positions)[tok];
      for (std::int64_t h = 0; h < t->heads; ++h) {
        const auto* in = static_cast<const std::byte*>(t->input) +
                         (tok * t->input_token_stride + h * t->input_head_stride) * static_cast<std::int64_t>(element);
        auto* out = static_cast<std::byte*>(t->output) +
                    (tok * t->output_token_stride + h * t->output_head_stride) * static_cast<std::int64_t>(element);
        if (D == defect::key_not_rotated && t == &call.k) {
          if (out != in) std::memmove(out, in, static_cast<std::size_t>(call.head_dim) * element);
          continue;
        }
        for (std::int64_t j = 0; j < pairs; ++j) {
          float c = 0, s = 0;
          if constexpr (D == defect::float_angle_recipe) {
            const float phi = static_cast<float>(m) * static_cast<float>(theta[static_cast<std::size_t>(j)]);
            c = std::cos(phi) * static_cast<float>(factor);
            s = std::sin(phi) * static_cast<float>(factor);
          } else {
            const double th = D == defect::float_frequency
                                  ? static_cast<double>(static_cast<float>(theta[static_cast<std::size_t>(j)]))
                                  : theta[static_cast<std::size_t>(j)];
            const double hi = static_cast<double>(m) * th;
            const double lo = std::fma(static_cast<double>(m), th, -hi);
            c = static_cast<float>((std::cos(hi) - lo * std::sin(hi)) * factor);
            s = static_cast<float>((std::sin(hi) + lo * std::cos(hi)) * factor);
          }
          if (inverse) s = -s;
          const auto [ia, ib] = pair_of(call.pair, 2 * pairs, j);
          const float a = load(call.storage, in + ia * static_cast<std::int64_t>(element));
          const float b = load(call.storage, in + ib * static_cast<std::int64_t>(element));
          const bool truncate = D == defect::truncating_bfloat16;
          store(call.storage, out + ia * static_cast<std::int64_t>(element), std::fma(a, c, -(b * s)), truncate);
          const float a_again = D == defect::in_place_overwrite
                                    ? load(call.storage, in + ia * static_cast<std::int64_t>(element))
                                    : a;
          store(call.storage, out + ib * static_cast<std::int64_t>(element), std::fma(b, c, a_again * s), truncate);
        }
        for (std::int64_t i = call.rotary_dim; i < call.head_dim; ++i) {
          if (D == defect::zeroed_pass_through)
            store(call.storage, out + i * static_cast<std::int64_t>(element), 0.0f, false);
          else if (out != in)
            std::memcpy(out + i * static_cast<std::int64_t>(element), in + i * static_cast<std::int64_t>(element), element);
        }
      }
    }
  }
  return fast::status::success();
}

constexpr std::array<dtype, 3> all_dtypes{dtype::float32, dtype::float16, dtype::bfloat16};
constexpr std::array<pairing, 2> both_pairings{pairing::half_split, pairing::adjacent};

template <defect D>
fast::kernel_info mutant(std::string_view name) {
  return {name, "deliberately defective test kernel", fast::angle_strategy::on_the_fly,
          all_dtypes, both_pairings, apply_mutant<D>, nullptr, false, false};  // one rounding claimed: no; one stream only
}

struct mutant_case {
  fast::kernel_info kernel;
  std::string_view property;  // the property aimed at the defect
  dtype storage;
  bool bounded = true;        // the property compares against a derived bound (not bit-exact)
};

std::string last_line(const std::string& text) {
  const auto end = text.find_last_not_of('\n');
  if (end == std::string::npos) return text;
  const auto start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

void expect_caught(const mutant_case& m) {
  const std::uint64_t seed = seed_from_environment();
  const property_result r =
      check_kernel_property(m.kernel, m.property, m.storage, profile::quick, seed, "<replay>");
  EXPECT_FALSE(r.passed) << m.kernel.name << " passed " << m.property << " on "
                         << to_string(m.storage) << " (" << r.cases << " cases)";
  if (r.passed) return;
  EXPECT_NE(r.counterexample.find("Falsifiable"), std::string::npos) << r.counterexample;
  EXPECT_NE(r.replay.find("reproduce="), std::string::npos) << r.replay;
  // What reports show (the gate's kill matrix shows the last line): the property's message with
  // the violated bound, the seed — and none of RapidCheck's macro text (property_runner.cpp).
  const std::string message = last_line(r.counterexample);
  EXPECT_EQ(message.rfind(std::string(m.property) + " violated", 0), 0u) << r.counterexample;
  if (m.bounded) {
    EXPECT_NE(message.find("derived bound"), std::string::npos) << message;
  }
  for (const char* macro : {"RC_FAIL(", "RC_ASSERT(", "RC_PRE(", "Expands to"})
    EXPECT_EQ(r.counterexample.find(macro), std::string::npos) << r.counterexample;
  const std::string seed_text = std::to_string(seed);
  EXPECT_NE(r.counterexample.find("(seed " + seed_text + ")"), std::string::npos) << r.counterexample;
  EXPECT_NE(r.replay.find("seed=" + seed_text), std::string::npos) << r.replay;
  std::printf("[ mutant   ] %-24s caught by %-30s %-9s after %lld cases:\n             %s\n",
              std::string(m.kernel.name).c_str(), std::string(m.property).c_str(),
              std::string(to_string(m.storage)).c_str(), static_cast<long long>(r.cases),
              message.c_str());
}

// Without the defect the same harness passes: the failures below are the defects'. (The twin
// checks only what it needs, so it skips rejects_invalid_calls, and its one sincos per element
// would make the 16 MiB call_size_invariant cases slow.)
TEST(mutant_kernels, defect_free_twin_passes_every_property) {
  const auto kernel = mutant<defect::none>("defect_free");
  for (std::string_view property : kernel_property_names()) {
    if (property == "rejects_invalid_calls" || property == "call_size_invariant") continue;
    for (dtype storage : {dtype::float32, dtype::bfloat16}) {
      const property_result r = check_kernel_property(kernel, property, storage, profile::quick,
                                                      seed_from_environment());
      EXPECT_TRUE(r.passed) << property << " " << to_string(storage) << "\n" << r.counterexample;
    }
  }
}

TEST(mutant_kernels, float_frequency_fails_accuracy) {
  expect_caught({mutant<defect::float_frequency>("float_frequency"), "within_bound_of_reference",
                 dtype::float32});
}

TEST(mutant_kernels, float_angle_recipe_fails_accuracy) {
  expect_caught({mutant<defect::float_angle_recipe>("float_angle_recipe"),
                 "within_bound_of_reference", dtype::float32});
}

TEST(mutant_kernels, float_angle_recipe_fails_offset_invariance) {
  expect_caught({mutant<defect::float_angle_recipe>("float_angle_recipe"),
                 "relative_offset_invariance", dtype::float32});
}

TEST(mutant_kernels, truncating_bfloat16_fails_accuracy) {
  expect_caught({mutant<defect::truncating_bfloat16>("truncating_bfloat16"),
                 "within_bound_of_reference", dtype::bfloat16});
}

TEST(mutant_kernels, zeroed_pass_through_fails_pass_through) {
  expect_caught({mutant<defect::zeroed_pass_through>("zeroed_pass_through"),
                 "pass_through_bit_exact", dtype::float16, false});
}

TEST(mutant_kernels, in_place_overwrite_fails_in_place) {
  expect_caught({mutant<defect::in_place_overwrite>("in_place_overwrite"),
                 "in_place_equals_out_of_place", dtype::float32, false});
}

TEST(mutant_kernels, inverse_as_forward_fails_round_trip) {
  expect_caught({mutant<defect::inverse_as_forward>("inverse_as_forward"), "inverse_round_trip",
                 dtype::bfloat16});
}

// K is checked against the reference in the Q+K call, not only for equal bits with a K-alone
// call (which an unrotated K passes too).
TEST(mutant_kernels, key_not_rotated_fails_accuracy) {
  expect_caught({mutant<defect::key_not_rotated>("key_not_rotated"), "within_bound_of_reference",
                 dtype::float32});
}

TEST(mutant_kernels, key_not_rotated_passes_q_and_k_together_equal_separate) {
  // Why the accuracy property has to look at K: the bit-exact one cannot see this defect.
  const property_result r = check_kernel_property(
      mutant<defect::key_not_rotated>("key_not_rotated"), "q_and_k_together_equal_separate",
      dtype::float32, profile::quick, seed_from_environment());
  EXPECT_TRUE(r.passed) << r.counterexample;
}

// Generated cases carry attention factors A ≠ 1 (rope_scaling or explicit).
TEST(mutant_kernels, attention_factor_dropped_fails_accuracy) {
  expect_caught({mutant<defect::attention_factor_dropped>("attention_factor_dropped"),
                 "within_bound_of_reference", dtype::bfloat16});
}

TEST(mutant_kernels, attention_factor_dropped_fails_norm) {
  expect_caught({mutant<defect::attention_factor_dropped>("attention_factor_dropped"),
                 "norm_preserved", dtype::float32});
}

}  // namespace
}  // namespace ropecheck::properties
