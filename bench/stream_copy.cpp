// stream_copy: streaming-store copies at 16, 32 and 64 bytes per store, each compiled for its
// instruction set by a target attribute and offered only when the CPU reports it
// (__builtin_cpu_supports), so the build runs on any x86-64; and `rep movsb`, which CPUs with
// ERMS/FSRM execute as a microcoded block copy that may avoid the read-for-ownership too.
// Each streaming loop copies the head up to the destination's first 64-byte line with memcpy,
// streams four vectors per iteration from there, copies the tail with memcpy and ends with sfence:
// non-temporal stores are weakly ordered, and the copy must be visible when it returns.
#include "bench/stream_copy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ropecheck::bench {

#if defined(__x86_64__)
namespace {

// Bytes to copy before `out` is 64-byte aligned (all of them if there are fewer).
std::size_t head_bytes(const std::byte* out, std::size_t bytes) {
  const auto past_line = static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(out) % 64);
  return std::min(bytes, past_line == 0 ? std::size_t{0} : 64 - past_line);
}

void copy_stream_sse2(const std::byte* in, std::byte* out, std::size_t bytes) {
  std::size_t i = head_bytes(out, bytes);
  std::memcpy(out, in, i);
  for (; i + 64 <= bytes; i += 64) {
    const auto* s = reinterpret_cast<const __m128i*>(in + i);
    auto* d = reinterpret_cast<__m128i*>(out + i);
    const __m128i a = _mm_loadu_si128(s), b = _mm_loadu_si128(s + 1);
    const __m128i c = _mm_loadu_si128(s + 2), e = _mm_loadu_si128(s + 3);
    _mm_stream_si128(d, a);
    _mm_stream_si128(d + 1, b);
    _mm_stream_si128(d + 2, c);
    _mm_stream_si128(d + 3, e);
  }
  std::memcpy(out + i, in + i, bytes - i);
  _mm_sfence();
}

__attribute__((target("avx2"))) void copy_stream_avx2(const std::byte* in, std::byte* out,
                                                      std::size_t bytes) {
  std::size_t i = head_bytes(out, bytes);
  std::memcpy(out, in, i);
  for (; i + 128 <= bytes; i += 128) {
    const auto* s = reinterpret_cast<const __m256i*>(in + i);
    auto* d = reinterpret_cast<__m256i*>(out + i);
    const __m256i a = _mm256_loadu_si256(s), b = _mm256_loadu_si256(s + 1);
    const __m256i c = _mm256_loadu_si256(s + 2), e = _mm256_loadu_si256(s + 3);
    _mm256_stream_si256(d, a);
    _mm256_stream_si256(d + 1, b);
    _mm256_stream_si256(d + 2, c);
    _mm256_stream_si256(d + 3, e);
  }
  std::memcpy(out + i, in + i, bytes - i);
  _mm_sfence();
}

__attribute__((target("avx512f"))) void copy_stream_avx512(const std::byte* in, std::byte* out,
                                                           std::size_t bytes) {
  std::size_t i = head_bytes(out, bytes);
  std::memcpy(out, in, i);
  for (; i + 256 <= bytes; i += 256) {
    const auto* s = reinterpret_cast<const __m512i*>(in + i);
    auto* d = reinterpret_cast<__m512i*>(out + i);
    const __m512i a = _mm512_loadu_si512(s), b = _mm512_loadu_si512(s + 1);
    const __m512i c = _mm512_loadu_si512(s + 2), e = _mm512_loadu_si512(s + 3);
    _mm512_stream_si512(d, a);
    _mm512_stream_si512(d + 1, b);
    _mm512_stream_si512(d + 2, c);
    _mm512_stream_si512(d + 3, e);
  }
  std::memcpy(out + i, in + i, bytes - i);
  _mm_sfence();
}

void copy_rep_movsb(const std::byte* in, std::byte* out, std::size_t bytes) {
  asm volatile("rep movsb" : "+D"(out), "+S"(in), "+c"(bytes) : : "memory");
}

}  // namespace

std::span<const copy_method> fast_copies() {
  static const std::vector<copy_method> methods = [] {
    std::vector<copy_method> m{{"stream_sse2", copy_stream_sse2}};
    if (__builtin_cpu_supports("avx2")) m.push_back({"stream_avx2", copy_stream_avx2});
    if (__builtin_cpu_supports("avx512f")) m.push_back({"stream_avx512", copy_stream_avx512});
    m.push_back({"rep_movsb", copy_rep_movsb});
    return m;
  }();
  return methods;
}
#else
std::span<const copy_method> fast_copies() { return {}; }
#endif

}  // namespace ropecheck::bench
