// store_policy: when the SIMD kernels (cache_simd, on_the_fly_simd, precise_simd) write their
// output with non-temporal ("streaming") stores. A cached store first reads the destination
// line for ownership and later writes it back: three transfers per output line where a copy
// that streams has two. Streaming pays off only when the output cannot stay in the cache
// anyway, so a call streams when its output (Q and K together) is larger than the last-level
// cache one core reaches, and only out of place (in place the line was just read: there is no
// read-for-ownership to save) with the rotated dims covering the head and vector-aligned
// rows; decode-step calls (KiBs) keep cached stores, and their output stays hot for the
// attention that reads it next. Every streamed chunk ends with a store fence (sfence), so the
// stores are visible to other threads before the call returns (Intel SDM vol. 1 §10.4.6.2:
// non-temporal stores are weakly ordered).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace ropecheck::fast {

struct last_level_cache {
  std::int64_t bytes = 0;
  std::string source;  // where the size came from, for bench rows and docs
};

// The largest data or unified cache of CPU 0 as Linux's sysfs describes it
// (/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}): the cache one core reaches,
// e.g. one CCX's L3 on AMD. Else glibc's sysconf(_SC_LEVEL3_CACHE_SIZE), then _LEVEL2_; else
// 32 MiB. sysfs comes first because glibc reports the whole socket's L3 on some AMD CPUs
// (384 MiB on a 2-core EPYC VM whose core reaches 32 MiB).
last_level_cache find_last_level_cache();
// The same from another sysfs cache directory (tests); no sysconf step when it has no entry:
// the fallback then.
last_level_cache last_level_cache_from(const std::filesystem::path& cache_dir);
// sysfs's size text: "32768K", "1M", "512" (bytes); 0 if unreadable.
std::int64_t parse_cache_size(const std::string& text);
inline constexpr std::int64_t fallback_last_level_cache_bytes = std::int64_t{32} << 20;

// Calls whose output is larger than this stream (default: find_last_level_cache(), looked up
// once). set_streaming_threshold_bytes overrides it process-wide (tests, benchmarks; not while
// kernels run on other threads); 0 restores the default.
std::int64_t streaming_threshold_bytes();
void set_streaming_threshold_bytes(std::int64_t bytes);

// Chunks (up to 16 tokens of one tensor) the SIMD kernels have stored non-temporally in this
// process: lets a test tell that the streaming path ran, not just that the bits agree.
std::int64_t streamed_chunks();

namespace detail {
void count_streamed_chunk();
}  // namespace detail

}  // namespace ropecheck::fast
