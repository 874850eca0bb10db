// random_buffer: the 64-byte aligned buffers every bench/ table measures on, filled with random
// values in [-1, 1) stored in the measured dtype (all normal numbers or zero), so that no kernel
// or copy meets a pattern a repeated byte would give it. Internal to bench/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <random>

#include "numeric/dtype.h"
#include "numeric/storage_element.h"

namespace ropecheck::bench {

struct aligned_free {
  void operator()(std::byte* p) const { std::free(p); }
};
using aligned_bytes = std::unique_ptr<std::byte[], aligned_free>;

// `bytes` rounded up to whole 64-byte lines, seeded by its size and `salt` (the same bytes every
// run; an input and an output of other salts differ, so a copy that copied nothing is seen).
inline aligned_bytes random_buffer(std::int64_t bytes, dtype storage, std::uint64_t salt) {
  const auto size = static_cast<std::size_t>((bytes + 63) / 64 * 64);
  auto* p = static_cast<std::byte*>(std::aligned_alloc(64, size));
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, size);
  std::mt19937_64 random(static_cast<std::uint64_t>(bytes) * 2 + salt);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const auto element = static_cast<std::size_t>(size_of(storage));
  for (std::size_t i = 0; i + element <= size; i += element)
    store_storage_element(storage, p + i, value(random));
  return aligned_bytes(p);
}

}  // namespace ropecheck::bench
