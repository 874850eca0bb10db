// kernel_test_support: test-only helpers for fast/'s unit tests — tensors stored in any
// storage dtype, random data, and calls over the registry's kernels.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fast/kernels.h"
#include "numeric/storage_element.h"

namespace ropecheck::fast::testing {

inline const std::vector<dtype>& storage_dtypes() {
  static const std::vector<dtype> all(std::begin(ropecheck::storage_dtypes),
                                      std::end(ropecheck::storage_dtypes));
  return all;
}

inline const std::vector<pairing>& pairings() {
  static const std::vector<pairing> all{pairing::half_split, pairing::adjacent};
  return all;
}

// A buffer of n elements of a storage dtype (8-byte aligned storage).
struct buffer {
  dtype type = dtype::float32;
  std::vector<std::uint64_t> storage;
  std::int64_t count = 0;

  buffer() = default;
  buffer(dtype t, std::int64_t n)
      : type(t), storage(static_cast<std::size_t>((n * static_cast<std::int64_t>(size_of(t)) + 7) / 8 + 1)), count(n) {}

  std::byte* data() { return reinterpret_cast<std::byte*>(storage.data()); }
  const std::byte* data() const { return reinterpret_cast<const std::byte*>(storage.data()); }
  float get(std::int64_t i) const { return load_storage_element(type, data() + i * static_cast<std::int64_t>(size_of(type))); }
  void set(std::int64_t i, float v) { store_storage_element(type, data() + i * static_cast<std::int64_t>(size_of(type)), v); }
  bool same_bits(const buffer& o) const {
    return count == o.count &&
           std::memcmp(data(), o.data(), static_cast<std::size_t>(count) * size_of(type)) == 0;
  }
};

inline buffer random_buffer(dtype t, std::int64_t n, std::uint32_t seed, float scale = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-scale, scale);
  buffer b(t, n);
  for (std::int64_t i = 0; i < n; ++i) b.set(i, uniform(rng));
  return b;
}

inline rope_spec make_spec(int head_dim, int rotary_dim, double base, pairing p) {
  rope_spec spec;
  spec.head_dim = head_dim;
  spec.rotary_dim = rotary_dim;
  spec.base = base;
  spec.pair = p;
  return spec;
}

inline rope_angles prepare_or_die(const kernel_info& k, const rope_frequencies& f,
                                  std::int64_t max_position) {
  auto r = k.prepare(f, max_position);
  if (!r.ok()) throw std::runtime_error(r.state.message);
  return std::move(*r.value);
}

// Index of the first element of row (token, head) in a packed [tokens, heads, head_dim].
inline std::int64_t packed_index(std::int64_t token, std::int64_t head, std::int64_t heads,
                                 std::int64_t head_dim) {
  return (token * heads + head) * head_dim;
}

}  // namespace ropecheck::fast::testing
