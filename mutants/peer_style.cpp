// The peer-style test (peer_style.h): a float32 copy of the recipe and allclose.
#include "mutants/peer_style.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "numeric/half.h"
#include "numeric/storage_element.h"
#include "spec/pair_index.h"

namespace ropecheck::mutants {
namespace {

struct tolerance {
  double atol, rtol;
};

tolerance tolerance_for(dtype storage) {
  if (storage == dtype::bfloat16) return {1e-3, 1.6e-2};
  if (storage == dtype::float16) return {1e-5, 1e-3};
  return {1e-5, 1.3e-6};
}

void put(dtype t, std::byte* p, float v) { store_storage_element(t, p, v); }

float get(dtype t, const std::byte* p) { return load_storage_element(t, p); }

struct peer_config {
  int head_dim;
  int rotary_dim;
  pairing pair;
};

}  // namespace

peer_verdict peer_style_check(const fast::kernel_info& kernel, dtype storage,
                              frequencies_fn frequencies, std::uint64_t seed) {
  constexpr std::int64_t position_limit = 8192;
  const tolerance tol = tolerance_for(storage);
  std::mt19937_64 random(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  peer_verdict verdict;
  const std::size_t element = size_of(storage);

  std::vector<peer_config> configs;
  for (int d : {64, 128, 80})
    for (int rotary : {d, d / 2})
      for (pairing p : {pairing::half_split, pairing::adjacent})
        if (kernel.supports(p)) configs.push_back({d, rotary, p});

  for (const peer_config& config : configs) {
    rope_spec spec;
    spec.head_dim = config.head_dim;
    spec.rotary_dim = config.rotary_dim;
    spec.base = 10000;
    spec.pair = config.pair;
    spec.source = "peer_style";
    const fast::rope_frequencies f = frequencies != nullptr
                                         ? frequencies(spec, position_limit)
                                         : fast::scaled_frequencies(spec, position_limit);
    auto prepared = kernel.prepare(f, position_limit);
    if (!prepared.ok()) {
      verdict.passed = false;
      verdict.worst = "kernel refused to prepare: " + prepared.state.message;
      verdict.worst_over_tolerance = std::numeric_limits<double>::infinity();
      return verdict;
    }
    // Prefill from 0, a decode-style block at an offset, scattered positions.
    std::vector<std::vector<std::int64_t>> position_sets(3);
    for (std::int64_t m = 0; m < 512; ++m) position_sets[0].push_back(m);
    const std::int64_t offset =
        std::uniform_int_distribution<std::int64_t>(0, position_limit - 64)(random);
    for (std::int64_t m = 0; m < 64; ++m) position_sets[1].push_back(offset + m);
    for (int i = 0; i < 64; ++i)
      position_sets[2].push_back(
          std::uniform_int_distribution<std::int64_t>(0, position_limit - 1)(random));

    for (const auto& positions : position_sets) {
      const auto tokens = static_cast<std::int64_t>(positions.size());
      const int q_heads = 2, k_heads = 1;
      const auto count = [&](int heads) {
        return static_cast<std::size_t>(tokens * heads * config.head_dim);
      };
      std::vector<std::byte> q_in(count(q_heads) * element), q_out(q_in.size());
      std::vector<std::byte> k_in(count(k_heads) * element), k_out(k_in.size());
      for (std::size_t i = 0; i < count(q_heads); ++i) put(storage, q_in.data() + i * element, normal(random));
      for (std::size_t i = 0; i < count(k_heads); ++i) put(storage, k_in.data() + i * element, normal(random));
      const fast::rope_call call = fast::make_call(
          {storage, config.pair, config.head_dim, config.rotary_dim}, positions,
          fast::packed_tensor(q_in.data(), q_out.data(), q_heads, config.head_dim),
          fast::packed_tensor(k_in.data(), k_out.data(), k_heads, config.head_dim));
      const fast::status s = kernel.apply(call, *prepared.value);
      if (!s.ok()) {
        verdict.passed = false;
        verdict.worst = "kernel refused the call: " + s.message;
        verdict.worst_over_tolerance = std::numeric_limits<double>::infinity();
        return verdict;
      }
      // The reference: the float32 recipe on the same stored inputs.
      const int pairs = config.rotary_dim / 2;
      for (int which = 0; which < 2; ++which) {
        const auto& in = which == 0 ? q_in : k_in;
        const auto& out = which == 0 ? q_out : k_out;
        const int heads = which == 0 ? q_heads : k_heads;
        for (std::int64_t t = 0; t < tokens; ++t) {
          const float m = static_cast<float>(positions[static_cast<std::size_t>(t)]);
          for (int h = 0; h < heads; ++h) {
            const std::size_t row = static_cast<std::size_t>((t * heads + h) * config.head_dim);
            std::vector<float> x(static_cast<std::size_t>(config.head_dim));
            std::vector<float> ref(x.size());
            for (std::size_t i = 0; i < x.size(); ++i) x[i] = get(storage, in.data() + (row + i) * element);
            ref = x;
            for (int j = 0; j < pairs; ++j) {
              const float inv_freq = static_cast<float>(f.inverse_frequencies[static_cast<std::size_t>(j)]);
              const float angle = m * inv_freq;
              const float c = std::cos(angle) * static_cast<float>(f.attention_factor);
              const float sn = std::sin(angle) * static_cast<float>(f.attention_factor);
              const auto [a, b] = pair_of(config.pair, 2 * static_cast<std::size_t>(pairs), static_cast<std::size_t>(j));
              const float ac = x[a] * c, bs = x[b] * sn, bc = x[b] * c, as = x[a] * sn;
              ref[a] = ac - bs;
              ref[b] = bc + as;
            }
            for (std::size_t i = 0; i < x.size(); ++i) {
              const double expected = round_to_storage(storage, ref[i]);
              const double y = get(storage, out.data() + (row + i) * element);
              const double allowed = tol.atol + tol.rtol * std::fabs(expected);
              double ratio = std::fabs(y - expected) / allowed;
              if (std::isnan(ratio)) ratio = std::numeric_limits<double>::infinity();
              ++verdict.outputs;
              if (ratio > verdict.worst_over_tolerance) {
                verdict.worst_over_tolerance = ratio;
                verdict.worst = "d=" + std::to_string(config.head_dim) + "/" +
                                std::to_string(config.rotary_dim) + " " +
                                std::string(to_string(config.pair)) + " m=" +
                                std::to_string(positions[static_cast<std::size_t>(t)]) +
                                " dim=" + std::to_string(i) + (which == 0 ? " q" : " k");
              }
            }
          }
        }
      }
    }
  }
  verdict.passed = verdict.worst_over_tolerance <= 1;
  return verdict;
}

}  // namespace ropecheck::mutants
